import type { Subscription } from 'rxjs';
import type { InspectRecord } from '../../protocols/messages/inspect.ts';
import type { Bus } from '../bus/bus.ts';
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
}

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
  /** Stops: takes what the server already delivered, says the watcher is leaving, closes the file. */
  stop(): Promise<{ count: number }>;
}

/** Records the cluster's inspection stream to a trace file until stopped. */
export async function recordTrace(opts: RecordTraceOptions): Promise<TraceRecording> {
  const writer = new TraceWriter(opts.out, { format: TRACE_FORMAT, version: TRACE_VERSION, cluster: opts.cluster, startedAt: (opts.now ?? Date.now)() });
  await writer.opened();
  const publishers = new Set<string>();
  let acked: () => void = () => {};
  const firstAck = new Promise<void>((resolve) => (acked = resolve));
  const sub: Subscription = watchInspection(opts.bus, opts.cluster, {
    intervalMs: opts.intervalMs,
    onAck: (ack) => {
      publishers.add(ack.publisher);
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
        // A round trip to the server: what was published before the stop and already routed to
        // this connection is delivered (and written) before the subscription ends.
        await opts.bus.flush().catch(() => undefined);
        sub.unsubscribe();
        await writer.close();
        return { count: writer.count };
      })()),
  };
}
