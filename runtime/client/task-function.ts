import { InvalidOptionError } from '../../lib/errors.ts';
import { validateTaskOptions, type TaskRunOptions } from './task-options.ts';

/** Any function a task may run. */
export type AnyFunction = (...args: any[]) => unknown;

/**
 * A task function as the cluster knows it: where a worker host can import it from, and under which
 * export name. `F` is the function's type, for typed arguments and results.
 */
export interface TaskFunction<F extends AnyFunction = AnyFunction> {
  readonly moduleUrl: string;
  readonly functionName: string;
  readonly defaults: Readonly<TaskRunOptions>;
  /** Type-only marker; never set. */
  readonly __fn?: F;
}

/**
 * Declares a task. The function must be exported from `moduleUrl` under its own name
 * (`export function resize(…) {…}` or `export const resize = (…) => …` in the module whose
 * `import.meta.url` is passed), so worker hosts can load it; one that is not is CODE_LOAD_FAILED
 * when the task runs. Defaults are validated here, like options at `remote()`.
 */
export function defineTask<F extends AnyFunction>(moduleUrl: string, fn: F, defaults: TaskRunOptions = {}): TaskFunction<F> {
  if (typeof moduleUrl !== 'string' || !URL.canParse(moduleUrl)) {
    throw new InvalidOptionError('moduleUrl', moduleUrl, 'expected the URL of the module exporting the function (import.meta.url)');
  }
  if (typeof fn !== 'function' || /^class\b/.test(Function.prototype.toString.call(fn))) {
    throw new InvalidOptionError('fn', fn, 'expected a function exported from moduleUrl under its own name');
  }
  if (typeof fn.name !== 'string' || fn.name === '') {
    throw new InvalidOptionError('fn', fn, 'expected a named function (exported from moduleUrl under that name), not an anonymous one');
  }
  validateTaskOptions(defaults, { namespace: 'default' });
  return Object.freeze({ moduleUrl, functionName: fn.name, defaults: Object.freeze({ ...defaults }) });
}
