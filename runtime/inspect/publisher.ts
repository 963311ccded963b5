import type { InspectionEvent } from 'xstate';
import { decode, encode } from '../../protocols/codec.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import { MAX_BATCH_RECORDS, MAX_CONTEXT_BYTES, inspectWatch, type InspectRecord } from '../../protocols/messages/inspect.ts';
import { subjects, type ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, BusMsg, Subscription } from '../bus/bus.ts';
import { InspectionMapper, type UnsequencedRecord } from './mapper.ts';
import { batchSubject, watchSubject } from '../../protocols/inspect-subjects.ts';

/** What an xstate actor system offers an inspector (`actor.system`). */
export interface InspectableSystem {
  inspect(observer: (event: InspectionEvent) => void): { unsubscribe(): void };
}

export interface InspectPublisherOptions {
  bus: Bus;
  cluster: string;
  /** Who answers watchers: `gcs:<cluster>`, `raylet:<nodeId>`, `local:<pid>`. */
  name: string;
  /** A watcher not heard from for this long is gone; default 3,000 ms. */
  graceMs?: number;
  /** How often expired watchers are looked for while attached; default 1,000 ms. */
  sweepMs?: number;
  /** Default Date.now (the expiry clock and the records' time). */
  now?: () => number;
  log?: (line: string) => void;
  /** Most records in one inspect_records message; default PUBLISH_BATCH_RECORDS (at most MAX_BATCH_RECORDS). */
  batchRecords?: number;
}

/** Records a publisher puts in one inspect_records message at most (a turn with more sends several). */
export const PUBLISH_BATCH_RECORDS = 256;

export interface InspectPublisherStats {
  /** Whether inspectors are attached to the systems now. */
  attached: boolean;
  /** Watchers heard from within the grace period. */
  watchers: number;
  systems: number;
  /** Times the inspectors were attached, and detached. */
  attachments: number;
  detachments: number;
  /** Watch messages heard (valid ones). */
  watchesHeard: number;
  /** Records published, and records that could not be (encode failure, bad subject token). */
  published: number;
  dropped: number;
  /** Messages the published records went out in (one per record, or one per batch). */
  messages: number;
}

/** `seq` of the records published by this process, across all its publishers. */
let processSeq = 0;

/**
 * Publishes the transitions of the machines of one or more xstate actor systems (the GCS's, a
 * raylet's) — only while someone watches. It listens on `orrery.<cluster>.inspect_watch`; the first
 * watch attaches an inspector to every system (`system.inspect`), answering the watch's reply
 * subject when it has one; the inspectors are detached once no watcher was heard from for `graceMs`
 * (or the last one said it is leaving). With nobody watching no inspector is attached, and xstate's
 * inspection returns at its first check.
 *
 * Records are queued as the machines move and sent once per event-loop turn (setImmediate), or as
 * soon as `batchRecords` are queued: while every watcher said it takes batches, as inspect_records
 * messages of up to `batchRecords` on `orrery.<cluster>.inspect_batch`; otherwise one inspect_record
 * per record on `orrery.<cluster>.inspect.<machine>.<id>`. Either way the records go out in `seq`
 * order.
 */
export class InspectPublisher {
  readonly #bus: Bus;
  readonly #subjects: ClusterSubjects;
  readonly #name: string;
  readonly #graceMs: number;
  readonly #sweepMs: number;
  readonly #now: () => number;
  readonly #log: (line: string) => void;
  readonly #systems = new Map<InspectableSystem, { unsubscribe(): void } | undefined>();
  /** Each watcher heard from: when last, and whether it takes batches. */
  readonly #watchers = new Map<string, { last: number; batches: boolean }>();
  readonly #mapper: InspectionMapper;
  readonly #subjectCache = new Map<string, string>();
  readonly #batchSubject: string;
  readonly #batchRecords: number;
  /** Records not sent yet (this turn's), in seq order. */
  #queue: InspectRecord[] = [];
  #flushing: ReturnType<typeof setImmediate> | undefined;
  #sub: Subscription | undefined;
  #sweep: ReturnType<typeof setInterval> | undefined;
  #attached = false;
  #stats = { attachments: 0, detachments: 0, watchesHeard: 0, published: 0, dropped: 0, messages: 0 };

  constructor(opts: InspectPublisherOptions) {
    this.#bus = opts.bus;
    this.#subjects = subjects(opts.cluster);
    this.#name = opts.name;
    this.#graceMs = opts.graceMs ?? 3000;
    this.#sweepMs = opts.sweepMs ?? 1000;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log ?? (() => {});
    this.#batchSubject = batchSubject(this.#subjects.cluster);
    this.#batchRecords = Math.max(1, Math.min(MAX_BATCH_RECORDS, opts.batchRecords ?? PUBLISH_BATCH_RECORDS));
    this.#mapper = new InspectionMapper({ emit: (r) => this.#queueRecord(r), now: this.#now, maxContextBytes: MAX_CONTEXT_BYTES });
  }

  /** Listens for watchers; returns once the subscription is in place on the server. */
  async start(): Promise<void> {
    if (this.#sub) return;
    this.#sub = this.#bus.subscribe(watchSubject(this.#subjects.cluster), (msg) => this.#heard(msg));
    await this.#bus.flush();
  }

  /** Inspects `system`'s machines from now on (while watched); the returned function stops that. */
  add(system: InspectableSystem): () => void {
    if (!this.#systems.has(system)) this.#systems.set(system, this.#attached ? system.inspect(this.#mapper.observe) : undefined);
    return () => {
      this.#systems.get(system)?.unsubscribe();
      this.#systems.delete(system);
    };
  }

  /** Sends the queued records now rather than at the end of the turn. */
  flush(): void {
    if (this.#flushing !== undefined) {
      clearImmediate(this.#flushing);
      this.#flushing = undefined;
    }
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    if (this.#everyWatcherTakesBatches()) {
      for (let i = 0; i < queue.length; i += this.#batchRecords) this.#publishBatch(queue.slice(i, i + this.#batchRecords));
    } else {
      for (const record of queue) this.#publishOne(record);
    }
  }

  /** Stops listening and detaches every inspector (what was queued is sent first). */
  stop(): void {
    this.#sub?.unsubscribe();
    this.#sub = undefined;
    this.#watchers.clear();
    this.#detach();
  }

  get attached(): boolean {
    return this.#attached;
  }

  stats(): InspectPublisherStats {
    return { attached: this.#attached, watchers: this.#watchers.size, systems: this.#systems.size, ...this.#stats };
  }

  /** Forgets watchers not heard from for the grace period; detaches when none is left. Runs every `sweepMs` while attached. */
  sweep(): void {
    const now = this.#now();
    for (const [watcher, { last }] of this.#watchers) if (now - last >= this.#graceMs) this.#watchers.delete(watcher);
    if (this.#watchers.size === 0) this.#detach();
  }

  #heard(msg: BusMsg): void {
    let watcher: string;
    let leaving: boolean;
    let batches: boolean;
    try {
      const decoded = decode(msg.data);
      if (decoded.type !== 'inspect_watch') throw new Error(`a ${decoded.type} message`);
      const body = inspectWatch(decoded.body, '');
      watcher = body.watcher;
      leaving = body.leaving === true;
      batches = body.batches === true;
    } catch (err) {
      this.#log(`inspection: ignored a malformed watch: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    this.#stats.watchesHeard++;
    if (leaving) {
      this.#watchers.delete(watcher);
      if (this.#watchers.size === 0) this.#detach();
      return;
    }
    // What is queued goes out first: before a watcher that takes no batches is counted (those
    // records go out the way the others read them), and before the acknowledgement, so a watcher
    // that has it has every record of the transitions before its watch was heard.
    this.flush();
    this.#watchers.set(watcher, { last: this.#now(), batches });
    this.#attach();
    if (msg.reply) msg.respond(encode('inspect_ack', { publisher: this.#name, attached: true }));
  }

  #attach(): void {
    if (this.#attached) return;
    this.#attached = true;
    this.#stats.attachments++;
    for (const system of this.#systems.keys()) this.#systems.set(system, system.inspect(this.#mapper.observe));
    this.#sweep = setInterval(() => this.sweep(), this.#sweepMs);
    this.#sweep.unref?.();
  }

  #detach(): void {
    if (!this.#attached) return;
    this.flush();
    this.#attached = false;
    this.#stats.detachments++;
    for (const [system, sub] of this.#systems) {
      sub?.unsubscribe();
      this.#systems.set(system, undefined);
    }
    clearInterval(this.#sweep);
    this.#sweep = undefined;
  }

  #everyWatcherTakesBatches(): boolean {
    if (this.#watchers.size === 0) return true; // the last one just left: nobody reads either form
    for (const { batches } of this.#watchers.values()) if (!batches) return false;
    return true;
  }

  #queueRecord(partial: UnsequencedRecord): void {
    const record = partial as InspectRecord; // the mapper's own new object: numbered in place, not copied
    record.seq = processSeq++;
    this.#queue.push(record);
    if (this.#queue.length >= this.#batchRecords) this.flush();
    else this.#flushing ??= setImmediate(() => {
      this.#flushing = undefined;
      this.flush();
    });
  }

  #publishOne(record: InspectRecord): void {
    try {
      const key = `${record.machine}\u0000${record.id}`;
      let subject = this.#subjectCache.get(key);
      if (subject === undefined) {
        subject = this.#subjects.inspect(record.machine, record.id);
        if (this.#subjectCache.size > 10_000) this.#subjectCache.clear();
        this.#subjectCache.set(key, subject);
      }
      this.#bus.publish(subject, encode('inspect_record', record));
      this.#stats.published++;
      this.#stats.messages++;
    } catch (err) {
      this.#drop(record, err);
    }
  }

  /** One inspect_records message; one too large for a message is halved until it fits. */
  #publishBatch(records: InspectRecord[]): void {
    let bytes: Uint8Array;
    try {
      bytes = encode('inspect_records', { publisher: this.#name, records });
    } catch (err) {
      if (records.length > 1 && err instanceof ProtocolError && err.code === 'TOO_LARGE') {
        const half = Math.ceil(records.length / 2);
        this.#publishBatch(records.slice(0, half));
        this.#publishBatch(records.slice(half));
      } else {
        for (const record of records) this.#drop(record, err);
      }
      return;
    }
    try {
      this.#bus.publish(this.#batchSubject, bytes);
      this.#stats.published += records.length;
      this.#stats.messages++;
    } catch (err) {
      for (const record of records) this.#drop(record, err);
    }
  }

  #drop(record: InspectRecord, err: unknown): void {
    if (this.#stats.dropped++ === 0) this.#log(`inspection: cannot publish a ${record.machine} record: ${err instanceof Error ? err.message : String(err)}`);
  }
}


/** False when ORRERY_INSPECT is `off`, `0`, `false` or `no`: the process leaves inspection out entirely. */
export function inspectionEnabled(env: NodeJS.ProcessEnv): boolean {
  const value = env.ORRERY_INSPECT?.trim().toLowerCase();
  return !(value === 'off' || value === '0' || value === 'false' || value === 'no');
}
