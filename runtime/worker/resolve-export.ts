import { ACTOR_DEFINITION, definedImpl, TASK_DEFINITION } from '../definitions.ts';

/** Anything `new` can be applied to; the host checks that it is written as a class. */
export type ActorClass = new (...args: unknown[]) => object;

/** A task function as a worker host calls it. */
export type TaskFunctionImpl = (...args: unknown[]) => unknown;

/** The class or function found, or why there is none (a one-line reason for CODE_LOAD_FAILED). */
export type Resolved<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/**
 * Finds the actor class a module exports under `name`. The export may be
 *
 *   the class itself              export class Counter { … }
 *   what defineActor returned     export const Counter = defineActor(import.meta.url, class Counter { … })
 *
 * Anything else under that name is refused; with no export of that name, a definition of a class
 * so named exported under another name is pointed out (the client sends the class's own name).
 */
export function resolveActorClass(mod: Readonly<Record<string, unknown>>, name: string): Resolved<ActorClass> {
  if (!Object.hasOwn(mod, name)) return missing(mod, name, ACTOR_DEFINITION, 'class');
  const value = mod[name];
  if (isClass(value)) return { ok: true, value };
  const defined = definedImpl(value, ACTOR_DEFINITION);
  if (isClass(defined)) return { ok: true, value: defined };
  return { ok: false, reason: `the export ${JSON.stringify(name)} is neither a class nor an actor class from defineActor() (it is ${describe(value)})` };
}

/**
 * Finds the task function a module exports under `name`: a function that is not a class
 * (`export function f…`, `export const f = (…) => …`), or what defineTask returned
 * (`export const f = defineTask(import.meta.url, function f(…) { … })`).
 */
export function resolveTaskFunction(mod: Readonly<Record<string, unknown>>, name: string): Resolved<TaskFunctionImpl> {
  if (!Object.hasOwn(mod, name)) return missing(mod, name, TASK_DEFINITION, 'function');
  const value = mod[name];
  if (isPlainFunction(value)) return { ok: true, value };
  const defined = definedImpl(value, TASK_DEFINITION);
  if (isPlainFunction(defined)) return { ok: true, value: defined };
  return { ok: false, reason: `the export ${JSON.stringify(name)} is neither a function nor a task from defineTask() (it is ${describe(value)})` };
}

function missing(mod: Readonly<Record<string, unknown>>, name: string, key: typeof ACTOR_DEFINITION | typeof TASK_DEFINITION, what: string): Resolved<never> {
  const reason = `the module has no export named ${JSON.stringify(name)}`;
  const elsewhere = Object.keys(mod).find((exported) => (definedImpl(mod[exported], key) as { name?: unknown } | undefined)?.name === name);
  if (elsewhere === undefined) return { ok: false, reason };
  return { ok: false, reason: `${reason} (the export ${JSON.stringify(elsewhere)} defines the ${what} ${JSON.stringify(name)}: export it under the ${what}'s own name)` };
}

export function isClass(value: unknown): value is ActorClass {
  return typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));
}

function isPlainFunction(value: unknown): value is TaskFunctionImpl {
  return typeof value === 'function' && !isClass(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (isClass(value)) return 'a class';
  if (typeof value === 'function') return 'a function';
  if (definedImpl(value, ACTOR_DEFINITION) !== undefined) return 'an actor class from defineActor()';
  if (definedImpl(value, TASK_DEFINITION) !== undefined) return 'a task from defineTask()';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
