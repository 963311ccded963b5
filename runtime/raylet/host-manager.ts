import type { CreateActor } from '../../protocols/messages/actor.ts';
import { ActorDiedError } from '../errors.ts';
import type { RunTask } from '../worker/task-runner.ts';
import type { HostLease } from '../../protocols/ipc.ts';
import type { WorkerHost } from './worker-host.ts';

export interface HostManagerOptions {
  /** Starts a worker host; `dedicated` is true for an actor with `isolation: 'process'`. */
  launch(opts: { dedicated: boolean }): Promise<WorkerHost>;
  /** Most worker hosts for tasks at once; default 1. */
  maxTaskHosts?: number;
  /** A host ended without being asked to: `actorIds` were running in it. */
  onHostExit(actorIds: string[], cause: string): void;
  /** A task host ended a lease (idle, or past its lifetime). */
  onLeaseEnded?(leaseId: string): void;
  /** A task host ended without being asked to: `leaseIds` were served by it. */
  onLeasesLost?(leaseIds: string[], cause: string): void;
  log?: (line: string) => void;
}

interface HostEntry {
  readonly host: WorkerHost;
  readonly dedicated: boolean;
  readonly actors: Set<string>;
  /** Tasks running in it (task hosts only). */
  tasks: number;
  /** Leases it serves (task hosts only). */
  readonly leases: Set<string>;
  /** Set when the manager itself ends the host, so its exit is not a failure. */
  retiring: boolean;
}

/** Where one create put an actor; one per create, told apart by identity. */
interface Hosted {
  readonly entry: HostEntry;
}

/** A create still waiting for its host to start: a kill meanwhile cancels it. */
interface Waiting {
  killed: boolean;
}

/**
 * The worker hosts of one raylet: one shared host, started when the first actor needs it (and again
 * after it died), and one dedicated host per `isolation: 'process'` actor, ended with its actor.
 * It knows which host runs which actor, and reports the actors of a host that exits unexpectedly.
 *
 * Tasks run in hosts of their own, apart from actors (a task that crashes its process takes no actor
 * with it): a pool started with the first task, which grows by one host — in the background, never
 * delaying a task — whenever a task starts while every task host is busy, up to `maxTaskHosts`.
 * A task goes to the least busy live task host.
 */
export class HostManager {
  private shared: Promise<HostEntry> | undefined;
  private readonly taskHosts: HostEntry[] = [];
  private firstTaskHost: Promise<HostEntry> | undefined;
  private taskHostsStarting = 0;
  /**
   * Each actor's latest create, by actor id. A create that fails forgets only itself: the host's
   * answer to the create of incarnation n (killed while starting) can come back after the create
   * of n + 1 went to the same host, and must not make the raylet lose track of n + 1.
   */
  private readonly byActor = new Map<string, Hosted>();
  /** Creates waiting for their host to start, by actor id. */
  private readonly waiting = new Map<string, Waiting>();
  private readonly entries = new Set<HostEntry>();
  private closed = false;

  constructor(private readonly opts: HostManagerOptions) {}

  /** Live hosts (the shared one, once started, every dedicated one, and the task hosts). */
  get hostCount(): number {
    return this.entries.size;
  }

  /** Live task hosts. */
  get taskHostCount(): number {
    return this.taskHosts.length;
  }

  /**
   * Runs a task in a task host; resolves once it ended, rejects (WORKER_EXITED, or the host could
   * not start) when its host ended first.
   */
  async runTask(task: RunTask): Promise<void> {
    const entry = await this.taskHost();
    if (task.lease) entry.leases.add(task.lease.leaseId);
    entry.tasks++;
    if (task.cancellable) this.cancellable.set(task.taskId, entry);
    try {
      await entry.host.runTask(task);
    } finally {
      entry.tasks--;
      if (task.cancellable && this.cancellable.get(task.taskId) === entry) this.cancellable.delete(task.taskId);
    }
  }

  /** The task hosts running cancellable tasks, by task id (runTask). */
  private readonly cancellable = new Map<string, HostEntry>();

  /** Aborts the runtime-context signals of these running tasks in the hosts that run them. */
  cancelTasks(taskIds: readonly string[]): void {
    for (const taskId of taskIds) this.cancellable.get(taskId)?.host.cancelTasks([taskId]);
  }

  /** The pid of the process an actor runs in. */
  pidOf(actorId: string): number | undefined {
    return this.byActor.get(actorId)?.entry.host.pid;
  }

  /**
   * Starts an actor in its host; resolves with the host's pid once the constructor returned. A kill
   * (or a newer create of the actor) while it waits for its host to start cancels it: it rejects
   * with ACTOR_DIED and the host never hears of it.
   */
  async create(spec: CreateActor): Promise<{ pid: number }> {
    const { actorId } = spec;
    const dedicated = spec.isolation === 'process';
    const wait: Waiting = { killed: false };
    const superseded = this.waiting.get(actorId);
    if (superseded) superseded.killed = true;
    this.waiting.set(actorId, wait);
    let entry: HostEntry;
    try {
      entry = dedicated ? await this.start(true) : await this.sharedHost();
      if (!wait.killed && this.byActor.has(actorId)) await this.drop(actorId);
    } finally {
      if (this.waiting.get(actorId) === wait) this.waiting.delete(actorId);
    }
    if (wait.killed) {
      if (dedicated) void this.retire(entry);
      throw new ActorDiedError(actorId, 'killed while starting');
    }
    const hosted: Hosted = { entry };
    entry.actors.add(actorId);
    this.byActor.set(actorId, hosted);
    try {
      await entry.host.create(spec);
    } catch (err) {
      this.forget(actorId, hosted);
      throw err;
    }
    return { pid: entry.host.pid };
  }

  /**
   * Drops an actor from its host (and ends a dedicated host), or cancels its create still waiting
   * for a host; false when neither.
   */
  async kill(actorId: string): Promise<boolean> {
    const wait = this.waiting.get(actorId);
    if (wait) {
      wait.killed = true;
      this.waiting.delete(actorId);
    }
    return (await this.drop(actorId)) || wait !== undefined;
  }

  /** Graceful: ends every host. */
  async stop(): Promise<void> {
    this.closed = true;
    this.taskHosts.length = 0;
    await Promise.all([...this.entries].map((e) => this.retire(e)));
    this.byActor.clear();
  }

  /** Abrupt: kills every host at once. */
  crash(): void {
    this.closed = true;
    for (const entry of this.entries) {
      entry.retiring = true;
      entry.host.crash();
    }
    this.entries.clear();
    this.byActor.clear();
    this.taskHosts.length = 0;
  }

  /** The raylet's fence lease (fence.ts), to every live host. */
  lease(lease: HostLease): void {
    for (const entry of this.entries) entry.host.lease(lease);
  }

  /** Ends leases at the task hosts that serve them. */
  revokeLeases(leaseIds: readonly string[]): void {
    for (const entry of this.taskHosts) {
      const mine = leaseIds.filter((id) => entry.leases.has(id));
      if (mine.length > 0) entry.host.revokeLeases(mine);
    }
  }

  private async taskHost(): Promise<HostEntry> {
    let best: HostEntry | undefined;
    for (const e of this.taskHosts) if (!best || e.tasks < best.tasks) best = e;
    if (!best) {
      this.firstTaskHost ??= this.startTaskHost().finally(() => (this.firstTaskHost = undefined));
      return this.firstTaskHost;
    }
    const max = this.opts.maxTaskHosts ?? 1;
    if (best.tasks > 0 && this.taskHosts.length + this.taskHostsStarting < max) {
      this.startTaskHost().catch((err: unknown) => this.opts.log?.(`cannot start another task host: ${err instanceof Error ? err.message : String(err)}`));
    }
    return best;
  }

  private async startTaskHost(): Promise<HostEntry> {
    this.taskHostsStarting++;
    try {
      const entry = await this.start(false);
      entry.host.onLeaseEnded = (leaseId) => {
        if (entry.leases.delete(leaseId)) this.opts.onLeaseEnded?.(leaseId);
      };
      this.taskHosts.push(entry);
      return entry;
    } finally {
      this.taskHostsStarting--;
    }
  }

  private sharedHost(): Promise<HostEntry> {
    if (!this.shared) {
      const starting = this.start(false);
      this.shared = starting;
      starting.catch(() => {
        if (this.shared === starting) this.shared = undefined;
      });
    }
    return this.shared;
  }

  private async start(dedicated: boolean): Promise<HostEntry> {
    if (this.closed) throw new Error('the raylet is stopping');
    const host = await this.opts.launch({ dedicated });
    const entry: HostEntry = { host, dedicated, actors: new Set(), tasks: 0, leases: new Set(), retiring: false };
    if (this.closed) {
      host.crash();
      throw new Error('the raylet is stopping');
    }
    this.entries.add(entry);
    void host.exited.then((how) => this.onExit(entry, how));
    return entry;
  }

  /** Drops the actor's latest create from its host; false when no host runs it. */
  private async drop(actorId: string): Promise<boolean> {
    const hosted = this.byActor.get(actorId);
    if (!hosted) return false;
    this.forget(actorId, hosted);
    const { entry } = hosted;
    if (entry.dedicated) {
      await this.retire(entry);
      return true;
    }
    return entry.host.kill(actorId).catch(() => true);
  }

  /**
   * Forgets one create. Its host keeps the actor listed while a newer create put it in the same
   * host (the shared one); a dedicated host left with no actor ends.
   */
  private forget(actorId: string, hosted: Hosted): void {
    const { entry } = hosted;
    if (this.byActor.get(actorId) === hosted) this.byActor.delete(actorId);
    if (this.byActor.get(actorId)?.entry !== entry) entry.actors.delete(actorId);
    if (entry.dedicated && entry.actors.size === 0) void this.retire(entry);
  }

  private async retire(entry: HostEntry): Promise<void> {
    entry.retiring = true;
    this.entries.delete(entry);
    await entry.host.stop();
  }

  private onExit(entry: HostEntry, how: string): void {
    this.entries.delete(entry);
    const pooled = this.taskHosts.indexOf(entry);
    if (pooled >= 0) this.taskHosts.splice(pooled, 1);
    if (entry.leases.size > 0) {
      const leases = [...entry.leases];
      entry.leases.clear();
      this.opts.onLeasesLost?.(leases, `task host (pid ${entry.host.pid}) ended (${how})`);
    }
    if (pooled >= 0) {
      if (!entry.retiring && !this.closed) this.opts.log?.(`task host ${entry.host.pid} exited unexpectedly (${how}); ${entry.tasks} task(s) lost`);
      return;
    }
    // There is one shared host at a time, so the shared host that ended is the one `shared` holds.
    if (!entry.dedicated) this.shared = undefined;
    const actors = [...entry.actors];
    for (const id of actors) if (this.byActor.get(id)?.entry === entry) this.byActor.delete(id);
    entry.actors.clear();
    if (entry.retiring || this.closed) return;
    this.opts.log?.(`worker host ${entry.host.pid} exited unexpectedly (${how}); ${actors.length} actor(s) lost`);
    this.opts.onHostExit(actors, `worker host (pid ${entry.host.pid}) exited unexpectedly (${how})`);
  }
}
