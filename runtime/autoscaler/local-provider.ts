import { isRunning, runsCommand, signal } from '../local/process-tree.ts';
import { entryPath, spawnDetachedRuntimeProcess } from '../local/runtime-process.ts';
import { addRecord, logFileFor, readRecords, runDir, writeRecords, type ProcessRecord } from '../cli/run-dir.ts';
import { rayletArgs, type LaunchedNode, type LaunchRequest, type NodeProvider, type ProvidedNode } from './provider.ts';

const GRACE_MS = 10_000;

/**
 * The `local` provider: each node is a raylet process on this machine, started in the background as
 * `orrery start --address …` starts one, and recorded in the run dir (so `orrery stop` stops it too,
 * and an autoscaler started again finds the nodes it launched before). For development, tests and
 * the examples: every "node" shares this machine's CPUs, whatever resources its type declares.
 */
export class LocalProvider implements NodeProvider {
  readonly kind = 'local';
  readonly #dir: string;

  /**
   * `readyTimeoutMs`: how long a raylet may take to register before this provider kills it and fails
   * the launch. None by default: the autoscaler's `launchTimeoutSeconds` decides when a launch is
   * given up (it then terminates the node), and it does not count a GCS outage, in which no raylet
   * can register — a bound of the provider's own (it was 30 s) killed nodes the config still waited
   * for. A raylet that exits before it registers fails the launch at once, with its log's tail.
   */
  constructor(private readonly opts: { cluster: string; env?: NodeJS.ProcessEnv; readyTimeoutMs?: number }) {
    this.#dir = runDir(opts.env ?? process.env);
  }

  /**
   * Recorded in the run dir the moment the process exists, before it registers: an autoscaler killed
   * while it waits leaves a record, so the next one sees the launch in flight (`launched`) and can
   * terminate the node it becomes, and `orrery stop` stops it. (Killed between the fork and the
   * record's write — the same turn of its event loop — it leaves a raylet the run dir does not know:
   * adopted by name once it registers, but not stopped by this provider.)
   */
  async launch(req: LaunchRequest): Promise<void> {
    const logFile = logFileFor(this.#dir, `raylet-${req.nodeName}`);
    const record: Omit<ProcessRecord, 'pid'> = {
      role: 'raylet',
      cluster: req.cluster,
      address: req.address,
      command: entryPath('raylet'),
      logFile,
      startedAt: new Date().toISOString(),
      nodeName: req.nodeName,
      nodeType: req.nodeType,
      autoscaler: this.opts.cluster,
    };
    let pid: number | undefined;
    const mine = (r: ProcessRecord): boolean => r.pid === pid && r.startedAt === record.startedAt;
    let started: { pid: number; ready: { readonly [key: string]: unknown } };
    try {
      started = await spawnDetachedRuntimeProcess('raylet', rayletArgs(req), {
        logFile,
        readyTimeoutMs: this.opts.readyTimeoutMs ?? Number.POSITIVE_INFINITY,
        onSpawned: (p) => addRecord(this.#dir, { ...record, pid: (pid = p) }),
      });
    } catch (err) {
      // it was killed: nothing of it runs
      if (pid !== undefined) writeRecords(this.#dir, readRecords(this.#dir).filter((r) => !mine(r)));
      throw err;
    }
    writeRecords(this.#dir, readRecords(this.#dir).map((r) => (mine(r) ? { ...r, nodeId: String(started.ready.nodeId) } : r)));
  }

  /** The raylets recorded for this cluster's autoscaler whose process still runs. */
  async launched(): Promise<LaunchedNode[]> {
    return this.#records()
      .filter((r) => r.nodeType !== undefined && runsCommand(r.pid, r.command))
      .map((r) => ({ nodeType: r.nodeType!, nodeName: r.nodeName!, since: Date.parse(r.startedAt) }));
  }

  async terminate(node: ProvidedNode): Promise<void> {
    const mine = this.#records().filter((r) => r.nodeName === node.nodeName);
    for (const r of mine) {
      if (runsCommand(r.pid, r.command)) {
        signal(-r.pid, 'SIGTERM');
        const deadline = Date.now() + GRACE_MS;
        while (isRunning(r.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        signal(-r.pid, 'SIGKILL');
      }
    }
    writeRecords(this.#dir, readRecords(this.#dir).filter((r) => !mine.some((m) => m.pid === r.pid && m.startedAt === r.startedAt)));
  }

  async close(): Promise<void> {}

  #records(): ProcessRecord[] {
    return readRecords(this.#dir).filter((r) => r.role === 'raylet' && r.autoscaler === this.opts.cluster && r.nodeName !== undefined);
  }
}
