import { performance } from 'node:perf_hooks';
import { lookAgain, STALL_RECHECK_MS } from '../process/stall.ts';

/**
 * A request's timeout that does not count time its own process could not read (runtime/process/stall.ts).
 * Before, a process that stalled past a request's timeout met the timer first and the answer that had
 * reached its socket meanwhile second: TIMEOUT for a request answered in time, its answer dropped
 * unread. (On real processes: a requester held for 1 s in a message handler, its answer on the socket
 * 200 ms into that second, failed TIMEOUT every time.) A GCS that thawed gave up prepares that had
 * succeeded; a driver whose own code held its loop for a moment saw its calls time out though every
 * answer was there.
 *
 * No closure per request: a bus keeps one timer callback, called with the request's key, and the
 * request's entry holds what the callback needs (the actor call path makes tens of thousands of
 * requests a second).
 */

/** What a waiting request's entry keeps for its timeout. `timer` is replaced each time it looks again, so clearTimeout(entry.timer) always stops the live one. */
export interface TimedRequest {
  timer: NodeJS.Timeout;
  /** When the live timer is due (performance.now()). */
  due: number;
  readonly timeoutMs: number;
  /** Set at the first late look: looks stop then. */
  graceEnd: number;
}

/** Sets `entry.timer`: `onTimer(key)` `timeoutMs` from now. */
export function armRequestTimer(entry: TimedRequest, onTimer: (key: string) => void, key: string): void {
  entry.due = performance.now() + entry.timeoutMs;
  entry.timer = setTimeout(onTimer, entry.timeoutMs, key);
}

/**
 * Called by `onTimer`: whether the request times out now. False when the timer fired late (the
 * process stalled): it was set again, `onTimer(key)` STALL_RECHECK_MS from now, after the loop has
 * read — until a look on time or min(timeout, STALL_GRACE_MAX_MS) after the first late one.
 */
export function timesOutNow(entry: TimedRequest, onTimer: (key: string) => void, key: string): boolean {
  const now = performance.now();
  entry.graceEnd = lookAgain(now, entry.due, entry.graceEnd, entry.timeoutMs);
  if (entry.graceEnd === 0) return true;
  entry.due = now + STALL_RECHECK_MS;
  entry.timer = setTimeout(onTimer, STALL_RECHECK_MS, key);
  return false;
}
