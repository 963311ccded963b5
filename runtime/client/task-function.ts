import { InvalidOptionError } from '../../lib/errors.ts';
import { checkCodeSource } from '../../protocols/code-source.ts';
import { markDefinition, TASK_DEFINITION } from '../definitions.ts';
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
 * Declares a task. Worker hosts import `moduleUrl` (the `import.meta.url` of the module that calls
 * this) and take the export named like the function, which may be the function itself
 * (`export function resize(…) {…}`, `export const resize = (…) => …`) or what this returns
 * (`export const resize = defineTask(import.meta.url, function resize(…) {…})`: see
 * runtime/definitions.ts); a task whose function cannot be found so is CODE_LOAD_FAILED when it
 * runs. `moduleUrl` must be a `file:` URL (CODE_SOURCE_REFUSED otherwise:
 * protocols/code-source.ts). Defaults are validated here, like options at `remote()`.
 */
export function defineTask<F extends AnyFunction>(moduleUrl: string, fn: F, defaults: TaskRunOptions = {}): TaskFunction<F> {
  if (typeof moduleUrl !== 'string' || !URL.canParse(moduleUrl)) {
    throw new InvalidOptionError('moduleUrl', moduleUrl, 'expected the URL of the module exporting the function (import.meta.url)');
  }
  checkCodeSource(moduleUrl);
  if (typeof fn !== 'function' || /^class\b/.test(Function.prototype.toString.call(fn))) {
    throw new InvalidOptionError('fn', fn, 'expected a function (exported from moduleUrl under its own name, or as what defineTask returns)');
  }
  if (typeof fn.name !== 'string' || fn.name === '') {
    throw new InvalidOptionError('fn', fn, 'expected a named function (exported from moduleUrl under that name), not an anonymous one');
  }
  validateTaskOptions(defaults, { namespace: 'default' });
  return markDefinition({ moduleUrl, functionName: fn.name, defaults: Object.freeze({ ...defaults }) }, TASK_DEFINITION, fn);
}
