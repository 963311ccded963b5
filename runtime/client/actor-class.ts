import { InvalidOptionError } from '../../lib/errors.ts';
import { checkCodeSource } from '../../protocols/code-source.ts';
import { ACTOR_DEFINITION, markDefinition } from '../definitions.ts';
import { validateActorOptions, type ActorOptions } from './actor-options.ts';

/**
 * An actor class as the cluster knows it: where a worker host can import it from, and under which
 * export name. `T` is the instance type (for typed calls), `A` the constructor's arguments.
 */
export interface ActorClass<T = unknown, A extends unknown[] = any[]> {
  readonly moduleUrl: string;
  readonly className: string;
  readonly defaults: Readonly<ActorOptions>;
  /** Type-only markers; never set. */
  readonly __instance?: T;
  readonly __args?: A;
}

/**
 * Declares an actor class. Worker hosts import `moduleUrl` (the `import.meta.url` of the module
 * that calls this) and take the export named like the class, which may be the class itself
 * (`export class Counter {…}`) or what this returns (`export const Counter = defineActor(
 * import.meta.url, class Counter {…})`): see runtime/definitions.ts. `moduleUrl` must be a `file:`
 * URL (CODE_SOURCE_REFUSED otherwise: protocols/code-source.ts). Defaults are validated here, like
 * options at `remote()`.
 */
export function defineActor<T, A extends unknown[] = any[]>(
  moduleUrl: string,
  cls: new (...args: A) => T,
  defaults: ActorOptions = {},
): ActorClass<T, A> {
  if (typeof moduleUrl !== 'string' || !URL.canParse(moduleUrl)) {
    throw new InvalidOptionError('moduleUrl', moduleUrl, 'expected the URL of the module exporting the class (import.meta.url)');
  }
  checkCodeSource(moduleUrl);
  if (typeof cls !== 'function' || typeof cls.name !== 'string' || cls.name === '') {
    throw new InvalidOptionError('cls', cls, 'expected a named class (exported from moduleUrl under its own name, or as what defineActor returns)');
  }
  validateActorOptions(defaults, { namespace: defaults.namespace ?? 'default' });
  return markDefinition({ moduleUrl, className: cls.name, defaults: Object.freeze({ ...defaults }) }, ACTOR_DEFINITION, cls);
}

/** Names of the methods of T; any string when T is unknown (a handle from getActor). */
export type MethodNames<T> = unknown extends T
  ? string
  : { [K in keyof T]-?: T[K] extends (...args: any[]) => unknown ? K : never }[keyof T] & string;

export type MethodArgs<T, K> = unknown extends T ? unknown[] : K extends keyof T ? (T[K] extends (...args: infer P) => unknown ? P : never) : never;

export type MethodResult<T, K> = unknown extends T
  ? unknown
  : K extends keyof T
    ? T[K] extends (...args: any[]) => infer R
      ? Awaited<R>
      : never
    : never;
