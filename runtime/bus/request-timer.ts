import { performance } from 'node:perf_hooks';
import { STALL_GRACE_MAX_MS, STALL_MS, STALL_RECHECK_MS } from '../process/stall.ts';

/**
 * A request's timeout that does not count time its own process could not read (runtime/process/stall.ts).
 * Before, a process that stalled past a request's timeout met the timer first and the answer that had
 * reached its socket meanwhile second: TIMEOUT for a request answered in time, its answer dropped
 * unread. (On real processes: a requester held for 1 s in a message handler, its answer on the socket
 * 200 ms into that second, failed TIMEOUT every time.) A GCS that thawed gave up prepares that had
 * succeeded; a driver whose own code held its loop for a moment saw its calls time out though every
 * answer was there.
 */

/** A waiting request's timer; replaced each time the timer looks again, so clearTimeout(entry.timer) always stops the live one. */
export interface TimedRequest {
  timer: NodeJS.Timeout;
}

/** Sets `entry.timer` to call `expire` `timeoutMs` from now, or later after a stall (runtime/process/stall.ts). */
export function armRequestTimer(entry: TimedRequest, timeoutMs: number, expire: () => void): void {
  let due = performance.now() + timeoutMs;
  let graceEnd = 0;
  const fire = (): void => {
    const now = performance.now();
    if (now - due >= STALL_MS) {
      if (graceEnd === 0) graceEnd = now + Math.min(timeoutMs, STALL_GRACE_MAX_MS);
      if (now < graceEnd) {
        due = now + STALL_RECHECK_MS;
        entry.timer = setTimeout(fire, STALL_RECHECK_MS);
        return;
      }
    }
    expire();
  };
  entry.timer = setTimeout(fire, timeoutMs);
}
