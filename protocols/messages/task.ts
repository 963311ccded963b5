import { array, bool, childPath, invalid, isPlainObject, literal, num, object, optional, plainData, record, str, unknown, type Infer, type Validator } from '../validate.ts';
import { codeModuleUrl } from '../code-source.ts';
import { cancelKey, id, resourceSet, seq } from './common.ts';

/** Most raylets one submission may visit before the last one keeps it (runtime/raylet/local-tasks.ts). */
export const MAX_TASK_HOPS = 64;

/**
 * How to run a task anywhere: the module that exports the function under its own name (a `file:`
 * URL: see code-source.ts), and the arguments (msgpack-encodable values; the client refuses anything else before sending).
 */
export const taskCode = object({
  moduleUrl: codeModuleUrl,
  functionName: str({ min: 1, max: 256 }),
  args: array(plainData(), { max: 100_000 }),
});

/**
 * driver → raylet (`raylet.<nodeId>.submit_task`), a request: the raylet decides with its cluster
 * view and answers exactly once — with the task's result (sent by the worker host that ran it), a
 * spillback naming the node to ask next, `resubmit` (the raylet is stopping; ask another), or an
 * error (REMOTE_ERROR when the function threw, CODE_LOAD_FAILED, TASK_WORKER_DIED, INVALID_OPTION…).
 *
 * `options` is the placement part of TaskOptions as plain data; the raylet compiles it with lib's
 * compileRequest. `hops` counts the raylets that spilled this submission back so far (0 from the
 * driver), and `visited` names them; `attempt` counts runs after failures (0 the first time).
 * `lease`: the driver would like a lease (see `taskLease`) for more tasks with these options, and
 * holds leases for them already or can wait for one: a raylet that cannot run it or pass it on now
 * answers `busy` instead of queueing it.
 */
export const submitTask = object({
  taskId: id,
  code: taskCode,
  namespace: str({ min: 1, max: 256 }),
  options: record(plainData(), { maxKeys: 64 }),
  hops: num({ int: true, min: 0, max: MAX_TASK_HOPS }),
  visited: optional(array(id, { max: MAX_TASK_HOPS })),
  attempt: num({ int: true, min: 0 }),
  lease: optional(bool()),
  /**
   * The job on whose behalf it runs (messages/job.ts): actors the task creates through connect()
   * inside the worker are owned by it. Absent: submitted outside a job.
   */
  jobId: optional(id),
  /**
   * How long its driver waits for the answer to this submission (its call timeout). A raylet that
   * queued it never starts it after that long from its arrival, and forgets it: the driver has
   * answered its caller TIMEOUT. Absent: no deadline (an older driver).
   */
  timeoutMs: optional(num({ int: true, min: 1 })),
  /**
   * When the driver stops waiting, on its wall clock (ms since the epoch): a submission read late —
   * by a raylet that was frozen, or behind a backlog — has less than `timeoutMs` left, or none.
   * Raylets take the earlier of the two; clocks are assumed to agree within a few milliseconds.
   */
  deadline: optional(num({ int: true, min: 0 })),
  /**
   * Present when the driver can cancel this task (it gave an AbortSignal): the secret a
   * `cancel_task` for it must carry. Only its driver and the raylets see it, so another driver
   * that learns the task id (from a schedule_failed event) cannot cancel it.
   */
  cancelKey: optional(cancelKey),
});
export type SubmitTask = Infer<typeof submitTask>;

/**
 * A worker lease (Ray's, seed 004 stage 6), granted with the result of a task the raylet ran: the
 * task host that ran it keeps the task's resources and takes more tasks with the same options
 * straight from the driver — `leased_task` on `actor.<leaseId>.call`, a lease being addressed like
 * a short-lived actor — one at a time, without the raylet. The host ends the lease after `idleMs`
 * without a task, or at the first idle moment after its lifetime; a push to an ended lease finds no
 * responder or is answered LEASE_EXPIRED, and the driver submits to a raylet again.
 */
export const taskLease = object({ leaseId: id, idleMs: num({ int: true, min: 1 }) });
export type TaskLease = Infer<typeof taskLease>;

/**
 * Tasks a lease holds at once: one running on its task host, the rest waiting there behind it in
 * push order; one more is LEASE_BUSY. A driver pushes to a busy lease only when no lease of the
 * class is idle and it cannot get another now, so a slow task delays at most LEASE_DEPTH - 1
 * others, and only when every lease is taken anyway; in exchange the host gets tasks (and sends
 * answers) in batches rather than one per round trip.
 */
export const LEASE_DEPTH = 4;

/** driver → task host (`actor.<leaseId>.call`), a request: one task under a lease. */
export const leasedTask = object({
  leaseId: id,
  taskId: id,
  code: taskCode,
  attempt: num({ int: true, min: 0 }),
  /** As submit_task's: what the task creates inside the worker is owned by this job. */
  jobId: optional(id),
  /** The task's namespace (a lease's tasks share one); absent from an older driver: 'default'. */
  namespace: optional(str({ min: 1, max: 256 })),
  /** As submit_task's: a task waiting on the host behind another never starts after this long from its arrival. */
  timeoutMs: optional(num({ int: true, min: 1 })),
  /** As submit_task's. */
  deadline: optional(num({ int: true, min: 0 })),
  /** As submit_task's: what a cancel_task on the lease's subject must carry. */
  cancelKey: optional(cancelKey),
});
export type LeasedTask = Infer<typeof leasedTask>;

/**
 * driver → raylet (`raylet.<nodeId>.cancel_task`) or → task host (`actor.<leaseId>.call`), published,
 * not a request: the driver's caller aborted the task (its AbortSignal). A raylet or lease that
 * still holds it queued, not started, with this `cancelKey`, drops it and answers its submission
 * ABORTED: it never runs. One running there, with this key, has its runtime context's signal
 * aborted in its task host (nothing is interrupted: the task decides how to end). A cancel for no
 * such task, or with another key, changes nothing.
 */
export const cancelTask = object({ taskId: id, cancelKey });
export type CancelTask = Infer<typeof cancelTask>;

/**
 * How long a raylet or task host may still start a task it reads now: the lesser of its `timeoutMs`
 * and what is left before its `deadline` on this machine's clock; Infinity without either (an older
 * driver). Zero or less: its driver has already given up.
 */
export function taskTimeLeft(body: { readonly timeoutMs?: number; readonly deadline?: number }, wallNow: number): number {
  return Math.min(body.timeoutMs ?? Number.POSITIVE_INFINITY, body.deadline === undefined ? Number.POSITIVE_INFINITY : body.deadline - wallNow);
}

const done = object({ kind: literal('done'), value: unknown(), lease: optional(taskLease) });
const spillback = object({ kind: literal('spillback'), nodeId: id });
const resubmit = object({ kind: literal('resubmit') });
const busy = object({ kind: literal('busy') });
const full = object({ kind: literal('full'), queued: num({ int: true, min: 0 }), maxQueued: num({ int: true, min: 0 }), queuedBytes: num({ int: true, min: 0 }), maxQueuedBytes: num({ int: true, min: 0 }) });

/**
 * The value of a submit_task reply:
 *   done       the task ran here; `value` is what the function returned (awaited), and `lease` a
 *              lease the driver asked for
 *   spillback  ask raylet `nodeId` instead (its view prefers it), with hops + 1
 *   resubmit   this raylet is stopping and the task never started: submit it again elsewhere
 *   busy       (a submission asking for a lease) no room for it now; it did not run
 *   full       it would have to wait here, and this raylet's queue holds as many tasks (or bytes of
 *              them) as it takes (`maxQueued`, `maxQueuedBytes`): it did not run and is not kept;
 *              the driver submits it again once there may be room
 */
export type TaskOutcome = Infer<typeof done> | Infer<typeof spillback> | Infer<typeof resubmit> | Infer<typeof busy> | Infer<typeof full>;

export const taskOutcome: Validator<TaskOutcome> = (value, path) => {
  if (!isPlainObject(value)) return invalid(path, 'expected an object');
  switch (value.kind) {
    case 'done':
      return done(value, path);
    case 'spillback':
      return spillback(value, path);
    case 'resubmit':
      return resubmit(value, path);
    case 'busy':
      return busy(value, path);
    case 'full':
      return full(value, path);
    default:
      return invalid(childPath(path, 'kind'), 'expected "done", "spillback", "resubmit", "busy" or "full"');
  }
};

/**
 * raylet → GCS (`raylet.<nodeId>.load`, published by the raylet of that node): what its node has
 * free now — total minus what its actors and running tasks hold, in units — at most every few tens of
 * milliseconds and only after a change. `seq` grows by one per report. The GCS forwards the latest
 * report of each node in its next view delta (`loads`, messages/view.ts), and other raylets use it for
 * the node's available resources in their view, which the GCS's own accounting (actors only) cannot
 * give them.
 */
export const rayletLoad = object({ nodeId: id, seq, available: resourceSet });
export type RayletLoad = Infer<typeof rayletLoad>;
