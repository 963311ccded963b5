import { decode, encode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { LEASE_DEPTH, taskOutcome, type TaskLease } from '../../protocols/messages/task.ts';
import type { Subscription } from '../bus/bus.ts';
import { NoRespondersError } from '../bus/errors.ts';
import { OrreryError } from '../../lib/errors.ts';
import { specializeWireError } from './errors.ts';
import { watchAbort } from './abort-watch.ts';
import { TaskAbortedError } from './task-errors.ts';
import { answerWait, NodeDied, type TaskContext, type TaskResult, type TaskSpec, type TaskSubmitter, type Tries } from './task-submitter.ts';

/** Raylet submissions in flight per task class (each may bring back a lease), as Ray's limit of pending lease requests. */
const MAX_PENDING = 16;
/** Codes with which a lease turns a push away: the task never ran; submit it to a raylet. */
const LEASE_GONE = new Set(['LEASE_EXPIRED', 'LEASE_BUSY', 'LEASE_MISMATCH']);

interface Lease {
  readonly leaseId: string;
  readonly nodeId: string;
  readonly idleMs: number;
  lastUsed: number;
  /** Tasks pushed to it and not answered yet (at most LEASE_DEPTH). */
  inFlight: number;
  /** Fail the tasks pushed to it now (the lease died with its host). */
  readonly fails: Set<(err: Error) => void>;
  revoked: boolean;
  dropped?: boolean;
}

interface Job {
  readonly spec: TaskSpec;
  readonly tries: Tries;
  resolve(result: TaskResult): void;
  reject(err: unknown): void;
  /** Submitted to a raylet or pushed to a lease now: an abort then is that request's to report. */
  out: boolean;
  /** Its signal aborted while it waited here: it is skipped when its turn comes. */
  aborted: boolean;
}

/**
 * Tasks waiting their turn, first in first out, with the odd one put back at the front (a lease
 * that was gone, a raylet that said busy). Not an array's shift(): V8 moves every element for it once
 * an array passes ~16,000, and a driver submitting 100,000 tasks of one class then spent 4.5 s in it.
 */
class JobQueue {
  #items: (Job | undefined)[] = [];
  #head = 0;
  /** Jobs put back, the next to go last. */
  #front: Job[] = [];

  get length(): number {
    return this.#front.length + this.#items.length - this.#head;
  }

  push(job: Job): void {
    this.#items.push(job);
  }

  /** Puts a job back to go next. */
  unshift(job: Job): void {
    this.#front.push(job);
  }

  /** The job shift() would take, left in place. */
  peek(): Job | undefined {
    if (this.#front.length > 0) return this.#front[this.#front.length - 1];
    return this.#head < this.#items.length ? this.#items[this.#head] : undefined;
  }

  shift(): Job | undefined {
    if (this.#front.length > 0) return this.#front.pop();
    if (this.#head >= this.#items.length) return undefined;
    const job = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return job;
  }
}

/** Tasks with the same options: they can share worker leases. */
interface TaskClass {
  /** Its key in `classes`: dropped from there once it holds nothing (no task, no lease). */
  readonly key: string;
  readonly waiting: JobQueue;
  /** Leases with no task, most recently used last. */
  idle: Lease[];
  /** Leases with tasks in flight. */
  readonly busy: Set<Lease>;
  /** Leases held, idle or busy. */
  leases: number;
  pending: number;
  /** A raylet said `busy`: no more asking for leases until one of ours ends or comes back. */
  full: boolean;
}

/**
 * Worker leases on the driver (Ray's owner-side lease reuse, seed 004 stage 6). Tasks with the same
 * options form a class; a task of a class goes, in order of submission, to an idle lease of the
 * class when there is one — pushed straight to the task host that holds it, one task per lease at a
 * time, no raylet on the way — else to a raylet (TaskSubmitter) asking for a lease with its result,
 * at most MAX_PENDING such submissions per class at once; the others wait their turn here.
 *
 * A lease the driver has not used for half its idle time is dropped (its host ends it at idleMs). A
 * push that finds the lease gone (no responder, LEASE_EXPIRED) goes to a raylet instead; one whose
 * node dies, or whose lease is revoked because its host died (`events.lease_revoked`), counts as a
 * failed run and is retried like any task.
 */
export class TaskDispatcher {
  private readonly classes = new Map<string, TaskClass>();
  private readonly byLease = new Map<string, Lease>();
  private readonly revoked: Subscription;

  constructor(private readonly ctx: TaskContext, private readonly submitter: TaskSubmitter) {
    this.revoked = ctx.bus.subscribe(ctx.subjects.event('lease_revoked'), (msg) => {
      try {
        const { body } = decode(msg.data, { registry: { event: messages.event } });
        const id = body.target?.id;
        if (typeof id === 'string') this.revoke(id, body.message ?? 'its task host died');
      } catch {
        // not ours to judge: the raylet that sent it will see the task host's death anyway
      }
    });
  }

  /** Runs a task of class `key` (leases shared with tasks of the same key). */
  run(spec: TaskSpec, key: string): Promise<TaskResult> {
    let cls = this.classes.get(key);
    if (!cls) this.classes.set(key, (cls = { key, waiting: new JobQueue(), idle: [], busy: new Set(), leases: 0, pending: 0, full: false }));
    const owner = cls;
    return new Promise<TaskResult>((resolve, reject) => {
      const { signal } = spec;
      if (signal === undefined) {
        owner.waiting.push({ spec, tries: { attempt: 0 }, resolve, reject, out: false, aborted: false });
        return this.dispatch(owner);
      }
      // one watch for its whole stay here: an abort while it waits fails it at once, unsent; one
      // while it is out is its request's (TaskSubmitter.request), which also cancels it where it is
      const job: Job = {
        spec,
        tries: { attempt: 0 },
        resolve: (result) => (unwatch(), resolve(result)),
        reject: (err) => (unwatch(), reject(err)),
        out: false,
        aborted: false,
      };
      const unwatch = watchAbort(signal, () => {
        if (job.out) return;
        job.aborted = true;
        job.reject(new TaskAbortedError(spec.taskId, spec.code.functionName, job.tries.sent === true, signal.reason));
      });
      owner.waiting.push(job);
      this.dispatch(owner);
    });
  }

  close(): void {
    this.revoked.unsubscribe();
  }

  /**
   * Idle leases first; then raylet submissions asking for leases, unless a raylet said it has no
   * room (the class waits for its own leases); with no lease at all, a plain submission, which
   * queues at the raylet like any task.
   */
  private dispatch(cls: TaskClass): void {
    this.dropAborted(cls);
    while (cls.waiting.length > 0) {
      // a busy lease takes another task only when no other lease can be had now (LEASE_DEPTH)
      const lease = this.takeLease(cls) ?? (cls.full || cls.pending >= MAX_PENDING ? this.leastBusy(cls) : undefined);
      if (lease) {
        this.push(cls, cls.waiting.shift()!, lease);
        this.dropAborted(cls);
        continue;
      }
      if (cls.pending >= MAX_PENDING) return;
      if (cls.full && cls.leases > 0) return;
      cls.pending++;
      this.submit(cls, cls.waiting.shift()!, !cls.full);
      this.dropAborted(cls);
    }
    // a class with no task and no lease is forgotten: each distinct set of options (a pin to one
    // node, labels per call) made one, kept for the driver's life
    if (cls.pending === 0 && cls.leases === 0 && this.classes.get(cls.key) === cls) this.classes.delete(cls.key);
  }

  /** Jobs aborted while they waited leave the front of the queue (each was failed at its abort). */
  private dropAborted(cls: TaskClass): void {
    for (let job = cls.waiting.peek(); job?.aborted; job = cls.waiting.peek()) cls.waiting.shift();
  }

  /** How many task classes the dispatcher holds (options with tasks or leases now). */
  get classCount(): number {
    return this.classes.size;
  }

  /** The freshest idle lease, dropping those that are stale or on a node that died. */
  private takeLease(cls: TaskClass): Lease | undefined {
    const now = performance.now();
    for (let lease = cls.idle.pop(); lease; lease = cls.idle.pop()) {
      if (!lease.revoked && now - lease.lastUsed < lease.idleMs / 2 && this.submitter.isLive(lease.nodeId)) return lease;
      this.drop(cls, lease);
    }
    return undefined;
  }

  /** The busy lease with the fewest tasks in flight, when one can hold one more. */
  private leastBusy(cls: TaskClass): Lease | undefined {
    let best: Lease | undefined;
    for (const lease of cls.busy) {
      if (lease.revoked || lease.dropped || lease.inFlight >= LEASE_DEPTH || !this.submitter.isLive(lease.nodeId)) continue;
      if (best === undefined || lease.inFlight < best.inFlight) best = lease;
    }
    return best;
  }

  private submit(cls: TaskClass, job: Job, wantLease: boolean): void {
    job.out = true;
    this.submitter.submit(job.spec, job.tries, wantLease).then(
      (outcome) => {
        cls.pending--;
        job.out = false;
        if ('busy' in outcome) {
          // aborted while the raylet answered busy: it did not run, and it is not tried again
          if (job.spec.signal?.aborted) job.reject(new TaskAbortedError(job.spec.taskId, job.spec.code.functionName, false, job.spec.signal.reason));
          else cls.waiting.unshift(job);
          cls.full = true;
          return this.dispatch(cls);
        }
        if (outcome.lease) this.keep(cls, outcome.lease, outcome.result.nodeId);
        job.resolve(outcome.result);
        this.dispatch(cls);
      },
      (err: unknown) => {
        cls.pending--;
        job.out = false;
        job.reject(err);
        this.dispatch(cls);
      },
    );
  }

  private keep(cls: TaskClass, grant: TaskLease, nodeId: string): void {
    const lease: Lease = { leaseId: grant.leaseId, nodeId, idleMs: grant.idleMs, lastUsed: performance.now(), inFlight: 0, fails: new Set(), revoked: false };
    this.byLease.set(lease.leaseId, lease);
    cls.leases++;
    cls.idle.push(lease);
  }

  /** A lease this driver will not use again: the class may ask raylets for room again. */
  private drop(cls: TaskClass, lease: Lease): void {
    if (this.byLease.get(lease.leaseId) === lease) this.byLease.delete(lease.leaseId);
    if (lease.dropped) return;
    lease.dropped = true;
    cls.leases--;
    cls.full = false;
  }

  private push(cls: TaskClass, job: Job, lease: Lease): void {
    const { spec, tries } = job;
    const wait = answerWait(spec, this.ctx.callTimeoutMs);
    const body = {
      leaseId: lease.leaseId,
      taskId: spec.taskId,
      code: spec.code,
      attempt: tries.attempt,
      namespace: spec.namespace,
      ...wait,
      ...(spec.jobId === undefined ? {} : { jobId: spec.jobId }),
      ...(spec.cancelKey === undefined ? {} : { cancelKey: spec.cancelKey }),
    };
    let data: Uint8Array;
    try {
      data = encode('leased_task', body);
    } catch (err) {
      if (lease.inFlight === 0) cls.idle.push(lease);
      return job.reject(err);
    }
    lease.inFlight++;
    cls.busy.add(lease);
    job.out = true;
    tries.sent = true;
    const onLost = (fail: (err: Error) => void): (() => void) => {
      lease.fails.add(fail);
      return () => lease.fails.delete(fail);
    };
    const subject = this.ctx.subjects.actorCall(lease.leaseId);
    this.submitter.request(lease.nodeId, subject, data, taskOutcome, onLost, wait.timeoutMs, spec.signal === undefined ? undefined : this.submitter.cancelling(spec, subject)).then(
      (outcome) => {
        job.out = false;
        this.settled(cls, lease);
        this.release(cls, lease);
        if (outcome.kind === 'done') job.resolve({ value: outcome.value, taskId: spec.taskId, nodeId: lease.nodeId, route: [lease.nodeId], attempts: tries.attempt + 1 });
        else job.reject(new OrreryError('PROTOCOL', `a lease answered ${outcome.kind}`, { detail: { leaseId: lease.leaseId } }));
        this.dispatch(cls);
      },
      (err: unknown) => {
        job.out = false;
        this.settled(cls, lease);
        const code = err instanceof OrreryError ? err.code : undefined;
        if (err instanceof NoRespondersError || (code !== undefined && LEASE_GONE.has(code))) {
          // the lease was gone before the task reached it: the task never ran
          tries.sent = false;
          this.drop(cls, lease);
          cls.waiting.unshift(job);
        } else if (err instanceof NodeDied || code === 'TASK_WORKER_DIED') {
          this.drop(cls, lease);
          try {
            this.submitter.lost(spec, tries, err);
            cls.waiting.unshift(job);
          } catch (final) {
            job.reject(final);
          }
        } else {
          // the task failed on a healthy lease (it threw, or cannot be loaded); a request that
          // timed out, or was aborted, may still be running, so its lease is not used again
          if (code === 'TIMEOUT' || err instanceof TaskAbortedError) this.drop(cls, lease);
          else this.release(cls, lease);
          job.reject(specializeWireError(err));
        }
        this.dispatch(cls);
      },
    );
  }

  /** One task pushed to `lease` is answered (or failed). */
  private settled(cls: TaskClass, lease: Lease): void {
    lease.inFlight--;
    if (lease.inFlight === 0) cls.busy.delete(lease);
  }

  /** A task on a healthy lease has ended: the lease is idle again once its last task has. */
  private release(cls: TaskClass, lease: Lease): void {
    if (lease.revoked) return this.drop(cls, lease);
    lease.lastUsed = performance.now();
    if (lease.inFlight === 0 && !lease.dropped) cls.idle.push(lease);
  }

  private revoke(leaseId: string, cause: string): void {
    const lease = this.byLease.get(leaseId);
    if (!lease) return;
    lease.revoked = true;
    for (const fail of [...lease.fails]) fail(new OrreryError('TASK_WORKER_DIED', `lease ${leaseId} was revoked: ${cause}`, { detail: { leaseId, cause } }));
  }
}
