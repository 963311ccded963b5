import { encodeError, encodeOk } from '../../protocols/reply.ts';
import type { Bus } from '../bus/bus.ts';
import { CodeLoadError, RemoteError } from '../errors.ts';
import { runInContext, type RuntimeContext } from './context.ts';
import type { HostNode } from './host.ts';
import { loadTaskFunction, type TaskFunctionImpl } from './load.ts';
import { plainDataProblem } from './plain-data.ts';
import { toRemoteError } from './remote-error.ts';

/** What a raylet hands a worker host to run. */
export interface RunTask {
  readonly taskId: string;
  readonly code: { readonly moduleUrl: string; readonly functionName: string; readonly args: readonly unknown[] };
  /** Where the driver waits: the host answers the submission there itself. */
  readonly reply: string;
}

/**
 * Runs tasks in a worker host: loads each function by module URL and export name (kept after the
 * first load), calls it with its arguments inside a runtime context that carries the task id, and
 * makes the answer to the driver's submit_task — `{kind: 'done', value}` with the awaited result,
 * REMOTE_ERROR when it threw (or returned something that cannot be sent), CODE_LOAD_FAILED when it
 * cannot be loaded. Tasks of one host run concurrently; the raylet bounds them by resources.
 */
export class TaskRunner {
  private readonly functions = new Map<string, TaskFunctionImpl | Promise<TaskFunctionImpl>>();
  private stopped = false;
  private inFlight = 0;

  constructor(private readonly opts: { bus: Bus; node: HostNode }) {}

  /** Tasks running now. */
  get running(): number {
    return this.inFlight;
  }

  /** Runs a task to its end and returns the bytes of the answer (never rejects). */
  async execute(task: RunTask): Promise<Uint8Array> {
    this.inFlight++;
    try {
      const fn = await this.load(task.code.moduleUrl, task.code.functionName);
      const context: RuntimeContext = { ...this.opts.node, taskId: task.taskId };
      const value = await runInContext(context, () => fn(...task.code.args));
      const problem = plainDataProblem(value);
      if (problem) {
        const where = problem.path ? ` at ${problem.path}` : '';
        throw new RemoteError({ name: 'TypeError', message: `${task.code.functionName} returned a value that cannot be sent${where}: ${problem.problem}` });
      }
      return encodeOk({ kind: 'done', value });
    } catch (err) {
      return safeError(err instanceof CodeLoadError ? err : toRemoteError(err));
    } finally {
      this.inFlight--;
    }
  }

  /** Sends an answer to the driver; nothing once the host has stopped. */
  answer(reply: string, bytes: Uint8Array): void {
    if (this.stopped) return;
    try {
      this.opts.bus.publish(reply, bytes);
    } catch {
      // the bus closed under us: nobody is left to answer
    }
  }

  /** Runs a task and answers it. */
  async run(task: RunTask): Promise<void> {
    this.answer(task.reply, await this.execute(task));
  }

  /** Answers of tasks still running are dropped from now on. */
  stop(): void {
    this.stopped = true;
  }

  private load(moduleUrl: string, functionName: string): TaskFunctionImpl | Promise<TaskFunctionImpl> {
    const key = `${moduleUrl}\0${functionName}`;
    let fn = this.functions.get(key);
    if (fn === undefined) {
      const loading = loadTaskFunction(moduleUrl, functionName);
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
