// For specs that freeze a process with SIGSTOP: a stop takes each of its threads as it next leaves
// the kernel, so "frozen" is a condition to wait for, not the moment the signal was sent.
import { readdirSync, readFileSync } from 'node:fs';

/** Whether every thread of process `pid` is stopped (state T in /proc). */
export function frozen(pid: number): boolean {
  return readdirSync(`/proc/${pid}/task`).every((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
  });
}
