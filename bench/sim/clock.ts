import { performance } from 'node:perf_hooks';

/**
 * A simulated clock for the whole process: while installed, `setTimeout`, `setInterval`, their
 * clear functions, `Date.now()` and `performance.now()` read and schedule on simulated time, which
 * moves only when `advance()` moves it. xstate's default clock calls the global `setTimeout` at each
 * use, so every machine's delays (a node's heartbeat timeout, a create timeout) run on it too.
 *
 * `setImmediate` and promises stay real: the memory bus delivers on `setImmediate`, so messages
 * still flow between two instants, and `settle()` (given to `advance`) runs the process until it is
 * quiet before time moves on. Nothing in the process can then depend on how fast the machine is —
 * the same inputs give the same order of events, the point of the simulator.
 *
 * Timers due at the same instant run in the order they were set (a sequence number breaks ties).
 */
export class SimClock {
  /** Simulated milliseconds since the start of the run. */
  #now = 0;
  readonly #epochMs: number;
  readonly #heap: SimTimer[] = [];
  #seq = 0;
  #cancelled = 0;
  #uninstall: (() => void) | undefined;
  /** Timer callbacks run so far. */
  fired = 0;

  constructor(opts: { epochMs?: number } = {}) {
    // a fixed wall-clock origin, so timestamps in events are the same run after run
    this.#epochMs = opts.epochMs ?? Date.UTC(2026, 0, 1);
  }

  /** Simulated ms since the run started. */
  get now(): number {
    return this.#now;
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.#heap.length;
  }

  install(): void {
    if (this.#uninstall) return;
    const g = globalThis as Record<string, unknown>;
    const saved = {
      setTimeout: g.setTimeout,
      clearTimeout: g.clearTimeout,
      setInterval: g.setInterval,
      clearInterval: g.clearInterval,
      dateNow: Date.now,
      perfNow: performance.now,
    };
    const schedule = (fn: unknown, ms: unknown, args: unknown[], repeat: boolean): SimTimer => {
      if (typeof fn !== 'function') throw new TypeError('The "callback" argument must be of type function');
      const delay = Math.max(1, Math.floor(Number(ms) || 0)); // Node's rule: 0 and less become 1
      const timer = new SimTimer(++this.#seq, this.#now + delay, () => (fn as (...a: unknown[]) => void)(...args), repeat ? delay : undefined);
      this.#push(timer);
      return timer;
    };
    const clear = (handle: unknown): void => {
      if (!(handle instanceof SimTimer) || handle.cancelled) return;
      handle.cancelled = true;
      handle.fn = noop; // what the callback holds is free at once
      // cancelled timers leave the heap when they reach its top; when they are most of it, at once
      if (++this.#cancelled > 1024 && this.#cancelled > this.#heap.length / 2) this.#compact();
    };
    g.setTimeout = (fn: unknown, ms?: unknown, ...args: unknown[]) => schedule(fn, ms, args, false);
    g.setInterval = (fn: unknown, ms?: unknown, ...args: unknown[]) => schedule(fn, ms, args, true);
    g.clearTimeout = clear;
    g.clearInterval = clear;
    Date.now = () => this.#epochMs + this.#now;
    performance.now = () => this.#now;
    this.#uninstall = () => {
      g.setTimeout = saved.setTimeout;
      g.clearTimeout = saved.clearTimeout;
      g.setInterval = saved.setInterval;
      g.clearInterval = saved.clearInterval;
      Date.now = saved.dateNow;
      performance.now = saved.perfNow;
    };
  }

  uninstall(): void {
    this.#uninstall?.();
    this.#uninstall = undefined;
  }

  /**
   * Moves simulated time forward by `ms`, firing every timer due on the way in order; `settle()` runs
   * after each instant that fired something (and once at the start), so what a timer set off is
   * finished before the next timer fires.
   */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    const until = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#peek();
      if (!next || next.at > until) break;
      this.#now = next.at;
      // every timer due at this instant, then let what they started run to quiet
      while (this.#peek()?.at === this.#now) {
        const t = this.#pop()!;
        if (t.cancelled) {
          this.#cancelled--;
          continue;
        }
        if (t.interval !== undefined) {
          t.at = this.#now + t.interval;
          t.seq = ++this.#seq;
          this.#push(t);
        } else {
          t.cancelled = true; // fired (and out of the heap): clearTimeout on it is a no-op
        }
        this.fired++;
        t.fn();
      }
      await settle();
    }
    this.#now = until;
  }

  #peek(): SimTimer | undefined {
    // drop cancelled timers from the top so peek sees the next live one
    while (this.#heap.length && this.#heap[0].cancelled) {
      this.#pop();
      this.#cancelled--;
    }
    return this.#heap[0];
  }

  #compact(): void {
    const live = this.#heap.filter((t) => !t.cancelled);
    this.#heap.length = 0;
    this.#cancelled = 0;
    for (const t of live) this.#push(t);
  }

  #push(t: SimTimer): void {
    const h = this.#heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  #pop(): SimTimer | undefined {
    const h = this.#heap;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

const noop = (): void => {};

function before(a: SimTimer, b: SimTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** What setTimeout returns under the SimClock: Node's Timeout surface that orrery's code uses. */
export class SimTimer {
  cancelled = false;
  constructor(
    public seq: number,
    public at: number,
    public fn: () => void,
    readonly interval: number | undefined,
  ) {}
  unref(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  hasRef(): boolean {
    return true;
  }
  refresh(): this {
    throw new Error('timeout.refresh() is not simulated (nothing on the GCS path uses it)');
  }
  [Symbol.toPrimitive](): number {
    return this.seq;
  }
}
