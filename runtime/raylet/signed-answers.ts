// What a signed answer looks like: the node's secret beside an ok value or in an error's detail.
// Answers that the GCS acts on carry it (served-subjects.ts, `signed`), so that no other node-role
// connection subscribed to this node's subjects can answer for it (runtime/gcs/node-owner.ts).
import { OrreryError } from '../../lib/errors.ts';

/** An answer's value with the node's secret beside it (answers are objects; anything else is wrapped). */
export function withSecret(value: unknown, secret: string): object {
  const plain = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { value };
  // Object.assign, not `{ ...plain, secret }`: that literal gives every answer a hidden class of its
  // own on Node.js 20, and msgpack then encodes each one slowly (docs/benchmarks.md, "Object spreads on Node.js 20")
  return Object.assign({}, plain, { secret });
}

/** An error answer with the node's secret in its detail. */
export function errorWithSecret(err: unknown, secret: string): OrreryError {
  const e = err instanceof OrreryError ? err : new OrreryError('INTERNAL', err instanceof Error ? err.message : String(err));
  const detail = e.detail !== null && typeof e.detail === 'object' ? (e.detail as Record<string, unknown>) : {};
  return new OrreryError(e.code, e.message, { detail: { ...detail, secret } });
}
