import type { NatsAccess } from '../process/flags.ts';
/** Where a command writes and what it reads from its environment; a spec passes its own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  readonly env: NodeJS.ProcessEnv;
  /** --creds / --tls-* of the command line (else their environment variables), set by runCli. */
  readonly access?: NatsAccess;
  /** Colour for states: stdout is a terminal and NO_COLOR is not set. */
  readonly color?: boolean;
  /** Ends a long-running command (`events --follow`) as SIGINT would; for in-process callers. */
  readonly signal?: AbortSignal;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  // https://no-color.org: any non-empty NO_COLOR turns colour off
  color: process.stdout.isTTY === true && !process.env.NO_COLOR,
};
