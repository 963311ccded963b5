import { readFileSync, readdirSync } from 'node:fs';

/**
 * The processes below `pid` (children, grandchildren, …), read from /proc. A raylet forks its worker
 * hosts; killing a node abruptly means killing them too, as a machine that dies takes its processes
 * with it. Collect the tree before killing the parent: orphans are re-parented and drop out of it.
 * Empty where /proc does not exist.
 */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = parentOf(name);
    if (ppid === undefined) continue;
    const list = children.get(ppid);
    if (list) list.push(Number(name));
    else children.set(ppid, [Number(name)]);
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

function parentOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …" — comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists and has not exited (a zombie waiting to be reaped has). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Sends a signal, ignoring a process that is already gone. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/**
 * Whether `pid` runs and its command line contains `command` (a recorded process's entry): a pid
 * recorded long ago may belong to another process now. Where /proc cannot be read, whether it runs.
 */
export function runsCommand(pid: number, command: string): boolean {
  if (!isRunning(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some((arg) => arg.includes(command));
  } catch {
    return true;
  }
}
