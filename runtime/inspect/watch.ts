import { randomBytes } from 'node:crypto';
import type { Observable } from 'rxjs';
import { decode, encode } from '../../protocols/codec.ts';
import type { InspectAck, InspectRecord } from '../../protocols/messages/inspect.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import { rx } from '../rx.ts';
import { ackSubject, batchSubject, watchSubject } from '../../protocols/inspect-subjects.ts';

export interface WatchOptions {
  /** How often the watcher announces itself; default 1,000 ms (publishers forget a watcher after 3 s). */
  intervalMs?: number;
  /** This watcher's id (a subject token); default 16 random hex characters. */
  watcher?: string;
  /** Each publisher's acknowledgement: it has attached its inspectors (first watch, then once per announcement). */
  onAck?: (ack: InspectAck) => void;
  /** A message on an inspection subject that is not a valid record or batch (it is skipped, whole). */
  onInvalid?: (error: unknown, subject: string) => void;
  /**
   * Take the records as batches (inspect_records on `orrery.<cluster>.inspect_batch`, one message
   * per publisher and event-loop turn) where publishers can; default true. Records come out one by
   * one either way; false makes publishers send one inspect_record per transition on
   * `inspect.<machine>.<id>` (what a subscriber of one machine instance's subject needs).
   */
  batches?: boolean;
}

/**
 * Every inspection record of `cluster`, as published (docs/inspection.md). Subscribing subscribes
 * `orrery.<cluster>.inspect.>` (and `orrery.<cluster>.inspect_batch`, unless `batches: false`) and
 * then announces the watcher on `inspect_watch` at once and every `intervalMs`, with a reply
 * subject the publishers acknowledge on (`onAck`), so publishing starts on the first announcement
 * and a caller can tell when it has. Unsubscribing says the watcher is
 * leaving and unsubscribes; publishers detach once no watcher is left. Records arrive in each
 * publisher's order; records of different processes interleave as the server delivers them. The
 * stream completes when the bus closes.
 */
export function watchInspection(bus: Bus, cluster: string, opts: WatchOptions = {}): Observable<InspectRecord> {
  const s = subjects(cluster);
  const watch = watchSubject(cluster);
  return new (rx().Observable)<InspectRecord>((subscriber) => {
    const watcher = opts.watcher ?? randomBytes(8).toString('hex');
    const acks = ackSubject(cluster, watcher);
    const records = bus.subscribe(s.allInspect(), (msg) => {
      let record: InspectRecord;
      try {
        const decoded = decode(msg.data);
        if (decoded.type !== 'inspect_record') throw new Error(`expected an inspect_record, got ${decoded.type}`);
        record = decoded.body as InspectRecord; // decode validated it
      } catch (err) {
        opts.onInvalid?.(err, msg.subject);
        return;
      }
      subscriber.next(record);
    });
    const batches = opts.batches === false ? undefined : bus.subscribe(batchSubject(cluster), (msg) => {
      let records: InspectRecord[];
      try {
        const decoded = decode(msg.data);
        if (decoded.type !== 'inspect_records') throw new Error(`expected an inspect_records, got ${decoded.type}`);
        records = decoded.body.records as InspectRecord[]; // decode validated it
      } catch (err) {
        opts.onInvalid?.(err, msg.subject);
        return;
      }
      for (const record of records) subscriber.next(record);
    });
    const ackSub = bus.subscribe(acks, (msg) => {
      try {
        const decoded = decode(msg.data);
        if (decoded.type === 'inspect_ack') opts.onAck?.(decoded.body);
      } catch (err) {
        opts.onInvalid?.(err, msg.subject);
      }
    });
    const announce = (leaving = false): void => {
      try {
        const body = leaving ? { watcher, leaving: true as const } : batches ? { watcher, batches: true as const } : { watcher };
        bus.publish(watch, encode('inspect_watch', body), leaving ? undefined : { reply: acks });
      } catch (err) {
        if (!leaving) subscriber.error(err);
      }
    };
    announce();
    const timer = setInterval(() => announce(), opts.intervalMs ?? 1000);
    timer.unref?.();
    void bus.closed.then(() => subscriber.complete());
    return () => {
      clearInterval(timer);
      announce(true);
      records.unsubscribe();
      batches?.unsubscribe();
      ackSub.unsubscribe();
    };
  });
}
