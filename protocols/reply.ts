import { DEFAULT_MAX_BYTES, decode, encode } from './codec.ts';
import { NOT_FAST, decodeOkFast, encodeOkFast } from './fast-path.ts';
import { errorResult, fromWireError, okResult, type WireError, type WireResult } from './errors.ts';
import { messages } from './messages/registry.ts';
import type { Validator } from './validate.ts';

const replyOnly = { reply: messages.reply } as const;

/** Encodes the answer to a request: a value, or (given an error) its wire form. */
export function encodeReply(result: WireResult<unknown>, opts: { maxBytes?: number } = {}): Uint8Array {
  return encode('reply', result, opts);
}

export function encodeOk(value: unknown, opts: { maxBytes?: number } = {}): Uint8Array {
  return encodeOkFast(value, opts.maxBytes ?? DEFAULT_MAX_BYTES) ?? encodeReply(okResult(value), opts);
}

export function encodeError(err: unknown, opts: { maxBytes?: number } = {}): Uint8Array {
  return encodeReply(errorResult(err), opts);
}

/**
 * Decodes a reply without checking its value or throwing its error: `{ ok: true, value }` or
 * `{ ok: false, error }` as sent. Undecodable bytes throw a ProtocolError.
 */
export function decodeReplyBody(bytes: Uint8Array, opts: { maxBytes?: number } = {}): { ok: true; value: unknown } | { ok: false; error: WireError } {
  const fast = decodeOkFast(bytes, opts.maxBytes ?? DEFAULT_MAX_BYTES);
  if (fast !== NOT_FAST) return { ok: true, value: fast };
  return decode(bytes, { registry: replyOnly, maxBytes: opts.maxBytes }).body as { ok: true; value: unknown } | { ok: false; error: WireError };
}

/**
 * Decodes a reply: returns its value checked by `value`, or throws the sender's error re-created
 * as an OrreryError with the same code and detail. Undecodable bytes throw a ProtocolError.
 */
export function decodeReply<T>(bytes: Uint8Array, opts: { value: Validator<T>; maxBytes?: number }): T {
  const fast = decodeOkFast(bytes, opts.maxBytes ?? DEFAULT_MAX_BYTES);
  if (fast !== NOT_FAST) return opts.value(fast, 'value');
  const { body } = decode(bytes, { registry: replyOnly, maxBytes: opts.maxBytes });
  if (!body.ok) throw fromWireError(body.error);
  return opts.value(body.value, 'value');
}
