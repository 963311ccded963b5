/**
 * Resident memory of a process tree, read from /proc: VmRSS, RssAnon and RssFile of /proc/<pid>/status
 * and PSS of /proc/<pid>/smaps_rollup, children found by the ppid field of /proc/<pid>/stat
 * (runtime/local/process-tree.ts). Linux only.
 *
 * VmRSS counts every page a process has resident, including the pages of the node binary it maps
 * (RssFile: ~33 MB for an empty process, ~41 MB once V8's optimizing compiler has run), which every
 * Node.js process on the machine shares. RssAnon is the process's own memory (heap, stacks, malloc);
 * PSS divides each shared page among the processes that map it, so it moves with whatever other
 * Node.js processes run on the machine.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { descendants } from '../../runtime/local/process-tree.ts';

/** VmRSS in KiB; 0 when the process is gone. */
export function rssKiB(pid: number): number {
  return memoryKiB(pid).rss;
}

/** A process's resident memory, KiB: VmRSS = RssAnon + RssFile (+ RssShmem); PSS its proportional share. */
export interface ProcessMemory {
  readonly rss: number;
  readonly anon: number;
  readonly file: number;
  readonly pss: number;
}

const NO_MEMORY: ProcessMemory = { rss: 0, anon: 0, file: 0, pss: 0 };

/** VmRSS, RssAnon, RssFile (/proc/<pid>/status) and PSS (/proc/<pid>/smaps_rollup), KiB; zeros when the process is gone. */
export function memoryKiB(pid: number): ProcessMemory {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const pss = Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
    return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile'), pss };
  } catch {
    return NO_MEMORY;
  }
}

/** The sum of processes' memory, field by field. */
export function sumMemory(list: readonly ProcessMemory[]): ProcessMemory {
  return list.reduce((a, m) => ({ rss: a.rss + m.rss, anon: a.anon + m.anon, file: a.file + m.file, pss: a.pss + m.pss }), NO_MEMORY);
}

export function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** The raylet process of the node called `nodeName` among the processes below `root`. */
export function findRayletPid(root: number, nodeName: string): number {
  for (const pid of descendants(root)) {
    const argv = commandLine(pid);
    const at = argv.indexOf('--node-name');
    if (argv.some((a) => /raylet[/\\]main\.(ts|js)$/.test(a)) && at >= 0 && argv[at + 1] === nodeName) return pid;
  }
  throw new Error(`no raylet process for node ${nodeName} below pid ${root}`);
}

/** The script a node process runs (`worker/main.ts`), else the executable's name. */
export function shortCommand(pid: number): string {
  const argv = commandLine(pid);
  const script = argv.find((a) => /\.(ts|js|mjs|cjs)$/.test(a));
  const name = script ?? argv[0] ?? '?';
  return name.split(/[/\\]/).slice(-2).join('/');
}

export interface TreeMemory {
  /** VmRSS of the root, KiB. */
  readonly rootKiB: number;
  readonly root: ProcessMemory;
  /** Every process below the root (a raylet's worker hosts); `kib` is its VmRSS. */
  readonly children: readonly { pid: number; kib: number; memory: ProcessMemory; command: string; node: boolean }[];
  /** VmRSS of the tree, KiB. */
  readonly totalKiB: number;
  readonly total: ProcessMemory;
}

export function treeMemory(root: number): TreeMemory {
  const rootMemory = memoryKiB(root);
  // node: a Node.js process (a worker host), not a helper such as tsx's esbuild service
  const children = descendants(root).map((pid) => {
    const memory = memoryKiB(pid);
    return { pid, kib: memory.rss, memory, command: shortCommand(pid), node: commandLine(pid)[0] === process.execPath };
  });
  const total = sumMemory([rootMemory, ...children.map((c) => c.memory)]);
  return { rootKiB: rootMemory.rss, root: rootMemory, children, totalKiB: total.rss, total };
}

/** Whether /proc is readable here (the memory section needs it). */
export function hasProc(): boolean {
  try {
    readdirSync('/proc/self');
    return true;
  } catch {
    return false;
  }
}

/**
 * The Node flags a node process runs with: its argv between the executable and the script
 * (`--max-semi-space-size=2` for a worker host on plain node; `--conditions=source --import tsx …`
 * under tsx).
 */
export function nodeFlagsOf(pid: number): string[] {
  const argv = commandLine(pid);
  const script = argv.findIndex((a, i) => i > 0 && /\.(ts|js|mjs|cjs)$/.test(a) && argv[i - 1] !== '--import');
  return argv.slice(1, script < 0 ? argv.length : script);
}

/**
 * VmRSS of an idle Node.js process started with `flags` — the cluster processes' flags, so the
 * floor under every raylet and worker host of the cluster ([] on plain node; under `--import tsx`
 * it includes the loader's own thread).
 */
export async function idleNodeKiB(flags: readonly string[], settleMs = 3_000): Promise<number> {
  return (await idleNodeMemory(flags, { settleMs })).rss;
}

/**
 * An empty loop keeps the process alive; `warm` first runs one hot loop, so V8's optimizing compiler
 * (TurboFan) runs once, as it does in any process that does work: its code is part of the node
 * binary and stays resident once touched (~4 MB of RssFile), and its zone memory stays in malloc.
 */
const IDLE = 'setInterval(() => {}, 60_000)';
const WARM = 'let s = 0; for (let i = 0; i < 1e7; i++) s += i; globalThis.s = s; setInterval(() => {}, 60_000)';

/** The same, connected to `natsAddress` with nats.js and nothing else: the floor under a process that talks to NATS. */
const natsClient = (address: string): string =>
  `import { connect } from '@nats-io/transport-node'; await connect({ servers: ${JSON.stringify(address)} }); ${WARM}`;

/** The repository's root, where `@nats-io/transport-node` resolves from (this file is bench/support/). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The memory of an idle Node.js process started with `flags`; with `warm`, one that has optimized a
 * function once; with `natsAddress`, also a nats.js connection to that server.
 */
export async function idleNodeMemory(flags: readonly string[], opts: { settleMs?: number; warm?: boolean; natsAddress?: string } = {}): Promise<ProcessMemory> {
  const script = opts.natsAddress !== undefined ? ['--input-type=module', '-e', natsClient(opts.natsAddress)] : ['-e', opts.warm ? WARM : IDLE];
  const child = spawn(process.execPath, [...flags, ...script], { stdio: 'ignore', cwd: ROOT });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise((resolve) => setTimeout(resolve, opts.settleMs ?? 3_000));
    return memoryKiB(child.pid!);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}
