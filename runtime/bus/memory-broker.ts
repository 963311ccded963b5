import { invokeHandler, type BusMsg, type MsgHandler } from './bus.ts';
import { SubjectTrie, type TrieEntry } from './subject-trie.ts';

/**
 * The in-process stand-in for nats-server: it routes published messages to matching subscriptions
 * of every connected MemoryBus. Delivery is asynchronous and batched: publish() only appends the
 * message to each receiving subscription's queue; one setImmediate callback (a "pass") then hands
 * every queued message to its handler. setImmediate rather than queueMicrotask, so timers and I/O
 * run between passes — a request can time out even while handlers keep messaging each other.
 * Within one subscription, messages arrive in publish order. Queue groups pick members round-robin.
 */
export interface Delivery extends TrieEntry {
  readonly handler: MsgHandler;
  /** Wraps the raw message with a respond() bound to the receiving connection. */
  readonly wrap: (subject: string, data: Uint8Array, reply: string | undefined) => BusMsg;
  readonly onError: (err: unknown, msg: BusMsg) => void;
  active: boolean;
  pending: BusMsg[];
  head: number;
  ready: boolean;
}

export class MemoryBroker {
  private readonly trie = new SubjectTrie<Delivery>();
  private ready: Delivery[] = [];
  private scheduled = false;
  private readonly cursors = new Map<string, number>();
  private nextConnection = 1;
  /** Delivery passes run so far (the simulator's clock waits for them to stop: bench/sim/). */
  passes = 0;

  /** A fresh id for a connection's inbox prefix. */
  connectionId(): number {
    return this.nextConnection++;
  }

  /** Number of live subscriptions, across connections. */
  get subscriptions(): number {
    return this.trie.size;
  }

  add(sub: Delivery): void {
    this.trie.insert(sub);
  }

  /** Stops routing new messages to `sub`; already queued ones stay until `sub.active` is cleared. */
  remove(sub: Delivery): void {
    this.trie.remove(sub);
  }

  /** True when at least one subscription matches `subject`. */
  hasInterest(subject: string): boolean {
    const m = this.trie.match(subject);
    return m.plain.length > 0 || m.groups.size > 0;
  }

  publish(subject: string, data: Uint8Array, reply: string | undefined): void {
    const match = this.trie.match(subject);
    for (const sub of match.plain) this.enqueue(sub, subject, data, reply);
    for (const [queue, members] of match.groups) {
      const cursor = this.cursors.get(queue) ?? 0;
      this.cursors.set(queue, cursor + 1);
      this.enqueue(members[cursor % members.length], subject, data, reply);
    }
  }

  /** Nothing is queued for delivery. */
  get idle(): boolean {
    return !this.scheduled;
  }

  /** Resolves after the pass that delivers everything queued before the call. */
  settled(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  private enqueue(sub: Delivery, subject: string, data: Uint8Array, reply: string | undefined): void {
    sub.pending.push(sub.wrap(subject, data, reply));
    if (!sub.ready) {
      sub.ready = true;
      this.ready.push(sub);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.pass);
    }
  }

  private readonly pass = (): void => {
    this.passes++;
    const batch = this.ready;
    this.ready = [];
    this.scheduled = false;
    for (const sub of batch) {
      sub.ready = false;
      const end = sub.pending.length;
      while (sub.active && sub.head < end) {
        invokeHandler(sub.handler, sub.pending[sub.head++], sub.onError);
      }
      if (!sub.active || sub.head === sub.pending.length) {
        sub.pending = [];
        sub.head = 0;
      } else if (sub.head > 1024) {
        sub.pending = sub.pending.slice(sub.head);
        sub.head = 0;
      }
    }
  };
}
