import { randomBytes } from 'node:crypto';
import type { Subscription } from 'rxjs';
import { decode, encode } from '../../protocols/codec.ts';
import type { InspectRecord } from '../../protocols/messages/inspect.ts';
import type { Bus } from '../bus/bus.ts';
import { ackSubject, watchSubject } from '../../protocols/inspect-subjects.ts';
import { TRACE_FORMAT, TRACE_VERSION, TraceWriter } from './trace-file.ts';
import { watchInspection } from './watch.ts';

export interface RecordTraceOptions {
  bus: Bus;
  cluster: string;
  /** The trace file to write (replaced if it exists). */
  out: string;
  /** Called with each record once it is handed to the file (written with the rest of its turn). */
  onRecord?: (record: InspectRecord) => void;
  /** How often the recorder announces itself; default 1,000 ms. */
  intervalMs?: number;
  /** Default Date.now (the header's startedAt). */
  now?: () => number;
  /** How long stop() waits for the publishers to send what they hold; default 1,000 ms. */
  stopTimeoutMs?: number;
}

/** A publisher that acknowledged within this long is expected to answer when the recording stops. */
const RECENT_ACK_MS = 2500;

export interface TraceRecording {
  /** Records written so far. */
  readonly count: number;
  /** The publishers that acknowledged the recorder (`gcs:<cluster>`, `raylet:<nodeId>`, …). */
  readonly publishers: ReadonlySet<string>;
  /**
   * Resolves true once the first publisher acknowledged (it is publishing), false when none did
   * within `timeoutMs` (nothing is running yet, or no process of the cluster publishes inspection).
   */
  ready(timeoutMs?: number): Promise<boolean>;
  /**
   * Stops: asks every publisher heard from lately to send what it holds and waits for their answers
   * (so the transitions before the stop are in the file — a publisher sends records at the end of
   * its event-loop turn), says the watcher is leaving, closes the file.
   */
  stop(): Promise<{ count: number }>;
}

/** Records the cluster's inspection stream to a trace file until stopped. */
export async function recordTrace(opts: RecordTraceOptions): Promise<TraceRecording> {
  const writer = new TraceWriter(opts.out, { format: TRACE_FORMAT, version: TRACE_VERSION, cluster: opts.cluster, startedAt: (opts.now ?? Date.now)() });
  await writer.opened();
  const publishers = new Set<string>();
  const lastAck = new Map<string, number>();
  let acked: () => void = () => {};
  const firstAck = new Promise<void>((resolve) => (acked = resolve));
  const watcher = randomBytes(8).toString('hex');
  const sub: Subscription = watchInspection(opts.bus, opts.cluster, {
    watcher,
    intervalMs: opts.intervalMs,
    onAck: (ack) => {
      publishers.add(ack.publisher);
      lastAck.set(ack.publisher, Date.now());
      acked();
    },
  }).subscribe((record) => {
    writer.write(record);
    opts.onRecord?.(record);
  });
  let stopped: Promise<{ count: number }> | undefined;
  return {
    get count() {
      return writer.count;
    },
    publishers,
    ready: (timeoutMs = 2000) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        void firstAck.then(() => {
          clearTimeout(timer);
          resolve(true);
        });
      }),
    stop: () =>
      (stopped ??= (async () => {
        const recent = [...lastAck].filter(([, at]) => Date.now() - at < RECENT_ACK_MS).map(([name]) => name);
        await caughtUp(opts.bus, opts.cluster, watcher, new Set(recent), opts.stopTimeoutMs ?? 1000);
        // A round trip to the server: what was published before the stop and already routed to
        // this connection is delivered (and written) before the subscription ends.
        await opts.bus.flush().catch(() => undefined);
        sub.unsubscribe();
        await writer.close();
        return { count: writer.count };
      })()),
  };
}

/**
 * Announces the watcher once more, with a reply subject of its own, and resolves once each of
 * `expected` answered (or after `timeoutMs`). A publisher sends the records it holds before it
 * answers, on the same connection, so once its answer is here so are its records.
 */
function caughtUp(bus: Bus, cluster: string, watcher: string, expected: Set<string>, timeoutMs: number): Promise<void> {
  if (expected.size === 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const reply = ackSubject(cluster, `${watcher}-stop`);
    let answers: { unsubscribe(): void } = { unsubscribe: () => {} };
    const done = (): void => {
      clearTimeout(timer);
      answers.unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    try {
      answers = bus.subscribe(reply, (msg) => {
        try {
          const decoded = decode(msg.data);
          if (decoded.type !== 'inspect_ack') return;
          expected.delete(decoded.body.publisher);
          if (expected.size === 0) done();
        } catch {
          // not an answer
        }
      });
      bus.publish(watchSubject(cluster), encode('inspect_watch', { watcher, batches: true }), { reply });
    } catch {
      done(); // the bus is closed: nobody can answer
    }
  });
}
