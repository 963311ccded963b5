import { InvalidOptionError } from '../../lib/errors.ts';
import { plainDataProblem } from '../../protocols/plain-data.ts';
import { shipCode } from '../code/shipper.ts';
import { TaskDispatcher } from './task-dispatch.ts';
import { TaskAbortedError, TaskArgumentError } from './task-errors.ts';
import type { AnyFunction, TaskFunction } from './task-function.ts';
import { validateTaskOptions, type TaskRunOptions, type ValidatedTaskOptions } from './task-options.ts';
import { newRandomId } from './random-id.ts';
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

/** Options checked once: the validated form, or the error to throw again at every call. */
type Checked = { readonly valid: ValidatedTaskOptions; readonly key: string | undefined } | { readonly error: unknown };

/** The task machinery of one cluster connection, made at its first task. */
interface Runners {
  readonly submitter: TaskSubmitter;
  readonly dispatcher: TaskDispatcher;
  /** Options already checked, by namespace and options as JSON (`cluster.task(f)` makes a fresh builder per call). */
  readonly checked: Map<string, Checked>;
}

const CHECKED_CACHE = 1024;
const runners = new WeakMap<TaskContext, Runners>();

function runnersOf(ctx: TaskContext): Runners {
  let found = runners.get(ctx);
  if (!found) {
    const submitter = new TaskSubmitter(ctx);
    runners.set(ctx, (found = { submitter, dispatcher: new TaskDispatcher(ctx, submitter), checked: new Map() }));
  }
  return found;
}

/** Tasks with the same options share worker leases; SPREAD ones never do (each goes elsewhere). */
function classKey(namespace: string, valid: ValidatedTaskOptions): string | undefined {
  if (valid.wire.schedulingStrategy === 'SPREAD') return undefined;
  try {
    return `${namespace}\0${JSON.stringify(valid.wire)}`;
  } catch {
    return undefined;
  }
}

function check(runners: Runners, namespace: string, opts: TaskRunOptions): Checked {
  let json: string | undefined;
  try {
    json = `${namespace}\0${JSON.stringify(opts)}`;
  } catch {
    json = undefined;
  }
  const known = json === undefined ? undefined : runners.checked.get(json);
  if (known) return known;
  let checked: Checked;
  try {
    const valid = validateTaskOptions(opts, { namespace });
    checked = { valid, key: classKey(namespace, valid) };
  } catch (error) {
    checked = { error };
  }
  if (json !== undefined) {
    if (runners.checked.size >= CHECKED_CACHE) runners.checked.clear();
    runners.checked.set(json, checked);
  }
  return checked;
}

class ClientTaskBuilder<F extends AnyFunction> implements TaskBuilder<F> {
  constructor(
    private readonly ctx: TaskContext & { readonly namespace: string; readonly jobId?: string | undefined },
    private readonly fn: TaskFunction<F>,
    private readonly opts: TaskRunOptions,
  ) {}

  options(more: TaskRunOptions = {}): TaskBuilder<F> {
    return new ClientTaskBuilder(this.ctx, this.fn, { ...this.opts, ...more });
  }

  async remote(...args: Parameters<F>): Promise<Awaited<ReturnType<F>>> {
    return (await this.run(args)).value;
  }

  remoteWithInfo(...args: Parameters<F>): Promise<TaskResult<Awaited<ReturnType<F>>>> {
    return this.run(args);
  }

  private async run(args: unknown[]): Promise<TaskResult<Awaited<ReturnType<F>>>> {
    const { ctx, fn } = this;
    const found = runnersOf(ctx);
    // the signal is no part of the checked options: it is checked here, at every call, and kept
    // out of the cache's key (an AbortSignal is `{}` as JSON) and of the task's class
    const signal = this.opts.signal;
    const opts = signal === undefined ? this.opts : { ...this.opts, signal: undefined };
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidOptionError('signal', signal, 'expected an AbortSignal');
    const checked = check(found, ctx.namespace, opts);
    if ('error' in checked) throw checked.error;
    for (let index = 0; index < args.length; index++) {
      const problem = plainDataProblem(args[index]);
      if (problem) throw new TaskArgumentError(fn.functionName, index, problem.path, problem.problem);
    }
    const { valid, key } = checked;
    const taskId = newTaskId();
    if (signal?.aborted) throw new TaskAbortedError(taskId, fn.functionName, false, signal.reason);
    const spec = {
      taskId,
      code: { moduleUrl: await shipCode(ctx, fn.moduleUrl), functionName: fn.functionName, args },
      namespace: ctx.namespace,
      options: valid.wire,
      maxRetries: valid.maxRetries,
      ...(valid.timeoutMs === undefined ? {} : { timeoutMs: valid.timeoutMs }),
      pin: valid.pin,
      ...(ctx.jobId === undefined ? {} : { jobId: ctx.jobId }),
      ...(signal === undefined ? {} : { signal, cancelKey: newRandomId() + newRandomId() }),
    };
    const result = key === undefined ? await found.submitter.run(spec) : await found.dispatcher.run(spec, key);
    return result as TaskResult<Awaited<ReturnType<F>>>;
  }
}

export function taskBuilder<F extends AnyFunction>(ctx: TaskContext & { readonly namespace: string; readonly jobId?: string | undefined }, fn: TaskFunction<F>, opts: TaskRunOptions): TaskBuilder<F> {
  return new ClientTaskBuilder(ctx, fn, opts);
}
