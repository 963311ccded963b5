import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The orrery command's entry point, run from source as the specs run. */
export const ORRERY_MAIN = fileURLToPath(new URL('../../runtime/cli/main.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `orrery <args>` as its own process with `env` over this one's; resolves once it exited. */
export function runOrrery(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, ORRERY_MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
