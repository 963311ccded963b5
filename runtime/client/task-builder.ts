import { plainDataProblem } from '../worker/plain-data.ts';
import { TaskArgumentError } from './task-errors.ts';
import type { AnyFunction, TaskFunction } from './task-function.ts';
import { validateTaskOptions, type TaskRunOptions, type ValidatedTaskOptions } from './task-options.ts';
import { newTaskId, TaskSubmitter, type TaskContext, type TaskResult } from './task-submitter.ts';

/** `cluster.task(f).options(o).remote(...args)`. */
export interface TaskBuilder<F extends AnyFunction> {
  /** A builder with these options merged over the current ones (the task's defaults first). */
  options(opts?: TaskRunOptions): TaskBuilder<F>;
  /**
   * Validates the options and the arguments (typed errors, nothing sent), runs the task on the
   * cluster and resolves with what the function returned. A function that throws rejects with
   * RemoteError; one that cannot be loaded with CodeLoadError; a task whose node or worker host
   * died is run again up to `maxRetries` times.
   */
  remote(...args: Parameters<F>): Promise<Awaited<ReturnType<F>>>;
  /** As remote(), with where the task ran: its id, its node, the raylets asked, the runs started. */
  remoteWithInfo(...args: Parameters<F>): Promise<TaskResult<Awaited<ReturnType<F>>>>;
}

const submitters = new WeakMap<TaskContext, TaskSubmitter>();

/** The one submitter of a cluster connection (its node-event subscription ends with the client). */
function submitterOf(ctx: TaskContext): TaskSubmitter {
  let submitter = submitters.get(ctx);
  if (!submitter) submitters.set(ctx, (submitter = new TaskSubmitter(ctx)));
  return submitter;
}

export function taskBuilder<F extends AnyFunction>(ctx: TaskContext & { readonly namespace: string }, fn: TaskFunction<F>, opts: TaskRunOptions): TaskBuilder<F> {
  // A builder's options never change, so they are checked once, at its first call (and any error
  // is thrown again at every call).
  let checked: { valid: ValidatedTaskOptions } | { error: unknown } | undefined;
  const validate = (): ValidatedTaskOptions => {
    if (!checked) {
      try {
        checked = { valid: validateTaskOptions(opts, { namespace: ctx.namespace }) };
      } catch (error) {
        checked = { error };
      }
    }
    if ('error' in checked) throw checked.error;
    return checked.valid;
  };
  const run = async (args: unknown[]): Promise<TaskResult<Awaited<ReturnType<F>>>> => {
    const valid = validate();
    const taskId = newTaskId();
    args.forEach((arg, index) => {
      const problem = plainDataProblem(arg);
      if (problem) throw new TaskArgumentError(fn.functionName, index, problem.path, problem.problem);
    });
    const result = await submitterOf(ctx).run({
      taskId,
      code: { moduleUrl: fn.moduleUrl, functionName: fn.functionName, args },
      namespace: ctx.namespace,
      options: valid.wire,
      maxRetries: valid.maxRetries,
      pin: valid.pin,
    });
    return result as TaskResult<Awaited<ReturnType<F>>>;
  };
  return {
    options: (more = {}) => taskBuilder(ctx, fn, { ...opts, ...more }),
    remote: (...args) => run(args).then((result) => result.value),
    remoteWithInfo: (...args) => run(args),
  };
}
