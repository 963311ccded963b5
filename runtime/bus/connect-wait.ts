import { connectNatsBus, type NatsBusOptions } from './nats-connect.ts';
import { ConnectionFailedError } from './errors.ts';
import type { Bus } from './bus.ts';

/** Pauses between attempts: 250 ms, doubling to 2 s. */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 2000;
/** The longest one attempt may take while waiting (nats.js's own connect timeout). */
const ATTEMPT_TIMEOUT_MS = 5000;

export interface ConnectWait {
  /** How long to keep trying (0: one attempt). */
  readonly waitMs: number;
  /** Called once, after the first attempt failed and before the second, with that failure. */
  onWaiting?(err: ConnectionFailedError): void;
  /** Called once connected, if it took more than one attempt, with the time since the first. */
  onConnected?(afterMs: number): void;
}

/**
 * connectNatsBus, tried again while its failure is transient (no server spoke: refused, timed out, a
 * name not resolving yet) and `waitMs` has not passed. Anything else, or the last transient failure,
 * is thrown as it came (a ConnectionFailedError).
 */
export async function connectNatsBusWaiting(opts: NatsBusOptions, wait: ConnectWait): Promise<Bus> {
  const started = Date.now();
  const deadline = started + wait.waitMs;
  let pauseMs = FIRST_PAUSE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      const left = deadline - Date.now();
      const bus = await connectNatsBus(attempt > 1 ? { ...opts, connectTimeoutMs: Math.max(500, Math.min(opts.connectTimeoutMs ?? ATTEMPT_TIMEOUT_MS, left)) } : opts);
      if (attempt > 1) wait.onConnected?.(Date.now() - started);
      return bus;
    } catch (err) {
      const left = deadline - Date.now();
      if (!(err instanceof ConnectionFailedError && err.transient) || left <= 0) throw err;
      if (attempt === 1) wait.onWaiting?.(err);
      await new Promise((resolve) => setTimeout(resolve, Math.min(pauseMs, left)));
      pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
    }
  }
}
