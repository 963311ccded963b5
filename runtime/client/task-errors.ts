import { OrreryError } from '../../lib/errors.ts';

/** An argument of a task cannot be sent (a function, a class instance, a cycle…); nothing was sent. */
export class TaskArgumentError extends OrreryError {
  override name = 'TaskArgumentError';
  constructor(readonly functionName: string, readonly index: number, readonly path: string, readonly problem: string) {
    const where = path ? ` at ${path}` : '';
    super('INVALID_ARGUMENT', `argument ${index} of task ${functionName} cannot be sent${where}: ${problem}`, { detail: { functionName, index, path, problem } });
  }
}

/**
 * A task's AbortSignal aborted before it ended. `sent` false: no raylet or worker had it, and it will
 * not run. `sent` true: it had been handed on, and may run — unless the raylet or the worker lease
 * that holds it still has it queued, unstarted, when the driver's cancel_task arrives: then it is
 * dropped there and never runs. A task already running has its `getRuntimeContext().signal`
 * aborted and ends as it sees fit (nothing is interrupted); its result is discarded.
 */
export class TaskAbortedError extends OrreryError {
  override name = 'TaskAbortedError';
  constructor(readonly taskId: string, readonly functionName: string, readonly sent: boolean, reason?: unknown) {
    const outcome = sent ? 'after it was handed to a node: a queued task is dropped unstarted, a running one sees the abort in its runtime context' : 'before it was sent: it will not run';
    super('ABORTED', `task ${functionName} (${taskId}) was aborted ${outcome}`, { cause: reason, detail: { taskId, functionName, sent } });
  }
}

/** A task's node died while it ran (or waited there), and its retries are used up. */
export class TaskNodeDiedError extends OrreryError {
  override name = 'TaskNodeDiedError';
  constructor(readonly taskId: string, readonly nodeId: string, readonly attempts: number) {
    super('TASK_NODE_DIED', `task ${taskId} was on node ${nodeId}, which died; ${attempts} attempt(s) made, no retries left`, { detail: { taskId, nodeId, attempts } });
  }
}

/** A task's worker host died while it ran, and its retries are used up. */
export class TaskWorkerDiedError extends OrreryError {
  override name = 'TaskWorkerDiedError';
  constructor(readonly taskId: string, readonly reason: string, readonly attempts: number) {
    super('TASK_WORKER_DIED', `task ${taskId} lost its worker host (${reason}); ${attempts} attempt(s) made, no retries left`, { detail: { taskId, cause: reason, attempts } });
  }
}

/** No raylet takes tasks: the cluster has no live node, or every one refused. */
export class NoNodesError extends OrreryError {
  override name = 'NoNodesError';
  constructor(readonly reason: string) {
    super('NO_NODES', `no node can take the task: ${reason}`, { detail: { reason } });
  }
}

/**
 * Every time it was submitted for as long as its timeout, the raylet that had to keep the task
 * answered that its queue was full (docs/runtime.md, "A raylet's queue is bounded"). It never ran.
 */
export class TaskQueueFullError extends OrreryError {
  override name = 'TaskQueueFullError';
  constructor(
    readonly taskId: string,
    readonly nodeId: string,
    readonly queue: { queued: number; maxQueued: number; queuedBytes: number; maxQueuedBytes: number },
    readonly waitedMs: number,
  ) {
    super(
      'TASK_QUEUE_FULL',
      `task ${taskId} did not run: the queue of node ${nodeId}'s raylet stayed full for ${waitedMs} ms (${queue.queued} of ${queue.maxQueued} tasks, ${queue.queuedBytes} of ${queue.maxQueuedBytes} bytes)`,
      { detail: { taskId, nodeId, ...queue, waitedMs } },
    );
  }
}
