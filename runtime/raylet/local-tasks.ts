import { fits } from '../../lib/resources/resource-set.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import { taskTimeLeft, type SubmitTask } from '../../protocols/messages/task.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import type { BusMsg } from '../bus/bus.ts';
import { cancelKeyMatches, encodeCancelled } from '../worker/cancel.ts';
import { respond } from '../worker/respond.ts';
import { CompiledRequests } from './compiled-requests.ts';
import type { LocalTasksOptions } from './local-tasks-options.ts';
import { RunningTasks } from './running-tasks.ts';
import { TaskPlacing } from './task-placing.ts';
import { TaskQueue, type Task } from './task-queue.ts';
import { WorkerLeases } from './worker-leases.ts';

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
 *
 * Its parts, built in this order: the queue with its bounds and deadlines (task-queue.ts), the worker
 * leases granted (worker-leases.ts), the running tasks (running-tasks.ts), what a decision does
 * (task-placing.ts) and the compiled requests of submissions (compiled-requests.ts). This class
 * takes submissions, drains the queue, and stops or crashes them all.
 */
export class LocalTasks {
  private readonly queue: TaskQueue;
  private readonly workerLeases: WorkerLeases;
  private readonly running: RunningTasks;
  private readonly placing: TaskPlacing;
  private readonly requests: CompiledRequests;
  private kick: 'view' | 'resources' | undefined;
  /** stopping: nothing new is taken, running tasks still answer; crashed: nothing is answered. */
  private state: 'open' | 'stopping' | 'crashed' = 'open';
  private readonly now: () => number;

  constructor(private readonly opts: LocalTasksOptions) {
    this.now = opts.now ?? (() => performance.now());
    this.queue = new TaskQueue(opts, this.now);
    this.workerLeases = new WorkerLeases(opts);
    this.running = new RunningTasks(opts, this.workerLeases);
    this.placing = new TaskPlacing(opts, this.running);
    this.requests = new CompiledRequests(opts);
  }

  stats(): { running: number; queued: number; queuedBytes: number; leases: number; expired: number; cancelled: number; refused: number } {
    const { queue } = this;
    return { running: this.running.size, queued: queue.length, queuedBytes: queue.bytes, leases: this.workerLeases.size, expired: queue.expired, cancelled: queue.cancelled, refused: queue.refused };
  }

  /**
   * Its driver aborted a task (cancel_task): one still queued here, submitted with that key, leaves
   * the queue unstarted, and its submission is answered ABORTED ('dropped'). One running here with
   * that key has its runtime-context signal aborted in its task host ('signalled'): it decides how
   * to end. False when neither — it ran, went elsewhere, or the key is not its own — and nothing
   * changes then.
   */
  cancel(taskId: string, cancelKey: string): 'dropped' | 'signalled' | false {
    const queued = this.queue.byId(taskId);
    if (queued === undefined) return this.running.signal(taskId, cancelKey);
    if (!cancelKeyMatches(queued.body.cancelKey, cancelKey)) return false;
    this.queue.cancel(queued);
    respond(queued.msg, () => encodeCancelled(taskId));
    return 'dropped';
  }

  /** A task host ended a lease: its resources go back. */
  leaseEnded(leaseId: string): void {
    this.workerLeases.ended(leaseId);
  }

  /**
   * This node's labels, taints, state or actors changed in the view: leases whose tasks' hard
   * constraints no longer hold here are revoked, so the next task with those options is decided
   * afresh — a lease never outlives the constraints it was granted under by more than a sync period.
   */
  localChanged(): void {
    this.workerLeases.revokeStale();
  }

  /** A task host died with its leases: their resources go back, and their drivers are told. */
  leasesLost(leaseIds: readonly string[], cause: string): void {
    for (const leaseId of leaseIds) {
      if (!this.workerLeases.has(leaseId)) continue;
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
      req = this.requests.compile(body);
    } catch (err) {
      return void respond(msg, () => encodeError(err));
    }
    const left = taskTimeLeft(body, (this.opts.wallNow ?? Date.now)());
    if (left <= 0) return this.queue.dropExpired(1); // read after its driver gave up (this raylet was frozen, or behind)
    const task: Task = { body, msg, req, expiresAt: this.now() + left, size: msg.data.byteLength };
    if (this.placing.place(task)) return;
    // a driver seeking a lease holds leases for such tasks or can wait for one: it hears `busy`
    if (body.lease) respond(msg, () => encodeOk({ kind: 'busy' }));
    else this.queue.add(task);
  }

  /**
   * This queue's bounds (TaskQueue.refuseIfFull) applied to the submissions a raylet holds until its
   * view is ready (raylet-tasks.ts): true, with `msg` answered `full`, when they have no room.
   */
  refuseIfFull(msg: BusMsg, queued: number, queuedBytes: number, size: number): boolean {
    return this.queue.refuseIfFull(msg, queued, queuedBytes, size);
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
    for (const task of this.queue.stop()) respond(task.msg, () => encodeOk({ kind: 'resubmit' }));
  }

  /** Abrupt: everything is forgotten, nothing is answered. */
  crash(): void {
    this.state = 'crashed';
    this.queue.crash();
    this.running.crash();
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
    this.queue.expire();
    const queued = this.queue.take();
    const local = this.opts.view.state.node(this.opts.view.localNodeId);
    // tasks with the same options share one compiled request: one that waits decides for the rest
    // (10,000 queued tasks on a 1,000-node view took 2.8 s per view delta, each decided against every node)
    const waits = new Map<SchedulingRequest, { readonly failure: ScheduleFailure }>();
    for (const task of queued) {
      if (this.state !== 'open') break;
      const worth = kind === 'view' || (local !== undefined && fits(local.available, task.req.resources));
      if (!worth || !this.placing.place(task, waits)) this.queue.keep(task);
      else this.queue.unqueued(task);
    }
    this.kick = undefined;
  }
}
