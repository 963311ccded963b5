import { randomBytes } from 'node:crypto';
import { OrreryError } from '../../lib/errors.ts';
import type { Rng } from '../../lib/random.ts';
import { fits } from '../../lib/resources/resource-set.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import { compileRequest, type PlacementOptions } from '../../lib/scheduling/request.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import { MAX_TASK_HOPS, taskTimeLeft, type SubmitTask } from '../../protocols/messages/task.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import type { BusMsg } from '../bus/bus.ts';
import { RejectionLog } from '../process/rejection-log.ts';
import { cancelKeyMatches, encodeCancelled } from '../worker/cancel.ts';
import { respond } from '../worker/respond.ts';
import type { LeaseGrant } from '../worker/task-leases.ts';
import type { RunTask } from '../worker/task-runner.ts';
import type { RayletView } from './cluster-view.ts';
import type { Leases } from './leases.ts';
import { decideTask, feasibleHere, onwardTarget, passesHere } from './task-decision.ts';

/** Spills of one submission for want of room, after which a raylet that could run it keeps it. */
export const DEFAULT_MAX_SPILL_HOPS = 3;
/** A lease ends after this long without a task… */
export const DEFAULT_LEASE_IDLE_MS = 100;
/** …and takes no task after this long: the next task with its options is decided afresh. */
export const DEFAULT_LEASE_LIFETIME_MS = 1000;
const COMPILED_CACHE = 1024;

export interface LocalTasksOptions {
  view: RayletView;
  leases: Leases;
  /** Runs a task in a worker host; resolves once it ended, rejects when its host died first. */
  run(task: RunTask): Promise<void>;
  /** The cluster's rare resources (from the registration reply): requests for them tolerate their taints. */
  rareResources(): readonly string[];
  rng: Rng;
  log: (line: string) => void;
  /** A task waits because no node can take it; called again only when the explanation changes. */
  onWaiting?(task: { taskId: string; functionName: string }, failure: ScheduleFailure): void;
  /** Default DEFAULT_MAX_SPILL_HOPS. */
  maxSpillHops?: number;
  /** Worker leases granted with results (default idle 100 ms, lifetime 1,000 ms); `false`: none. */
  workerLeases?: { idleMs: number; lifetimeMs: number } | false;
  /** Its driver cancelled a task that runs here (cancel_task, key checked): its runtime-context signal aborts. */
  cancelRunning?(taskId: string): void;
  /** A lease was lost with its task host: drivers pushing to it must hear of it. */
  onLeaseLost?(leaseId: string, cause: string): void;
  /** Ends leases at their task hosts (a running task of one finishes first). */
  revokeLeases?(leaseIds: string[]): void;
  /**
   * Most tasks the queue holds, and most bytes of their submissions (docs/runtime.md, "A raylet's
   * queue is bounded"): a task that would wait past either is answered `full` and not kept. Default
   * DEFAULT_MAX_QUEUED_TASKS and DEFAULT_MAX_QUEUED_TASK_BYTES.
   */
  maxQueued?: number;
  maxQueuedBytes?: number;
  /** The clock of queued tasks' deadlines (ms); default performance.now. */
  now?: () => number;
  /** The wall clock a submission's `deadline` is read against (ms since the epoch); default Date.now. */
  wallNow?: () => number;
}

const newLeaseId = (): string => randomBytes(8).toString('hex');

/** A raylet's queue holds at most this many tasks by default… */
export const DEFAULT_MAX_QUEUED_TASKS = 100_000;
/** …and at most this many bytes of their submissions (arguments included). */
export const DEFAULT_MAX_QUEUED_TASK_BYTES = 256 * 1024 * 1024;

interface Task {
  readonly body: SubmitTask;
  readonly msg: BusMsg & { readonly reply: string };
  readonly req: SchedulingRequest;
  /** When its driver stops waiting (`timeoutMs` from its arrival): it never starts after that. */
  readonly expiresAt: number;
  /** Bytes of its submission, as the queue's byte bound counts them. */
  readonly size: number;
  lastMessage?: string;
}

/**
 * The tasks of one raylet (docs/runtime.md, "Tasks"). A submission is decided on the raylet's view
 * (task-decision.ts) at once:
 *
 *   local  its resources are leased here and it runs in a task host, which answers the driver;
 *          the lease goes back when the task ends
 *   spill  the driver is told which node to ask instead — unless the submission was spilled here
 *          and fits here now (then it runs here), or has already been spilled `maxSpillHops` times
 *          and this node could run it once it has room (then it waits here)
 *   wait   it joins this raylet's queue (schedule_failed explains why) — or, when the driver asked
 *          for a worker lease, is answered `busy`: the driver waits for a lease it holds
 *   fail   answered with the error (NODE_NOT_FOUND for a hard node-id affinity to an unknown node)
 *
 * Queued tasks are decided again when the view changes (every decision may differ) and, when this
 * node frees resources, those that would fit here. A task whose worker host dies is answered
 * TASK_WORKER_DIED, which the driver retries. Every submission is answered exactly once — except a
 * queued one whose driver has stopped waiting (its `timeoutMs` passed since it arrived): that one is
 * dropped unanswered and never started, since its caller was told TIMEOUT (counted in `expired`).
 */
export class LocalTasks {
  private queue: Task[] = [];
  /** The queued tasks by id, for cancel_task: a cancel naming no queued task costs no walk of the queue. */
  private readonly queuedById = new Map<string, Task>();
  /** Bytes of the queued tasks' submissions. */
  private queuedBytes = 0;
  private readonly maxQueued: number;
  private readonly maxQueuedBytes: number;
  /** Submissions answered `full`. */
  private refused = 0;
  private readonly running = new Set<Task>();
  /** Leases granted and not yet ended: the holder of their resources, and their tasks' request. */
  private readonly leased = new Map<string, { holder: string; req: SchedulingRequest; revoked?: boolean }>();
  private readonly compiled = new Map<string, SchedulingRequest>();
  private readonly maxSpillHops: number;
  private kick: 'view' | 'resources' | undefined;
  private nextLease = 1;
  /** stopping: nothing new is taken, running tasks still answer; crashed: nothing is answered. */
  private state: 'open' | 'stopping' | 'crashed' = 'open';
  private readonly now: () => number;
  /** Queued tasks dropped because their driver had stopped waiting. */
  private expired = 0;
  /** Queued tasks dropped because their driver cancelled them (cancel_task). */
  private cancelled = 0;
  /** The timer that drops queued tasks at their deadline (the earliest one's). */
  private expiry: { at: number; timer: NodeJS.Timeout } | undefined;
  /** Drops said once in full, then summed up per minute while they come (an overloaded node drops many). */
  private readonly dropLog: RejectionLog;

  constructor(private readonly opts: LocalTasksOptions) {
    this.maxSpillHops = opts.maxSpillHops ?? DEFAULT_MAX_SPILL_HOPS;
    this.maxQueued = opts.maxQueued ?? DEFAULT_MAX_QUEUED_TASKS;
    this.maxQueuedBytes = opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_TASK_BYTES;
    this.now = opts.now ?? (() => performance.now());
    this.dropLog = new RejectionLog('raylet: queued tasks', opts.log);
  }

  stats(): { running: number; queued: number; queuedBytes: number; leases: number; expired: number; cancelled: number; refused: number } {
    return { running: this.running.size, queued: this.queue.length, queuedBytes: this.queuedBytes, leases: this.leased.size, expired: this.expired, cancelled: this.cancelled, refused: this.refused };
  }

  /**
   * Its driver aborted a task (cancel_task): one still queued here, submitted with that key, leaves
   * the queue unstarted, and its submission is answered ABORTED ('dropped'). One running here with
   * that key has its runtime-context signal aborted in its task host ('signalled'): it decides how
   * to end. False when neither — it ran, went elsewhere, or the key is not its own — and nothing
   * changes then.
   */
  cancel(taskId: string, cancelKey: string): 'dropped' | 'signalled' | false {
    const queued = this.queuedById.get(taskId);
    if (queued === undefined) {
      for (const task of this.running) {
        if (task.body.taskId !== taskId || !cancelKeyMatches(task.body.cancelKey, cancelKey)) continue;
        this.opts.cancelRunning?.(taskId);
        return 'signalled';
      }
      return false;
    }
    if (!cancelKeyMatches(queued.body.cancelKey, cancelKey)) return false;
    this.queue.splice(this.queue.indexOf(queued), 1);
    this.unqueued(queued);
    this.cancelled++;
    respond(queued.msg, () => encodeCancelled(taskId));
    return 'dropped';
  }

  /** A task host ended a lease: its resources go back. */
  leaseEnded(leaseId: string): void {
    const lease = this.leased.get(leaseId);
    if (lease === undefined) return;
    this.leased.delete(leaseId);
    this.opts.leases.release(lease.holder);
  }

  /**
   * This node's labels, taints, state or actors changed in the view: leases whose tasks' hard
   * constraints no longer hold here are revoked, so the next task with those options is decided
   * afresh — a lease never outlives the constraints it was granted under by more than a sync period.
   */
  localChanged(): void {
    const { view } = this.opts;
    const stale = [...this.leased].filter(([, l]) => !l.revoked && !feasibleHere(view.state, l.req, view.localNodeId));
    for (const [, lease] of stale) lease.revoked = true;
    if (stale.length > 0) this.opts.revokeLeases?.(stale.map(([id]) => id));
  }

  /** A task host died with its leases: their resources go back, and their drivers are told. */
  leasesLost(leaseIds: readonly string[], cause: string): void {
    for (const leaseId of leaseIds) {
      if (!this.leased.has(leaseId)) continue;
      this.leaseEnded(leaseId);
      if (this.state !== 'crashed') this.opts.onLeaseLost?.(leaseId, cause);
    }
  }

  /** Takes a submission; `msg` is answered exactly once, now or later. */
  submit(body: SubmitTask, msg: BusMsg & { readonly reply: string }): void {
    if (this.state === 'crashed') return;
    if (this.state === 'stopping') return void respond(msg, () => encodeOk({ kind: 'resubmit' }));
    let req: SchedulingRequest;
    try {
      req = this.compile(body);
    } catch (err) {
      return void respond(msg, () => encodeError(err));
    }
    const left = taskTimeLeft(body, (this.opts.wallNow ?? Date.now)());
    if (left <= 0) return this.dropExpired(1); // read after its driver gave up (this raylet was frozen, or behind)
    const task: Task = { body, msg, req, expiresAt: this.now() + left, size: msg.data.byteLength };
    if (this.place(task)) return;
    // a driver seeking a lease holds leases for such tasks or can wait for one: it hears `busy`
    if (body.lease) respond(msg, () => encodeOk({ kind: 'busy' }));
    else if (!this.refuseIfFull(task.msg, this.queue.length, this.queuedBytes, task.size)) {
      this.enqueue(task);
      this.armExpiry(task.expiresAt);
    }
  }

  private enqueue(task: Task): void {
    this.queue.push(task);
    this.queuedBytes += task.size;
    this.queuedById.set(task.body.taskId, task);
  }

  /** `task` left the queue (the caller took it out of the array). */
  private unqueued(task: Task): void {
    this.queuedBytes -= task.size;
    // a task id queued twice (a driver's mistake, or a hostile one) keeps the later entry findable
    if (this.queuedById.get(task.body.taskId) === task) this.queuedById.delete(task.body.taskId);
  }

  /**
   * Answers `msg` `full` (and counts and logs it) when a queue holding `queued` tasks of
   * `queuedBytes` bytes has no room for one of `size` bytes more; false, with nothing done, when it
   * has. This queue's bounds, for this queue and for the submissions a raylet holds until its view
   * is ready (raylet-tasks.ts).
   */
  refuseIfFull(msg: BusMsg, queued: number, queuedBytes: number, size: number): boolean {
    if (queued < this.maxQueued && queuedBytes + size <= this.maxQueuedBytes) return false;
    this.refused++;
    const full = { kind: 'full' as const, queued, maxQueued: this.maxQueued, queuedBytes, maxQueuedBytes: this.maxQueuedBytes };
    this.dropLog.note('TASK_QUEUE_FULL', `refused task(s): the queue holds ${queued} task(s) of ${full.maxQueued}, ${queuedBytes} bytes of ${full.maxQueuedBytes}; their drivers submit them again`);
    respond(msg, () => encodeOk(full));
    return true;
  }

  /**
   * Drops the queued tasks whose driver has stopped waiting (called at the earliest deadline, and
   * before a drain): they are never started, never answered (nobody listens), and counted.
   */
  private expire(): void {
    if (this.expiry !== undefined) clearTimeout(this.expiry.timer);
    this.expiry = undefined;
    const now = this.now();
    let dropped = 0;
    let next = Number.POSITIVE_INFINITY;
    this.queue = this.queue.filter((task) => {
      if (task.expiresAt > now) {
        if (task.expiresAt < next) next = task.expiresAt;
        return true;
      }
      dropped++;
      this.unqueued(task);
      return false;
    });
    this.dropExpired(dropped);
    this.armExpiry(next);
  }

  private dropExpired(dropped: number): void {
    if (dropped === 0) return;
    this.expired += dropped;
    this.dropLog.note('TASK_EXPIRED', `dropped ${dropped} queued task(s) whose driver stopped waiting (their call timeout passed); they never ran`);
  }

  private armExpiry(at: number): void {
    if (at === Number.POSITIVE_INFINITY || this.state !== 'open') return;
    if (this.expiry !== undefined && this.expiry.at <= at) return;
    if (this.expiry !== undefined) clearTimeout(this.expiry.timer);
    const timer = setTimeout(() => this.expire(), Math.max(0, Math.ceil(at - this.now())));
    timer.unref();
    this.expiry = { at, timer };
  }

  /** The view changed: every queued task is decided again (once per turn, however many changes). */
  viewChanged(): void {
    this.schedule('view');
  }

  /** Resources were freed here: queued tasks that would fit here are decided again. */
  resourcesFreed(): void {
    this.schedule('resources');
  }

  /** Graceful: queued tasks are answered `resubmit`; running ones end with their hosts. */
  stop(): void {
    if (this.state !== 'open') return;
    this.state = 'stopping';
    this.clearExpiry();
    const queued = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedById.clear();
    for (const task of queued) respond(task.msg, () => encodeOk({ kind: 'resubmit' }));
  }

  /** Abrupt: everything is forgotten, nothing is answered. */
  crash(): void {
    this.state = 'crashed';
    this.clearExpiry();
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedById.clear();
    this.running.clear();
  }

  private clearExpiry(): void {
    if (this.expiry !== undefined) clearTimeout(this.expiry.timer);
    this.expiry = undefined;
  }

  /**
   * Decides a task and acts on the decision; false when it has to wait here. `waits`, during one
   * drain, holds the requests already decided to wait: within a drain resources are only taken, so
   * a task of the same request would wait too, and is not decided again against every node.
   */
  private place(task: Task, waits?: Map<SchedulingRequest, { readonly failure: ScheduleFailure }>): boolean {
    const { view } = this.opts;
    const waited = waits?.get(task.req);
    if (waited !== undefined) {
      this.waiting(task, waited);
      return false;
    }
    const decision = decideTask(view.state, task.req, view.localNodeId, { rng: this.opts.rng });
    switch (decision.kind) {
      case 'local':
        this.start(task);
        return true;
      case 'spill':
        // A task spilled here already runs here when it fits now: this node was preferred, and the
        // view that prefers another one does not see the load of tasks there (Ray's grant-or-reject).
        if (task.body.hops > 0 && passesHere(view.state, task.req, view.localNodeId)) {
          this.start(task);
          return true;
        }
        const target = this.spillTarget(task, decision.nodeId);
        if (target !== undefined) {
          view.reserve(target, task.req.resources);
          respond(task.msg, () => encodeOk({ kind: 'spillback', nodeId: target }));
          return true;
        }
        if (passesHere(view.state, task.req, view.localNodeId)) {
          this.start(task);
          return true;
        }
        return false;
      case 'fail':
        respond(task.msg, () => encodeError(decision.error));
        return true;
      case 'wait':
        waits?.set(task.req, decision);
        this.waiting(task, decision);
        return false;
    }
  }

  /**
   * Where a task goes when the view prefers another node, within the wire's hop limit: the raylet the
   * driver asked first spills freely; a raylet a task was spilled to passes it on only to a node it
   * has not visited, fewer than `maxSpillHops` times in all — and always when this node could never
   * run it (its labels changed under it). Undefined: it stays here.
   */
  private spillTarget(task: Task, preferred: string): string | undefined {
    const { hops, visited = [] } = task.body;
    if (hops + 1 > MAX_TASK_HOPS) return undefined;
    const { view } = this.opts;
    const mustGo = !feasibleHere(view.state, task.req, view.localNodeId);
    if (hops === 0 || (mustGo && !visited.includes(preferred))) return preferred;
    if (!mustGo && hops >= this.maxSpillHops) return undefined;
    if (!visited.includes(preferred)) return preferred;
    return onwardTarget(view.state, task.req, visited, { localNodeId: view.localNodeId, rng: this.opts.rng }) ?? (mustGo ? preferred : undefined);
  }

  /**
   * Leases its resources and runs it. When the driver asked for a worker lease (and the task is not
   * SPREAD, whose point is to go elsewhere each time), the resources stay with the lease after the
   * task, until its host ends it (`leaseEnded`) or dies with it (`leasesLost`).
   */
  private start(task: Task): void {
    const { body, msg } = task;
    const grant = this.grantFor(task);
    const holder = grant ? `lease/${grant.leaseId}` : `task/${this.nextLease++}`;
    this.running.add(task);
    this.opts.leases.acquire(holder, task.req.resources);
    if (grant) this.leased.set(grant.leaseId, { holder, req: task.req });
    this.opts.run({
      taskId: body.taskId,
      code: body.code,
      reply: msg.reply,
      namespace: body.namespace,
      ...(body.jobId === undefined ? {} : { jobId: body.jobId }),
      ...(grant ? { lease: grant } : {}),
      ...(body.cancelKey === undefined ? {} : { cancellable: true }),
    }).then(
      () => this.finish(task, grant ? undefined : holder),
      (err: unknown) => {
        this.finish(task, holder);
        if (grant) this.leased.delete(grant.leaseId);
        if (this.state === 'crashed') return;
        const cause = err instanceof Error ? err.message : String(err);
        respond(msg, () => encodeError(new OrreryError('TASK_WORKER_DIED', `task ${body.taskId} (${body.code.functionName}) lost its worker host: ${cause}`, { detail: { taskId: body.taskId, cause } })));
      },
    );
  }

  private finish(task: Task, holder: string | undefined): void {
    if (!this.running.delete(task)) return;
    if (holder !== undefined) this.opts.leases.release(holder);
  }

  private grantFor(task: Task): LeaseGrant | undefined {
    const config = this.opts.workerLeases ?? { idleMs: DEFAULT_LEASE_IDLE_MS, lifetimeMs: DEFAULT_LEASE_LIFETIME_MS };
    if (!task.body.lease || config === false || task.req.spread) return undefined;
    return { leaseId: newLeaseId(), idleMs: config.idleMs, lifetimeMs: config.lifetimeMs };
  }

  /**
   * A task that could run here once there is room is just queued (a busy cluster is not a failure);
   * one that could not gets its explanation published when it changes.
   */
  private waiting(task: Task, decision: { readonly failure: ScheduleFailure }): void {
    if (!this.opts.onWaiting || feasibleHere(this.opts.view.state, task.req, this.opts.view.localNodeId)) return;
    const { failure } = decision;
    if (failure.message === task.lastMessage) return;
    task.lastMessage = failure.message;
    this.opts.onWaiting({ taskId: task.body.taskId, functionName: task.body.code.functionName }, failure);
  }

  private schedule(kind: 'view' | 'resources'): void {
    if (this.state !== 'open' || this.queue.length === 0) return;
    if (this.kick !== undefined) {
      if (kind === 'view') this.kick = 'view';
      return;
    }
    this.kick = kind;
    queueMicrotask(() => this.drain());
  }

  private drain(): void {
    const kind = this.kick;
    // a task whose driver stopped waiting must not start now that there is room
    this.expire();
    const queued = this.queue;
    this.queue = [];
    const local = this.opts.view.state.node(this.opts.view.localNodeId);
    // tasks with the same options share one compiled request: one that waits decides for the rest
    // (10,000 queued tasks on a 1,000-node view took 2.8 s per view delta, each decided against every node)
    const waits = new Map<SchedulingRequest, { readonly failure: ScheduleFailure }>();
    for (const task of queued) {
      if (this.state !== 'open') break;
      const worth = kind === 'view' || (local !== undefined && fits(local.available, task.req.resources));
      if (!worth || !this.place(task, waits)) this.queue.push(task);
      else this.unqueued(task);
    }
    this.kick = undefined;
  }

  private compile(body: SubmitTask): SchedulingRequest {
    let key: string | undefined;
    try {
      key = `${body.namespace}\0${JSON.stringify(body.options)}`;
    } catch {
      key = undefined;
    }
    const cached = key === undefined ? undefined : this.compiled.get(key);
    if (cached) return cached;
    const req = compileRequest(body.options as PlacementOptions, { namespace: body.namespace, rareResources: this.opts.rareResources() });
    if (key !== undefined) {
      if (this.compiled.size >= COMPILED_CACHE) this.compiled.clear();
      this.compiled.set(key, req);
    }
    return req;
  }
}
