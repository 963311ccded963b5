import { parseArgs } from '../args.ts';
import type { CliIo } from '../io.ts';
import { readRecords, runDir, writeRecords, type ProcessRecord } from '../run-dir.ts';
import { isRunning, runsCommand, signal } from '../../local/process-tree.ts';

const GRACE_MS = 10_000;
// the autoscaler first: stopped later, it would launch nodes for the work the stopped raylets leave
const ORDER: ProcessRecord['role'][] = ['autoscaler', 'raylet', 'gcs', 'nats-server'];

/**
 * `orrery stop`: stops the background processes `orrery start` recorded on this machine — raylets
 * first, then the GCS, then a nats-server it started — each with SIGTERM to its process group, then
 * SIGKILL after a grace period.
 */
export async function stop(argv: readonly string[], io: CliIo): Promise<number> {
  parseArgs('stop', argv, {});
  const dir = runDir(io.env);
  const records = readRecords(dir);
  if (records.length === 0) {
    io.out(`no orrery processes are recorded in ${dir}`);
    return 0;
  }
  for (const role of ORDER) {
    const group = records.filter((r) => r.role === role);
    await Promise.all(
      group.map(async (r) => {
        const what = `${r.role}${r.nodeName ? ` ${r.nodeName}` : ''} (pid ${r.pid})`;
        if (!runsCommand(r.pid, r.command)) return io.out(`${what} was not running`);
        await terminate(r.pid);
        io.out(`stopped ${what}`);
      }),
    );
  }
  writeRecords(dir, readRecords(dir).filter((r) => !records.some((done) => done.pid === r.pid && done.startedAt === r.startedAt)));
  return 0;
}

/** SIGTERM to the process group (each was started detached, as a group leader), SIGKILL after the grace period. */
async function terminate(pid: number): Promise<void> {
  signal(-pid, 'SIGTERM');
  const deadline = Date.now() + GRACE_MS;
  while (isRunning(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  signal(-pid, 'SIGKILL');
}

