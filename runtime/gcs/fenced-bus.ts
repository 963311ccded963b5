import { OrreryError } from '../../lib/errors.ts';
import { invokeHandler, type Bus, type BusMsg, type MsgHandler, type RequestCallback, type RequestOptions, type Subscription } from '../bus/bus.ts';

/**
 * The bus as a GCS under a leader lease sees it (leader.ts): while `valid()` is false nothing goes
 * out and nothing comes in — publishes are dropped, requests fail with STALE_EPOCH, and messages
 * that arrive are not handled (so not answered) while it lasts (they are held: see fencedBus). A GCS
 * frozen past its lease and resumed may run
 * its timers and read its socket before it learns it lost the lease; through this it can neither
 * answer a request nor tell a raylet anything in that moment. One clock read per message.
 */
export interface Validity {
  valid(): boolean;
  /** Told when valid() changes. */
  onValidityChange(listener: (valid: boolean) => void): () => void;
}

/** How long a message that came while the lease was not valid is kept for it to come back. */
const HOLD_MS = 2_000;
/** At most this many such messages are kept; past it, what comes is dropped. */
const MAX_HELD = 10_000;
/** How often held messages look whether the lease is valid again. */
const HOLD_POLL_MS = 25;

/**
 * `onStatus` reports the lease like the connection: 'disconnected' while either the connection is
 * down or the lease is not valid (the GCS hears nothing then, so its node timeouts must not run:
 * nodes.ts), 'reconnected' once both are good again.
 *
 * Messages that come while the lease is not valid are not handled then, but held: when a renewal
 * goes through at the same revision (nobody took the lease) within HOLD_MS of their coming, they
 * are handled then, in the order they came. A lease lost for good drops them. Before, they were
 * dropped at once, and a lapse of a few hundred ms — a GCS catching up after a NATS freeze past its
 * lease — cost every request that came in it its sender's whole request timeout (10 s for a client;
 * the nats-freeze-long spec).
 */
export function fencedBus(bus: Bus, lease: Validity, opts: { holdMs?: number; log?: (line: string) => void } = {}): Bus {
  const valid = (): boolean => lease.valid();
  const stale = (): Error => new OrreryError('STALE_EPOCH', 'this GCS no longer holds the leader lease');
  const holdMs = opts.holdMs ?? HOLD_MS;
  const held: { at: number; handler: MsgHandler; msg: BusMsg }[] = [];
  let poll: NodeJS.Timeout | undefined;
  const onError = (err: unknown): void => opts.log?.(`handler error: ${String(err)}`);
  /** Handles the held messages once the lease is valid again; drops those held too long. */
  const release = (): void => {
    const now = Date.now();
    let stale = 0;
    while (stale < held.length && now - held[stale]!.at > holdMs) stale++;
    if (stale > 0) held.splice(0, stale);
    if (held.length > 0 && valid()) {
      const list = held.splice(0);
      for (const h of list) invokeHandler(h.handler, answeredWhileValid(h.msg, valid), onError);
    }
    if (held.length === 0) {
      clearTimeout(poll);
      poll = undefined;
    } else poll ??= setTimeout(() => ((poll = undefined), release()), HOLD_POLL_MS).unref();
  };
  lease.onValidityChange((ok) => ok && release());
  const receive = (handler: MsgHandler) => (msg: BusMsg) => {
    if (!valid()) {
      if (held.length < MAX_HELD) held.push({ at: Date.now(), handler, msg });
      release();
      return undefined;
    }
    if (held.length > 0) release(); // the ones that came before it first
    return handler(answeredWhileValid(msg, valid));
  };
  return {
    publish(subject: string, data: Uint8Array, opts?: { reply?: string }): void {
      if (valid()) bus.publish(subject, data, opts);
    },
    subscribe(subject: string, handler: MsgHandler, opts?: { queue?: string }): Subscription {
      return bus.subscribe(subject, receive(handler), opts);
    },
    request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMsg> {
      return valid() ? bus.request(subject, data, opts) : Promise.reject(stale());
    },
    requestCallback(subject: string, data: Uint8Array, opts: RequestOptions, done: RequestCallback): void {
      if (valid()) bus.requestCallback(subject, data, opts, done);
      else queueMicrotask(() => done(stale(), undefined));
    },
    onStatus: (listener) => {
      let connected = true;
      let leaseOk = lease.valid();
      let heard = connected && leaseOk;
      const update = (): void => {
        const now = connected && leaseOk;
        if (now === heard) return;
        heard = now;
        // going silent: what failed; coming back: the same cause, so the two read as a pair
        if (!now) silence = connected ? 'lease' : 'connection';
        listener(now ? 'reconnected' : 'disconnected', silence);
      };
      let silence: 'connection' | 'lease' = 'connection';
      const offBus = bus.onStatus((status) => {
        connected = status === 'reconnected';
        update();
      });
      const offLease = lease.onValidityChange((ok) => {
        leaseOk = ok;
        update();
      });
      return () => {
        offBus();
        offLease();
      };
    },
    flush: () => bus.flush(),
    close: () => bus.close(),
    get closed() {
      return bus.closed;
    },
    ...(bus.keyValue ? { keyValue: () => bus.keyValue!() } : {}),
  };
}

/** The message with its answer dropped if the lease ran out while the handler worked. */
function answeredWhileValid(msg: BusMsg, valid: () => boolean): BusMsg {
  if (msg.reply === undefined) return msg;
  return { subject: msg.subject, data: msg.data, reply: msg.reply, respond: (data) => valid() && msg.respond(data) };
}
