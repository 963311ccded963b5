import { InvalidOptionError } from '../../lib/errors.ts';
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
 * Declares an actor class. The class must be exported from `moduleUrl` under its own name
 * (`export class Counter {…}` in the module whose `import.meta.url` is passed), so worker processes
 * can load it. Defaults are validated here, like options at `remote()`.
 */
export function defineActor<T, A extends unknown[] = any[]>(
  moduleUrl: string,
  cls: new (...args: A) => T,
  defaults: ActorOptions = {},
): ActorClass<T, A> {
  if (typeof moduleUrl !== 'string' || !URL.canParse(moduleUrl)) {
    throw new InvalidOptionError('moduleUrl', moduleUrl, 'expected the URL of the module exporting the class (import.meta.url)');
  }
  if (typeof cls !== 'function' || typeof cls.name !== 'string' || cls.name === '') {
    throw new InvalidOptionError('cls', cls, 'expected a named class exported from moduleUrl under its own name');
  }
  validateActorOptions(defaults, { namespace: defaults.namespace ?? 'default' });
  return Object.freeze({ moduleUrl, className: cls.name, defaults: Object.freeze({ ...defaults }) });
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
