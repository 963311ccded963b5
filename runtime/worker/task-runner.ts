import { OrreryError } from '../../lib/errors.ts';
import { CodeSourceRefusedError, type CodeSourcePolicy } from '../../protocols/code-source.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import { CodeLoadError } from '../errors.ts';
import { Answers } from './answers.ts';
import { NEVER_ABORTED, runInContext, type RuntimeContext } from './context.ts';
import type { HostNode } from './host.ts';
import { loadTaskFunction, type TaskFunctionImpl } from './load.ts';
import { plainDataProblem } from '../../protocols/plain-data.ts';
import { toRemoteError, unsendableResult } from './remote-error.ts';
import { TaskLeases, type LeaseGrant } from './task-leases.ts';
import { containsRef } from '../../protocols/actor-ref.ts';
import type { WorkerClusterSource } from './worker-cluster.ts';

/** What a raylet hands a worker host to run. */
/** One task a task host runs (protocols/ipc.ts). */
export type { RunTask } from '../../protocols/ipc.ts';
import type { RunTask } from '../../protocols/ipc.ts';

/**
 * Runs tasks in a worker host: loads each function by module URL and export name (kept after the
 * first load), calls it with its arguments inside a runtime context that carries the task id, and
 * makes the answer to the driver's submit_task — `{kind: 'done', value}` with the awaited result,
 * REMOTE_ERROR when it threw (or returned something that cannot be sent), CODE_LOAD_FAILED when it
 * cannot be loaded, CODE_SOURCE_REFUSED when its module URL is not accepted here (never imported).
 * Tasks of one host run concurrently; the raylet bounds them by resources. A task that comes with a
 * lease leaves the lease served here once it has run (`leases`).
 */
export class TaskRunner {
  private readonly functions = new Map<string, TaskFunctionImpl | Promise<TaskFunctionImpl>>();
  private stopped = false;
  private inFlight = 0;
  /** The cancellable tasks running now: what aborts each one's runtime-context signal. */
  private readonly cancellable = new Map<string, AbortController>();
  readonly leases: TaskLeases;
  private readonly answers: Answers;

  constructor(
    private readonly opts: {
      bus: Bus;
      node: HostNode;
      cluster?: string;
      onLeaseEnded?: (leaseId: string) => void;
      log?: (line: string) => void;
      /** Which module URLs functions are loaded from (protocols/code-source.ts); default: any file: URL. */
      codeSources?: CodeSourcePolicy;
      /** Turns actor references in arguments into handles (worker-cluster.ts); without it they stay references. */
      workerCluster?: WorkerClusterSource;
    },
  ) {
    this.answers = new Answers((subject, data) => opts.bus.publish(subject, data));
    this.leases = new TaskLeases({ bus: opts.bus, subjects: subjects(opts.cluster ?? 'default'), runner: this, onEnded: (id) => opts.onLeaseEnded?.(id), log: opts.log });
  }

  /** Tasks running now. */
  get running(): number {
    return this.inFlight;
  }

  /**
   * Its driver cancelled a running task (cancel_task; its key was checked by whoever passed it on):
   * the signal of its runtime context aborts, with a TaskCancelledError as reason. The task decides
   * what to do with it — nothing in a worker is interrupted. False when no such task runs here.
   */
  cancelRunning(taskId: string): boolean {
    const controller = this.cancellable.get(taskId);
    if (controller === undefined || controller.signal.aborted) return false;
    controller.abort(new OrreryError('ABORTED', `task ${taskId} was cancelled by its driver`, { detail: { taskId } }));
    return true;
  }

  /** Runs a task to its end and returns the bytes of the answer (never rejects). */
  async execute(task: Omit<RunTask, 'lease'>): Promise<Uint8Array> {
    return (await this.outcome(task)).answer;
  }

  private async outcome(task: Omit<RunTask, 'lease'>, lease?: LeaseGrant): Promise<{ ok: boolean; answer: Uint8Array }> {
    this.inFlight++;
    let controller: AbortController | undefined;
    if (task.cancellable === true && !this.cancellable.has(task.taskId)) this.cancellable.set(task.taskId, (controller = new AbortController()));
    try {
      const fn = await this.load(task.code.moduleUrl, task.code.functionName);
      const { nodeId, nodeName, labels } = this.opts.node;
      const source = this.opts.workerCluster;
      const signal = controller?.signal ?? NEVER_ABORTED;
      const context: RuntimeContext = { nodeId, nodeName, labels, taskId: task.taskId, jobId: task.jobId, namespace: task.namespace, cluster: source, signal };
      // handles passed as arguments arrive as references: handles on this host's connection
      const args = source !== undefined && containsRef(task.code.args) ? ((await source.get()).revive(task.code.args) as unknown[]) : task.code.args;
      const value = await runInContext(context, () => fn(...args));
      const problem = plainDataProblem(value);
      if (problem) throw unsendableResult(task.code.functionName, problem);
      return { ok: true, answer: encodeOk(lease ? { kind: 'done', value, lease: { leaseId: lease.leaseId, idleMs: lease.idleMs } } : { kind: 'done', value }) };
    } catch (err) {
      return { ok: false, answer: safeError(err instanceof CodeLoadError || err instanceof CodeSourceRefusedError ? err : toRemoteError(err)) };
    } finally {
      this.inFlight--;
      if (controller !== undefined) this.cancellable.delete(task.taskId);
    }
  }

  /** Sends an answer to the driver, with the others of this turn (answers.ts); nothing once the host has stopped. */
  answer(reply: string, bytes: Uint8Array): void {
    if (this.stopped) return;
    this.answers.send(reply, bytes);
  }

  /**
   * Runs a task and answers it. A lease that came with it is served from before the answer when the
   * task succeeded, and ended at once (`onLeaseEnded`) when it did not: the driver never hears of it.
   */
  async run(task: RunTask): Promise<void> {
    const { ok, answer } = await this.outcome(task, task.lease);
    if (task.lease && ok && !this.stopped) this.leases.open(task.lease);
    else if (task.lease) this.opts.onLeaseEnded?.(task.lease.leaseId);
    this.answer(task.reply, answer);
  }

  /** Answers of tasks still running are dropped from now on; leases end. */
  stop(): void {
    this.stopped = true;
    this.leases.stop();
  }

  private load(moduleUrl: string, functionName: string): TaskFunctionImpl | Promise<TaskFunctionImpl> {
    const key = `${moduleUrl}\0${functionName}`;
    let fn = this.functions.get(key);
    if (fn === undefined) {
      const loading = loadTaskFunction(moduleUrl, functionName, this.opts.codeSources);
      this.functions.set(key, loading);
      loading.then(
        (loaded) => this.functions.set(key, loaded),
        () => undefined,
      );
      fn = loading;
    }
    return fn;
  }
}

/** The error answer; a value too large to encode (a huge stack) keeps its code and message only. */
function safeError(err: Error): Uint8Array {
  try {
    return encodeError(err);
  } catch (encodeErr) {
    return encodeError(encodeErr);
  }
}
