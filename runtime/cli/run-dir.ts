import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OrreryError } from '../../lib/errors.ts';

/**
 * Where `orrery start` records the background processes it started, so `orrery stop` on the same
 * machine can stop them: ORRERY_RUN_DIR, else <tmpdir>/orrery. Logs of those processes go there too.
 */
export interface ProcessRecord {
  role: 'nats-server' | 'gcs' | 'raylet' | 'autoscaler';
  pid: number;
  cluster: string;
  address: string;
  /** A string the process's command line contains, checked before signalling a recorded pid. */
  command: string;
  logFile: string;
  startedAt: string;
  /** A raylet's node id, once it registered (a raylet the autoscaler launched is recorded before). */
  nodeId?: string;
  nodeName?: string;
  /** A raylet the autoscaler's local provider launched: the cluster whose autoscaler owns it. */
  autoscaler?: string;
  /** …and the node type it was launched as. */
  nodeType?: string;
}

/**
 * The run dir, made (mode 0700) when missing. It must be this user's and writable by no one else:
 * what it holds is acted on — pids that `orrery stop`, `orrery down` and the autoscaler signal, the
 * keys `orrery start --listen` writes and then uses — so a directory another user made first (the
 * default is in the shared temporary directory) could have a neighbour's process killed or a
 * neighbour's keys trusted. Refused with RUN_DIR_UNSAFE, naming it (ssh refuses such files alike).
 */
export function runDir(env: NodeJS.ProcessEnv): string {
  const dir = env.ORRERY_RUN_DIR || join(tmpdir(), 'orrery');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkRunDir(dir);
  return dir;
}

/** Throws RUN_DIR_UNSAFE unless `dir` is owned by `uid` and writable by neither group nor others (POSIX only). */
export function checkRunDir(dir: string, uid: number | undefined = process.getuid?.()): void {
  if (uid === undefined || process.platform === 'win32') return;
  const st = statSync(dir);
  const why =
    st.uid !== uid ? `it belongs to uid ${st.uid}, not to you (uid ${uid})` : (st.mode & 0o022) !== 0 ? `it is writable by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8).padStart(3, '0')})` : undefined;
  if (why === undefined) return;
  throw new OrreryError(
    'RUN_DIR_UNSAFE',
    `the run dir ${dir} is not safe to use: ${why}; its records are signalled and its keys trusted. Fix it (chmod go-w), remove it, or set ORRERY_RUN_DIR to a directory of your own`,
    { detail: { dir } },
  );
}

const file = (dir: string): string => join(dir, 'processes.json');

export function readRecords(dir: string): ProcessRecord[] {
  try {
    const parsed = JSON.parse(readFileSync(file(dir), 'utf8')) as { processes?: ProcessRecord[] };
    return Array.isArray(parsed.processes) ? parsed.processes : [];
  } catch {
    return [];
  }
}

export function writeRecords(dir: string, records: ProcessRecord[]): void {
  const tmp = `${file(dir)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ processes: records }, null, 2) + '\n');
  renameSync(tmp, file(dir));
}

export function addRecord(dir: string, record: ProcessRecord): void {
  writeRecords(dir, [...readRecords(dir), record]);
}

export function logFileFor(dir: string, role: string, stamp = Date.now()): string {
  return join(dir, `${role}-${stamp}-${process.pid}.log`);
}
