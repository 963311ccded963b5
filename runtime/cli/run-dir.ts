import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

export function runDir(env: NodeJS.ProcessEnv): string {
  const dir = env.ORRERY_RUN_DIR || join(tmpdir(), 'orrery');
  mkdirSync(dir, { recursive: true });
  return dir;
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
