import type { KeyValue } from './kv.ts';
import type { ObjectBucket, ObjectBucketOptions } from './objects.ts';

/**
 * The message bus every orrery process talks through: NATS in a real cluster (nats.ts), or an
 * in-process broker with the same semantics for simulations and specs (memory.ts). Payloads are
 * opaque bytes; protocols/codec.ts makes and reads them.
 */
export interface BusMsg {
  readonly subject: string;
  readonly data: Uint8Array;
  /** Where the sender waits for an answer, when the message is a request. */
  readonly reply?: string;
  /** Publishes `data` to `reply`; false when there is no reply subject. */
  respond(data: Uint8Array): boolean;
}

/**
 * Receives one message. Messages of one subscription arrive one at a time in publish order; a
 * handler that returns a promise is not awaited, so async handlers may overlap. A handler that
 * throws (or rejects) is reported to the bus's `onHandlerError` and the subscription goes on.
 */
export type MsgHandler = (msg: BusMsg) => unknown;

export interface Subscription {
  readonly subject: string;
  readonly queue?: string;
  /** Stops delivery at once, including messages already queued for this subscription. */
  unsubscribe(): void;
  /**
   * Stops taking new messages but still delivers those the server had already routed to it, then
   * ends; resolves once it has. A request sent just before the end is answered rather than lost.
   */
  drain(): Promise<void>;
  /** Resolves once the subscription has ended (unsubscribed, or its bus closed). */
  readonly closed: Promise<void>;
}

export interface Bus {
  publish(subject: string, data: Uint8Array, opts?: { reply?: string }): void;
  /** `subject` may use wildcards: `*` matches one token, a final `>` one or more. */
  subscribe(subject: string, handler: MsgHandler, opts?: { queue?: string }): Subscription;
  /**
   * Publishes with a fresh reply subject and resolves with the first answer. Rejects with
   * NoRespondersError when nobody subscribes to `subject`, TimeoutError after `timeoutMs`, and
   * BusClosedError when the bus is closing or closed — also for a request still waiting when it
   * closes; ConnectionLostError when the connection drops while it waits, or is down (see onStatus). An answer
   * that comes after its request timed out (or failed) is dropped.
   */
  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMsg>;
  /**
   * request() without its promise, for paths that make one request per call (actor calls): `done`
   * is called exactly once, later — never inside this call — with the answer or with the error
   * request() would reject with. Never throws.
   */
  requestCallback(subject: string, data: Uint8Array, opts: RequestOptions, done: RequestCallback): void;
  /**
   * Several requests to one subject in one message (an actor handle's calls of one turn,
   * protocols/call-batch.ts): each request gets a token of this connection's multiplexer, `codec`
   * makes the message from the tokens and the requests' bytes, and the answers come to one reply
   * subject of the batch as messages `codec` splits back into answers by token — each settling its
   * own request as requestCallback's answer would, and only a request of that batch. An answer
   * `codec` cannot split (the responder could not read the batch) is the answer to every request
   * of the batch still waiting; no responders, a dropped connection and a closed bus fail each as
   * they would fail it alone; each has its own timeout. Optional: without it (the memory bus), a
   * caller sends its requests one at a time. Never throws.
   */
  requestBatch?(subject: string, requests: readonly BatchRequest[], codec: BatchCodec): void;
  /**
   * Tells `listener` when this process's own connection drops ('disconnected': requests waiting
   * then, and made until it is back, fail with ConnectionLostError) and when it is back
   * ('reconnected': its subscriptions have been sent again; a flush() after it confirms the server
   * has them, while other processes' may still be on their way). The memory bus never drops. Returns the function that stops the listening.
   * `cause` says which: a GCS's fenced bus (runtime/gcs/fenced-bus.ts) also goes silent while its
   * leader lease has lapsed ('lease'), and its 'reconnected' names what the silence began with; a
   * plain bus reports its connection only (no cause).
   */
  onStatus(listener: (status: BusStatus, cause?: BusStatusCause) => void): () => void;
  /** Resolves once everything published before the call has left this connection. */
  flush(): Promise<void>;
  /** Drains: ends subscriptions after their queued messages are handled, sends what is pending, closes. */
  close(): Promise<void>;
  /** Resolves when the bus has closed (by close() or, for NATS, a connection lost for good). */
  readonly closed: Promise<void>;
  /**
   * Key-value buckets beside the bus (kv.ts): JetStream KV on a NATS server that has JetStream;
   * undefined when there is none (a server without JetStream, the memory bus).
   */
  keyValue?(): Promise<KeyValue | undefined>;
  /**
   * An object bucket beside the bus (objects.ts): a JetStream object store on a NATS server that
   * has JetStream; undefined when there is none. Shipped code lives in one (runtime/code/).
   */
  objectBucket?(name: string, opts: ObjectBucketOptions): Promise<ObjectBucket | undefined>;
}

/** What onStatus() reports about the process's own connection to the bus. */
export type BusStatus = 'disconnected' | 'reconnected';
/** What went silent or came back: the connection to the server, or (a GCS's fenced bus) the leader lease. */
export type BusStatusCause = 'connection' | 'lease';

/** Receives the outcome of one requestCallback(): an error, or (when `err` is undefined) the answer. */
export type RequestCallback = (err: Error | undefined, msg: BusMsg | undefined) => void;

/** One request of a requestBatch(). */
export interface BatchRequest {
  readonly data: Uint8Array;
  readonly timeoutMs: number;
  readonly done: RequestCallback;
}

/** How requestBatch() puts requests in one message and reads the answers that come back. */
export interface BatchCodec {
  frame(tokens: readonly string[], datas: readonly Uint8Array[]): Uint8Array;
  /** The answers one message carries, by token; undefined when it is not such a message. */
  split(data: Uint8Array): { readonly tokens: readonly string[]; readonly datas: readonly Uint8Array[] } | undefined;
}

export interface RequestOptions {
  timeoutMs: number;
  /**
   * A reply subject nobody can tell in advance: 128 random bits, never used again (NATS; the
   * in-process bus has no other readers). For a request whose answers others may read, though not
   * the request (a raylet's to the GCS: runtime/bus/reply-tokens.ts). By default a reply subject is
   * handed out again once answered, which keeps the server's caches warm.
   */
  unguessableReply?: boolean;
}

export interface BusOptions {
  /** Called when a handler throws or rejects; by default the error is rethrown asynchronously. */
  onHandlerError?: (err: unknown, msg: BusMsg) => void;
}

/** Runs a handler, routing a thrown or rejected error to `onError`. */
export function invokeHandler(handler: MsgHandler, msg: BusMsg, onError: (err: unknown, msg: BusMsg) => void): void {
  try {
    const result = handler(msg);
    if (result instanceof Promise) result.catch((err: unknown) => onError(err, msg));
  } catch (err) {
    onError(err, msg);
  }
}

export function rethrowLater(err: unknown): void {
  setImmediate(() => {
    throw err;
  });
}
