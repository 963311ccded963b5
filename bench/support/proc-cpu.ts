/**
 * CPU time of the processes below this one, by role, read from /proc/<pid>/stat (utime + stime) —
 * what each process actually ran, unlike a CPU profile's samples, which on a loaded machine also
 * count the time a process waited for a core. Linux only.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { descendants } from '../../runtime/local/process-tree.ts';
import { commandLine } from './e2e-proc.ts';

export type Role = 'driver' | 'GCS' | 'raylets' | 'worker hosts' | 'nats-server' | 'other';
export const ROLES: readonly Role[] = ['driver', 'GCS', 'raylets', 'worker hosts', 'nats-server', 'other'];

let ticksPerSecond: number | undefined;
function hz(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime of a process in seconds; 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command (which may hold spaces) start after the last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / hz();
  } catch {
    return 0;
  }
}

/**
 * How many times a process's main thread gave up the CPU of its own accord (`voluntary_ctxt_switches`
 * in /proc/<pid>/status): for a Node.js process, about one per event-loop wake-up — it sleeps in
 * epoll_wait until a message or a timer wakes it. 0 when it is gone. Linux only.
 */
export function voluntarySwitches(pid: number): number {
  try {
    const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Voluntary switches (voluntarySwitches) of every process below this one of a role, summed. */
export function switchesOf(role: Role): number {
  let sum = 0;
  for (const pid of descendants(process.pid)) if (roleOf(pid) === role) sum += voluntarySwitches(pid);
  return sum;
}

function roleOf(pid: number): Role {
  const argv = commandLine(pid);
  if (argv.some((a) => /gcs[/\\]main\.(ts|js)$/.test(a))) return 'GCS';
  if (argv.some((a) => /raylet[/\\]main\.(ts|js)$/.test(a))) return 'raylets';
  if (argv.some((a) => /worker[/\\]main\.(ts|js)$/.test(a))) return 'worker hosts';
  if (argv.some((a) => /nats-server$/.test(a))) return 'nats-server';
  return 'other';
}

/** CPU seconds so far of this process and of every process below it, per pid, with its role. */
export type CpuSnapshot = Map<number, { role: Role; seconds: number }>;

export function cpuSnapshot(): CpuSnapshot {
  const snap: CpuSnapshot = new Map();
  const own = process.cpuUsage();
  snap.set(process.pid, { role: 'driver', seconds: (own.user + own.system) / 1e6 });
  for (const pid of descendants(process.pid)) snap.set(pid, { role: roleOf(pid), seconds: cpuSeconds(pid) });
  return snap;
}

/** CPU seconds each role used between two snapshots (a process absent from `before` counts from 0). */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Record<Role, number> {
  const out = Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>;
  for (const [pid, a] of after) out[a.role] += Math.max(0, a.seconds - (before.get(pid)?.seconds ?? 0));
  return out;
}
