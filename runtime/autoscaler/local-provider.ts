import { isRunning, signal } from '../local/process-tree.ts';
import { entryPath, spawnDetachedRuntimeProcess } from '../local/runtime-process.ts';
import { addRecord, logFileFor, readRecords, runDir, writeRecords, type ProcessRecord } from '../cli/run-dir.ts';
import { rayletArgs, type LaunchRequest, type NodeProvider, type ProvidedNode } from './provider.ts';

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

  constructor(private readonly opts: { cluster: string; env?: NodeJS.ProcessEnv; readyTimeoutMs?: number }) {
    this.#dir = runDir(opts.env ?? process.env);
  }

  async launch(req: LaunchRequest): Promise<void> {
    const logFile = logFileFor(this.#dir, `raylet-${req.nodeName}`);
    const started = await spawnDetachedRuntimeProcess('raylet', rayletArgs(req), { logFile, readyTimeoutMs: this.opts.readyTimeoutMs });
    addRecord(this.#dir, {
      role: 'raylet',
      pid: started.pid,
      cluster: req.cluster,
      address: req.address,
      command: entryPath('raylet'),
      logFile,
      startedAt: new Date().toISOString(),
      nodeId: String(started.ready.nodeId),
      nodeName: req.nodeName,
      autoscaler: this.opts.cluster,
    });
  }

  async terminate(node: ProvidedNode): Promise<void> {
    const mine = this.#records().filter((r) => r.nodeName === node.nodeName);
    for (const r of mine) {
      if (isRunning(r.pid)) {
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
