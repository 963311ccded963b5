import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { OrreryError } from '../../lib/errors.ts';
import { descendants, isRunning, signal } from './process-tree.ts';

/**
 * GCS and raylet processes started by startLocalCluster and by `orrery start`. A process is ready
 * when it prints `ORRERY_READY {json}` on stdout. Children run with process.execPath and
 * process.execArgv (so they inherit tsx and --conditions=source in the source tree) and an entry
 * resolved from this module's URL (`.ts` in the source tree, `.js` in dist/).
 */
export type RuntimeRole = 'gcs' | 'raylet' | 'autoscaler';

export interface ReadyInfo {
  readonly role: string;
  readonly [key: string]: unknown;
}

export interface RuntimeProcess {
  readonly role: RuntimeRole;
  readonly pid: number;
  readonly ready: ReadyInfo;
  /** The last lines it wrote (attached processes only). */
  recentOutput(): string;
  /** Resolves when it has exited. */
  readonly exited: Promise<void>;
  /** SIGKILL to it and to every process below it, at once: a crash, no goodbye. */
  crash(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; processes it left behind are killed too. */
  stop(graceMs?: number): Promise<void>;
}

export const READY_PREFIX = 'ORRERY_READY ';
/** How long a started process may take to print its ready line, unless the caller says otherwise. */
export const READY_TIMEOUT_MS = 30_000;
const KEEP_LINES = 40;

export function entryPath(role: RuntimeRole): string {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`../${role}/main${ext}`, import.meta.url));
}

/**
 * V8 flags a raylet runs with unless the caller sets its own: a small young generation. A raylet
 * mostly waits on NATS; after a burst of work V8 keeps a large young generation for a minute or more,
 * which was a tenth of a raylet's resident memory with 2,500 idle actors (2 MB semi-spaces: ~5 MB
 * lower than 4 MB, creation rate unchanged within noise). Worker hosts get the same cap from the
 * raylet (runtime/raylet/worker-process.ts).
 */
export const RAYLET_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/** The node arguments that run `role`'s entry with `flags` (default: this process's loader flags). */
export function nodeArgs(role: RuntimeRole, args: readonly string[], flags: readonly string[] = process.execArgv): string[] {
  const extra = role === 'raylet' ? RAYLET_FLAGS.filter((f) => !flags.some((g) => g.split('=')[0] === f.split('=')[0])) : [];
  return [...flags, ...extra, entryPath(role), ...args];
}

export function parseReadyLine(line: string): ReadyInfo | undefined {
  if (!line.startsWith(READY_PREFIX)) return undefined;
  try {
    const info = JSON.parse(line.slice(READY_PREFIX.length)) as unknown;
    return info !== null && typeof info === 'object' && typeof (info as ReadyInfo).role === 'string' ? (info as ReadyInfo) : undefined;
  } catch {
    return undefined;
  }
}

export class RuntimeStartError extends OrreryError {
  override name = 'RuntimeStartError';
  constructor(role: RuntimeRole, reason: string, output: string) {
    const tail = output.trim().split('\n').slice(-5).join(' | ');
    super('RUNTIME_START_FAILED', `the ${role} process did not start: ${reason}${tail ? ` — ${tail}` : ''}`, { detail: { role, reason, output } });
  }
}

/**
 * Spawns `role` attached to this process, with stdout and stderr piped (and always read, so the child
 * never blocks on a full pipe); resolves once it printed its ready line.
 */
export async function spawnRuntimeProcess(
  role: RuntimeRole,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; readyTimeoutMs?: number; onLine?: (line: string, role: RuntimeRole) => void; nodeFlags?: readonly string[] } = {},
): Promise<RuntimeProcess> {
  const child = spawn(process.execPath, nodeArgs(role, args, opts.nodeFlags), { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env });
  const lines: string[] = [];
  const keep = (line: string): void => {
    lines.push(line);
    if (lines.length > KEEP_LINES) lines.shift();
    opts.onLine?.(line, role);
  };
  const exited = exitOf(child);
  let onReady!: (info: ReadyInfo) => void;
  const readyLine = new Promise<ReadyInfo>((resolve) => (onReady = resolve));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const info = parseReadyLine(line);
    if (info) onReady(info);
    else keep(line);
  });
  createInterface({ input: child.stderr! }).on('line', keep);
  const output = (): string => lines.join('\n');
  const handle = (ready: ReadyInfo): RuntimeProcess => ({
    role,
    pid: child.pid!,
    ready,
    recentOutput: output,
    exited: exited.then(() => undefined),
    crash: () => crashTree(child.pid!, exited),
    stop: (graceMs) => stopTree(child.pid!, exited, graceMs),
  });
  const timeoutMs = opts.readyTimeoutMs ?? READY_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    readyLine.then((info) => ({ info })),
    exited.then((how) => ({ failed: `it exited (${how}) before it was ready` })),
    new Promise<{ failed: string }>((resolve) => (timer = setTimeout(() => resolve({ failed: `not ready within ${timeoutMs} ms` }), timeoutMs))),
  ]);
  clearTimeout(timer);
  if ('info' in outcome) return handle(outcome.info);
  await crashTree(child.pid ?? -1, exited);
  throw new RuntimeStartError(role, outcome.failed, output());
}

/**
 * Spawns `role` detached from this process (its own process group, output appended to `logFile`),
 * so it outlives the command that started it; resolves with its ready line read from the log.
 * `onSpawned` is called with its pid at once, before it is ready: a caller that records it there has
 * it recorded even if the caller dies while waiting (a process that never gets ready is killed).
 */
export async function spawnDetachedRuntimeProcess(
  role: RuntimeRole,
  args: readonly string[],
  opts: { logFile: string; readyTimeoutMs?: number; onSpawned?: (pid: number) => void },
): Promise<{ pid: number; ready: ReadyInfo }> {
  const start = (() => {
    try {
      return readFileSync(opts.logFile).length;
    } catch {
      return 0;
    }
  })();
  const fd = openSync(opts.logFile, 'a');
  const child = spawn(process.execPath, nodeArgs(role, args), { stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  const exited = exitOf(child);
  if (child.pid !== undefined) opts.onSpawned?.(child.pid);
  let gone: string | undefined;
  void exited.then((how) => (gone = how));
  const deadline = Date.now() + (opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
  for (;;) {
    const text = readFileSync(opts.logFile).subarray(start).toString('utf8');
    for (const line of text.split('\n')) {
      const info = parseReadyLine(line);
      if (info) {
        child.unref();
        return { pid: child.pid!, ready: info };
      }
    }
    if (gone !== undefined || Date.now() > deadline) {
      signal(-child.pid!, 'SIGKILL');
      const reason = gone !== undefined ? `it exited (${gone}) before it was ready` : 'not ready in time';
      throw new RuntimeStartError(role, `${reason}; see ${opts.logFile}`, text);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function exitOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    child.once('exit', (code, sig) => resolve(sig ? `signal ${sig}` : `code ${code}`));
    child.once('error', (err) => resolve(err.message));
  });
}

async function crashTree(pid: number, exited: Promise<unknown>): Promise<void> {
  if (pid < 0) return;
  const below = descendants(pid);
  signal(pid, 'SIGKILL');
  for (const p of below) signal(p, 'SIGKILL');
  await exited;
}

async function stopTree(pid: number, exited: Promise<unknown>, graceMs = 5000): Promise<void> {
  const below = descendants(pid);
  signal(pid, 'SIGTERM');
  const timer = setTimeout(() => signal(pid, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  for (const p of below) if (isRunning(p)) signal(p, 'SIGKILL');
}
