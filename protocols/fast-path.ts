import { DEFAULT_MAX_BYTES, decode, encode, packAfter, unpackFrom } from './codec.ts';
import { messages } from './messages/registry.ts';
import type { ActorCall, CancelCall } from './messages/actor.ts';
import { NOT_SMALL, packSmallAfter, readSmallFrom } from './small-values.ts';

/**
 * The three messages every actor call makes — the call, and a successful reply, written by one side
 * and read by the other — without the general codec's walk through the envelope. Each function
 * makes or accepts exactly the bytes codec.ts does: the fixed part of the envelope is a head
 * taken once from codec.ts's own output, and only what varies (the arguments, the return value) is
 * packed, into the buffer right after it. Whatever does not fit the expected layout — a method name
 * that is not short ASCII, an error reply, a peer that wrote its map in another order, a malformed
 * message — goes through codec.ts, so errors and edge cases are the general path's.
 *
 * Per call this saves about 0.2 µs at each of the four ends (an actor call's CPU was ~17 µs in
 * bench:e2e), where the general path spent it on the envelope: packing maps with undefined-skipping,
 * validating `{ v, t, b }` and forming field paths.
 */

const CALL_ONLY = { registry: { actor_call: messages.actor_call } } as const;
const CALL_OR_CANCEL = { registry: { actor_call: messages.actor_call, cancel_call: messages.cancel_call } } as const;
/** The longest method name taken by the fast path: a msgpack fixstr. */
const FAST_METHOD_MAX = 31;
/** `args` as a msgpack fixstr: the key that follows the method name. */
const ARGS_KEY = Uint8Array.of(0xa4, 0x61, 0x72, 0x67, 0x73);

/** The bytes `encode` makes for `body`, minus `tail`; undefined if they do not end with it. */
function headOf(type: 'actor_call' | 'reply', body: unknown, tail: readonly number[]): Uint8Array | undefined {
  const whole = encode(type, body as never);
  const at = whole.length - tail.length;
  if (at < 0 || tail.some((b, i) => whole[at + i] !== b)) return undefined;
  return Uint8Array.from(whole.subarray(0, at));
}

/** `{ v, t: 'actor_call', b: { method: ` — up to the method name's string header. */
const CALL_HEAD = headOf('actor_call', { method: '', args: [] }, [0xa0, ...ARGS_KEY, 0x90]);
/** `callId` and `cancelKey` as msgpack fixstrs: the keys of a call that can be cancelled, after the method name. */
const CALL_ID_KEY = Uint8Array.of(0xa6, ...[...'callId'].map((c) => c.charCodeAt(0)));
const CANCEL_KEY_KEY = Uint8Array.of(0xa9, ...[...'cancelKey'].map((c) => c.charCodeAt(0)));
/** A 32-character string's msgpack header (str8): each of a cancellable call's id and key. */
const STR32 = [0xd9, 32] as const;
/**
 * `{ v, t: 'actor_call', b: { method: ` for a call that can be cancelled: its body, a map of four,
 * is laid out `{ method, callId, cancelKey, args }` — so the fast path reads the id and key, both of
 * fixed length, before the arguments.
 */
const KEYED_CALL_HEAD = headOf('actor_call', { method: '', callId: '', cancelKey: '', args: [] }, [0xa0, ...CALL_ID_KEY, 0xa0, ...CANCEL_KEY_KEY, 0xa0, ...ARGS_KEY, 0x90]);
/** `{ v, t: 'reply', b: { ok: true, value: ` — up to the value. */
const OK_HEAD = headOf('reply', { ok: true, value: null }, [0xc0]);

/** Whether `method` is 1–31 ASCII characters: its msgpack form is one header byte and its chars. */
function shortAscii(method: string): boolean {
  if (method.length === 0 || method.length > FAST_METHOD_MAX) return false;
  for (let i = 0; i < method.length; i++) if (method.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * Method names seen lately, each with its call head (CALL_HEAD, the name, the `args` key): a caller
 * and a host use a handful of names, so the head is copied into the packed buffer as is and the
 * name a call carries is matched against these instead of being built anew — per call that was a
 * buffer and a string made character by character. Bounded: past RECENT_METHODS a name is made and
 * not kept.
 */
const RECENT_METHODS = 64;
const headOfMethod = new Map<string, Uint8Array>();
/** The same names by length, for decodeCall: matching bytes against a few candidates. */
const namesByLength: string[][] = [];

function callHead(head: Uint8Array, method: string): Uint8Array {
  const known = headOfMethod.get(method);
  if (known !== undefined) return known;
  const bytes = new Uint8Array(head.length + 1 + method.length + ARGS_KEY.length);
  bytes.set(head, 0);
  let at = head.length;
  bytes[at++] = 0xa0 | method.length;
  for (let i = 0; i < method.length; i++) bytes[at++] = method.charCodeAt(i);
  bytes.set(ARGS_KEY, at);
  if (headOfMethod.size < RECENT_METHODS) headOfMethod.set(method, bytes);
  return bytes;
}

/**
 * The bytes of an actor_call message: the same as `encode('actor_call', { method, args })`. A call
 * that can be cancelled (`cancel`: its id and key) takes the general path.
 */
export function encodeCall(method: string, args: unknown[], cancel?: { callId: string; cancelKey: string }): Uint8Array {
  if (cancel !== undefined) return encodeKeyedCall(method, args, cancel);
  if (CALL_HEAD !== undefined && typeof method === 'string' && shortAscii(method)) {
    const head = callHead(CALL_HEAD, method);
    const bytes = packSmallAfter(head, args, DEFAULT_MAX_BYTES) ?? packAfter(head, args, DEFAULT_MAX_BYTES);
    if (bytes !== undefined) return bytes;
  }
  return encode('actor_call', { method, args });
}

/** Latin-1 (here: ASCII) text in and out of bytes, without a string built character by character. */
const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;
const latin1Write = Buffer.prototype.latin1Write as (this: Uint8Array, text: string, offset: number) => number;

/** Whether `length` bytes at `at` are all lowercase hex digits. */
function hexAt(bytes: Uint8Array, at: number, length: number): boolean {
  for (let i = at; i < at + length; i++) {
    const c = bytes[i]!;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/**
 * Where encodeKeyedCall lays out a head before packing the arguments after it (packSmallAfter and
 * packAfter copy it): the longest head, that of a 31-character method name.
 */
let keyedScratchBusy = false;
const keyedScratch = new Uint8Array((KEYED_CALL_HEAD?.length ?? 0) + 1 + FAST_METHOD_MAX + CALL_ID_KEY.length + 34 + CANCEL_KEY_KEY.length + 34 + ARGS_KEY.length);

/** Writes `key`, then `value` (32 hex characters) as a str8, at `at`; where it ends, or -1 when `value` is not that. */
function putKey32(out: Uint8Array, at: number, key: Uint8Array, value: string): number {
  if (typeof value !== 'string' || value.length !== 32) return -1;
  out.set(key, at);
  at += key.length;
  out[at++] = STR32[0];
  out[at++] = STR32[1];
  // a non-Latin-1 character would be written as another byte: the hex check below refuses it too
  latin1Write.call(out, value, at);
  return hexAt(out, at, 32) ? at + 32 : -1;
}

/**
 * A call that can be cancelled: the same bytes as `encode('actor_call', { method, callId, cancelKey,
 * args })`. The id and key are fixed-length hex, so its head is written as a plain call's is; what
 * does not fit goes through codec.ts (which validates nothing on the way out either).
 */
function encodeKeyedCall(method: string, args: unknown[], cancel: { callId: string; cancelKey: string }): Uint8Array {
  const { callId, cancelKey } = cancel;
  // the scratch head is in use while the arguments are packed: a getter among them that makes a call
  // of its own takes the general path
  if (KEYED_CALL_HEAD !== undefined && !keyedScratchBusy && typeof method === 'string' && shortAscii(method)) {
    keyedScratchBusy = true;
    try {
      const out = keyedScratch;
      out.set(KEYED_CALL_HEAD, 0);
      let at = KEYED_CALL_HEAD.length;
      out[at++] = 0xa0 | method.length;
      at += latin1Write.call(out, method, at);
      at = putKey32(out, at, CALL_ID_KEY, callId);
      if (at >= 0) at = putKey32(out, at, CANCEL_KEY_KEY, cancelKey);
      if (at >= 0) {
        out.set(ARGS_KEY, at);
        const head = out.subarray(0, at + ARGS_KEY.length);
        const bytes = packSmallAfter(head, args, DEFAULT_MAX_BYTES) ?? packAfter(head, args, DEFAULT_MAX_BYTES);
        if (bytes !== undefined) return bytes;
      }
    } finally {
      keyedScratchBusy = false;
    }
  }
  return encode('actor_call', { method, callId, cancelKey, args });
}

/** Reads an actor_call message: the same as `decode(bytes, { registry: { actor_call } }).body`, errors included. */
export function decodeCall(bytes: Uint8Array): ActorCall {
  const fast = CALL_HEAD === undefined ? undefined : fastCall(bytes, CALL_HEAD);
  return fast ?? decode(bytes, CALL_ONLY).body;
}

/**
 * What an actor's call subject carries besides batches: an actor_call (a call made with a signal
 * carries its `callId` and `cancelKey`, and is read by the general path) or a cancel_call.
 * Throws ProtocolError as decode() does.
 */
export function decodeCallOrCancel(bytes: Uint8Array): ActorCall | CancelCall {
  const fast = CALL_HEAD === undefined ? undefined : fastCall(bytes, CALL_HEAD);
  return fast ?? (KEYED_CALL_HEAD === undefined ? undefined : fastKeyedCall(bytes, KEYED_CALL_HEAD)) ?? decode(bytes, CALL_OR_CANCEL).body;
}

/** Whether `message` (from decodeCallOrCancel) is a cancel_call. */
export const isCancelCall = (message: ActorCall | CancelCall): message is CancelCall => !('method' in message);

/** The ASCII name of `length` bytes at `at`, one of the recent names when it is; undefined when a byte is not ASCII. */
function methodAt(bytes: Uint8Array, at: number, length: number): string | undefined {
  const candidates = namesByLength[length];
  if (candidates !== undefined) {
    next: for (const name of candidates) {
      for (let i = 0; i < length; i++) if (bytes[at + i] !== name.charCodeAt(i)) continue next;
      return name;
    }
  }
  let method = '';
  for (let i = 0; i < length; i++) {
    const c = bytes[at + i]!;
    if (c > 0x7f) return undefined;
    method += String.fromCharCode(c);
  }
  if (headOfMethod.size < RECENT_METHODS) {
    (namesByLength[length] ??= []).push(method);
    callHead(CALL_HEAD!, method);
  }
  return method;
}

function fastCall(bytes: Uint8Array, head: Uint8Array): ActorCall | undefined {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength > DEFAULT_MAX_BYTES || !startsWith(bytes, head, 0)) return undefined;
  let at = head.length;
  const header = bytes[at++]!;
  const length = header - 0xa0;
  if (length < 1 || length > FAST_METHOD_MAX || at + length + ARGS_KEY.length > bytes.length) return undefined;
  const method = methodAt(bytes, at, length);
  if (method === undefined) return undefined;
  at += length;
  const args = argsAt(bytes, at);
  return args === undefined ? undefined : { method, args };
}

/** The `args` key and the array after it, to the end of `bytes`; undefined if they are not that. */
function argsAt(bytes: Uint8Array, at: number): unknown[] | undefined {
  if (!startsWith(bytes, ARGS_KEY, at)) return undefined;
  let args = readSmallFrom(bytes, at + ARGS_KEY.length);
  if (args === NOT_SMALL) {
    try {
      args = unpackFrom(bytes, at + ARGS_KEY.length);
    } catch {
      return undefined;
    }
  }
  // what actorCall's validator demands of args
  if (!Array.isArray(args) || args.length > 100_000) return undefined;
  return args;
}

/** `key`, then a 32-character lowercase hex string, at `at`: the string, or undefined. */
function key32At(bytes: Uint8Array, at: number, key: Uint8Array): string | undefined {
  if (at + key.length + 34 > bytes.length || !startsWith(bytes, key, at)) return undefined;
  at += key.length;
  if (bytes[at] !== STR32[0] || bytes[at + 1] !== STR32[1] || !hexAt(bytes, at + 2, 32)) return undefined;
  return latin1Slice.call(bytes, at + 2, at + 34);
}

/** A call that can be cancelled, laid out as encodeKeyedCall lays it out; undefined for anything else. */
function fastKeyedCall(bytes: Uint8Array, head: Uint8Array): ActorCall | undefined {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength > DEFAULT_MAX_BYTES || !startsWith(bytes, head, 0)) return undefined;
  let at = head.length;
  const length = bytes[at++]! - 0xa0;
  if (length < 1 || length > FAST_METHOD_MAX || at + length > bytes.length) return undefined;
  const method = methodAt(bytes, at, length);
  if (method === undefined) return undefined;
  at += length;
  const callId = key32At(bytes, at, CALL_ID_KEY);
  if (callId === undefined) return undefined;
  at += CALL_ID_KEY.length + 34;
  const cancelKey = key32At(bytes, at, CANCEL_KEY_KEY);
  if (cancelKey === undefined) return undefined;
  at += CANCEL_KEY_KEY.length + 34;
  const args = argsAt(bytes, at);
  return args === undefined ? undefined : { method, callId, cancelKey, args };
}

/** A successful reply carrying `value`: the same bytes as `encodeOk(value)`. */
export function encodeOkFast(value: unknown, maxBytes: number): Uint8Array | undefined {
  // an undefined value is a field left out, not a nil: the general path knows how
  if (OK_HEAD === undefined || value === undefined) return undefined;
  return packSmallAfter(OK_HEAD, value, maxBytes) ?? packAfter(OK_HEAD, value, maxBytes);
}

/** What decodeOkFast returns for bytes it does not read. */
export const NOT_FAST: unique symbol = Symbol('not fast');

/**
 * The value of a successful reply, when `bytes` is one laid out as encodeOk lays it out; NOT_FAST for
 * anything else — an error reply, another layout, malformed bytes — which the caller reads with the
 * general path.
 */
export function decodeOkFast(bytes: Uint8Array, maxBytes: number): unknown {
  if (OK_HEAD === undefined || !(bytes instanceof Uint8Array) || bytes.byteLength > maxBytes || !startsWith(bytes, OK_HEAD, 0)) return NOT_FAST;
  const small = readSmallFrom(bytes, OK_HEAD.length);
  if (small !== NOT_SMALL) return small;
  try {
    return unpackFrom(bytes, OK_HEAD.length);
  } catch {
    return NOT_FAST;
  }
}

function startsWith(bytes: Uint8Array, head: Uint8Array, at: number): boolean {
  if (bytes.length < at + head.length) return false;
  for (let i = 0; i < head.length; i++) if (bytes[at + i] !== head[i]) return false;
  return true;
}
