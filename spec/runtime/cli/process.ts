// The orrery command as a separate process, for integration specs: run it to completion, or start a
// long-running one (events --follow) and read its lines as they come.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CLI_MAIN = fileURLToPath(new URL('../../../runtime/cli/main.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function orrery(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, CLI_MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export const lines = (text: string): string[] => text.split('\n').filter((l) => l.length > 0);

/** A running command: its stdout lines so far, a wait for the line that passes, and its exit. */
export class RunningCli {
  readonly out: string[] = [];
  readonly err: string[] = [];
  readonly exited: Promise<number | null>;
  readonly #child: ChildProcess;
  readonly #waiters: { stream: 'out' | 'err'; pass: (l: string) => boolean; resolve: (l: string) => void }[] = [];

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    this.#child = spawn(process.execPath, [...process.execArgv, CLI_MAIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    createInterface({ input: this.#child.stdout! }).on('line', (l) => this.#push('out', l));
    createInterface({ input: this.#child.stderr! }).on('line', (l) => this.#push('err', l));
    this.exited = new Promise((resolve) => this.#child.on('close', (code) => resolve(code)));
  }

  /** The first line on `stream` (already there or to come) that passes; rejects after `ms`. */
  line(stream: 'out' | 'err', pass: (l: string) => boolean, ms = 20_000): Promise<string> {
    const found = this[stream].find(pass);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no such line on std${stream} within ${ms} ms; got:\n${this[stream].join('\n')}\n${this.err.join('\n')}`)), ms);
      this.#waiters.push({ stream, pass, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }

  signal(sig: NodeJS.Signals): void {
    this.#child.kill(sig);
  }

  #push(stream: 'out' | 'err', line: string): void {
    this[stream].push(line);
    for (const w of [...this.#waiters]) {
      if (w.stream === stream && w.pass(line)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  }
}
