import { addExtension } from 'msgpackr';

/**
 * A reference to an actor inside a user payload: what an ActorHandle becomes on the wire, so a
 * handle can be passed to an actor method, an actor constructor or a task, and returned from one
 * (issue 15, part 2). It names the actor and nothing else — not the sender's connection, timeouts or
 * retries — and the receiving side turns it back into a working handle on its own connection
 * (`reviveRefs`): the client for replies and task results, the worker host for arguments.
 *
 * On the wire a reference is a msgpack extension value of type ACTOR_REF_EXT whose data is the msgpack
 * array `[actorId, namespace]`: standard msgpack, so a peer in another language can read and write
 * one. A malformed one (wrong shape, an id of the wrong kind) makes the whole message MALFORMED —
 * refused where it enters, like any other bad payload.
 *
 * Every ActorHandle class extends ActorRef, so msgpackr packs a handle as a reference (the extension
 * matches by `instanceof`).
 */
class ActorRefClass {
  constructor(
    readonly actorId: string,
    readonly namespace: string,
  ) {}
}

// One class and one count per process, kept on globalThis: a worker host running from one copy of
// orrery (the source) and user code importing another (dist/, or a second install) must make and
// recognise the same references — msgpackr keeps one decoder per extension type for the process.
interface Shared {
  readonly Class: typeof ActorRefClass;
  decoded: number;
}
const SHARED = Symbol.for('orrery.actorRef');
const shared: Shared = ((globalThis as { [SHARED]?: Shared })[SHARED] ??= { Class: ActorRefClass, decoded: 0 });

export const ActorRef: typeof ActorRefClass = shared.Class;
export type ActorRef = ActorRefClass;

/** The msgpack extension type of an actor reference (application types are 0–127). */
export const ACTOR_REF_EXT = 0x41; // 'A'

/** Ids and namespaces are at most 256 characters (protocols/messages/common.ts). */
const MAX_TOKEN = 256;


/**
 * How many references this process has decoded, ever. A receiver reads it before and after decoding
 * a message: when it has not moved, the message holds no reference and needs no walk.
 */
export function refsDecoded(): number {
  return shared.decoded;
}

// The extension's data is written and read here by hand: msgpackr keeps its buffer and position in
// module state, so packing or unpacking with it from inside one of its own extensions is not safe.
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

function strBytes(s: string): number[] {
  const b = utf8.encode(s);
  const head = b.length < 32 ? [0xa0 | b.length] : b.length < 256 ? [0xd9, b.length] : [0xda, b.length >> 8, b.length & 0xff];
  return [...head, ...b];
}

function writeRef(ref: ActorRef): Uint8Array {
  return Uint8Array.from([0x92, ...strBytes(ref.actorId), ...strBytes(ref.namespace)]);
}

function readRef(data: Uint8Array): ActorRef {
  const bad = (): never => {
    throw new TypeError('an actor reference must be [actorId, namespace], each of 1 to 256 characters');
  };
  let at = 0;
  const str = (): string => {
    const h = data[at++];
    let len: number;
    if (h === undefined) return bad();
    if ((h & 0xe0) === 0xa0) len = h & 0x1f;
    else if (h === 0xd9) len = data[at++] ?? bad();
    else if (h === 0xda) {
      len = ((data[at] ?? bad()) << 8) | (data[at + 1] ?? bad());
      at += 2;
    } else return bad();
    if (at + len > data.length) return bad();
    let s: string;
    try {
      s = fromUtf8.decode(data.subarray(at, at + len));
    } catch {
      return bad();
    }
    at += len;
    return s;
  };
  if (data[at++] !== 0x92) bad();
  const actorId = str();
  const namespace = str();
  if (at !== data.length || !token(actorId) || !token(namespace)) bad();
  shared.decoded++;
  return new ActorRef(actorId, namespace);
}

function token(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TOKEN;
}

if (shared.Class === ActorRefClass) addExtension({
  Class: ActorRef,
  type: ACTOR_REF_EXT,
  pack: (ref: ActorRef) => writeRef(ref),
  unpack: (data: Uint8Array) => readRef(data),
});

/** Whether `value` is a bare reference as decoded (not a handle, which is one already). */
export function isBareRef(value: unknown): value is ActorRef {
  return value instanceof ActorRef && Object.getPrototypeOf(value) === ActorRef.prototype;
}

/**
 * `value` with every bare ActorRef in it replaced by `make(ref)` — arrays and plain objects copied
 * where something under them changed, everything else as it was. For values that came off the wire
 * (acyclic, plain data and references only).
 */
export function reviveRefs(value: unknown, make: (ref: ActorRef) => unknown): unknown {
  return mapRefs(value, (v) => (isBareRef(v) ? make(v) : undefined));
}

/**
 * Across the IPC channel between a raylet and its worker hosts (structured clone, which keeps no
 * class), a reference travels as a Map with one key, IPC_REF_KEY: a form no user payload can take,
 * since payloads may not hold Maps (plain-data.ts). `refsToIpc` on the raylet's side, `refsFromIpc`
 * on the host's, before the message is checked.
 */
const IPC_REF_KEY = 'orrery.actorRef';

export function refsToIpc(value: unknown): unknown {
  return mapRefs(value, (v) => (v instanceof ActorRef ? new Map([[IPC_REF_KEY, [v.actorId, v.namespace]]]) : undefined));
}

export function refsFromIpc(value: unknown): unknown {
  return mapRefs(value, (v) => {
    if (!(v instanceof Map) || v.size !== 1 || !v.has(IPC_REF_KEY)) return undefined;
    const pair: unknown = v.get(IPC_REF_KEY);
    if (!Array.isArray(pair) || !token(pair[0]) || !token(pair[1])) return undefined;
    return new ActorRef(pair[0], pair[1]);
  });
}

/**
 * `value` with each part `swap` answers for replaced, copying only the arrays and plain objects on
 * the path to a change; anything else (bytes, dates, class instances) is left as it is, not walked.
 * Depth-bounded by the payload rules.
 */
function mapRefs(value: unknown, swap: (v: object) => unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const swapped = swap(value);
  if (swapped !== undefined) return swapped;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = mapRefs(value[i], swap);
      if (next !== value[i]) (out ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    const next = mapRefs(item, swap);
    if (next !== item) (out ??= { ...(value as Record<string, unknown>) })[key] = next;
  }
  return out ?? value;
}

/** Whether `value` holds an ActorRef anywhere (a handle included). */
export function containsRef(value: unknown): boolean {
  let found = false;
  mapRefs(value, (v) => {
    if (v instanceof ActorRef) found = true;
    return undefined;
  });
  return found;
}
