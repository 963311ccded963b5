/**
 * What the benches on real processes (bench/e2e.ts, bench/pg.ts, bench/gcs.ts, bench/tasks.ts) share: which code the cluster
 * runs (the compiled package on plain node, or the source under tsx with --dev), what the header
 * says about the code measured (commit, uncommitted changes, the state of dist/), and the raw-NATS
 * responder processes used as references.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Which code the cluster runs and with which Node flags. */
export interface Mode {
  /** Prefix of every JSON row's name, so rows of the two modes are never taken for each other. */
  readonly tag: string;
  readonly describe: string;
  /** startLocalCluster's nodeFlags: the GCS and raylets run with them, worker hosts with them plus the worker flags. */
  readonly nodeFlags: string[];
  /** Modules, relative to bench/ (where the benches live). */
  readonly pkg: string;
  readonly bus: string;
  readonly codec: string;
  readonly fixtures: string;
  readonly responder: string;
  /** bench/tasks.ts: the no-op task's module, nats-server's starter, and its raw-NATS responder (plain and a task's hops). */
  readonly taskFixtures: string;
  readonly natsServer: string;
  readonly tasksResponder: string;
  /** bench/gcs.ts's fault sections: spawnRuntimeProcess, to start GCS and raylet processes of their own. */
  readonly runtimeProcess: string;
}

export const DEV_MODE: Mode = {
  tag: 'dev (source, tsx)',
  describe: 'dev (--dev) — from source under tsx: GCS, raylets and worker hosts run the .ts entries with --conditions=source --import tsx; actors from bench/fixtures/actors.ts',
  nodeFlags: ['--conditions=source', '--import', 'tsx'],
  pkg: '../index.ts',
  bus: '../runtime/bus/nats-connect.ts',
  codec: '../protocols/codec.ts',
  fixtures: './fixtures/actors.ts',
  responder: './support/e2e-responder.ts',
  taskFixtures: './support/tasks-fixtures.ts',
  natsServer: '../runtime/local/nats-server.ts',
  tasksResponder: './support/tasks-responder.ts',
  runtimeProcess: '../runtime/local/runtime-process.ts',
};

export const PLAIN_MODE: Mode = {
  tag: 'plain node (dist)',
  describe: "plain node (default) — the compiled package: startLocalCluster from dist/index.js with nodeFlags [], so GCS, raylets and worker hosts run dist/*.js on plain node; actors from bench/fixtures/actors.mjs (imports 'orrery')",
  nodeFlags: [],
  pkg: '../dist/index.js',
  bus: '../dist/runtime/bus/nats-connect.js',
  codec: '../dist/protocols/codec.js',
  fixtures: './fixtures/actors.mjs',
  responder: './fixtures/e2e-responder.mjs',
  taskFixtures: './fixtures/tasks.mjs',
  natsServer: '../dist/runtime/local/nats-server.js',
  tasksResponder: './fixtures/tasks-responder.mjs',
  runtimeProcess: '../dist/runtime/local/runtime-process.js',
};

/** The checkout's root (this file is bench/support/). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** A module of bench/, by URL. */
const benchUrl = (path: string): string => new URL(`../${path}`, import.meta.url).href;

/**
 * Starts a raw NATS responder of the mode with the mode's node flags — by default `mode.responder`
 * (a plain process answering every request on `subject` with the request's bytes); bench/tasks.ts
 * passes `mode.tasksResponder`, bench/peers.ts Moleculer's — and resolves once it printed READY (is
 * subscribed).
 */
export async function startResponder(mode: Mode, address: string, subject: string, module: string = mode.responder): Promise<ChildProcess> {
  const entry = fileURLToPath(benchUrl(module));
  const child = spawn(process.execPath, [...mode.nodeFlags, entry, address, subject], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the responder ${module} did not start within 30 s`)), 30_000);
    child.once('exit', (code, sig) => reject(new Error(`the responder ${module} exited (${sig ?? code}) before it was ready`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'READY') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}

/** SIGTERM, SIGKILL after 3 s; resolves once it has exited (at once if it already has). */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await gone;
  clearTimeout(timer);
}

/** The commit measured, and whether the runtime's sources differ from it (others edit this tree). */
export function sourceVersion(): string {
  const git = (...a: string[]): string => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const dirty = git('status', '--porcelain', '--', 'lib', 'protocols', 'runtime');
    return `commit ${git('rev-parse', '--short', 'HEAD')}${dirty ? ` + uncommitted changes to ${dirty.split('\n').length} file(s) under lib/, protocols/, runtime/` : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/**
 * When dist/ was built, whether any source of the package changed since (a stale build measures
 * other code than the commit printed), and whether the driver's 'orrery' (the fixture's import) is
 * that build: under --conditions=source it would be index.ts, a second copy of the runtime.
 * `script` is the npm script that builds first (named in the error when dist/ is missing).
 */
export function distState(script: string): string {
  let built: number;
  try {
    built = statSync(`${ROOT}dist/index.js`).mtimeMs;
  } catch {
    throw new Error(`dist/index.js is missing: run \`npm run build\` (npm run ${script} does) or pass --dev`);
  }
  const newer: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(`${ROOT}${dir}`, { withFileTypes: true })) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts') && statSync(`${ROOT}${path}`).mtimeMs > built) newer.push(path);
    }
  };
  for (const dir of ['lib', 'protocols', 'runtime']) walk(dir);
  if (statSync(`${ROOT}index.ts`).mtimeMs > built) newer.push('index.ts');
  const parts = [`built ${new Date(built).toISOString()}`];
  parts.push(newer.length === 0 ? 'no source newer than the build' : `WARNING: ${newer.length} source file(s) changed since the build (${newer.slice(0, 3).join(', ')}${newer.length > 3 ? ', …' : ''}); run npm run build`);
  const resolved = import.meta.resolve('orrery');
  parts.push(resolved === benchUrl('../dist/index.js') ? "the driver's 'orrery' is dist/index.js" : `WARNING: the driver's 'orrery' is ${resolved}, not dist/ (drop --conditions=source)`);
  return parts.join('; ');
}

/**
 * What a bench on real processes started — the cluster, the raw responder, the raw client — stopped
 * together when the bench ends, and on SIGINT / SIGTERM (then `stopping` is set, so the bench's own
 * error path stays quiet, and the process exits 130).
 */
export class BenchProcesses {
  local: { stop(): Promise<void> } | undefined;
  responder: ChildProcess | undefined;
  raw: { close(): Promise<void> } | undefined;
  /** Further clusters a section started (bench:e2e --auth). */
  readonly others: { stop(): Promise<void> }[] = [];
  stopping = false;
  readonly #interrupted = (sig: NodeJS.Signals): void => {
    this.stopping = true;
    console.error(`\n${sig}: stopping every process this bench started`);
    void this.cleanup().finally(() => process.exit(130));
  };

  constructor() {
    process.once('SIGINT', this.#interrupted);
    process.once('SIGTERM', this.#interrupted);
  }

  /** Stops everything and stops listening for signals: the bench is over. */
  async end(): Promise<void> {
    await this.cleanup();
    process.removeListener('SIGINT', this.#interrupted);
    process.removeListener('SIGTERM', this.#interrupted);
  }

  async cleanup(): Promise<void> {
    await this.raw?.close().catch(() => undefined);
    this.raw = undefined;
    await stopChild(this.responder);
    this.responder = undefined;
    await this.local?.stop().catch((err: unknown) => console.error(`stopping the cluster: ${String(err)}`));
    this.local = undefined;
    for (const other of this.others.splice(0)) await other.stop().catch((err: unknown) => console.error(`stopping a cluster: ${String(err)}`));
  }
}
