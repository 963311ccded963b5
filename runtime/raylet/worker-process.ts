import { refsToIpc } from '../../protocols/actor-ref.ts';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OrreryError } from '../../lib/errors.ts';
import type { NatsAccess } from '../process/flags.ts';
import { fromWireError } from '../../protocols/errors.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import { specializeError } from '../errors.ts';
import type { HostNode } from '../worker/host.ts';
import { isHostToRaylet, parseHostToRaylet, type ActorRequest, type HostLease, type HostToRaylet, type RayletToHost } from '../../protocols/ipc.ts';
import { TurnBatch } from '../worker/turn-batch.ts';
import { RejectionLog } from '../process/rejection-log.ts';
import type { RunTask } from '../worker/task-runner.ts';
import type { WorkerHost } from './worker-host.ts';

/** The worker host's entry beside this file's tree: `.ts` in the source tree, `.js` in dist/. */
export const WORKER_ENTRY = fileURLToPath(new URL(`../worker/main${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url));

export interface WorkerProcessOptions {
  cluster: string;
  natsAddress: string;
  /** Paths of the node's credentials and TLS files (never their contents): the host connects as the node. */
  natsAccess?: NatsAccess;
  node: HostNode;
  log?: (line: string) => void;
  /** How long the child may take to connect and say ready; default 30,000 ms. */
  startTimeoutMs?: number;
  /** How long a graceful stop may take before SIGKILL; default 5,000 ms. */
  stopTimeoutMs?: number;
  /** Node/V8 flags for the host, after this process's own execArgv; default DEFAULT_WORKER_FLAGS. */
  execArgv?: readonly string[];
  /** The raylet's fence lease the host starts with (protocols/ipc.ts `init`); absent: the host never fences itself. */
  lease?: HostLease;
  /** The raylet's lease as it stands now, sent again once the host is ready (its start took time). */
  freshLease?: () => HostLease | undefined;
  /** The node's code roots (protocols/code-source.ts), sent with `init`; absent or empty: none. */
  codeRoots?: readonly string[];
}

/**
 * A worker host holds many idle actors, so its young generation is kept small: V8 grows each
 * semi-space to 16 MB under a burst of calls or creates and gives the memory back only after tens
 * of seconds of idleness (a host with nothing to do may never run the GC that would). At 2 MB a
 * host with 2,500 idle actors sits ~4 MB lower than at 4 MB (heap snapshot: 0.3 MB of the 8 MB
 * young generation in use after the burst), and calls and creates measured no slower (bench:e2e,
 * docs/benchmarks.md). Allocation-heavy actor code may want more: a host started with its own
 * --max-semi-space-size keeps that one.
 */
export const DEFAULT_WORKER_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/** This process's execArgv plus `extra`, leaving out extra flags this process already sets. */
export function workerExecArgv(own: readonly string[], extra: readonly string[]): string[] {
  const name = (flag: string) => flag.split('=')[0].replace(/_/g, '-');
  const set = new Set(own.map(name));
  return [...own, ...extra.filter((flag) => !set.has(name(flag)))];
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/**
 * A worker host in a child process (runtime/worker/main.ts), forked with this process's
 * execPath and execArgv so it runs under the same loader (tsx, --conditions=source) in development.
 */
export class WorkerProcess implements WorkerHost {
  /** IPC messages of the host that failed their validator (protocols/ipc.ts): counted, logged per code per minute. */
  private readonly rejections = new RejectionLog('raylet: worker host IPC', (line) => this.opts.log?.(line));
  readonly exited: Promise<string>;
  private readonly pending = new Map<number, Pending>();
  onLeaseEnded?: (leaseId: string) => void;
  private outbox: { id: number; task: RunTask }[] = [];
  /** Creates and kills of one turn, sent as one `requests` message (protocols/ipc.ts). */
  private readonly requests = new TurnBatch<ActorRequest>((list) => this.sendNow({ type: 'requests', requests: list }));
  private nextId = 1;
  private gone: string | undefined;
  /** A renewal waiting for the end of its turn (lease()). */
  private pendingRenewal: NodeJS.Immediate | undefined;

  private constructor(private readonly child: ChildProcess, private readonly opts: WorkerProcessOptions) {
    this.exited = new Promise((resolve) => {
      const end = (how: string, detail: Record<string, unknown>) => {
        if (this.gone !== undefined) return;
        this.gone = how;
        const err = new OrreryError('WORKER_EXITED', `the worker host (pid ${child.pid}) exited (${how})`, { detail: { pid: child.pid, ...detail } });
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        resolve(how);
      };
      child.once('exit', (code, signal) => end(signal ? `signal ${signal}` : `code ${code}`, { code, signal }));
      child.on('error', (err) => {
        // A child that could not be spawned never exits; any other error (an IPC write to a child
        // that just died) is followed by its exit.
        if (child.pid === undefined) end(`spawn failed: ${err.message}`, { reason: err.message });
        else opts.log?.(`worker host ${child.pid}: ${err.message}`);
      });
    });
    child.on('message', (message: unknown) => this.onMessage(message));
  }

  /** Forks a host and resolves once it is connected to NATS and ready for creates. */
  static async start(opts: WorkerProcessOptions): Promise<WorkerProcess> {
    const child = fork(WORKER_ENTRY, [], {
      execPath: process.execPath,
      execArgv: workerExecArgv(process.execArgv, opts.execArgv ?? DEFAULT_WORKER_FLAGS),
      serialization: 'advanced',
      stdio: ['ignore', 2, 2, 'ipc'],
    });
    const host = new WorkerProcess(child, opts);
    const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    let onMessage: ((message: unknown) => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(startFailed(child, `no ready message within ${startTimeoutMs} ms`)), startTimeoutMs);
        onMessage = (message: unknown) => {
          if (!isHostToRaylet(message)) return;
          if (message.type === 'ready') {
            // the lease sent with init aged while the host started (a second or more on a busy
            // machine): a fresh one now, before any create, so no actor starts behind a fence
            const fresh = opts.freshLease?.();
            if (fresh) host.lease(fresh);
            resolve();
          }
          if (message.type === 'failed') reject(startFailed(child, message.message));
        };
        child.on('message', onMessage);
        void host.exited.then((how) => reject(startFailed(child, `it exited (${how})`)));
        host.send({ type: 'init', cluster: opts.cluster, natsAddress: opts.natsAddress, ...(opts.natsAccess && Object.keys(opts.natsAccess).length > 0 ? { natsAccess: opts.natsAccess } : {}), node: opts.node, ...(opts.lease ? { lease: opts.lease } : {}), ...(opts.codeRoots?.length ? { codeRoots: opts.codeRoots } : {}) });
      });
    } catch (err) {
      host.crash();
      throw err;
    } finally {
      clearTimeout(timer);
      if (onMessage) child.off('message', onMessage);
    }
    return host;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  async create(spec: CreateActor): Promise<void> {
    await this.request((id) => ({ type: 'create', id, actor: spec }));
  }

  async kill(actorId: string): Promise<boolean> {
    return (await this.request((id) => ({ type: 'kill', id, actorId }))) === true;
  }

  /** Tasks handed over in one turn go in one IPC message; `ended` resolves them (see protocols/ipc.ts). */
  runTask(task: RunTask): Promise<void> {
    if (this.gone !== undefined) {
      return Promise.reject(new OrreryError('WORKER_EXITED', `the worker host (pid ${this.pid}) has exited (${this.gone})`, { detail: { pid: this.pid } }));
    }
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve: () => resolve(), reject });
      if (this.outbox.length === 0) queueMicrotask(() => this.flushTasks());
      this.outbox.push({ id, task });
    });
  }

  cancelTasks(taskIds: readonly string[]): void {
    if (this.gone === undefined) this.send({ type: 'cancel', taskIds });
  }

  revokeLeases(leaseIds: readonly string[]): void {
    if (this.gone === undefined) this.send({ type: 'revoke', leaseIds });
  }

  /**
   * The raylet's fence, for the host's watchdog. A fence goes at once (after the creates and kills
   * gathered so far). A renewal — which lifts a fence — goes in the check phase of this turn, after
   * the turn's kills: a raylet declared dead and registering again hears the GCS kill the actors it
   * moved elsewhere and then its registration answered, both in one turn, and the kills reach the
   * host through promise chains and a turn batch. Sent at once, the renewal overtook them and a
   * stale incarnation answered calls for a moment beside its successor (fencing.spec.ts caught it
   * under load). A fence made meanwhile cancels the pending renewal.
   */
  lease(lease: HostLease): void {
    if (this.gone !== undefined) return;
    if (lease.type === 'fence') {
      if (this.pendingRenewal !== undefined) clearImmediate(this.pendingRenewal);
      this.pendingRenewal = undefined;
      this.send(lease);
      return;
    }
    if (this.pendingRenewal !== undefined) clearImmediate(this.pendingRenewal);
    this.pendingRenewal = setImmediate(() => {
      this.pendingRenewal = undefined;
      if (this.gone === undefined) this.send(lease);
    });
  }

  private flushTasks(): void {
    const tasks = this.outbox;
    this.outbox = [];
    if (tasks.length > 0 && this.gone === undefined) this.send({ type: 'tasks', tasks });
  }

  async stop(): Promise<void> {
    if (this.gone === undefined) {
      this.send({ type: 'exit' });
      const timer = setTimeout(() => this.crash(), this.opts.stopTimeoutMs ?? 5000);
      await this.exited;
      clearTimeout(timer);
    }
  }

  crash(): void {
    if (this.gone === undefined) this.child.kill('SIGKILL');
  }

  private request(make: (id: number) => ActorRequest): Promise<unknown> {
    if (this.gone !== undefined) {
      return Promise.reject(new OrreryError('WORKER_EXITED', `the worker host (pid ${this.pid}) has exited (${this.gone})`, { detail: { pid: this.pid } }));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.requests.push(make(id));
    });
  }

  /** Sends at once, after the creates and kills gathered so far: the host sees them in order. */
  private send(message: RayletToHost): void {
    this.requests.flush();
    this.sendNow(message);
  }

  /**
   * A message the IPC channel cannot carry (serializing it threw) fails the requests and tasks it
   * held, not the raylet: payloads are checked where they enter (protocols/plain-data.ts), and this
   * is the last line if one gets past.
   */
  private sendNow(message: RayletToHost): void {
    if (!this.child.connected) return;
    try {
      // actor references in arguments cross the channel in a form structured clone keeps (actor-ref.ts)
      this.child.send((message.type === 'requests' || message.type === 'tasks' ? refsToIpc(message) : message) as RayletToHost);
    } catch (err) {
      const cause = new OrreryError('IPC_SEND_FAILED', `could not send ${message.type} to the worker host (pid ${this.pid}): ${err instanceof Error ? err.message : String(err)}`, { detail: { pid: this.pid, type: message.type } });
      const ids = message.type === 'requests' ? message.requests.map((r) => r.id) : message.type === 'tasks' ? message.tasks.map((t) => t.id) : [];
      for (const id of ids) {
        const pending = this.pending.get(id);
        this.pending.delete(id);
        pending?.reject(cause);
      }
    }
  }

  private onMessage(raw: unknown): void {
    let message: HostToRaylet;
    try {
      message = parseHostToRaylet(raw);
    } catch (err) {
      const code = err instanceof OrreryError ? err.code : 'INVALID_MESSAGE';
      this.rejections.note(code, `raylet: refused an IPC message from worker host ${this.pid}: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (message.type === 'ended') {
      for (const id of message.ids) {
        const pending = this.pending.get(id);
        this.pending.delete(id);
        pending?.resolve(undefined);
      }
      for (const leaseId of message.leases ?? []) this.onLeaseEnded?.(leaseId);
      return;
    }
    if (message.type !== 'results') return;
    for (const result of message.results) {
      const pending = this.pending.get(result.id);
      if (!pending) continue;
      this.pending.delete(result.id);
      if (result.ok) pending.resolve(result.value);
      else pending.reject(specializeError(fromWireError(result.error)));
    }
  }
}

function startFailed(child: ChildProcess, reason: string): OrreryError {
  return new OrreryError('WORKER_START_FAILED', `the worker host (pid ${child.pid}) did not start: ${reason}`, { detail: { pid: child.pid, reason } });
}
