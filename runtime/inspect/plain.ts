/**
 * Turns whatever a machine holds (its context, the event it took) into plain, JSON-safe data for an
 * inspection record: objects, arrays, strings, finite numbers, booleans and null. Functions,
 * symbols, undefined and actor references (anything with `send` and `sessionId`) are dropped; an
 * Error becomes `{ name, message }`, a Date its ISO string, bytes `{ bytes: n }`, a Map an object,
 * a Set an array, a bigint its decimal string, NaN and ±Infinity null. Depth, array length, string
 * length and the whole size are capped: what does not fit is left out and the object that lost it
 * carries `"…": "truncated"`.
 */
export interface PlainLimits {
  /** Rough budget of the output, in bytes of JSON; default 16 KiB. */
  maxBytes?: number;
  /** Deepest nesting kept; default 8. */
  maxDepth?: number;
  /** Longest array kept; default 200. */
  maxItems?: number;
  /** Longest string kept; default 4,096. */
  maxString?: number;
}

export const TRUNCATED = '…';

interface Budget {
  left: number;
  readonly maxDepth: number;
  readonly maxItems: number;
  readonly maxString: number;
}

/** A plain copy of an object's own fields (an object is always returned, possibly empty). */
export function toPlainObject(value: unknown, limits: PlainLimits = {}): Record<string, unknown> {
  const out = toPlain(value, limits);
  return out !== null && typeof out === 'object' && !Array.isArray(out) ? (out as Record<string, unknown>) : {};
}

export function toPlain(value: unknown, limits: PlainLimits = {}): unknown {
  const budget: Budget = {
    left: limits.maxBytes ?? 16 * 1024,
    maxDepth: limits.maxDepth ?? 8,
    maxItems: limits.maxItems ?? 200,
    maxString: limits.maxString ?? 4096,
  };
  const out = convert(value, budget, 0);
  return out === DROP ? null : out;
}

const DROP = Symbol('drop');

function convert(value: unknown, budget: Budget, depth: number): unknown {
  switch (typeof value) {
    case 'string': {
      const s = value.length > budget.maxString ? `${value.slice(0, budget.maxString)}${TRUNCATED}` : value;
      budget.left -= s.length + 2;
      return s;
    }
    case 'number':
      budget.left -= 8;
      return Number.isFinite(value) ? value : null;
    case 'boolean':
      budget.left -= 5;
      return value;
    case 'bigint':
      budget.left -= 20;
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return DROP;
  }
  if (value === null) {
    budget.left -= 4;
    return null;
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.send === 'function' && 'sessionId' in obj) return DROP; // an actor reference
  if (value instanceof Date) return convert(Number.isNaN(value.getTime()) ? null : value.toISOString(), budget, depth);
  if (value instanceof Error) return convert({ name: value.name, message: value.message, ...('code' in value ? { code: (value as { code: unknown }).code } : {}) }, budget, depth);
  if (ArrayBuffer.isView(value)) return convert({ bytes: value.byteLength }, budget, depth);
  if (depth >= budget.maxDepth) return convert(TRUNCATED, budget, depth);
  if (Array.isArray(value) || value instanceof Set) {
    const items = Array.isArray(value) ? value : [...value];
    const out: unknown[] = [];
    budget.left -= 2;
    for (let i = 0; i < items.length; i++) {
      if (i >= budget.maxItems || budget.left <= 0) {
        out.push(`${TRUNCATED} ${items.length - i} more`);
        break;
      }
      const v = convert(items[i], budget, depth + 1);
      out.push(v === DROP ? null : v);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  budget.left -= 2;
  if (value instanceof Map) {
    for (const [key, v] of value) if (!field(out, String(key), v, budget, depth)) break;
  } else {
    // Object.keys, not Object.entries: no [key, value] pair allocated per field (this runs for
    // every context and event of every transition while someone watches)
    for (const k of Object.keys(obj)) if (!field(out, k, obj[k], budget, depth)) break;
  }
  return out;
}

/** Adds one field to `out`; false once the budget is spent (and `out` marked truncated). */
function field(out: Record<string, unknown>, k: string, v: unknown, budget: Budget, depth: number): boolean {
  if (k === '__proto__' || k === 'constructor' || k === 'prototype') return true;
  if (budget.left <= 0) {
    out[TRUNCATED] = 'truncated';
    return false;
  }
  const c = convert(v, budget, depth + 1);
  if (c === DROP) return true;
  budget.left -= k.length + 3;
  out[k] = c;
  return true;
}
