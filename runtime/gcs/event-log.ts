import { DEFAULT_MAX_BYTES, encodedSize } from '../../protocols/codec.ts';
import type { ClusterEventWire, RecentEventsWire } from '../../protocols/messages/cluster.ts';
import { PAGE_OVERHEAD_BYTES } from './paging.ts';

/**
 * The GCS's recent events: a ring of the last `capacity` events it published, each numbered with a
 * `seq` that grows by one per event (and across a GCS restart jumps ahead to the mark the last GCS
 * stored, at most RESERVED_SEQS: see `reserve`; `omitted` counts the numbers skipped so with the
 * events an earlier GCS published). `orrery events` reads it through `gcs.list_events` (what
 * happened before the command ran), then follows `events.>` and skips what it already printed by
 * seq. A reply is kept under `maxReplyBytes` (the ring can hold far more than one NATS message),
 * measured as the events' encoded size: in the default (tail) query the newest events win and
 * `omitted` counts what was left out; a `fromOldest` query is a page — the oldest events after
 * `afterSeq`, and `next` to ask for the rest — so a reader can walk the whole ring.
 */
export const DEFAULT_EVENT_HISTORY = 10_000;
/** nats-server's default max_payload (1 MiB), less room for the envelope and the reply's other fields. */
const DEFAULT_MAX_REPLY_BYTES = DEFAULT_MAX_BYTES - PAGE_OVERHEAD_BYTES;

export interface EventQuery {
  readonly types?: readonly string[];
  readonly afterSeq?: number;
  readonly limit?: number;
  readonly fromOldest?: boolean;
}

export interface EventLogOptions {
  /** Largest list_events reply; default under 1 MiB. */
  maxReplyBytes?: number;
  /**
   * Seqs up to here may have been used before this log (a restarted GCS goes on from the mark its
   * store kept: see `reserve`); default 0.
   */
  firstSeq?: number;
  /**
   * Told a mark, once when the log is made and again whenever half of the seqs it covers are used:
   * every seq this log hands out stays at or below the last mark it told, so a GCS that keeps the
   * mark in its store and starts again from it never hands out a seq twice. The mark runs
   * RESERVED_SEQS ahead, so it is stored well before the events it covers go out, and the store
   * takes one write per 500 events. (A write per event, as before, followed its event: a GCS killed
   * between the two numbered the next events from the old value again, and cost a JetStream write
   * and its acknowledgement per turn that published anything.)
   */
  reserve?: (upTo: number) => void;
}

/** How far ahead of the newest seq the stored mark runs; a restarted GCS skips at most this many. */
export const RESERVED_SEQS = 1_000;

export class EventLog {
  readonly #ring: (ClusterEventWire | undefined)[];
  readonly #reserve: ((upTo: number) => void) | undefined;
  /** The last mark told to `reserve` (or the first seq): no seq above it is handed out before a new mark is told. */
  #reservedUpTo: number;
  readonly maxReplyBytes: number;
  #next = 0;
  #seq: number;
  /** Events appended to this log (seqs before firstSeq were an earlier GCS's). */
  #appended = 0;

  constructor(
    readonly capacity = DEFAULT_EVENT_HISTORY,
    opts: EventLogOptions = {},
  ) {
    this.#ring = new Array<ClusterEventWire | undefined>(capacity);
    this.maxReplyBytes = opts.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.#seq = opts.firstSeq ?? 0;
    this.#reservedUpTo = this.#seq;
    this.#reserve = opts.reserve;
    // the first mark is told before the first event, so it is stored (normally) before one goes out
    if (this.#reserve !== undefined) this.#reserve((this.#reservedUpTo = this.#seq + RESERVED_SEQS));
  }

  /** The seq of the newest event (0 before the first). */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Numbers the event, keeps it (dropping the oldest when full) and returns it with its seq. */
  append(event: Omit<ClusterEventWire, 'seq'>): ClusterEventWire {
    const seq = ++this.#seq;
    if (this.#reserve !== undefined && seq > this.#reservedUpTo - RESERVED_SEQS / 2) this.#reserve((this.#reservedUpTo = seq + RESERVED_SEQS));
    // not `{ ...event, seq }`: that gives every event a hidden class of its own on Node.js 20 (docs/benchmarks.md, "Object spreads on Node.js 20")
    const numbered = Object.assign({}, event, { seq }) as ClusterEventWire;
    this.#appended++;
    this.#ring[this.#next] = numbered;
    this.#next = (this.#next + 1) % this.capacity;
    return numbered;
  }

  /** The newest matching events after `afterSeq`, oldest first, within the limit and the byte budget. */
  query(q: EventQuery): RecentEventsWire {
    if (q.fromOldest) return this.#page(q);
    const types = q.types && q.types.length > 0 ? new Set(q.types) : undefined;
    const after = q.afterSeq ?? 0;
    const limit = q.limit ?? this.capacity;
    const picked: ClusterEventWire[] = [];
    let omitted = 0;
    let bytes = 0;
    // newest first, so the limit and the budget keep the latest events
    for (let i = 1; i <= this.capacity; i++) {
      const event = this.#ring[(this.#next - i + this.capacity) % this.capacity];
      if (event === undefined || event.seq! <= after) break;
      if (types && !types.has(event.type)) continue;
      if (picked.length >= limit) {
        omitted++;
        continue;
      }
      const size = encodedSize(event);
      if (bytes + size > this.maxReplyBytes) {
        omitted++;
        continue;
      }
      bytes += size;
      picked.push(event);
    }
    // events after `afterSeq` that the ring no longer holds
    const oldestHeld = this.#seq - Math.min(this.#appended, this.capacity) + 1;
    if (types === undefined && after + 1 < oldestHeld) omitted += oldestHeld - after - 1;
    return { events: picked.reverse(), lastSeq: this.#seq, omitted };
  }

  /** A page: the oldest matching events after `afterSeq`, `next` when more follow; always one event while any remain. */
  #page(q: EventQuery): RecentEventsWire {
    const types = q.types && q.types.length > 0 ? new Set(q.types) : undefined;
    const after = q.afterSeq ?? 0;
    const limit = q.limit ?? this.capacity;
    const held = Math.min(this.#appended, this.capacity);
    const oldestHeld = this.#seq - held + 1;
    const events: ClusterEventWire[] = [];
    let bytes = 0;
    // seq s sits at ring slot (s - firstSeq - 1) % capacity
    const first = this.#seq - this.#appended;
    for (let seq = Math.max(after + 1, oldestHeld); seq <= this.#seq; seq++) {
      const event = this.#ring[(seq - first - 1) % this.capacity]!;
      if (types && !types.has(event.type)) continue;
      const size = encodedSize(event);
      if (events.length >= limit || (events.length > 0 && bytes + size > this.maxReplyBytes)) {
        return { events, lastSeq: this.#seq, omitted: this.#gap(after, oldestHeld, types), next: events.at(-1)!.seq! };
      }
      bytes += size;
      events.push(event);
    }
    return { events, lastSeq: this.#seq, omitted: this.#gap(after, oldestHeld, types) };
  }

  /** Events after `after` the ring no longer holds (countable only without a type filter). */
  #gap(after: number, oldestHeld: number, types: Set<string> | undefined): number {
    return types === undefined && after + 1 < oldestHeld ? oldestHeld - after - 1 : 0;
  }
}
