import { OrreryError } from '../../lib/errors.ts';
import type { CodeSourcePolicy } from '../../protocols/code-source.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import type { Bus } from '../bus/bus.ts';
import { ActorHost, type HostNode } from '../worker/host.ts';
import type { HostLease } from '../../protocols/ipc.ts';
import { LeaseWatchdog } from '../worker/lease-watchdog.ts';
import { TaskRunner, type RunTask } from '../worker/task-runner.ts';
import { workerCluster } from '../worker/worker-cluster.ts';

/**
 * What a raylet holds of one worker host, whether it runs in the raylet's own process (inline) or
 * in a forked child (worker-process.ts).
 */
export interface WorkerHost {
  /** The process the host's actors run in. */
  readonly pid: number;
  /** Resolves once the host has ended, with a one-line description (`signal SIGKILL`, `code 0`). */
  readonly exited: Promise<string>;
  /** Starts an actor; resolves once its constructor returned (errors as ActorHost.create). */
  create(spec: CreateActor): Promise<void>;
  /** Drops an actor; false when the host did not hold it. */
  kill(actorId: string): Promise<boolean>;
  /**
   * Runs a task; the host answers the driver on `task.reply` itself. Resolves once the task has
   * ended (its resources may go back); rejects (WORKER_EXITED) when the host ended first.
   */
  runTask(task: RunTask): Promise<void>;
  /** Ends leases this host serves (at once, or after their running task). */
  revokeLeases(leaseIds: readonly string[]): void;
  /** Aborts the runtime-context signals of these running tasks: their drivers cancelled them. */
  cancelTasks(taskIds: readonly string[]): void;
  /** Called with each lease that ended in this host (idle, or past its lifetime); set by the host manager. */
  onLeaseEnded?: (leaseId: string) => void;
  /** The raylet's fence (runtime/raylet/fence.ts): a renewal of its lease, or fence now. */
  lease(lease: HostLease): void;
  /** Graceful: stops every actor and ends the host. */
  stop(): Promise<void>;
  /** Abrupt: ends the host now, as if it had died. */
  crash(): void;
}

/**
 * An ActorHost on the raylet's own bus: the memory transport's worker host. It follows the raylet's
 * fence through the same watchdog as a host process (a frozen raylet freezes it too).
 */
export class InlineWorkerHost implements WorkerHost {
  readonly pid = process.pid;
  readonly exited: Promise<string>;
  private readonly host: ActorHost;
  private readonly watchdog: LeaseWatchdog;
  private readonly tasks: TaskRunner;
  /** Rejecters of the tasks running now, so an ended host fails them as a dead process would. */
  private readonly running = new Set<(err: Error) => void>();
  private gone: string | undefined;
  private end!: (how: string) => void;
  onLeaseEnded?: (leaseId: string) => void;

  constructor(opts: { bus: Bus; cluster: string; node: HostNode; log?: (line: string) => void; lease?: HostLease; codeSources?: CodeSourcePolicy }) {
    // connect() inside its actors and tasks, and handles passed to them, use the raylet's bus
    const cluster = workerCluster({ bus: opts.bus, cluster: opts.cluster, address: `inline:${opts.node.nodeId}` });
    this.host = new ActorHost({ ...opts, workerCluster: cluster });
    this.watchdog = new LeaseWatchdog({ onExpire: () => this.host.fence(), onRenew: () => this.host.unfence() });
    if (opts.lease) this.watchdog.apply(opts.lease);
    this.tasks = new TaskRunner({ bus: opts.bus, node: opts.node, cluster: opts.cluster, log: opts.log, codeSources: opts.codeSources, workerCluster: cluster, onLeaseEnded: (id) => queueMicrotask(() => this.onLeaseEnded?.(id)) });
    this.exited = new Promise((resolve) => (this.end = resolve));
  }

  create(spec: CreateActor): Promise<void> {
    return this.host.create(spec);
  }

  async kill(actorId: string): Promise<boolean> {
    return this.host.kill(actorId);
  }

  runTask(task: RunTask): Promise<void> {
    if (this.gone !== undefined) return Promise.reject(exitedError(this.gone));
    return new Promise<void>((resolve, reject) => {
      this.running.add(reject);
      this.tasks.run(task).then(() => {
        this.running.delete(reject);
        resolve();
      });
    });
  }

  cancelTasks(taskIds: readonly string[]): void {
    for (const taskId of taskIds) this.tasks.cancelRunning(taskId);
  }

  revokeLeases(leaseIds: readonly string[]): void {
    this.tasks.leases.revoke(leaseIds);
  }

  lease(lease: HostLease): void {
    if (this.gone === undefined) this.watchdog.apply(lease);
  }

  /** Whether its actors are fenced (not answering calls). */
  get fenced(): boolean {
    return this.host.isFenced;
  }

  async stop(): Promise<void> {
    this.finish('stopped');
  }

  crash(): void {
    this.finish('crashed');
  }

  private finish(how: string): void {
    if (this.gone !== undefined) return;
    this.gone = how;
    this.watchdog.stop();
    this.host.stop();
    this.tasks.stop();
    const err = exitedError(how);
    for (const reject of this.running) reject(err);
    this.running.clear();
    this.end(how);
  }
}

function exitedError(how: string): OrreryError {
  return new OrreryError('WORKER_EXITED', `the in-process worker host has ended (${how})`, { detail: { how } });
}
