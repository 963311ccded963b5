import { join } from 'node:path';
import { NATS_DEFAULT_PORT, startNatsServer, type NatsServerHandle } from '../local/nats-server.ts';

/**
 * The nats-server orrery starts listens on loopback only: with no credentials on the bus (issue 14),
 * anyone who can reach the port could run code and take the cluster over.
 */
const LOOPBACK = '127.0.0.1';
import { isRunning, signal } from '../local/process-tree.ts';
import {
  entryPath,
  spawnDetachedRuntimeProcess,
  spawnRuntimeProcess,
  type ReadyInfo,
  type RuntimeProcess,
  type RuntimeRole,
} from '../local/runtime-process.ts';
import type { CliIo } from './io.ts';
import { addRecord, logFileFor, readRecords, runDir, writeRecords, type ProcessRecord } from './run-dir.ts';

export interface Started {
  readonly pid: number;
  readonly ready: ReadyInfo;
}

/**
 * How `orrery start` runs what it starts: in the background, recorded for `orrery stop`
 * (DetachedSession), or attached to the command with --block (AttachedSession).
 */
export interface Session {
  /** nats-server on 127.0.0.1 at port 4222: this machine only (no authentication yet: docs/security.md). */
  /** nats-server on port 4222 of `host` (default 127.0.0.1), with `config` (auth) when given. */
  startNats(opts?: { host?: string; config?: string; autoscaler?: string }): Promise<string>;
  /** `readyTimeoutMs`: how long it may take to print its ready line (default runtime-process.ts's). */
  start(role: RuntimeRole, args: string[], meta: { cluster: string; address: string; autoscaler?: string }, opts?: { readyTimeoutMs?: number }): Promise<Started>;
  /** Stops what this session started (a later step failed). */
  abort(): Promise<void>;
}

export class DetachedSession implements Session {
  private readonly dir: string;
  private readonly mine: ProcessRecord[] = [];

  constructor(env: NodeJS.ProcessEnv) {
    this.dir = runDir(env);
  }

  get runDir(): string {
    return this.dir;
  }

  async startNats(opts: { host?: string; config?: string; autoscaler?: string } = {}): Promise<string> {
    const logFile = logFileFor(this.dir, 'nats-server');
    // JetStream keeps the GCS's tables (a restarted GCS recovers them); its store lives in the run dir
    const nats = await startNatsServer({ host: opts.host ?? LOOPBACK, port: NATS_DEFAULT_PORT, storeDir: join(this.dir, 'jetstream'), detached: { logFile }, ...(opts.config ? { config: opts.config } : {}) });
    this.record({ role: 'nats-server', pid: nats.pid, cluster: '', address: nats.url, command: 'nats-server', logFile, startedAt: new Date().toISOString(), ...(opts.autoscaler ? { autoscaler: opts.autoscaler } : {}) });
    return nats.url;
  }

  async start(role: RuntimeRole, args: string[], meta: { cluster: string; address: string; autoscaler?: string }, opts: { readyTimeoutMs?: number } = {}): Promise<Started> {
    const logFile = logFileFor(this.dir, role);
    const started = await spawnDetachedRuntimeProcess(role, args, { logFile, ...opts });
    this.record({
      role,
      pid: started.pid,
      ...meta,
      command: entryPath(role),
      logFile,
      startedAt: new Date().toISOString(),
      ...(role === 'raylet' ? { nodeId: String(started.ready.nodeId), nodeName: String(started.ready.nodeName) } : {}),
    });
    return started;
  }

  async abort(): Promise<void> {
    for (const r of [...this.mine].reverse()) {
      signal(-r.pid, 'SIGKILL');
      while (isRunning(r.pid)) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    writeRecords(this.dir, readRecords(this.dir).filter((r) => !this.mine.some((m) => m.pid === r.pid && m.startedAt === r.startedAt)));
  }

  private record(r: ProcessRecord): void {
    this.mine.push(r);
    addRecord(this.dir, r);
  }
}

export class AttachedSession implements Session {
  private nats: NatsServerHandle | undefined;
  private readonly children: RuntimeProcess[] = [];

  constructor(private readonly io: CliIo) {}

  async startNats(opts: { host?: string; config?: string } = {}): Promise<string> {
    this.nats = await startNatsServer({ host: opts.host ?? LOOPBACK, port: NATS_DEFAULT_PORT, jetstream: true, ...(opts.config ? { config: opts.config } : {}) });
    return this.nats.url;
  }

  async start(role: RuntimeRole, args: string[], _meta?: unknown, opts: { readyTimeoutMs?: number } = {}): Promise<Started> {
    const child = await spawnRuntimeProcess(role, args, { onLine: (line) => this.io.err(`[${role}] ${line}`), ...opts });
    this.children.push(child);
    return child;
  }

  /**
   * Runs until SIGINT or SIGTERM (exit code 0) or until a child exits on its own (1), then stops
   * everything: raylets, GCS, nats-server.
   */
  async block(): Promise<number> {
    let onSignal!: () => void;
    const signalled = new Promise<number>((resolve) => (onSignal = () => resolve(0)));
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const died = Promise.race(this.children.map((c) => c.exited.then(() => c)));
    const code = await Promise.race([
      signalled,
      died.then((c) => {
        this.io.err(`orrery start: the ${c.role} process (pid ${c.pid}) exited; stopping the others`);
        return 1;
      }),
    ]);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await this.abort();
    return code;
  }

  async abort(): Promise<void> {
    for (const c of [...this.children].reverse()) await c.stop();
    await this.nats?.stop();
  }
}
