/**
 * What a process says about the messages it refuses, per code: the first one in full, then — while
 * more keep coming — one line per interval with how many there were. A peer that sends garbage in a
 * loop can neither flood the log (one line per code per interval, whatever the rate) nor hide in it
 * (a storm that starts an hour after the first refusal is still reported). Counting is the caller's.
 */
export interface RejectionLogOptions {
  /** Default 60,000 ms. */
  intervalMs?: number;
  now?: () => number;
  /** Arms the summary at the end of an interval; default an unref'd setTimeout. */
  setTimer?: (fn: () => void, ms: number) => { cancel(): void };
}

interface CodeWindow {
  /** When the current interval of this code began. */
  since: number;
  /** Refusals of this code not logged since `since`. */
  quiet: number;
  timer?: { cancel(): void };
}

export class RejectionLog {
  readonly #windows = new Map<string, CodeWindow>();
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #setTimer: NonNullable<RejectionLogOptions['setTimer']>;

  constructor(private readonly what: string, private readonly log: (line: string) => void, opts: RejectionLogOptions = {}) {
    this.#intervalMs = opts.intervalMs ?? 60_000;
    this.#now = opts.now ?? Date.now;
    this.#setTimer =
      opts.setTimer ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        t.unref?.();
        return { cancel: () => clearTimeout(t) };
      });
  }

  /** One refusal of `code`; `line` is what is logged about the first one. */
  note(code: string, line: string): void {
    const w = this.#windows.get(code);
    // the first of a code, or the first after a whole interval without any: said in full
    if (w === undefined || (w.quiet === 0 && this.#now() - w.since >= this.#intervalMs)) {
      this.#windows.set(code, { since: this.#now(), quiet: 0 });
      this.log(`${line} (more ${code} are counted, and summed up every ${this.#seconds()} s while they come)`);
      return;
    }
    w.quiet++;
    w.timer ??= this.#setTimer(() => this.#summarize(code), Math.max(0, w.since + this.#intervalMs - this.#now()));
  }

  /** Ends the intervals: any summary still owed is logged now. */
  flush(): void {
    for (const code of [...this.#windows.keys()]) this.#summarize(code);
  }

  #summarize(code: string): void {
    const w = this.#windows.get(code);
    if (w === undefined) return;
    w.timer?.cancel();
    w.timer = undefined;
    if (w.quiet === 0) return;
    const secs = Math.max(1, Math.round((this.#now() - w.since) / 1000));
    this.log(`${this.what}: ${w.quiet} more ${code} in the last ${secs} s`);
    // the next interval starts now; its first refusal is summed up with the rest of it
    w.since = this.#now();
    w.quiet = 0;
  }

  #seconds(): number {
    return Math.round(this.#intervalMs / 1000);
  }
}
