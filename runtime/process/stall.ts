import { performance } from 'node:perf_hooks';

/**
 * Timers that do not count time their process could not read its sockets.
 *
 * Node.js runs a loop turn's expired timers before it reads its sockets. A process that stalls —
 * frozen (SIGSTOP, a paused VM), in a long garbage collection, or held by a synchronous stretch of
 * its own or of a user's code — therefore meets, as it runs again, every timer that came due
 * meanwhile first and the messages that reached it meanwhile second. A timer that means "nothing
 * came in time" (a request's timeout, a node's heartbeat deadline) then decides on messages that
 * did come in time, unread.
 *
 * So such a timer that fires STALL_MS or more after it was due does not decide yet: it looks again
 * STALL_RECHECK_MS later — after the loop has read what waits on its sockets — and decides at the
 * first look that is on time, or once min(its period, STALL_GRACE_MAX_MS) has passed since the first
 * late one (a process that stays overloaded still decides). A timer that fires on time decides at
 * once, as before: a process that keeps up sees no difference.
 *
 * Users: runtime/bus/request-timer.ts (request timeouts, both buses), runtime/gcs/liveness.ts
 * (node and job heartbeat deadlines), and `stallAwareTimeout` below (a driver's `ready({ timeoutMs })`
 * waits for an actor or a placement group, and a call's deadline while it waits for its actor's
 * restart: runtime/client/restart-gate.ts).
 */
export const STALL_MS = 50;
export const STALL_RECHECK_MS = 10;
export const STALL_GRACE_MAX_MS = 1_000;

/**
 * The rule above, for a timer due at `due` that fired at `now`, of a wait of `periodMs`: 0 to decide
 * now; otherwise the end of the grace to keep, and the timer looks again STALL_RECHECK_MS later.
 * `graceEnd` is what the previous look returned (0 at the first).
 */
export function lookAgain(now: number, due: number, graceEnd: number, periodMs: number): number {
  if (now - due < STALL_MS) return 0;
  const end = graceEnd === 0 ? now + Math.min(periodMs, STALL_GRACE_MAX_MS) : graceEnd;
  return now < end ? end : 0;
}

/**
 * `fn` after `ms`, as setTimeout — but a timer that fires STALL_MS late looks again as above, so a
 * wait whose answer arrived while the process stalled sees it first. Returns what cancels it.
 */
export function stallAwareTimeout(fn: () => void, ms: number): () => void {
  let due = performance.now() + ms;
  let graceEnd = 0;
  const fire = (): void => {
    const now = performance.now();
    graceEnd = lookAgain(now, due, graceEnd, ms);
    if (graceEnd === 0) return fn();
    due = now + STALL_RECHECK_MS;
    timer = setTimeout(fire, STALL_RECHECK_MS);
  };
  let timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
}
