import type { KvBucket } from '../bus/kv.ts';

/**
 * Writes to KV buckets behind a local copy (kv-store.ts): gathered per event-loop turn, only a key's
 * latest value written, and `durable()` — what a mutating request waits for before it is answered —
 * resolving once every write made before it is stored (or a newer value of its key is).
 *
 * Durability is counted, not chained: every write gets a sequence number; each key with something
 * unstored remembers the first sequence not yet covered by a stored write; a durable() taken at
 * sequence S resolves when no key's first unstored sequence is S or below. (It used to chain each
 * flush's promise onto the one before; a retry that awaited durable() could then wait on a chain
 * holding itself, and every later durable() with nothing dirty — kill_actor's — hung for good after
 * the first failed put: the GCS stall when a NATS server leading a bucket was killed.)
 *
 * A write that fails (no stream leader while a NATS cluster elects one, a timeout) is tried again
 * every `retryMs` unless a newer value of its key replaced it. While `mayWrite()` is false (the
 * GCS's leader lease has lapsed) nothing is sent and everything waits; `close()` lets go.
 */
export interface WriteBehindOptions {
  log: (line: string) => void;
  /** Pause before failed writes are tried again; default 500 ms. */
  retryMs?: number;
  /** Whether writes may go out now; default always. */
  mayWrite?: () => boolean;
}

interface Write {
  readonly seq: number;
  readonly bucket: KvBucket;
  readonly key: string;
  /** The bytes to store; undefined deletes the key. Made when sent (a newer value may replace it first). */
  readonly bytes: () => Uint8Array | undefined;
}

export class WriteBehind {
  #seq = 0;
  /** What the next flush sends, by slot (bucket/key). */
  readonly #dirty = new Map<string, Write>();
  /** Slots with something unstored: the first sequence not covered by a stored write, and the latest. */
  readonly #unstored = new Map<string, { first: number; latest: number }>();
  /** The unstored slots' `first`s, smallest on top (#oldest()); an entry whose slot moved on is dropped when it surfaces. */
  readonly #firsts = new MinHeap();
  /** durable() calls not yet resolved, in the order made — so by `upTo`, which only grows — from `#waitersFrom` on. */
  #waiters: { upTo: number; resolve: () => void }[] = [];
  #waitersFrom = 0;
  #scheduled = false;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;
  /** When writes began to fail: said once per outage, and how long it lasted once over. */
  #failingSince: number | undefined;

  constructor(private readonly opts: WriteBehindOptions) {}

  write(bucket: KvBucket, key: string, bytes: () => Uint8Array | undefined): void {
    if (this.#closed) return;
    const slot = `${bucket.name}/${key}`;
    const seq = ++this.#seq;
    this.#dirty.set(slot, { seq, bucket, key, bytes });
    const u = this.#unstored.get(slot);
    if (u) u.latest = seq;
    else {
      this.#unstored.set(slot, { first: seq, latest: seq });
      this.#firsts.push(seq, slot);
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  /** Resolves once every write made before the call is stored (or the store closed). */
  durable(): Promise<void> {
    if (this.#unstored.size === 0 || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ upTo: this.#seq, resolve }));
  }

  /** Stores what is pending while writes may go out (else drops it), then takes no more. */
  async close(): Promise<void> {
    if (!this.opts.mayWrite || this.opts.mayWrite()) await this.durable();
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#dirty.clear();
    this.#unstored.clear();
    this.#firsts.clear();
    this.#notify();
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#closed || this.#dirty.size === 0) return;
    if (this.opts.mayWrite && !this.opts.mayWrite()) return this.#retryLater();
    const batch = [...this.#dirty.entries()];
    this.#dirty.clear();
    for (const [slot, write] of batch) void this.#send(slot, write);
  }

  async #send(slot: string, write: Write): Promise<void> {
    let bytes: Uint8Array | undefined;
    try {
      bytes = write.bytes();
    } catch (err) {
      // a record that cannot be encoded (over the size limit) would fail every time: said once, left out
      this.opts.log(`cannot store ${slot}: ${err instanceof Error ? err.message : String(err)}`);
      return this.#stored(slot, write.seq);
    }
    try {
      if (bytes === undefined) await write.bucket.delete(write.key);
      else await write.bucket.put(write.key, bytes);
    } catch (err) {
      if (this.#closed) return;
      if (this.#failingSince === undefined) {
        this.#failingSince = performance.now();
        this.opts.log(`cannot store ${slot}, trying again every ${this.opts.retryMs ?? 500} ms: ${err instanceof Error ? err.message : String(err)}`);
      }
      // sent again unless a newer value of the key was written meanwhile (sent or waiting): that one stands
      if (this.#unstored.get(slot)?.latest === write.seq && !this.#dirty.has(slot)) this.#dirty.set(slot, write);
      return this.#retryLater();
    }
    this.#stored(slot, write.seq);
  }

  #stored(slot: string, seq: number): void {
    const u = this.#unstored.get(slot);
    if (u && seq >= u.latest) this.#unstored.delete(slot);
    else if (u && seq + 1 > u.first) {
      u.first = seq + 1;
      this.#firsts.push(u.first, slot);
    }
    if (this.#failingSince !== undefined && this.#dirty.size === 0) {
      this.opts.log(`stored again after ${Math.round(performance.now() - this.#failingSince)} ms of failed writes`);
      this.#failingSince = undefined;
    }
    this.#notify();
  }

  #retryLater(): void {
    if (this.#retry !== undefined || this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#flush();
    }, this.opts.retryMs ?? 500);
  }

  /**
   * Resolves the durable() calls no unstored write stands in front of: those made before the oldest
   * unstored sequence, a prefix of #waiters. O(log n) per stored write, amortized. (It used to scan
   * every unstored slot and every waiter per stored write: quadratic once a JetStream outage had let
   * thousands of writes pile up, and ~2% of the GCS's time in bench:pg.)
   */
  #notify(): void {
    const waiters = this.#waiters;
    if (this.#waitersFrom === waiters.length) return;
    const oldest = this.#closed ? Infinity : this.#oldest();
    let i = this.#waitersFrom;
    while (i < waiters.length && waiters[i].upTo < oldest) waiters[i++].resolve();
    if (i === waiters.length) {
      this.#waiters = [];
      this.#waitersFrom = 0;
    } else if (i > 1024 && i * 2 > waiters.length) {
      this.#waiters = waiters.slice(i);
      this.#waitersFrom = 0;
    } else this.#waitersFrom = i;
  }

  /** The smallest `first` of an unstored slot; Infinity when everything is stored. */
  #oldest(): number {
    for (;;) {
      const top = this.#firsts.peek();
      if (top === undefined) return Infinity;
      if (this.#unstored.get(top.slot)?.first === top.first) return top.first;
      this.#firsts.pop();
    }
  }
}

/** A binary min-heap of (first, slot) by `first`. */
class MinHeap {
  #items: { first: number; slot: string }[] = [];

  push(first: number, slot: string): void {
    const items = this.#items;
    const item = { first, slot };
    let i = items.length;
    items.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent].first <= first) break;
      items[i] = items[parent];
      i = parent;
    }
    items[i] = item;
  }

  peek(): { readonly first: number; readonly slot: string } | undefined {
    return this.#items[0];
  }

  pop(): void {
    const items = this.#items;
    const last = items.pop();
    if (last === undefined || items.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= items.length) break;
      const c = l + 1 < items.length && items[l + 1].first < items[l].first ? l + 1 : l;
      if (items[c].first >= last.first) break;
      items[i] = items[c];
      i = c;
    }
    items[i] = last;
  }

  clear(): void {
    this.#items = [];
  }
}
