import { rethrowLater, type Bus, type BusMsg, type BusOptions, type MsgHandler, type RequestCallback, type RequestOptions, type Subscription } from './bus.ts';
import { BusClosedError, NoRespondersError, TimeoutError } from './errors.ts';
import { MemoryBroker, type Delivery } from './memory-broker.ts';
import { armRequestTimer, timesOutNow, type TimedRequest } from './request-timer.ts';
import { assertQueue, assertSubject } from './subject-syntax.ts';

export { MemoryBroker } from './memory-broker.ts';

interface PendingRequest extends TimedRequest {
  readonly subject: string;
  readonly done: RequestCallback;
}

/**
 * One connection to a MemoryBroker, with the semantics of a NATS connection (see memory-broker.ts
 * for delivery). Each published payload is copied once, so a sender reusing its buffer cannot change
 * a message in flight. Requests share one inbox subscription, `_INBOX.<connection>.*`, and use a
 * reply subject again only after its answer arrived, as on NATS (nats.ts).
 */
export class MemoryBus implements Bus {
  readonly closed: Promise<void>;
  private state: 'open' | 'draining' | 'closed' = 'open';
  /** Live subscriptions of this connection, each with the function that ends it. */
  private readonly subs = new Map<Delivery, () => void>();
  private readonly requests = new Map<string, PendingRequest>();
  private readonly inboxPrefix: string;
  private inbox: Subscription | undefined;
  private nextRequest = 1;
  /** Tokens whose request was answered, free to be used again (never one that timed out). */
  private readonly reusable: string[] = [];
  private markClosed!: () => void;
  private readonly onError: (err: unknown, msg: BusMsg) => void;

  constructor(readonly broker: MemoryBroker = new MemoryBroker(), opts: BusOptions = {}) {
    this.inboxPrefix = `_INBOX.${broker.connectionId()}.`;
    this.onError = opts.onHandlerError ?? rethrowLater;
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
  }

  publish(subject: string, data: Uint8Array, opts: { reply?: string } = {}): void {
    if (this.state === 'closed') throw new BusClosedError();
    assertSubject(subject, 'publish');
    if (opts.reply !== undefined) assertSubject(opts.reply, 'publish');
    this.broker.publish(subject, new Uint8Array(data), opts.reply);
  }

  subscribe(subject: string, handler: MsgHandler, opts: { queue?: string } = {}): Subscription {
    if (this.state !== 'open') throw new BusClosedError();
    assertSubject(subject, 'subscribe');
    const { queue } = opts;
    if (queue !== undefined) assertQueue(queue);
    let markClosed!: () => void;
    const closed = new Promise<void>((resolve) => (markClosed = resolve));
    const delivery: Delivery = {
      subject,
      queue,
      handler,
      wrap: (s, data, reply) => this.message(s, data, reply),
      onError: this.onError,
      active: true,
      pending: [],
      head: 0,
      ready: false,
    };
    const end = (): void => {
      if (!delivery.active) return;
      delivery.active = false;
      this.broker.remove(delivery);
      this.subs.delete(delivery);
      markClosed();
    };
    const drain = async (): Promise<void> => {
      if (!delivery.active) return;
      this.broker.remove(delivery); // routes nothing more to it; what is queued still arrives
      while (delivery.active && delivery.head < delivery.pending.length) await this.broker.settled();
      end();
    };
    this.subs.set(delivery, end);
    this.broker.add(delivery);
    return { subject, queue, unsubscribe: end, drain, closed };
  }

  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMsg> {
    return new Promise<BusMsg>((resolve, reject) => {
      this.requestCallback(subject, data, opts, (err, msg) => (err === undefined ? resolve(msg!) : reject(err)));
    });
  }

  requestCallback(subject: string, data: Uint8Array, opts: RequestOptions, done: RequestCallback): void {
    try {
      if (this.state !== 'open') throw new BusClosedError();
      assertSubject(subject, 'publish');
      if (!this.broker.hasInterest(subject)) throw new NoRespondersError(subject);
      this.inbox ??= this.subscribe(`${this.inboxPrefix}*`, (msg) => this.answer(msg));
    } catch (err) {
      queueMicrotask(() => done(err as Error, undefined));
      return;
    }
    const token = this.reusable.pop() ?? String(this.nextRequest++);
    const pending: PendingRequest = { subject, done, timer: undefined as unknown as NodeJS.Timeout, due: 0, timeoutMs: opts.timeoutMs, graceEnd: 0 };
    // as on NATS (request-timer.ts): a timer that fires late lets the broker's next pass deliver first
    armRequestTimer(pending, this.onTimer, token);
    this.requests.set(token, pending);
    this.publish(subject, data, { reply: this.inboxPrefix + token });
  }

  private readonly onTimer = (token: string): void => {
    const pending = this.requests.get(token);
    if (pending === undefined || !timesOutNow(pending, this.onTimer, token)) return;
    this.requests.delete(token);
    pending.done(new TimeoutError(pending.subject, pending.timeoutMs), undefined);
  };

  /** An in-process broker has no connection to lose: the listener is never called. */
  onStatus(): () => void {
    return () => {};
  }

  flush(): Promise<void> {
    return this.state === 'closed' ? Promise.reject(new BusClosedError()) : this.broker.settled();
  }

  /** Drains: stops routing to this connection, lets queued messages reach handlers, then closes. */
  async close(): Promise<void> {
    if (this.state !== 'open') return this.closed;
    this.state = 'draining';
    for (const sub of this.subs.keys()) this.broker.remove(sub);
    while ([...this.subs.keys()].some((s) => s.head < s.pending.length)) await this.broker.settled();
    for (const end of [...this.subs.values()]) end();
    for (const pending of this.requests.values()) {
      clearTimeout(pending.timer);
      pending.done(new BusClosedError(), undefined);
    }
    this.requests.clear();
    this.state = 'closed';
    this.markClosed();
  }

  private message(subject: string, data: Uint8Array, reply: string | undefined): BusMsg {
    return {
      subject,
      data,
      reply,
      respond: (answer) => {
        if (reply === undefined) return false;
        this.publish(reply, answer);
        return true;
      },
    };
  }

  private answer(msg: BusMsg): void {
    const token = msg.subject.slice(this.inboxPrefix.length);
    const pending = this.requests.get(token);
    if (!pending) return;
    this.requests.delete(token);
    clearTimeout(pending.timer);
    this.reusable.push(token);
    pending.done(undefined, msg);
  }
}

/** A new connection to `broker` (a fresh broker when none is given). */
export function connectMemoryBus(broker: MemoryBroker = new MemoryBroker(), opts: BusOptions = {}): MemoryBus {
  return new MemoryBus(broker, opts);
}
