import { performance } from 'node:perf_hooks';
import { lookAgain, STALL_RECHECK_MS } from '../process/stall.ts';

/**
 * When each node's heartbeat timeout runs out. A heartbeat only moves the node's deadline (one
 * number written); no timer is touched. Each node has at most one timer, set for the deadline it
 * knew when the timer was set: when it fires and the deadline has moved on, it is set again for the
 * time left; when the deadline has passed, `expired` is told (the GCS then sends the node's machine
 * TIMEOUT, node.machine.ts). So a node costs about one timer per timeout period, not a timer reset
 * per heartbeat — at 5,000 nodes beating every 500 ms that is 10,000 cancelled and re-armed timers a
 * second the GCS no longer pays for (bench/sim, docs/benchmarks.md), and the node is still declared
 * dead at exactly its last heartbeat plus the timeout.
 *
 * After `expired` the node has no timer until it beats again or `restartAll()` (the GCS hears the
 * bus again after an outage: every node gets a fresh window from now).
 *
 * On the system clock a timer that fires late (the GCS stalled: runtime/process/stall.ts) looks again
 * after the loop has read its sockets before it calls `expired`: the heartbeats that arrived during
 * the stall wait there, unread, and so does the lapse of a leader lease that ran out meanwhile
 * (nodes.ts, "node timeouts wait"). Before, a GCS frozen for 3 s in a burst of placement groups
 * declared both its nodes DEAD as it thawed, beating as they were; its node_dead events went nowhere
 * (its lease had lapsed) and the raylets dropped the bundles of every group they held.
 */
export interface LivenessClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemClock: LivenessClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface Watched {
  deadline: number;
  timer: unknown;
  /** Set at the first late look since the deadline last passed: looks stop and `expired` is told then. */
  graceEnd: number;
}

export class Liveness {
  readonly #nodes = new Map<string, Watched>();
  readonly #clock: LivenessClock;

  constructor(
    private readonly opts: {
      timeoutMs: number;
      /** The node's deadline passed with no heartbeat. */
      expired: (nodeId: string) => void;
      /** Default: performance.now and the global timers (xstate's SimulatedClock fits, for specs). */
      clock?: LivenessClock;
      /** Whether a late timer looks again before it expires (above). Default: with the system clock only. */
      stallAware?: boolean;
    },
  ) {
    this.#clock = opts.clock ?? systemClock;
    // an injected clock (xstate's SimulatedClock) fires timers with now() already at the end of the
    // time it was moved by: every timer would look late
    this.#stallAware = opts.stallAware ?? opts.clock === undefined;
  }

  readonly #stallAware: boolean;

  /** Starts (or restarts) a node's window: it has `timeoutMs` from now to beat. */
  watch(nodeId: string): void {
    this.forget(nodeId);
    const entry: Watched = { deadline: this.#clock.now() + this.opts.timeoutMs, timer: undefined, graceEnd: 0 };
    this.#nodes.set(nodeId, entry);
    this.#arm(nodeId, entry, this.opts.timeoutMs);
  }

  /** A heartbeat: the node's window starts again from now. False for a node not watched. */
  beat(nodeId: string): boolean {
    const entry = this.#nodes.get(nodeId);
    if (!entry) return false;
    entry.deadline = this.#clock.now() + this.opts.timeoutMs;
    if (entry.timer === undefined) this.#arm(nodeId, entry, this.opts.timeoutMs);
    return true;
  }

  /** Every node gets a fresh window from now (the GCS could not hear them for a while). */
  restartAll(): void {
    const deadline = this.#clock.now() + this.opts.timeoutMs;
    for (const [nodeId, entry] of this.#nodes) {
      entry.deadline = deadline;
      if (entry.timer === undefined) this.#arm(nodeId, entry, this.opts.timeoutMs);
    }
  }

  forget(nodeId: string): void {
    const entry = this.#nodes.get(nodeId);
    if (!entry) return;
    if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
    this.#nodes.delete(nodeId);
  }

  stop(): void {
    for (const nodeId of [...this.#nodes.keys()]) this.forget(nodeId);
  }

  get size(): number {
    return this.#nodes.size;
  }

  #arm(nodeId: string, entry: Watched, ms: number): void {
    const due = this.#clock.now() + ms;
    entry.timer = this.#clock.setTimeout(() => {
      entry.timer = undefined;
      if (this.#nodes.get(nodeId) !== entry) return;
      const now = this.#clock.now();
      const left = entry.deadline - now;
      if (left > 0) {
        entry.graceEnd = 0;
        return this.#arm(nodeId, entry, left);
      }
      entry.graceEnd = this.#stallAware ? lookAgain(now, due, entry.graceEnd, this.opts.timeoutMs) : 0;
      if (entry.graceEnd !== 0) return this.#arm(nodeId, entry, STALL_RECHECK_MS);
      this.opts.expired(nodeId);
    }, ms);
  }
}
