/** Where a command writes and what it reads from its environment; a spec passes its own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  readonly env: NodeJS.ProcessEnv;
  /** Ends a long-running command (`events --follow`) as SIGINT would; for in-process callers. */
  readonly signal?: AbortSignal;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};
