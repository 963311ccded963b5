/**
 * The values most actor calls carry — ASCII strings, numbers, booleans, null, and short arrays and
 * plain objects (ASCII keys) of them — packed and read without msgpackr, for the call fast path
 * (fast-path.ts). The bytes are exactly msgpackr's with codec.ts's options
 * (spec/protocols/small-values.spec.ts compares them on a random corpus); anything else — a
 * non-ASCII string, a class instance, an actor reference, a typed array, a long array, deep
 * nesting — is not taken (`undefined` / NOT_SMALL), and the caller uses msgpackr for the whole value.
 *
 * Why: with one call in flight every process on the path sleeps between calls, and a call's cost is
 * then mostly the code it touches while cold. msgpackr's pack and unpack cost ~4 µs each on such a
 * call for a 100-byte string (0.3 µs hot): their entry and exit handle records, shared structures,
 * bundled strings and buffer growth that these values never need.
 */

const MAX_ARRAY = 15; // a msgpack fixarray
const MAX_FIELDS = 15; // a msgpack fixmap
const MAX_DEPTH = 4;
const MAX_STRING = 0xffff; // str8 and str16

/**
 * Node's Buffer string codecs, used on a plain Uint8Array: for strings past a dozen characters or
 * so they are several times faster than a loop over char codes (100 characters: ~0.1 µs against
 * ~0.4–0.6 µs to check, write or read). Latin-1 is ASCII's bytes for ASCII text; whether a string
 * is ASCII is whether its UTF-8 length is its length. Elsewhere (no Buffer) the loops do it all.
 */
interface NodeStrings {
  latin1Write(this: Uint8Array, text: string, offset: number, length: number): number;
  latin1Slice(this: Uint8Array, start: number, end: number): string;
}
const nodeBuffer = (globalThis as { Buffer?: { byteLength(text: string, encoding: 'utf8'): number; prototype: Partial<NodeStrings> } }).Buffer;
const strings: NodeStrings | undefined =
  typeof nodeBuffer?.prototype.latin1Write === 'function' && typeof nodeBuffer.prototype.latin1Slice === 'function' ? (nodeBuffer.prototype as NodeStrings) : undefined;
/** From these lengths on the Buffer codecs win (measured on Node 20: 10–20 characters). */
const NATIVE_CHECK_FROM = 16;
const NATIVE_WRITE_FROM = 24;
const NATIVE_READ_FROM = 17;

/** Whether every character of `text` is ASCII. */
function isAscii(text: string): boolean {
  const n = text.length;
  if (n >= NATIVE_CHECK_FROM && nodeBuffer !== undefined) return nodeBuffer.byteLength(text, 'utf8') === n;
  for (let i = 0; i < n; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** The packed size of `value`, or -1 when it is not a small value. */
function sizeOf(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string': {
      const n = value.length;
      if (n > MAX_STRING || !isAscii(value)) return -1;
      return n + (n < 0x20 ? 1 : n < 0x100 ? 2 : 3);
    }
    case 'number':
      if (value >>> 0 === value) return value < 0x80 ? 1 : value < 0x100 ? 2 : value < 0x10000 ? 3 : 5;
      if (value >> 0 === value) return value >= -0x20 ? 1 : value >= -0x80 ? 2 : value >= -0x8000 ? 3 : 5;
      return 9;
    case 'boolean':
      return 1;
    case 'object': {
      if (value === null) return 1;
      if (depth >= MAX_DEPTH) return -1;
      if (!Array.isArray(value)) return plainObjectSize(value, depth);
      if (Object.getPrototypeOf(value) !== Array.prototype || value.length > MAX_ARRAY) return -1;
      let size = 1;
      for (let i = 0; i < value.length; i++) {
        const item = sizeOf(value[i], depth + 1);
        if (item < 0) return -1;
        size += item;
      }
      return size;
    }
    default:
      return -1; // undefined (a field left out, or nil in an array), bigint, symbol, function
  }
}

/**
 * A plain object (prototype Object.prototype or null) as msgpackr packs it with codec.ts's options:
 * a map of its own enumerable string keys in their order, fields whose value is undefined left out.
 * `__proto__` as an own key is not taken: msgpackr renames it when reading.
 */
function plainObjectSize(value: object, depth: number): number {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return -1;
  const keys = Object.keys(value);
  if (keys.length > MAX_FIELDS) return -1;
  let size = 1;
  for (const key of keys) {
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) continue;
    if (key === '__proto__') return -1;
    const k = sizeOf(key, depth + 1);
    const v = sizeOf(field, depth + 1);
    if (k < 0 || v < 0) return -1;
    size += k + v;
  }
  return size;
}

const scratch = new DataView(new ArrayBuffer(8));

function write(value: unknown, out: Uint8Array, at: number): number {
  switch (typeof value) {
    case 'string': {
      const n = value.length;
      if (n < 0x20) out[at++] = 0xa0 | n;
      else if (n < 0x100) {
        out[at++] = 0xd9;
        out[at++] = n;
      } else {
        out[at++] = 0xda;
        out[at++] = n >> 8;
        out[at++] = n & 0xff;
      }
      if (n >= NATIVE_WRITE_FROM && strings !== undefined) return at + strings.latin1Write.call(out, value, at, n);
      for (let i = 0; i < n; i++) out[at++] = value.charCodeAt(i);
      return at;
    }
    case 'number': {
      if (value >>> 0 === value) {
        if (value < 0x80) out[at++] = value;
        else if (value < 0x100) {
          out[at++] = 0xcc;
          out[at++] = value;
        } else if (value < 0x10000) {
          out[at++] = 0xcd;
          out[at++] = value >> 8;
          out[at++] = value & 0xff;
        } else {
          out[at++] = 0xce;
          out[at++] = value >>> 24;
          out[at++] = (value >>> 16) & 0xff;
          out[at++] = (value >>> 8) & 0xff;
          out[at++] = value & 0xff;
        }
        return at;
      }
      if (value >> 0 === value) {
        if (value >= -0x20) out[at++] = 0x100 + value;
        else if (value >= -0x80) {
          out[at++] = 0xd0;
          out[at++] = value + 0x100;
        } else if (value >= -0x8000) {
          out[at++] = 0xd1;
          out[at++] = (value >> 8) & 0xff;
          out[at++] = value & 0xff;
        } else {
          out[at++] = 0xd2;
          out[at++] = (value >> 24) & 0xff;
          out[at++] = (value >> 16) & 0xff;
          out[at++] = (value >> 8) & 0xff;
          out[at++] = value & 0xff;
        }
        return at;
      }
      out[at++] = 0xcb;
      scratch.setFloat64(0, value);
      for (let i = 0; i < 8; i++) out[at++] = scratch.getUint8(i);
      return at;
    }
    case 'boolean':
      out[at++] = value ? 0xc3 : 0xc2;
      return at;
    default: {
      if (value === null) {
        out[at++] = 0xc0;
        return at;
      }
      if (Array.isArray(value)) {
        out[at++] = 0x90 | value.length;
        for (let i = 0; i < value.length; i++) at = write(value[i], out, at);
        return at;
      }
      const record = value as Record<string, unknown>;
      const header = at++;
      let fields = 0;
      for (const key of Object.keys(record)) {
        const field = record[key];
        if (field === undefined) continue;
        at = write(key, out, at);
        at = write(field, out, at);
        fields++;
      }
      out[header] = 0x80 | fields;
      return at;
    }
  }
}

/**
 * Packed messages are views into a shared slab, as msgpackr's are into its buffer: a typed array of
 * its own past 64 bytes has a backing store V8 allocates and frees outside its heap, ~0.75 µs a
 * message with the GC's share (against ~0.07 µs for a view) — per call at each end, one of the
 * larger costs of a call with 64 in flight. A region is never written twice: a full slab is left
 * to the GC, which frees it once no message still holds a view of it.
 */
const SLAB_BYTES = 64 * 1024;
let slab = new Uint8Array(SLAB_BYTES);
let slabUsed = 0;

function allocate(size: number): Uint8Array {
  if (size > SLAB_BYTES >> 3) return new Uint8Array(size);
  if (slabUsed + size > SLAB_BYTES) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + size);
  slabUsed += size;
  return out;
}

/**
 * `head` followed by `value` packed, in a buffer of its own (a view no other message shares) — the
 * same bytes as msgpackr's with RESERVE_START_SPACE and `head` copied in — or undefined when
 * `value` is not a small value or the whole would be over `maxBytes`.
 */
export function packSmallAfter(head: Uint8Array, value: unknown, maxBytes: number): Uint8Array | undefined {
  const size = sizeOf(value, 0);
  if (size < 0 || head.length + size > maxBytes) return undefined;
  const out = allocate(head.length + size);
  out.set(head, 0);
  write(value, out, head.length);
  return out;
}

/** What readSmall returns for bytes it does not read. */
export const NOT_SMALL: unique symbol = Symbol('not small');

/** Position of the reader; `read` advances it. Module state: the reader is not re-entrant, and needs not be. */
let pos = 0;

function read(bytes: Uint8Array, depth: number): unknown {
  if (pos >= bytes.length) return NOT_SMALL;
  const b = bytes[pos++]!;
  if (b < 0x80) return b;
  if (b >= 0xe0) return b - 0x100;
  if (b >= 0xa0 && b < 0xc0) return ascii(bytes, b - 0xa0);
  if (b >= 0x80 && b < 0x90) {
    if (depth >= MAX_DEPTH) return NOT_SMALL;
    const record: Record<string, unknown> = {};
    for (let i = b - 0x80; i > 0; i--) {
      const key = read(bytes, depth + 1);
      if (typeof key !== 'string' || key === '__proto__') return NOT_SMALL; // msgpackr reads other keys its own way
      const field = read(bytes, depth + 1);
      if (field === NOT_SMALL) return NOT_SMALL;
      record[key] = field;
    }
    return record;
  }
  if (b >= 0x90 && b < 0xa0) {
    if (depth >= MAX_DEPTH) return NOT_SMALL;
    const n = b - 0x90;
    const list: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const item = read(bytes, depth + 1);
      if (item === NOT_SMALL) return NOT_SMALL;
      list[i] = item;
    }
    return list;
  }
  const left = bytes.length - pos;
  switch (b) {
    case 0xc0:
      return null;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xcc:
      if (left < 1) return NOT_SMALL;
      return bytes[pos++]!;
    case 0xcd:
      if (left < 2) return NOT_SMALL;
      pos += 2;
      return (bytes[pos - 2]! << 8) | bytes[pos - 1]!;
    case 0xce:
      if (left < 4) return NOT_SMALL;
      pos += 4;
      return ((bytes[pos - 4]! << 24) >>> 0) + ((bytes[pos - 3]! << 16) | (bytes[pos - 2]! << 8) | bytes[pos - 1]!);
    case 0xd0:
      if (left < 1) return NOT_SMALL;
      return (bytes[pos++]! << 24) >> 24;
    case 0xd1:
      if (left < 2) return NOT_SMALL;
      pos += 2;
      return (((bytes[pos - 2]! << 8) | bytes[pos - 1]!) << 16) >> 16;
    case 0xd2:
      if (left < 4) return NOT_SMALL;
      pos += 4;
      return (bytes[pos - 4]! << 24) | (bytes[pos - 3]! << 16) | (bytes[pos - 2]! << 8) | bytes[pos - 1]!;
    case 0xcb:
      if (left < 8) return NOT_SMALL;
      for (let i = 0; i < 8; i++) scratch.setUint8(i, bytes[pos++]!);
      return scratch.getFloat64(0);
    case 0xd9:
      if (left < 1) return NOT_SMALL;
      return ascii(bytes, bytes[pos++]!);
    case 0xda:
      if (left < 2) return NOT_SMALL;
      pos += 2;
      return ascii(bytes, (bytes[pos - 2]! << 8) | bytes[pos - 1]!);
    default:
      return NOT_SMALL; // maps past 15 fields, bin, ext (actor references), float32, 64-bit integers, str32, arrays past 15
  }
}

const decoder = new TextDecoder();

/** `n` bytes of ASCII as a string; NOT_SMALL when they run past the end or one is not ASCII. */
function ascii(bytes: Uint8Array, n: number): string | typeof NOT_SMALL {
  const end = pos + n;
  if (end > bytes.length) return NOT_SMALL;
  let s: string;
  if (n < NATIVE_READ_FROM) {
    s = '';
    for (let i = pos; i < end; i++) {
      const c = bytes[i]!;
      if (c > 0x7f) return NOT_SMALL;
      s += String.fromCharCode(c);
    }
  } else if (strings !== undefined) {
    s = strings.latin1Slice.call(bytes, pos, end);
    if (!isAscii(s)) return NOT_SMALL; // a byte past 0x7f became a character U+0080–U+00FF
  } else {
    for (let i = pos; i < end; i++) if (bytes[i]! > 0x7f) return NOT_SMALL;
    s = decoder.decode(bytes.subarray(pos, end));
  }
  pos = end;
  return s;
}

/**
 * The one small value that fills `bytes` from `offset` to the end — what msgpackr would read there
 * with codec.ts's options — or NOT_SMALL when it is not one (or not exactly one: trailing bytes).
 */
export function readSmallFrom(bytes: Uint8Array, offset: number): unknown {
  pos = offset;
  const value = read(bytes, 0);
  return value !== NOT_SMALL && pos === bytes.length ? value : NOT_SMALL;
}
