// Proof that an answer to a raylet came from the GCS (docs/security.md, "Answers the other way").
//
// A raylet's requests to the GCS carry the node's secret, which only the GCS reads (no other role
// may subscribe to the GCS's subjects), and a fresh `nonce`. The GCS answers each with `proof`: an
// HMAC-SHA256, under that secret, of the verb, the nonce and what the answer says — the value of an
// ok answer, the code of an error. A node-role peer reads the answers in the shared node inbox but
// not the secret, so it can neither make a proof nor reuse one: each names its request's nonce.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { OrreryError } from '../lib/errors.ts';

/** The verbs whose answers the GCS proves: the ones a raylet asks with its secret. */
export const PROVEN_VERBS = ['register_node', 'register_running', 'heartbeat', 'unregister_node', 'actor_died'] as const;
export type ProvenVerb = (typeof PROVEN_VERBS)[number];

/** A request's nonce: 128 random bits. */
export function answerNonce(): string {
  return randomBytes(16).toString('base64url');
}

/** `value` as one string whatever the order of its keys: what a proof covers. Undefined fields are left out. */
export function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonical(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(',')}}`;
}

function mac(secret: string, verb: string, nonce: string, said: string): string {
  return createHmac('sha256', secret).update(`${verb}\n${nonce}\n${said}`).digest('base64url');
}

/** What an ok answer says: its value without the proof. */
function okSays(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return canonical({ value });
  const { proof: _proof, ...rest } = value as Record<string, unknown>;
  return canonical(rest);
}

/** What an error answer says: its code. */
function errorSays(code: string): string {
  return canonical({ error: code });
}

/** An ok answer's value with its proof beside it (objects; anything else is wrapped as `{ value }`). */
export function provenValue(value: unknown, secret: string, verb: string, nonce: string): object {
  const plain = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { value };
  // Object.assign, not a spread literal: see runtime/raylet/signed-answers.ts
  return Object.assign({}, plain, { proof: mac(secret, verb, nonce, okSays(plain)) });
}

/** An error answer with its proof in its detail. */
export function provenError(err: unknown, secret: string, verb: string, nonce: string): OrreryError {
  const e = err instanceof OrreryError ? err : new OrreryError('INTERNAL', err instanceof Error ? err.message : String(err));
  const detail = e.detail !== null && typeof e.detail === 'object' ? (e.detail as Record<string, unknown>) : {};
  return new OrreryError(e.code, e.message, { detail: { ...detail, proof: mac(secret, verb, nonce, errorSays(e.code)) } });
}

/**
 * Whether an answer carries a proof, and whether it holds: 'proven', 'unproven' (none: a GCS from
 * before proofs, or a peer), or 'forged' (one that does not hold). `answer` is the reply as decoded:
 * `{ ok: true, value }` or `{ ok: false, error: { code, detail } }`.
 */
export function checkProof(
  answer: { ok: true; value: unknown } | { ok: false; error: { code: string; detail?: unknown } },
  secret: string,
  verb: string,
  nonce: string,
): 'proven' | 'unproven' | 'forged' {
  let proof: unknown;
  let said: string;
  if (answer.ok) {
    proof = (answer.value as { proof?: unknown } | null)?.proof;
    said = okSays(answer.value);
  } else {
    proof = (answer.error.detail as { proof?: unknown } | undefined)?.proof;
    said = errorSays(answer.error.code);
  }
  if (proof === undefined) return 'unproven';
  if (typeof proof !== 'string') return 'forged';
  const given = Buffer.from(proof);
  const expected = Buffer.from(mac(secret, verb, nonce, said));
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'proven' : 'forged';
}
