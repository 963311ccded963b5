import { OrreryError } from '../../lib/errors.ts';
import { encodeError } from '../../protocols/reply.ts';
import { cancelKeyMatches } from '../worker/cancel.ts';
import { respond } from '../worker/respond.ts';
import type { LocalTasksOptions } from './local-tasks-options.ts';
import type { Task } from './task-queue.ts';
import type { WorkerLeases } from './worker-leases.ts';

/**
 * The tasks one raylet (local-tasks.ts) runs in its worker hosts: each holds its resources while it
 * runs — under a holder of its own, or of the worker lease granted with it (worker-leases.ts) — and
 * is answered by its task host; one whose host dies is answered TASK_WORKER_DIED here, which the
 * driver retries. A cancel reaches a running task as the abort of its runtime-context signal.
 */
export class RunningTasks {
  readonly #running = new Set<Task>();
  #nextLease = 1;
  /** Crashed (local-tasks.ts): nothing is answered any more. */
  #crashed = false;

  constructor(
    private readonly opts: Pick<LocalTasksOptions, 'leases' | 'run' | 'cancelRunning'>,
    private readonly workerLeases: WorkerLeases,
  ) {}

  get size(): number {
    return this.#running.size;
  }

  /** cancel_task for a task not queued here: one running here with that key has its signal aborted. */
  signal(taskId: string, cancelKey: string): 'signalled' | false {
    for (const task of this.#running) {
      if (task.body.taskId !== taskId || !cancelKeyMatches(task.body.cancelKey, cancelKey)) continue;
      this.opts.cancelRunning?.(taskId);
      return 'signalled';
    }
    return false;
  }

  /**
   * Leases its resources and runs it. When the driver asked for a worker lease (and the task is not
   * SPREAD, whose point is to go elsewhere each time), the resources stay with the lease after the
   * task, until its host ends it (`leaseEnded`) or dies with it (`leasesLost`).
   */
  start(task: Task): void {
    const { body, msg } = task;
    const grant = this.workerLeases.grantFor(task);
    const holder = grant ? `lease/${grant.leaseId}` : `task/${this.#nextLease++}`;
    this.#running.add(task);
    this.opts.leases.acquire(holder, task.req.resources);
    if (grant) this.workerLeases.granted(grant.leaseId, holder, task.req);
    this.opts.run({
      taskId: body.taskId,
      code: body.code,
      reply: msg.reply,
      namespace: body.namespace,
      ...(body.jobId === undefined ? {} : { jobId: body.jobId }),
      ...(grant ? { lease: grant } : {}),
      ...(body.cancelKey === undefined ? {} : { cancellable: true }),
    }).then(
      () => this.#finish(task, grant ? undefined : holder),
      (err: unknown) => {
        this.#finish(task, holder);
        if (grant) this.workerLeases.forget(grant.leaseId);
        if (this.#crashed) return;
        const cause = err instanceof Error ? err.message : String(err);
        respond(msg, () => encodeError(new OrreryError('TASK_WORKER_DIED', `task ${body.taskId} (${body.code.functionName}) lost its worker host: ${cause}`, { detail: { taskId: body.taskId, cause } })));
      },
    );
  }

  #finish(task: Task, holder: string | undefined): void {
    if (!this.#running.delete(task)) return;
    if (holder !== undefined) this.opts.leases.release(holder);
  }

  /** Abrupt: the running tasks are forgotten, and none is answered. */
  crash(): void {
    this.#crashed = true;
    this.#running.clear();
  }
}
