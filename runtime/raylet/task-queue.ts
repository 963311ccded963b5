import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import type { SubmitTask } from '../../protocols/messages/task.ts';
import { encodeOk } from '../../protocols/reply.ts';
import type { BusMsg } from '../bus/bus.ts';
import { RejectionLog } from '../process/rejection-log.ts';
import { respond } from '../worker/respond.ts';
import type { LocalTasksOptions } from './local-tasks-options.ts';

/** A raylet's queue holds at most this many tasks by default… */
export const DEFAULT_MAX_QUEUED_TASKS = 100_000;
/** …and at most this many bytes of their submissions (arguments included). */
export const DEFAULT_MAX_QUEUED_TASK_BYTES = 256 * 1024 * 1024;

/** A submission as one raylet's tasks (local-tasks.ts) hold it: queued here, or running here. */
export interface Task {
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
 * The queue of one raylet's tasks (local-tasks.ts): the tasks that wait here, bounded by their count
 * and the bytes of their submissions, found by id for cancel_task, and dropped unstarted once their
 * driver has stopped waiting — by a timer armed at the earliest deadline. It counts the submissions
 * it refuses and the queued tasks dropped, expired or cancelled, and logs the drops once in full.
 */
export class TaskQueue {
  #queue: Task[] = [];
  /** The queued tasks by id, for cancel_task: a cancel naming no queued task costs no walk of the queue. */
  readonly #queuedById = new Map<string, Task>();
  /** Bytes of the queued tasks' submissions. */
  #queuedBytes = 0;
  readonly #maxQueued: number;
  readonly #maxQueuedBytes: number;
  /** Submissions answered `full`. */
  #refused = 0;
  /** Queued tasks dropped because their driver had stopped waiting. */
  #expired = 0;
  /** Queued tasks dropped because their driver cancelled them (cancel_task). */
  #cancelled = 0;
  /** The timer that drops queued tasks at their deadline (the earliest one's). */
  #expiry: { at: number; timer: NodeJS.Timeout } | undefined;
  /** Drops said once in full, then summed up per minute while they come (an overloaded node drops many). */
  readonly #dropLog: RejectionLog;
  /** Stopped or crashed (local-tasks.ts): no timer is armed any more. */
  #closed = false;

  constructor(
    opts: Pick<LocalTasksOptions, 'maxQueued' | 'maxQueuedBytes' | 'log'>,
    private readonly now: () => number,
  ) {
    this.#maxQueued = opts.maxQueued ?? DEFAULT_MAX_QUEUED_TASKS;
    this.#maxQueuedBytes = opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_TASK_BYTES;
    this.#dropLog = new RejectionLog('raylet: queued tasks', opts.log);
  }

  get length(): number {
    return this.#queue.length;
  }

  get bytes(): number {
    return this.#queuedBytes;
  }

  get refused(): number {
    return this.#refused;
  }

  get expired(): number {
    return this.#expired;
  }

  get cancelled(): number {
    return this.#cancelled;
  }

  /** The queued task of this id (the later one, when a driver queued an id twice). */
  byId(taskId: string): Task | undefined {
    return this.#queuedById.get(taskId);
  }

  /** Queues `task` — unless it would pass a bound, when it is answered `full` — and arms its expiry. */
  add(task: Task): void {
    if (this.refuseIfFull(task.msg, this.#queue.length, this.#queuedBytes, task.size)) return;
    this.#enqueue(task);
    this.#armExpiry(task.expiresAt);
  }

  /** Its driver cancelled queued `task` (cancel_task): it leaves the queue unstarted, counted. */
  cancel(task: Task): void {
    this.#queue.splice(this.#queue.indexOf(task), 1);
    this.unqueued(task);
    this.#cancelled++;
  }

  /** Empties the queue for a drain: each task taken is kept again (`keep`) or has left (`unqueued`). */
  take(): Task[] {
    const queued = this.#queue;
    this.#queue = [];
    return queued;
  }

  /** A task taken for a drain stays queued. */
  keep(task: Task): void {
    this.#queue.push(task);
  }

  #enqueue(task: Task): void {
    this.#queue.push(task);
    this.#queuedBytes += task.size;
    this.#queuedById.set(task.body.taskId, task);
  }

  /** `task` left the queue (the caller took it out of the array). */
  unqueued(task: Task): void {
    this.#queuedBytes -= task.size;
    // a task id queued twice (a driver's mistake, or a hostile one) keeps the later entry findable
    if (this.#queuedById.get(task.body.taskId) === task) this.#queuedById.delete(task.body.taskId);
  }

  /**
   * Answers `msg` `full` (and counts and logs it) when a queue holding `queued` tasks of
   * `queuedBytes` bytes has no room for one of `size` bytes more; false, with nothing done, when it
   * has. This queue's bounds, for this queue and for the submissions a raylet holds until its view
   * is ready (raylet-tasks.ts).
   */
  refuseIfFull(msg: BusMsg, queued: number, queuedBytes: number, size: number): boolean {
    if (queued < this.#maxQueued && queuedBytes + size <= this.#maxQueuedBytes) return false;
    this.#refused++;
    const full = { kind: 'full' as const, queued, maxQueued: this.#maxQueued, queuedBytes, maxQueuedBytes: this.#maxQueuedBytes };
    this.#dropLog.note('TASK_QUEUE_FULL', `refused task(s): the queue holds ${queued} task(s) of ${full.maxQueued}, ${queuedBytes} bytes of ${full.maxQueuedBytes}; their drivers submit them again`);
    respond(msg, () => encodeOk(full));
    return true;
  }

  /**
   * Drops the queued tasks whose driver has stopped waiting (called at the earliest deadline, and
   * before a drain): they are never started, never answered (nobody listens), and counted.
   */
  expire(): void {
    if (this.#expiry !== undefined) clearTimeout(this.#expiry.timer);
    this.#expiry = undefined;
    const now = this.now();
    let dropped = 0;
    let next = Number.POSITIVE_INFINITY;
    this.#queue = this.#queue.filter((task) => {
      if (task.expiresAt > now) {
        if (task.expiresAt < next) next = task.expiresAt;
        return true;
      }
      dropped++;
      this.unqueued(task);
      return false;
    });
    this.dropExpired(dropped);
    this.#armExpiry(next);
  }

  dropExpired(dropped: number): void {
    if (dropped === 0) return;
    this.#expired += dropped;
    this.#dropLog.note('TASK_EXPIRED', `dropped ${dropped} queued task(s) whose driver stopped waiting (their call timeout passed); they never ran`);
  }

  #armExpiry(at: number): void {
    if (at === Number.POSITIVE_INFINITY || this.#closed) return;
    if (this.#expiry !== undefined && this.#expiry.at <= at) return;
    if (this.#expiry !== undefined) clearTimeout(this.#expiry.timer);
    const timer = setTimeout(() => this.expire(), Math.max(0, Math.ceil(at - this.now())));
    timer.unref();
    this.#expiry = { at, timer };
  }

  /** Graceful stop: the queued tasks leave, returned to be answered `resubmit`. */
  stop(): Task[] {
    this.#closed = true;
    this.#clearExpiry();
    const queued = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#queuedById.clear();
    return queued;
  }

  /** Abrupt: the queued tasks are forgotten. */
  crash(): void {
    this.#closed = true;
    this.#clearExpiry();
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#queuedById.clear();
  }

  #clearExpiry(): void {
    if (this.#expiry !== undefined) clearTimeout(this.#expiry.timer);
    this.#expiry = undefined;
  }
}
