/**
 * A clock for units that take `{ now, setTimer, clearTimer }` (runtime/raylet/fence.ts,
 * runtime/worker/lease-watchdog.ts): time moves only when a spec calls advance(), which fires the
 * timers that fall due, in order.
 */
export class ManualClock {
  #now = 0;
  #next = 1;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  now = (): number => this.#now;

  setTimer = (fn: () => void, ms: number): unknown => {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return id;
  };

  clearTimer = (timer: unknown): void => {
    this.#timers.delete(timer as number);
  };

  /** Timers waiting to fire. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves time on by `ms` without firing anything, as a process whose event loop is held sees it:
   * the timers that fell due meanwhile fire late, at the next advance().
   */
  stall(ms: number): void {
    this.#now += ms;
  }

  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].at <= until && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = Math.max(this.#now, due[1].at);
      due[1].fn();
    }
    this.#now = until;
  }
}
