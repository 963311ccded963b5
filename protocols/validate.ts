import { ProtocolError } from './errors.ts';
import { plainDataProblem } from './plain-data.ts';

/**
 * A validator checks a decoded value and returns it typed, or throws ProtocolError INVALID_MESSAGE
 * naming the offending field's path (`bundles[2].CPU: expected a number`). Validators build fresh
 * values: objects keep only their declared fields (unknown fields are dropped, so a newer peer may
 * add optional fields), and records refuse keys that could reach an object's prototype.
 */
export type Validator<T> = (value: unknown, path: string) => T;
export type Infer<V> = V extends Validator<infer T> ? T : never;

// `__proto_` is how msgpackr renders a received `__proto__` key, so it is refused as well.
const FORBIDDEN_KEYS = new Set(['__proto__', '__proto_', 'constructor', 'prototype']);
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Runs a validator on a whole message body (the root path is empty). */
export function check<T>(validator: Validator<T>, value: unknown): T {
  return validator(value, '');
}

export function invalid(path: string, rule: string): never {
  throw new ProtocolError('INVALID_MESSAGE', `${path || '(root)'}: ${rule}`, { detail: { path, rule } });
}

/** The path of a field (`a.b`, `labels["orrery.io/zone"]`) or an element (`a[3]`). */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (!IDENTIFIER.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path ? `${path}.${key}` : key;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function str(opts: { min?: number; max?: number; pattern?: RegExp } = {}): Validator<string> {
  return (value, path) => {
    if (typeof value !== 'string') return invalid(path, 'expected a string');
    if (opts.min !== undefined && value.length < opts.min) return invalid(path, `expected at least ${opts.min} character(s)`);
    if (opts.max !== undefined && value.length > opts.max) return invalid(path, `expected at most ${opts.max} character(s)`);
    if (opts.pattern && !opts.pattern.test(value)) return invalid(path, `expected to match ${opts.pattern}`);
    return value;
  };
}

/** A finite number; `int` also demands a safe integer. */
export function num(opts: { int?: boolean; min?: number; max?: number } = {}): Validator<number> {
  return (value, path) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return invalid(path, 'expected a number');
    if (opts.int && !Number.isSafeInteger(value)) return invalid(path, 'expected an integer');
    if (opts.min !== undefined && value < opts.min) return invalid(path, `expected a number >= ${opts.min}`);
    if (opts.max !== undefined && value > opts.max) return invalid(path, `expected a number <= ${opts.max}`);
    return value;
  };
}

export function bool(): Validator<boolean> {
  return (value, path) => (typeof value === 'boolean' ? value : invalid(path, 'expected a boolean'));
}

export function literal<const L extends readonly (string | number | boolean)[]>(...allowed: L): Validator<L[number]> {
  const set = new Set<unknown>(allowed);
  const rule = `expected ${allowed.map((a) => JSON.stringify(a)).join(' or ')}`;
  return (value, path) => (set.has(value) ? (value as L[number]) : invalid(path, rule));
}

/** Raw bytes (msgpack bin), e.g. an opaque payload. */
export function bytes(opts: { max?: number } = {}): Validator<Uint8Array> {
  return (value, path) => {
    if (!(value instanceof Uint8Array)) return invalid(path, 'expected bytes');
    if (opts.max !== undefined && value.byteLength > opts.max) return invalid(path, `expected at most ${opts.max} byte(s)`);
    return value;
  };
}

/**
 * A user payload: plain data only (plain-data.ts: arrays, plain objects, strings, numbers, booleans,
 * bigints, Date, bytes), nested at most MAX_DEPTH deep — the one rule for payloads at every hop.
 */
export function plainData(): Validator<unknown> {
  return PLAIN;
}

const PLAIN: Validator<unknown> = (value, path) => {
  const problem = plainDataProblem(value);
  if (!problem) return value;
  const where = problem.path === '' ? path : problem.path.startsWith('[') ? `${path}${problem.path}` : path ? `${path}.${problem.path}` : problem.path;
  // a path 512 levels deep says no more than its start does
  return invalid(where.length > 120 ? `${where.slice(0, 120)}…` : where, problem.problem);
};

/** Any value, passed through unchecked (its consumer validates it). */
const ANY: Validator<unknown> = (value) => value;

export function unknown(): Validator<unknown> {
  return ANY;
}

/** Absent (undefined, or nil from another language) is accepted and becomes undefined. */
export function optional<T>(inner: Validator<T>): Validator<T | undefined> {
  return (value, path) => (value === undefined || value === null ? undefined : inner(value, path));
}

export function array<T>(item: Validator<T>, opts: { min?: number; max?: number } = {}): Validator<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) return invalid(path, 'expected an array');
    if (opts.min !== undefined && value.length < opts.min) return invalid(path, `expected at least ${opts.min} item(s)`);
    if (opts.max !== undefined && value.length > opts.max) return invalid(path, `expected at most ${opts.max} item(s)`);
    // any items (a call's arguments): nothing to check, so no path to form for each
    if (item === ANY) return value.slice();
    return value.map((v, i) => item(v, childPath(path, i)));
  };
}

/** A map of string keys to values of one type (labels, resource sets). */
export function record<T>(item: Validator<T>, opts: { maxKeys?: number; key?: Validator<string> } = {}): Validator<Record<string, T>> {
  return (value, path) => {
    if (!isPlainObject(value)) return invalid(path, 'expected an object');
    const keys = Object.keys(value);
    if (opts.maxKeys !== undefined && keys.length > opts.maxKeys) return invalid(path, `expected at most ${opts.maxKeys} key(s)`);
    const out: Record<string, T> = {};
    for (const k of keys) {
      const at = childPath(path, k);
      if (FORBIDDEN_KEYS.has(k)) return invalid(at, 'forbidden key');
      opts.key?.(k, at);
      out[k] = item(value[k], at);
    }
    return out;
  };
}

type Shape = Record<string, Validator<unknown>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type OptionalKeys<S extends Shape> = { [K in keyof S]: undefined extends Infer<S[K]> ? K : never }[keyof S];
export type ObjectOf<S extends Shape> = Simplify<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Exclude<Infer<S[K]>, undefined> }
>;

/** A fixed set of fields; fields that validate to undefined are left out of the result. */
export function object<S extends Shape>(shape: S): Validator<ObjectOf<S>> {
  const fields = Object.entries(shape).map(([key, field]) => ({ key, field, plain: IDENTIFIER.test(key) }));
  return (value, path) => {
    if (!isPlainObject(value)) return invalid(path, 'expected an object');
    const out: Record<string, unknown> = {};
    for (const { key, field, plain } of fields) {
      // childPath's result, without its pattern test per field and message (a body's fields: the key itself)
      const at = !plain ? childPath(path, key) : path === '' ? key : `${path}.${key}`;
      const v = field(Object.hasOwn(value, key) ? value[key] : undefined, at);
      if (v !== undefined) out[key] = v;
    }
    return out as ObjectOf<S>;
  };
}
