/**
 * The body of a driver's job heartbeat thread (job-session.ts, "Where the heartbeat runs"): a
 * worker thread with a NATS connection of its own that sends the job's heartbeat every `beatMs`,
 * whatever the driver's main thread is doing, and posts each outcome to it — the answer's bytes, or
 * the error's code. It decides nothing: the main thread reads the answers as it read its own beats'.
 *
 * Messages to the main thread: `{ type: 'ready' }` once connected; `{ type: 'answer', data }`;
 * `{ type: 'error', code }`; `{ type: 'failed', message }` if it could not connect (the main thread
 * then beats itself). From it: `{ type: 'stop' }` (closes the connection and ends the thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Bus } from '../bus/bus.ts';
import { connectNatsBus, type TlsFiles } from '../bus/nats-connect.ts';

export interface BeatThreadData {
  servers: string;
  creds?: string;
  tls?: TlsFiles;
  connectTimeoutMs?: number;
  /** `gcs.<cluster>.job_heartbeat`. */
  subject: string;
  /** The encoded job_heartbeat (the job id and its secret: the same bytes every beat). */
  body: Uint8Array;
  beatMs: number;
}

export type BeatThreadMessage =
  | { type: 'ready' }
  | { type: 'answer'; data: Uint8Array }
  | { type: 'error'; code: string }
  | { type: 'failed'; message: string };

const port = parentPort!;
const data = workerData as BeatThreadData;
const post = (m: BeatThreadMessage): void => port.postMessage(m);

let bus: Bus;
try {
  bus = await connectNatsBus({
    servers: data.servers,
    name: 'orrery-driver-heartbeat',
    ...(data.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: data.connectTimeoutMs }),
    ...(data.creds === undefined ? {} : { creds: data.creds }),
    ...(data.tls === undefined ? {} : { tls: data.tls }),
  });
} catch (err) {
  post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  process.exit(0);
}

let beating = false;
const beat = async (): Promise<void> => {
  if (beating) return;
  beating = true;
  try {
    // a beat waits no longer than the next one, as on the main thread
    const msg = await bus.request(data.subject, data.body, { timeoutMs: data.beatMs });
    post({ type: 'answer', data: msg.data });
  } catch (err) {
    post({ type: 'error', code: (err as { code?: string }).code ?? 'INTERNAL' });
  } finally {
    beating = false;
  }
};
const timer = setInterval(() => void beat(), data.beatMs);
port.on('message', (m: { type?: string }) => {
  if (m?.type !== 'stop') return;
  clearInterval(timer);
  void bus.close().finally(() => port.close());
});
post({ type: 'ready' });
