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
  readonly children: readonly { pid: number; kib: number; command: string }[];
  readonly totalKiB: number;
}

export function treeMemory(root: number): TreeMemory {
  const rootKiB = rssKiB(root);
  const children = descendants(root).map((pid) => ({ pid, kib: rssKiB(pid), command: shortCommand(pid) }));
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
 * VmRSS of an idle Node.js process started with this process's flags (under `--import tsx` that
 * includes the loader's own thread): the floor under every raylet and worker host of the cluster.
 */
export async function idleNodeKiB(settleMs = 3_000): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, '-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    return rssKiB(child.pid!);
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}
