// The Bus over NATS: NatsBus, and its request multiplexer, which every actor call goes through.
// Connecting is in nats-connect.ts; a subscription's handle in nats-subscription.ts; the
// connection's status and closing in nats-status.ts; nats.js's errors as ours in nats-errors.ts.
import { createInbox, type Msg, type NatsConnection, type PermissionViolationError, type Subscription as NatsSubscription } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';
import { invokeHandler, rethrowLater, type Bus, type BusMsg, type BusOptions, type BusStatus, type MsgHandler, type RequestCallback, type RequestOptions, type Subscription, type BatchCodec, type BatchRequest } from './bus.ts';
import { ReplyTokens } from './reply-tokens.ts';
import { armRequestTimer, timesOutNow, type TimedRequest } from './request-timer.ts';
import { BusClosedError, ConnectionLostError, NoRespondersError, TimeoutError } from './errors.ts';
import type { KeyValue } from './kv.ts';
import { mapError, mapped } from './nats-errors.ts';
import { closeConnection, StatusListeners, watchStatus } from './nats-status.ts';
import { NatsBusSubscription } from './nats-subscription.ts';
import type { ObjectBucket, ObjectBucketOptions } from './objects.ts';
import { assertQueue, assertSubject } from './subject-syntax.ts';

/** A request waiting for its answer on the connection's inbox, with its timeout (request-timer.ts). */
interface PendingRequest extends TimedRequest {
  readonly subject: string;
  readonly done: RequestCallback;
  /** The requestBatch() it went out in, if any. */
  readonly batch: PendingBatch | undefined;
}

/** A requestBatch() with requests still waiting: answers to its reply subject are read with its codec. */
interface PendingBatch {
  /** Its reply subject's last token, `_…`, never a request's (reply-tokens.ts). */
  readonly token: string;
  readonly subject: string;
  /** Its requests' tokens, in order. */
  readonly tokens: readonly string[];
  readonly codec: BatchCodec;
  /** How many of its requests are still in `pending`. */
  left: number;
  /** Every request of it settled so far was answered: its reply subject may be used again once all are. */
  answered: boolean;
}

/**
 * The Bus over one nats.js connection; errors of the client are mapped to the bus error classes
 * (nats-errors.ts).
 *
 * A dropped connection. nats.js reconnects on its own (for ever) and subscribes the connection's
 * subscriptions again; what is published while it is down is dropped (each dial attempt resets its
 * outbound buffer). The server forgot the dropped connection's inbox at once, so an answer
 * published to it in the gap is gone too, and nothing tells which requests were answered in the gap
 * and which were not. So every request waiting when the connection drops fails at the drop with
 * ConnectionLostError (CONNECTION_LOST) — not at the reconnect, nor at its own timeout: the caller
 * learns as early as it can that the outcome is unknown and decides (an actor call is sent again
 * when maxTaskRetries allows, so at least once; else it fails). A request made while the
 * connection is down fails the same way at once, since its message would be dropped. onStatus()
 * reports 'disconnected' after the waiting requests have failed, and 'reconnected' once nats.js
 * has subscribed everything again.
 */
export class NatsBus implements Bus {
  readonly closed: Promise<void>;
  private readonly onError: (err: unknown, msg: BusMsg) => void;
  /**
   * Requests share one subscription, `<inbox>.*`, opened by the first request; each gets the reply
   * subject `<inbox>.<token>` (reply-tokens.ts says which tokens). A token may be used again only
   * after its request's one answer arrived: a request that timed out, failed at a dropped
   * connection, was refused or met no responders retires its token for good, so an answer that
   * comes late finds nothing in `pending` and is dropped.
   */
  private inbox: NatsSubscription | undefined;
  private inboxPrefix = '';
  private readonly pending = new Map<string, PendingRequest>();
  /** requestBatch()es with requests still waiting, by their reply subject's token. */
  private readonly batches = new Map<string, PendingBatch>();
  private readonly statusListeners = new StatusListeners();
  /** Between a 'disconnect' and the next 'reconnect' of the connection's status stream. */
  private down = false;

  private readonly tokens = new ReplyTokens();

  constructor(private readonly nc: NatsConnection, opts: BusOptions, private readonly inboxRoot?: string) {
    // Requests still waiting when the connection has closed (drained by close(), or lost for good)
    // fail with BusClosedError before `closed` resolves.
    this.closed = nc.closed().then(() => this.failPending(() => new BusClosedError()));
    this.onError = opts.onHandlerError ?? rethrowLater;
    void watchStatus(nc, { changed: (down) => this.connectionChanged(down), refused: (err) => this.publishRefused(err) });
  }

  onStatus(listener: (status: BusStatus) => void): () => void {
    return this.statusListeners.add(listener);
  }

  publish(subject: string, data: Uint8Array, opts: { reply?: string } = {}): void {
    assertSubject(subject, 'publish');
    if (opts.reply !== undefined) assertSubject(opts.reply, 'publish');
    mapped(() => this.nc.publish(subject, data, opts.reply === undefined ? undefined : { reply: opts.reply }));
  }

  subscribe(subject: string, handler: MsgHandler, opts: { queue?: string } = {}): Subscription {
    assertSubject(subject, 'subscribe');
    const { queue } = opts;
    if (queue !== undefined) assertQueue(queue);
    const sub = mapped(() =>
      this.nc.subscribe(subject, {
        queue,
        callback: (err, msg) => {
          if (!err) invokeHandler(handler, wrap(msg), this.onError);
        },
      }),
    );
    return new NatsBusSubscription(subject, queue, sub, this.nc);
  }

  /**
   * Our own request multiplexer rather than nats.js's request(), which builds an Error (with its
   * stack) for every request it completes — RequestOne.cancel() rejects an already settled deferred
   * with `new RequestError("cancelled")` — 7–16 % of a driver's CPU in the call benchmarks.
   */
  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMsg> {
    return new Promise<BusMsg>((resolve, reject) => {
      this.requestCallback(subject, data, opts, (err, msg) => (err === undefined ? resolve(msg!) : reject(err)));
    });
  }

  requestCallback(subject: string, data: Uint8Array, opts: RequestOptions, done: RequestCallback): void {
    const unable = this.cannotRequest(subject);
    if (unable !== undefined) return void queueMicrotask(() => done(unable, undefined));
    const token = this.waitFor(subject, opts.timeoutMs, done, undefined, opts.unguessableReply === true);
    try {
      this.nc.publish(subject, data, { reply: this.inboxPrefix + token });
    } catch (err) {
      this.take(token);
      const error = mapError(err);
      queueMicrotask(() => done(error, undefined));
    }
  }

  requestBatch(subject: string, requests: readonly BatchRequest[], codec: BatchCodec): void {
    const unable = this.cannotRequest(subject);
    if (unable !== undefined) {
      queueMicrotask(() => {
        for (const r of requests) settle(r.done, unable, undefined);
      });
      return;
    }
    const tokens: string[] = [];
    const datas: Uint8Array[] = [];
    const batchToken = this.tokens.batch();
    const batch: PendingBatch = { token: batchToken, subject, tokens, codec, left: requests.length, answered: true };
    for (const { data, timeoutMs, done } of requests) {
      tokens.push(this.waitFor(subject, timeoutMs, done, batch));
      datas.push(data);
    }
    this.batches.set(batch.token, batch);
    try {
      this.nc.publish(subject, codec.frame(tokens, datas), { reply: this.inboxPrefix + batch.token });
    } catch (err) {
      const error = mapError(err);
      const failed = tokens.map((t) => this.take(t));
      queueMicrotask(() => {
        for (const p of failed) if (p !== undefined) settle(p.done, error, undefined);
      });
    }
  }

  /** Why a request to `subject` cannot go now (a bad subject, a closed bus, a dropped connection); undefined when it can. Opens the inbox. */
  private cannotRequest(subject: string): Error | undefined {
    try {
      assertSubject(subject, 'publish');
      if (this.nc.isClosed() || this.nc.isDraining()) throw new BusClosedError();
      if (this.down) throw new ConnectionLostError(subject);
      this.inbox ??= this.openInbox();
      return undefined;
    } catch (err) {
      return mapError(err);
    }
  }

  /** A request waiting for its answer under a fresh token (returned), failed with TIMEOUT after `timeoutMs`. */
  private waitFor(subject: string, timeoutMs: number, done: RequestCallback, batch?: PendingBatch, unguessable = false): string {
    const token = unguessable ? this.tokens.unguessable() : this.tokens.request();
    const p: PendingRequest = { subject, done, timer: undefined as unknown as NodeJS.Timeout, batch, due: 0, timeoutMs, graceEnd: 0 };
    armRequestTimer(p, this.onTimer, token);
    this.pending.set(token, p);
    return token;
  }

  /** A request's timer: TIMEOUT — unless it fired late, and looks again once the socket is read (request-timer.ts). */
  private readonly onTimer = (token: string): void => {
    const p = this.pending.get(token);
    if (p === undefined || !timesOutNow(p, this.onTimer, token)) return;
    this.take(token);
    p.done(new TimeoutError(p.subject, p.timeoutMs), undefined);
  };

  /**
   * Removes a waiting request (its timer stopped, its batch told); undefined when it is not waiting.
   * `answered`: it is settled by its answer — a batch all of whose requests were frees its token.
   */
  private take(token: string, answered = false): PendingRequest | undefined {
    const p = this.pending.get(token);
    if (p === undefined) return undefined;
    this.pending.delete(token);
    clearTimeout(p.timer);
    const batch = p.batch;
    if (batch !== undefined) {
      if (!answered) batch.answered = false;
      if (--batch.left === 0) {
        this.batches.delete(batch.token);
        if (batch.answered) this.tokens.batchAnswered(batch.token);
      }
    }
    return p;
  }

  /** JetStream KV, loaded on first use (nats-kv.ts); undefined when the server has no JetStream. */
  async keyValue(): Promise<KeyValue | undefined> {
    const { openJetStreamKv } = await import('./nats-kv.ts');
    try {
      return await openJetStreamKv(this.nc, { request: async (subject, data, timeoutMs) => (await this.request(subject, data, { timeoutMs })).data });
    } catch (err) {
      if (err instanceof OrreryError && err.code === 'JETSTREAM_UNAVAILABLE') return undefined;
      throw err;
    }
  }

  /** A JetStream object store, loaded on first use (nats-obj.ts); undefined when the server has no JetStream. */
  async objectBucket(name: string, opts: ObjectBucketOptions): Promise<ObjectBucket | undefined> {
    const { openJetStreamObjects } = await import('./nats-obj.ts');
    return openJetStreamObjects(this.nc, name, opts);
  }

  async flush(): Promise<void> {
    try {
      await this.nc.flush();
    } catch (err) {
      throw mapError(err);
    }
  }

  /** Drains, then closes (closeConnection, nats-status.ts); waiting requests fail with BusClosedError. */
  close(): Promise<void> {
    return closeConnection(this.nc, { down: this.down, closed: this.closed });
  }

  /**
   * Subscribes `<inbox>.*`. Drain treats it like any subscription: answers the server sent before
   * the drain's UNSUB still settle their requests; the rest fail when the connection closes.
   */
  private openInbox(): NatsSubscription {
    const prefix = `${createInbox(this.inboxRoot)}.`;
    const sub = this.nc.subscribe(`${prefix}*`, {
      callback: (err, msg) => {
        if (err) {
          // The server refused the subscription (a permissions violation) and nats.js has closed
          // it: no request waiting on it can be answered; the next request opens a fresh inbox.
          if (this.inbox === sub) this.inbox = undefined;
          this.failPending(() => mapError(err));
          return;
        }
        this.answer(msg, prefix);
      },
    });
    this.inboxPrefix = prefix;
    return sub;
  }

  private answer(msg: Msg, prefix: string): void {
    const token = msg.subject.slice(prefix.length);
    if (token.charCodeAt(0) === UNDERSCORE) return this.answerBatch(token, msg);
    const pending = this.take(token);
    if (pending === undefined) return; // its request timed out (or failed) already: dropped
    // With headers on (nats.js turns them on whenever the server supports them), a server of
    // NATS 2.2+ answers a request nobody subscribes to with an empty 503 status message.
    try {
      if (msg.data.length === 0 && msg.headers?.code === 503) pending.done(new NoRespondersError(pending.subject), undefined);
      else {
        this.tokens.answered(token);
        pending.done(undefined, wrap(msg));
      }
    } catch (err) {
      rethrowLater(err); // a callback's bug, not the inbox's: the inbox goes on
    }
  }

  /** Answers to a requestBatch(): each settles a request of that batch still waiting, and no other. */
  private answerBatch(token: string, msg: Msg): void {
    const batch = this.batches.get(token);
    if (batch === undefined) return; // every request of it was settled already
    // a request of this batch still waiting, taken; a token reused since by another request is not its
    const waiting = (t: string, answered = false): PendingRequest | undefined => (this.pending.get(t)?.batch === batch ? this.take(t, answered) : undefined);
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      for (const t of batch.tokens) {
        const p = waiting(t);
        if (p !== undefined) settle(p.done, new NoRespondersError(batch.subject), undefined);
      }
      return;
    }
    const answers = batch.codec.split(msg.data);
    if (answers === undefined) {
      // not a batch of answers (the responder could not read the batch): the answer to each request
      const whole = wrap(msg);
      for (const t of batch.tokens) {
        const p = waiting(t);
        if (p !== undefined) settle(p.done, undefined, whole);
      }
      return;
    }
    for (let i = 0; i < answers.tokens.length; i++) {
      const t = answers.tokens[i]!;
      const p = waiting(t, true);
      if (p === undefined) continue;
      this.tokens.answered(t);
      settle(p.done, undefined, { subject: msg.subject, data: answers.datas[i]!, reply: undefined, respond: () => false });
    }
  }

  /**
   * The connection dropped (`down`) or came back (watchStatus, nats-status.ts): a drop fails every
   * waiting request with ConnectionLostError, then the onStatus listeners hear of it, as they hear of
   * its coming back (see the class comment).
   */
  private connectionChanged(down: boolean): void {
    this.down = down;
    if (this.down) this.failPending((p) => new ConnectionLostError(p.subject));
    this.statusListeners.tell(down ? 'disconnected' : 'reconnected');
  }

  /**
   * The server refused a publish (a permissions violation; watchStatus, nats-status.ts): as nats.js's
   * request() did, the oldest request to that subject fails with it instead of waiting for its timeout.
   */
  private publishRefused(err: PermissionViolationError): void {
    for (const [token, p] of this.pending) {
      if (p.subject !== err.subject) continue;
      // a refused batch was one message: every request of it was refused
      const refused = p.batch === undefined ? [token] : p.batch.tokens.filter((t) => this.pending.get(t)?.batch === p.batch);
      for (const t of refused) {
        const taken = this.take(t);
        if (taken !== undefined) settle(taken.done, mapError(err), undefined);
      }
      break;
    }
  }

  private failPending(error: (p: PendingRequest) => Error): void {
    if (this.pending.size === 0) return;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.batches.clear();
    for (const p of waiting) {
      clearTimeout(p.timer);
      try {
        p.done(error(p), undefined);
      } catch (err) {
        rethrowLater(err);
      }
    }
  }
}

/** `_`: the first character of a batch's reply token, never of a request's. */
const UNDERSCORE = 0x5f;

/** Calls one request's callback; a callback that throws is a bug of its own, not the inbox's. */
function settle(done: RequestCallback, err: Error | undefined, msg: BusMsg | undefined): void {
  try {
    done(err, msg);
  } catch (failure) {
    rethrowLater(failure);
  }
}

function wrap(msg: Msg): BusMsg {
  const reply = msg.reply || undefined;
  return { subject: msg.subject, data: msg.data, reply, respond: (data) => mapped(() => msg.respond(data)) };
}
