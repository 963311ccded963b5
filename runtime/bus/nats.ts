import { connect, createInbox, credsAuthenticator, errors, nkeyAuthenticator, type Msg, type NatsConnection, type Subscription as NatsSubscription } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';
import { readCredentials, redactAddress } from '../auth/credentials.ts';
import { invokeHandler, rethrowLater, type Bus, type BusMsg, type BusOptions, type BusStatus, type MsgHandler, type RequestCallback, type RequestOptions, type Subscription, type BatchCodec, type BatchRequest } from './bus.ts';
import { ReplyTokens } from './reply-tokens.ts';
import { armRequestTimer, timesOutNow, type TimedRequest } from './request-timer.ts';
import { BusClosedError, ConnectionFailedError, PermissionDeniedError, ConnectionLostError, InvalidSubjectError, NoRespondersError, TimeoutError } from './errors.ts';
import type { KeyValue } from './kv.ts';
import type { ObjectBucket, ObjectBucketOptions } from './objects.ts';
import { assertQueue, assertSubject } from './subject-syntax.ts';

export interface NatsBusOptions extends BusOptions {
  /**
   * NATS server URLs, comma-separated (`nats://10.0.0.1:4222,nats://10.0.0.2:4222`). The first is
   * tried first — list the server nearest the process first (its own machine's); the others, in a
   * random order, are where it goes when that one is gone.
   */
  servers: string;
  /** Connection name shown by the server's monitoring (e.g. `raylet-<nodeId>`). */
  name?: string;
  /** Pause between reconnect attempts; default 250 ms. Reconnection never gives up. */
  reconnectTimeWaitMs?: number;
  /** How long the first connection may take; default 5,000 ms. */
  connectTimeoutMs?: number;
  /**
   * A credentials file (`orrery auth init`'s `<role>.creds`, or a NATS `.creds`): the user the
   * server knows this process as. Its inbox prefix, when it names one, is where answers arrive.
   */
  creds?: string;
  /** TLS for servers that require it: PEM files of the CA, and of a client certificate and key. */
  tls?: TlsFiles;
}

export interface TlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Connects to NATS; a server that cannot be reached is a ConnectionFailedError naming the address. */
export async function connectNatsBus(opts: NatsBusOptions): Promise<Bus> {
  const servers = opts.servers
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const address = redactAddress(servers.join(',') || opts.servers);
  if (servers.length === 0) throw new ConnectionFailedError(address, 'no server address given');
  const creds = opts.creds === undefined ? undefined : readCredentials(opts.creds);
  const tls = opts.tls === undefined ? undefined : { caFile: opts.tls.ca, certFile: opts.tls.cert, keyFile: opts.tls.key };
  try {
    const nc = await connect({
      servers: preferFirst(servers),
      noRandomize: true,
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: opts.reconnectTimeWaitMs ?? 250,
      timeout: opts.connectTimeoutMs ?? 5000,
      // Our requests do not go through nats.js's request() (see NatsBus.request), but nothing else
      // needs its async stack traces either.
      noAsyncTraces: true,
      ...(creds === undefined ? {} : { authenticator: creds.kind === 'jwt' ? credsAuthenticator(creds.secret) : nkeyAuthenticator(creds.secret) }),
      ...(creds?.inboxPrefix === undefined ? {} : { inboxPrefix: creds.inboxPrefix }),
      ...(tls === undefined ? {} : { tls }),
    });
    return new NatsBus(nc, opts, creds?.inboxPrefix);
  } catch (cause) {
    // nats.js's messages carry no secret, but a URL with a password might be echoed in one
    const reason = redactAddress(cause instanceof Error ? cause.message : String(cause));
    const hint = /authoriz|authentica/i.test(reason) ? (creds === undefined ? ' (the server requires credentials: --creds FILE or ORRERY_CREDS)' : ` (the server refused the credentials in ${creds.path})`) : '';
    throw new ConnectionFailedError(address, reason + hint, { cause, transient: hint === '' && mayMend(cause) });
  }
}

/**
 * Whether a first connection's failure may mend by waiting: a server that refused (credentials,
 * TLS, its certificate) or an address that cannot be a server will not; a refused or reset socket,
 * a timeout, a name that does not resolve yet, a peer that hung up before speaking NATS (a server
 * starting or stopping, a load balancer with no server behind it) may.
 */
const WILL_NOT_MEND = /authoriz|authentica|credential|permission|nkey|jwt|tls|ssl|certificate|invalid url|unsupported protocol/i;

function mayMend(cause: unknown): boolean {
  if (!(cause instanceof Error)) return false;
  const causes = [cause.message, String((cause as { cause?: unknown }).cause ?? '')];
  return !causes.some((m) => WILL_NOT_MEND.test(m));
}

/**
 * The first server, then the rest shuffled: nats.js would shuffle them all, so a process given its own
 * machine's server first could start on any other; with the rest in one fixed order, every process
 * that loses the same server would go to the same next one.
 */
function preferFirst(servers: readonly string[]): string[] {
  const rest = servers.slice(1);
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [rest[i], rest[j]] = [rest[j], rest[i]];
  }
  return [servers[0], ...rest];
}

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
 * The Bus over one nats.js connection; errors of the client are mapped to the bus error classes.
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
class NatsBus implements Bus {
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
  private readonly statusListeners = new Set<(status: BusStatus) => void>();
  /** Between a 'disconnect' and the next 'reconnect' of the connection's status stream. */
  private down = false;

  private readonly tokens = new ReplyTokens();

  constructor(private readonly nc: NatsConnection, opts: BusOptions, private readonly inboxRoot?: string) {
    // Requests still waiting when the connection has closed (drained by close(), or lost for good)
    // fail with BusClosedError before `closed` resolves.
    this.closed = nc.closed().then(() => this.failPending(() => new BusClosedError()));
    this.onError = opts.onHandlerError ?? rethrowLater;
    void this.watchStatus();
  }

  onStatus(listener: (status: BusStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => void this.statusListeners.delete(listener);
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

  /**
   * Drains (what was published goes out, handlers get what was routed to them), then closes. While
   * the connection is down there is nothing to drain into, and the server may never come back: it
   * closes at once, and a drop during the drain closes it too (watchStatus). Either way nats.js
   * stops reconnecting, and waiting requests fail with BusClosedError.
   */
  async close(): Promise<void> {
    if (!this.nc.isClosed() && !this.nc.isDraining()) {
      if (this.down) await this.nc.close();
      else {
        // a drop during the drain closes the connection (watchStatus), and a flush nats.js issued
        // while it was down is never answered: the drain may then never settle, so `closed` ends it
        const draining = this.nc.drain();
        draining.catch(() => undefined);
        try {
          await Promise.race([draining, this.closed]);
        } catch {
          // a drain that failed (the connection dropped under it) still ends in a closed connection
          if (!this.nc.isClosed()) await this.nc.close();
        }
      }
    }
    await this.closed;
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
   * The connection's status stream, read from the start until the connection closes:
   * - a dropped connection fails every waiting request with ConnectionLostError, then tells the
   *   onStatus listeners; its coming back tells them too (see the class comment);
   * - a server that refuses a publish (a permissions violation) says so only here; as nats.js's
   *   request() did, the oldest request to that subject fails with it instead of waiting for its
   *   timeout.
   */
  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect') {
        if (this.nc.isClosed()) continue;
        if (this.nc.isDraining()) {
          // close() was draining and the connection dropped: its last flush would wait for a
          // server that may never come back, and nats.js would go on reconnecting meanwhile
          if (status.type === 'disconnect') void this.nc.close();
          continue;
        }
        this.down = status.type === 'disconnect';
        if (this.down) this.failPending((p) => new ConnectionLostError(p.subject));
        this.tell(status.type === 'disconnect' ? 'disconnected' : 'reconnected');
        continue;
      }
      const err = status.type === 'error' ? status.error : undefined;
      if (!(err instanceof errors.PermissionViolationError) || err.operation !== 'publish') continue;
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
  }

  private tell(status: BusStatus): void {
    for (const listener of [...this.statusListeners]) {
      try {
        listener(status);
      } catch (err) {
        rethrowLater(err); // a listener's bug: the others still hear
      }
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

/**
 * One subscription's handle: its methods live on the prototype, not in closures made per
 * subscription (a worker host subscribes once per actor; the closures and the eager `closed` chain
 * were ~1.1 KB of heap per subscription, measured with 2,500).
 */
class NatsBusSubscription implements Subscription {
  constructor(
    readonly subject: string,
    readonly queue: string | undefined,
    private readonly sub: NatsSubscription,
    private readonly nc: NatsConnection,
  ) {}

  unsubscribe(): void {
    if (!this.sub.isClosed() && !this.nc.isClosed()) this.sub.unsubscribe();
  }

  async drain(): Promise<void> {
    const { sub, nc } = this;
    if (sub.isClosed() || sub.isDraining() || nc.isClosed() || nc.isDraining()) return sub.closed.then(() => undefined);
    try {
      await sub.drain();
    } catch {
      // the connection closed meanwhile: the subscription ended with it
    }
  }

  get closed(): Promise<void> {
    return this.sub.closed.then(() => undefined);
  }
}

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

function mapped<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw mapError(err);
  }
}

function mapError(err: unknown): Error {
  if (err instanceof errors.ClosedConnectionError || err instanceof errors.DrainingConnectionError) return new BusClosedError({ cause: err });
  if (err instanceof errors.InvalidSubjectError) return new InvalidSubjectError('', err.message, { cause: err });
  if (err instanceof OrreryError) return err;
  if (err instanceof errors.PermissionViolationError) return new PermissionDeniedError(err.operation === 'publish' ? 'publish' : 'subscribe', err.subject, { cause: err });
  // the server's max_payload (1 MiB by default): what the receivers' intakes would refuse as TOO_LARGE
  if (err instanceof errors.InvalidArgumentError && /max_payload/.test(err.message)) return new OrreryError('TOO_LARGE', `NATS: the message is larger than the server's max_payload`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new OrreryError('BUS_ERROR', `NATS: ${message}`, { cause: err });
}
