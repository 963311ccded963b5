/**
 * The processes of bench/gcs.ts's control-plane fault sections, started one by one so the bench
 * can give each GCS its own flags, kill it and start another: a nats-server with JetStream on a free
 * port (never 4222), GCS processes, raylet processes and a connected client — what
 * spec/integration/gcs-restart.spec.ts and gcs-standby.spec.ts do, from the mode's tree (dist/ on
 * plain node, or the source under tsx). Every output line is kept with the time it arrived here,
 * so a section can time a process by its log lines. `stop()` ends everything started, failure or not
 * (and BenchProcesses calls it on SIGINT / SIGTERM).
 */
import { performance } from 'node:perf_hooks';
import type { Cluster } from '../../runtime/index.ts';
import type { RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import type { NatsServerHandle } from '../../runtime/local/nats-server.ts';
import type { Mode } from './bench-run.ts';

export interface FaultModules {
  readonly startNatsServer: typeof import('../../runtime/local/nats-server.ts').startNatsServer;
  readonly spawnRuntimeProcess: typeof import('../../runtime/local/runtime-process.ts').spawnRuntimeProcess;
  readonly connect: typeof import('../../runtime/index.ts').connect;
}

/** One output line of a process this set started, with `performance.now()` when it arrived. */
export interface OutputLine {
  readonly at: number;
  readonly source: string;
  readonly line: string;
}

export interface FaultClusterOptions {
  readonly mode: Mode;
  readonly modules: FaultModules;
  readonly cluster: string;
  /** Node flags added for GCS processes only, e.g. ['--cpu-prof', '--cpu-prof-dir', dir]. */
  readonly gcsFlags?: readonly string[];
}

const WAIT_MS = 60_000;

export class FaultCluster {
  nats: NatsServerHandle | undefined;
  client: Cluster | undefined;
  readonly gcses: RuntimeProcess[] = [];
  readonly raylets: RuntimeProcess[] = [];
  readonly lines: OutputLine[] = [];
  readonly #waiters = new Set<() => void>();

  constructor(readonly opts: FaultClusterOptions) {}

  async start(): Promise<void> {
    this.nats = await this.opts.modules.startNatsServer({ jetstream: true });
  }

  get address(): string {
    if (!this.nats) throw new Error('the nats-server is not started');
    return this.nats.url;
  }

  /** Starts a GCS process with `args` (after --address and --cluster); resolves at its READY line. */
  async gcs(args: readonly string[], name = `gcs-${this.gcses.length + 1}`): Promise<RuntimeProcess> {
    const flags = [...this.opts.mode.nodeFlags, ...(this.opts.gcsFlags ?? [])];
    const p = await this.opts.modules.spawnRuntimeProcess('gcs', ['--address', this.address, '--cluster', this.opts.cluster, ...args], {
      nodeFlags: flags,
      onLine: (line) => this.#keep(name, line),
      readyTimeoutMs: WAIT_MS,
    });
    this.gcses.push(p);
    return p;
  }

  async raylet(name: string, cpus: number): Promise<RuntimeProcess> {
    const p = await this.opts.modules.spawnRuntimeProcess('raylet', ['--address', this.address, '--cluster', this.opts.cluster, '--node-name', name, '--num-cpus', String(cpus)], {
      nodeFlags: this.opts.mode.nodeFlags,
      onLine: (line) => this.#keep(name, line),
      readyTimeoutMs: WAIT_MS,
    });
    this.raylets.push(p);
    return p;
  }

  async connect(): Promise<Cluster> {
    this.client = await this.opts.modules.connect({ address: this.address, cluster: this.opts.cluster });
    return this.client;
  }

  /** The first line of `source` matching `pattern` that arrived at or after `since`, waiting for it. */
  async line(source: string, pattern: RegExp, since: number, timeoutMs = WAIT_MS): Promise<OutputLine> {
    const find = (): OutputLine | undefined => this.lines.find((l) => l.at >= since && l.source === source && pattern.test(l.line));
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found) return found;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no line matching ${pattern} from ${source} within ${timeoutMs} ms; its last lines:\n${this.tail(source)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.#waiters.add(done);
      });
    }
  }

  /** The last `n` lines of `source`, each with its arrival in ms after `since` when given. */
  tail(source: string, n = 10, since?: number): string {
    const when = (l: OutputLine): string => (since === undefined ? '' : ` (+${(l.at - since).toFixed(0)} ms)`);
    return this.lines.filter((l) => l.source === source).slice(-n).map((l) => `  ${l.source}${when(l)}: ${l.line}`).join('\n');
  }

  /** Client, raylets, GCS processes, nats-server: everything this set started, each stop awaited. */
  async stop(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    this.client = undefined;
    for (const p of [...this.raylets.splice(0), ...this.gcses.splice(0)]) await p.stop().catch(() => undefined);
    await this.nats?.stop().catch(() => undefined);
    this.nats = undefined;
  }

  #keep(source: string, line: string): void {
    this.lines.push({ at: performance.now(), source, line });
    if (this.lines.length > 5_000) this.lines.splice(0, 1_000);
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }
}

/** What a fault section gets from bench/gcs.ts: the mode's modules and actor class, and where its figures go. */
export interface SectionContext {
  readonly mode: Mode;
  readonly modules: FaultModules;
  readonly NoopActor: typeof import('../fixtures/actors.ts').NoopActor;
  readonly quick: boolean;
  /** Node flags for GCS processes only (--gcs-cpu-prof DIR). */
  readonly gcsFlags: readonly string[];
  /** Registers a set so SIGINT / SIGTERM stop it too (BenchProcesses.local). */
  readonly track: (set: FaultCluster | undefined) => void;
  readonly progress: (line: string) => void;
}

/** Starts a set, runs `body` with it, and stops it whatever happens. */
export async function withFaultCluster<T>(ctx: SectionContext, cluster: string, body: (fc: FaultCluster) => Promise<T>): Promise<T> {
  const fc = new FaultCluster({ mode: ctx.mode, modules: ctx.modules, cluster, gcsFlags: ctx.gcsFlags });
  ctx.track(fc);
  try {
    await fc.start();
    return await body(fc);
  } finally {
    await fc.stop();
    ctx.track(undefined);
  }
}
