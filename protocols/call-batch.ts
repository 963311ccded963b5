import { decode, encode } from './codec.ts';
import { ProtocolError } from './errors.ts';
import { CALL_TOKEN, callBatch, replyBatch, type CallBatch, type ReplyBatch } from './messages/actor.ts';

/**
 * Calls a handle makes in one turn travel together: one call_batch message to the actor's call
 * subject carries each call's actor_call bytes beside a token naming it, and the host answers with
 * reply_batch messages to the batch's one reply subject, each carrying the replies of the calls it
 * finished in one turn, by token. Per call that saves a NATS message each way — the PUB line, the
 * server's routing, the parse at the other end — which is most of what a small call costs.
 *
 * The caller's bus (runtime/bus: requestBatch) gives each call a token of its multiplexer and the
 * batch a reply subject of its own; nothing else about a call changes: each has its own timeout,
 * its own answer or error, and a call in a batch runs exactly as the same call sent alone would.
 *
 * The batch's reply subject is `<inbox>.<batch token>`, the batch token starting with `_` (calls'
 * tokens never do). A call's reply may also go alone, as the plain reply it would be, to
 * `<inbox>.<call token>` (soloReplySubject): the caller's multiplexer answers a call by its token
 * wherever it arrives. A host does so only for a reply that fits in a message by itself but not
 * inside a reply_batch, whose few bytes more would take it over the server's payload limit.
 */

const CALLS_ONLY = { registry: { call_batch: callBatch } } as const;
const REPLIES_ONLY = { registry: { reply_batch: replyBatch } } as const;

/** The envelope's first bytes up to the body: `{ v, t: <type>, b: ` — what tells a batch from a lone call. */
function typeHead(type: 'call_batch' | 'reply_batch'): Uint8Array {
  // the body packs after the envelope's `b` key; an empty map is one byte (0x80)
  const whole = encode(type, {} as never);
  return Uint8Array.from(whole.subarray(0, whole.length - 1));
}
const CALL_BATCH_HEAD = typeHead('call_batch');
const REPLY_BATCH_HEAD = typeHead('reply_batch');

function startsWith(bytes: Uint8Array, head: Uint8Array): boolean {
  if (bytes.length < head.length) return false;
  for (let i = 0; i < head.length; i++) if (bytes[i] !== head[i]) return false;
  return true;
}

/** Whether `bytes` is a call_batch (else it is a lone actor_call, or not a message at all). */
export function isCallBatch(bytes: Uint8Array): boolean {
  return startsWith(bytes, CALL_BATCH_HEAD);
}

export function encodeCallBatch(tokens: readonly string[], calls: readonly Uint8Array[]): Uint8Array {
  return encode('call_batch', { tokens: tokens as string[], calls: calls as Uint8Array[] });
}

/** A call_batch, validated: as many tokens as calls, no token twice. Throws ProtocolError. */
export function decodeCallBatch(bytes: Uint8Array): CallBatch {
  const { body } = decode(bytes, CALLS_ONLY);
  pairsOf(body.tokens, body.calls.length, 'calls');
  return body;
}

export function encodeReplyBatch(tokens: readonly string[], replies: readonly Uint8Array[]): Uint8Array {
  return encode('reply_batch', { tokens: tokens as string[], replies: replies as Uint8Array[] });
}

/**
 * The replies a reply_batch carries, by token; undefined for anything else — an error the host
 * answered the whole batch with (it could not read it), a malformed message — which the caller then
 * takes as the answer to each call of the batch.
 */
export function decodeReplyBatch(bytes: Uint8Array): ReplyBatch | undefined {
  if (!startsWith(bytes, REPLY_BATCH_HEAD)) return undefined;
  try {
    const { body } = decode(bytes, REPLIES_ONLY);
    pairsOf(body.tokens, body.replies.length, 'replies');
    return body;
  } catch {
    return undefined;
  }
}

function pairsOf(tokens: readonly string[], count: number, field: string): void {
  if (tokens.length !== count) {
    throw new ProtocolError('INVALID_MESSAGE', `invalid batch: ${tokens.length} tokens for ${count} ${field}`, { detail: { path: 'tokens', rule: `expected one token per item of ${field}` } });
  }
  if (new Set(tokens).size !== tokens.length) {
    throw new ProtocolError('INVALID_MESSAGE', 'invalid batch: a token appears twice', { detail: { path: 'tokens', rule: 'expected distinct tokens' } });
  }
}

/**
 * Where call `token`'s reply goes alone: the inbox of the batch's reply subject under the call's own
 * token. Undefined when the reply subject is not `<inbox>._<batch token>` or the token not a call
 * token — a batch from anything but a bus's requestBatch, whose calls can be answered only in
 * reply_batch messages.
 */
export function soloReplySubject(batchReply: string, token: string): string | undefined {
  const dot = batchReply.lastIndexOf('.');
  if (dot <= 0 || batchReply.charCodeAt(dot + 1) !== 0x5f /* _ */ || !CALL_TOKEN.test(token)) return undefined;
  return batchReply.slice(0, dot + 1) + token;
}

/** What a bus's requestBatch needs of the protocol: how to make a batch and read its answers. */
export const CALL_BATCH_CODEC = {
  frame: encodeCallBatch,
  split: (data: Uint8Array): { tokens: readonly string[]; datas: readonly Uint8Array[] } | undefined => {
    const batch = decodeReplyBatch(data);
    return batch === undefined ? undefined : { tokens: batch.tokens, datas: batch.replies };
  },
};
