/**
 * What defineActor and defineTask leave on the objects they return, so a worker host that imports
 * the module finds the class or function behind an export. Both of these forms then work:
 *
 *   export class Counter { … }                                   // the class itself is exported
 *   export const CounterActor = defineActor(import.meta.url, Counter);
 *
 *   export const Probe = defineActor(import.meta.url, class Probe { … });   // "decorated": only
 *   export const f = defineTask(import.meta.url, function f() { … });       // the definition is
 *
 * The keys are registered symbols (Symbol.for), so a definition made by one copy of orrery (the
 * package's dist/) is recognised by another (its source, under a loader): the marker is the key,
 * the value is the class or function. They are not enumerable: a definition still spreads and
 * compares as its plain fields.
 */
export const ACTOR_DEFINITION = Symbol.for('orrery.actor-definition');
export const TASK_DEFINITION = Symbol.for('orrery.task-definition');

/** Attaches `impl` to `definition` under `key`, hidden from enumeration; returns the definition frozen. */
export function markDefinition<T extends object>(definition: T, key: typeof ACTOR_DEFINITION | typeof TASK_DEFINITION, impl: unknown): Readonly<T> {
  Object.defineProperty(definition, key, { value: impl, enumerable: false, writable: false, configurable: false });
  return Object.freeze(definition);
}

/** The class or function a definition carries under `key`, or undefined when `value` is not one. */
export function definedImpl(value: unknown, key: typeof ACTOR_DEFINITION | typeof TASK_DEFINITION): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  return Object.hasOwn(value, key) ? (value as Record<symbol, unknown>)[key] : undefined;
}
