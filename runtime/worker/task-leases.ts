import { OrreryError } from '../../lib/errors.ts';
import { decode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { LEASE_DEPTH, taskTimeLeft, type LeasedTask } from '../../protocols/messages/task.ts';
import { encodeError } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, BusMsg, Subscription } from '../bus/bus.ts';
import { cancelKeyMatches, encodeCancelled } from './cancel.ts';
import { MalformedCounter } from './malformed.ts';
import { respond } from './respond.ts';
import type { TaskRunner } from './task-runner.ts';

/** A lease as the raylet grants it to a task host (protocols/ipc.ts). */
export type { LeaseGrant } from '../../protocols/ipc.ts';
import type { LeaseGrant } from '../../protocols/ipc.ts';

interface Lease {
  readonly grant: LeaseGrant;
  readonly sub: Subscription;
  expiresAt: number;
  /** A task of the lease runs now. */
  running: boolean;
  /** The task that runs now, while one does. */
  current?: Pushed;
  /** Tasks pushed while one ran, to run next in push order (at most LEASE_DEPTH - 1). */
  readonly queue: Pushed[];
  lastUsed: number;
  /** Fires every idleMs while the lease lives; ends it when it finds it idle that long. */
  timer: NodeJS.Timeout;
}

/** A task pushed to a lease and not yet started. */
interface Pushed {
  readonly taskId: string;
  readonly code: LeasedTask['code'];
  readonly reply: string;
  readonly jobId?: string;
  readonly namespace?: string;
  /** When its driver stops waiting (its `timeoutMs` from arrival): it is dropped rather than started after that. */
  readonly expiresAt: number;
  /** What a cancel_task for it must carry; absent: it cannot be cancelled. */
  readonly cancelKey?: string;
}


const LEASED_REGISTRY = { leased_task: messages.leased_task, cancel_task: messages.cancel_task } as const;

/**
 * The leases of one task host: each is served on `actor.<leaseId>.call`, where the driver pushes
 * tasks one at a time, answered like any task. A lease ends — its subscription goes and the raylet
 * hears of it (`onEnded`), which frees its resources — when it has been idle `idleMs`, or at its
 * first idle moment after `lifetimeMs`. A push while a task of the lease runs is LEASE_BUSY; one
 * after its lifetime is LEASE_EXPIRED.
 */
export class TaskLeases {
  private readonly leases = new Map<string, Lease>();
  private stopped = false;
  /** Tasks dropped from a lease's queue unstarted because their driver had stopped waiting (timeoutMs). */
  expired = 0;
  /** Tasks dropped from a lease's queue unstarted because their driver cancelled them (cancel_task). */
  cancelled = 0;
  readonly malformed: MalformedCounter;

  constructor(
    private readonly opts: {
      bus: Bus;
      subjects: ClusterSubjects;
      runner: TaskRunner;
      onEnded: (leaseId: string) => void;
      log?: (line: string) => void;
    },
  ) {
    this.malformed = new MalformedCounter('task host: malformed leased task', opts.log ?? (() => {}));
  }

  get size(): number {
    return this.leases.size;
  }

  /** Starts serving a lease; subscribed before the answer to its first task goes out. */
  open(grant: LeaseGrant): void {
    if (this.stopped || this.leases.has(grant.leaseId)) return;
    const now = performance.now();
    const lease: Lease = {
      grant,
      sub: this.opts.bus.subscribe(this.opts.subjects.actorCall(grant.leaseId), (msg) => this.onPush(lease, msg)),
      expiresAt: now + grant.lifetimeMs,
      running: false,
      queue: [],
      lastUsed: now,
      timer: setTimeout(() => this.check(lease), grant.idleMs),
    };
    this.leases.set(grant.leaseId, lease);
  }

  /** Ends these leases: now when idle, else once their running task has answered. */
  revoke(leaseIds: readonly string[]): void {
    for (const id of leaseIds) {
      const lease = this.leases.get(id);
      if (!lease) continue;
      if (lease.running) lease.expiresAt = 0;
      else this.end(lease);
    }
  }

  /** Ends every lease (the host is stopping). */
  stop(): void {
    this.stopped = true;
    for (const lease of [...this.leases.values()]) this.end(lease);
  }

  private onPush(lease: Lease, msg: BusMsg): void {
    let body;
    try {
      const decoded = decode(msg.data, { registry: LEASED_REGISTRY });
      if (decoded.type === 'cancel_task') return this.cancel(lease, decoded.body.taskId, decoded.body.cancelKey);
      body = decoded.body;
      if (body.leaseId !== lease.grant.leaseId) throw new OrreryError('LEASE_MISMATCH', `pushed to lease ${lease.grant.leaseId} for lease ${body.leaseId}`, { detail: { leaseId: body.leaseId } });
    } catch (err) {
      this.malformed.count(err);
      respond(msg, () => encodeError(err));
      return;
    }
    if (msg.reply === undefined) return;
    const { leaseId } = lease.grant;
    if (!this.leases.has(leaseId) || performance.now() >= lease.expiresAt) {
      respond(msg, () => encodeError(expired(leaseId)));
      if (!lease.running) this.end(lease);
      return;
    }
    if ((lease.running ? 1 : 0) + lease.queue.length >= LEASE_DEPTH) {
      respond(msg, () => encodeError(new OrreryError('LEASE_BUSY', `lease ${leaseId} holds ${LEASE_DEPTH} tasks already`, { detail: { leaseId } })));
      return;
    }
    const left = taskTimeLeft(body, Date.now());
    if (left <= 0) {
      this.expired++; // read after its driver gave up: nobody waits for its answer
      return;
    }
    const expiresAt = performance.now() + left;
    lease.queue.push({
      taskId: body.taskId,
      code: body.code,
      reply: msg.reply,
      expiresAt,
      ...(body.jobId === undefined ? {} : { jobId: body.jobId }),
      ...(body.namespace === undefined ? {} : { namespace: body.namespace }),
      ...(body.cancelKey === undefined ? {} : { cancelKey: body.cancelKey }),
    });
    if (!lease.running) this.runNext(lease);
  }

  /**
   * cancel_task on the lease's subject: a task of it still waiting behind the running one, pushed
   * with that key, is dropped unstarted and answered ABORTED; the running one, with that key, has
   * its runtime-context signal aborted (it decides how to end). Anything else changes nothing.
   */
  private cancel(lease: Lease, taskId: string, cancelKey: string): void {
    const { current } = lease;
    if (current?.taskId === taskId && cancelKeyMatches(current.cancelKey, cancelKey)) return void this.opts.runner.cancelRunning(taskId);
    const at = lease.queue.findIndex((task) => task.taskId === taskId);
    if (at < 0 || !cancelKeyMatches(lease.queue[at]!.cancelKey, cancelKey)) return;
    const [task] = lease.queue.splice(at, 1);
    this.cancelled++;
    this.opts.runner.answer(task!.reply, encodeCancelled(taskId));
  }

  /** Runs the lease's tasks one after another; ends it at its first idle moment after its lifetime. */
  private runNext(lease: Lease): void {
    let task = lease.queue.shift();
    // one whose driver stopped waiting behind a long task never starts: its caller has TIMEOUT
    while (task !== undefined && task.expiresAt <= performance.now()) {
      this.expired++;
      task = lease.queue.shift();
    }
    if (task === undefined) return;
    lease.running = true;
    lease.current = task;
    void this.opts.runner.execute(task.cancelKey === undefined ? task : { ...task, cancellable: true }).then((answer) => {
      this.opts.runner.answer(task.reply, answer);
      lease.running = false;
      lease.current = undefined;
      lease.lastUsed = performance.now();
      if (lease.lastUsed >= lease.expiresAt) this.end(lease);
      else this.runNext(lease);
    });
  }

  /** The idle check: ends a lease idle for idleMs (or past its lifetime), else looks again later. */
  private check(lease: Lease): void {
    if (this.leases.get(lease.grant.leaseId) !== lease) return;
    const now = performance.now();
    const idle = !lease.running && lease.queue.length === 0 && (now - lease.lastUsed >= lease.grant.idleMs || now >= lease.expiresAt);
    if (idle) this.end(lease);
    else lease.timer.refresh();
  }

  private end(lease: Lease): void {
    const { leaseId } = lease.grant;
    if (this.leases.get(leaseId) !== lease) return;
    this.leases.delete(leaseId);
    clearTimeout(lease.timer);
    // drained, not dropped: a push the driver sent before it could know is answered LEASE_EXPIRED
    // (it is not in `leases` any more) instead of vanishing with the subscription
    void lease.sub.drain();
    // tasks waiting behind the last one never ran: the driver submits them to a raylet
    for (const task of lease.queue.splice(0)) this.opts.runner.answer(task.reply, encodeError(expired(leaseId)));
    this.opts.onEnded(leaseId);
  }
}

function expired(leaseId: string): OrreryError {
  return new OrreryError('LEASE_EXPIRED', `lease ${leaseId} has ended; submit the task to a raylet`, { detail: { leaseId } });
}
