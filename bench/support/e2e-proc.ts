/**
 * Resident memory of a process tree, read from /proc: VmRSS of /proc/<pid>/status, children found by
 * the ppid field of /proc/<pid>/stat (runtime/local/process-tree.ts). Linux only.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { descendants } from '../../runtime/local/process-tree.ts';

/** VmRSS in KiB; 0 when the process is gone. */
export function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
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
  readonly rootKiB: number;
  /** Every process below the root (a raylet's worker hosts). */
  readonly children: readonly { pid: number; kib: number; command: string; node: boolean }[];
  readonly totalKiB: number;
}

export function treeMemory(root: number): TreeMemory {
  const rootKiB = rssKiB(root);
  // node: a Node.js process (a worker host), not a helper such as tsx's esbuild service
  const children = descendants(root).map((pid) => ({ pid, kib: rssKiB(pid), command: shortCommand(pid), node: commandLine(pid)[0] === process.execPath }));
  return { rootKiB, children, totalKiB: rootKiB + children.reduce((a, c) => a + c.kib, 0) };
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
  const child = spawn(process.execPath, [...flags, '-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    return rssKiB(child.pid!);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}
