import { Packr, RESERVE_START_SPACE, Unpackr, type Options } from 'msgpackr';
import { ProtocolError } from './errors.ts';
// registers the actor-reference extension with msgpackr before anything is packed or unpacked
import './actor-ref.ts';
import { messages, type MessageBody, type MessageRegistry, type MessageType } from './messages/registry.ts';
import { isPlainObject, type Infer } from './validate.ts';

/**
 * The only place bytes are made. Every message is one msgpack map, the envelope:
 *
 *   { v: PROTOCOL_VERSION, t: "<message type>", b: { …body } }
 *
 * encoded as plain msgpack (maps, arrays, strings, numbers, bin, nil) — no msgpackr records or
 * shared structures — so a peer in any language can read it. One extension type carries an actor
 * reference in a user payload (actor-ref.ts). Undefined fields are left out.
 * The body sits under `b` so its field names can never clash with the envelope's.
 */
export const PROTOCOL_VERSION = 5;
// History: 2 — a view delta's node upsert may carry `resourcesChanged` (or no resources) instead of
// whole resource sets; a peer of version 1 would refuse those deltas, so it is refused at the envelope.
// 3 — list_actors, list_nodes and list_placement_groups answer a page `{ items, next? }`
// (messages/page.ts) instead of a whole array, which outgrew the message size limit; a peer of
// version 2 would refuse the reply, so it is refused at the envelope.
// 4 — view_snapshot answers pages (`{ after?, version? }` → a delta with `next?`): the whole view
// outgrew the message size limit at about 11,000 actors (bench/sim). A version-3 raylet would take
// the first page for the whole view without a word, so it is refused at the envelope.
// 5 — the view carries per-node actor-label count changes (`actorLabelsChanged`) and the nodes' load
// reports (`loads`) instead of actors, and user payloads may hold actor references (extension 0x41,
// actor-ref.ts). A version-4 raylet would keep an empty actor table and never hear other nodes' load;
// a version-4 peer would turn a reference into an unknown extension value. Refused at the envelope.

/** Default largest message, in bytes: 1 MiB, the same as nats-server's default max_payload. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

// skipValues and int64AsType exist in msgpackr 2.1 but not in its typings. The packer writes a
// number as a float or an integer of at most 32 bits, never a 64-bit integer: only a bigint is one.
// So a 64-bit integer decodes as a bigint ('bigint'), and a bigint in a user payload arrives as one.
// ('auto' made it a number whenever a number held it exactly: 10n arrived as 10.) Validators refuse
// a bigint wherever the protocol wants a number, so a peer that writes numbers as 64-bit integers is
// refused, not misread.
const packOptions = { useRecords: false, moreTypes: false, encodeUndefinedAsNil: true, skipValues: [undefined] };
const unpackOptions = { useRecords: false, mapsAsObjects: true, int64AsType: 'bigint' };
const packr = new Packr(packOptions as Options);
const unpackr = new Unpackr(unpackOptions as unknown as Options);

export interface CodecOptions<R extends MessageRegistry> {
  /** Largest accepted message in bytes; default DEFAULT_MAX_BYTES. */
  maxBytes?: number;
  /** The message types to accept; default `messages`, every type of this protocol. */
  registry?: R;
}

/** A decoded message: its type and its validated body, discriminated by `type`. */
export type Decoded<R extends MessageRegistry> = { [K in keyof R & string]: { readonly type: K; readonly body: Infer<R[K]> } }[keyof R & string];

export function encode<K extends MessageType>(type: K, body: MessageBody<K>, opts?: { maxBytes?: number }): Uint8Array;
export function encode(type: string, body: unknown, opts?: { maxBytes?: number }): Uint8Array;
export function encode(type: string, body: unknown, opts: { maxBytes?: number } = {}): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = packr.pack({ v: PROTOCOL_VERSION, t: type, b: body });
  } catch (cause) {
    throw new ProtocolError('INVALID_MESSAGE', `cannot encode ${type}: ${(cause as Error).message}`, { cause, detail: { type } });
  }
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  if (bytes.byteLength > maxBytes) throw tooLarge(bytes.byteLength, maxBytes);
  return bytes;
}

/**
 * Decodes and validates one message. Throws ProtocolError: TOO_LARGE (checked before unpacking),
 * MALFORMED (not msgpack, truncated, trailing bytes, not an envelope), VERSION_MISMATCH,
 * UNKNOWN_TYPE (not in the registry) or INVALID_MESSAGE (the body fails its validator).
 */
export function decode<R extends MessageRegistry = typeof messages>(bytes: Uint8Array, opts: CodecOptions<R> = {}): Decoded<R> {
  const registry: MessageRegistry = opts.registry ?? messages;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!(bytes instanceof Uint8Array)) throw new ProtocolError('MALFORMED', 'message is not bytes', { detail: { reason: 'not_bytes' } });
  if (bytes.byteLength > maxBytes) throw tooLarge(bytes.byteLength, maxBytes);
  let envelope: unknown;
  try {
    envelope = unpackr.unpack(bytes);
  } catch (cause) {
    const reason = (cause as { incomplete?: boolean }).incomplete ? 'truncated' : 'invalid';
    throw new ProtocolError('MALFORMED', `message is not valid msgpack (${reason})`, { cause, detail: { reason, size: bytes.byteLength } });
  }
  if (!isPlainObject(envelope)) throw malformed('message is not a msgpack map', 'not_a_map');
  const { v, t, b } = envelope;
  if (v !== PROTOCOL_VERSION) {
    // any msgpack value may sit here (a u64 arrives as a bigint, which JSON.stringify throws on)
    const shown = typeof v === 'bigint' ? `${v}` : (JSON.stringify(v) ?? 'none');
    throw new ProtocolError('VERSION_MISMATCH', `message has protocol version ${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown}, this peer speaks ${PROTOCOL_VERSION}`, {
      detail: { received: typeof v === 'number' ? v : null, expected: PROTOCOL_VERSION },
    });
  }
  if (typeof t !== 'string') throw malformed('message has no type', 'no_type');
  if (!Object.hasOwn(registry, t)) {
    throw new ProtocolError('UNKNOWN_TYPE', `unknown message type ${JSON.stringify(t)}`, { detail: { type: t } });
  }
  try {
    return { type: t, body: registry[t](b, '') } as Decoded<R>;
  } catch (cause) {
    if (!(cause instanceof ProtocolError)) throw cause;
    throw new ProtocolError('INVALID_MESSAGE', `invalid ${t}: ${cause.message}`, { cause, detail: { ...cause.detail, type: t } });
  }
}

/**
 * How many bytes `value` takes as msgpack: an array's encoding is its header followed by its items',
 * so a paged reply can be filled item by item up to a byte budget (runtime/gcs/paging.ts).
 */
export function encodedSize(value: unknown): number {
  try {
    return packr.pack(value).byteLength;
  } catch (cause) {
    throw new ProtocolError('INVALID_MESSAGE', `cannot encode: ${(cause as Error).message}`, { cause });
  }
}

/**
 * For the fast paths of fast-path.ts: `value` packed as plain msgpack after `head.length` bytes
 * that hold `head` — one buffer, no copy. Undefined when the value cannot be packed or the result
 * is over `maxBytes`: the caller then takes the general path, which throws the error.
 */
export function packAfter(head: Uint8Array, value: unknown, maxBytes: number): Uint8Array | undefined {
  let bytes: Uint8Array;
  try {
    bytes = packr.pack(value, RESERVE_START_SPACE | head.length);
  } catch {
    return undefined;
  }
  if (bytes.byteLength > maxBytes) return undefined;
  bytes.set(head, 0);
  return bytes;
}

/**
 * For fast-path.ts: the one msgpack value that fills `bytes` from `offset` to the end; throws otherwise.
 * Read in place (msgpackr's `start`), not from a subarray: a view made per call was ~8% of a worker
 * host's call-path CPU (a Buffer allocation, and a DataView msgpackr then hangs on it).
 */
export function unpackFrom(bytes: Uint8Array, offset: number): unknown {
  return unpackr.unpack(bytes, { start: offset });
}

function tooLarge(size: number, maxBytes: number): ProtocolError {
  return new ProtocolError('TOO_LARGE', `message of ${size} bytes exceeds the limit of ${maxBytes}`, { detail: { size, maxBytes } });
}

function malformed(message: string, reason: string): ProtocolError {
  return new ProtocolError('MALFORMED', message, { detail: { reason } });
}
