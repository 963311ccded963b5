import { ActorRef } from './actor-ref.ts';

/**
 * What user payloads — actor constructor, method and task arguments, a method's or a task's result,
 * placement options — may
 * hold, the same at every hop: the client refuses anything else before sending, and every process
 * refuses it again where the message enters (the `plainData()` validator, validate.ts), so a payload
 * that got past a hostile or outdated client is refused with its path instead of crashing whatever
 * handles it next (a 2,000-level nesting once overflowed the stack of a raylet's IPC send).
 *
 * What a task's arguments and result may hold: what msgpack carries without losing anything —
 * null and undefined, booleans, numbers, strings, bigints of up to 64 bits, Uint8Array (Buffer),
 * Date, arrays and plain objects, nested — and actor handles, which travel as references
 * (actor-ref.ts). A bigint travels as a 64-bit integer, which only a bigint is (codec.ts), so it
 * arrives as a bigint.
 * Functions, symbols, class instances, Map, Set, errors, other typed arrays
 * and cycles would arrive changed (a function as null, a Map as an object) or not at all, so they
 * are refused where the value is made, with the path to the offending part.
 */
export interface PlainDataProblem {
  /** Where in the value: `[1].options.retry` (empty for the value itself). */
  readonly path: string;
  readonly problem: string;
}

/** Deepest nesting of arrays and objects in a user payload. */
export const MAX_DEPTH = 512;

export function plainDataProblem(value: unknown): PlainDataProblem | undefined {
  // a primitive (most call arguments and results) needs no walk, nor the set of ancestors
  const type = typeof value;
  if (value === null || type === 'string' || type === 'number' || type === 'boolean' || type === 'undefined') return undefined;
  return walk(value, '', new Set(), 0);
}

function walk(value: unknown, path: string, ancestors: Set<object>, depth: number): PlainDataProblem | undefined {
  switch (typeof value) {
    case 'undefined':
    case 'boolean':
    case 'number':
    case 'string':
      return undefined;
    case 'bigint':
      // msgpack's integers are 64 bits wide
      return value >= -(2n ** 63n) && value < 2n ** 64n ? undefined : { path, problem: 'a bigint beyond 64 bits cannot be sent; send it as a string' };
    case 'function':
      return { path, problem: `a function${value.name ? ` (${value.name})` : ''} cannot be sent; pass data and define the function in the task's module` };
    case 'symbol':
      return { path, problem: 'a symbol cannot be sent' };
  }
  // an ActorHandle (or a reference as decoded) travels as an actor reference (actor-ref.ts)
  if (value === null || value instanceof Uint8Array || value instanceof Date || value instanceof ActorRef) return undefined;
  const obj = value as object;
  if (depth >= MAX_DEPTH) return { path, problem: `nested deeper than ${MAX_DEPTH} levels` };
  if (ancestors.has(obj)) return { path, problem: 'a cycle (the value contains itself) cannot be sent' };
  if (!Array.isArray(obj) && !isPlain(obj)) return { path, problem: `${describe(obj)} cannot be sent as it is; send plain objects, arrays, strings, numbers, booleans, Date, Uint8Array or actor handles` };
  ancestors.add(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const found = walk(obj[i], `${path}[${i}]`, ancestors, depth + 1);
        if (found) return found;
      }
      return undefined;
    }
    for (const key of Object.keys(obj)) {
      const found = walk((obj as Record<string, unknown>)[key], path ? `${path}.${key}` : key, ancestors, depth + 1);
      if (found) return found;
    }
    return undefined;
  } finally {
    ancestors.delete(obj);
  }
}

function isPlain(obj: object): boolean {
  const proto = Object.getPrototypeOf(obj);
  return proto === Object.prototype || proto === null;
}

function describe(obj: object): string {
  if (obj instanceof Map) return 'a Map';
  if (obj instanceof Set) return 'a Set';
  if (obj instanceof Error) return 'an Error';
  if (ArrayBuffer.isView(obj)) return `a ${obj.constructor.name} (only Uint8Array is sent as bytes)`;
  const name = (obj as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object with a prototype';
}
