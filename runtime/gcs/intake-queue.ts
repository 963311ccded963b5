import { OrreryError } from '../../lib/errors.ts';

/**
 * Requests whose handling is heavy (register_actor: options compiled, a placement decided and
 * explained, a machine started, events published) wait here and run in arrival order, in slices of
 * at most `sliceMs` with a turn of the event loop between slices. NATS hands the GCS every message
 * that arrived in one read before anything else runs, so without this a burst of registrations would
 * hold a cheap query (`nodes()`) behind all of them; with it the query is answered between slices.
 */
interface Job {
  run: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class IntakeQueue {
  /** Jobs from `#head` on are waiting; those before it ran and are cleared, so nothing they hold is kept. */
  #jobs: (Job | undefined)[] = [];
  #head = 0;
  #immediate: NodeJS.Immediate | undefined;
  #stopped = false;

  constructor(private readonly opts: { sliceMs: number; now?: () => number }) {}

  /** Runs `fn` after every job queued before it; resolves with its result. */
  run<T>(fn: () => T): Promise<T> {
    if (this.#stopped) return Promise.reject(stopping());
    return new Promise<T>((resolve, reject) => {
      this.#jobs.push({ run: fn, resolve: resolve as (v: unknown) => void, reject });
      this.#immediate ??= setImmediate(() => this.#slice());
    });
  }

  get size(): number {
    return this.#jobs.length - this.#head;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    for (const job of this.#jobs.slice(this.#head)) job?.reject(stopping());
    this.#jobs = [];
    this.#head = 0;
  }

  #slice(): void {
    this.#immediate = undefined;
    const now = this.opts.now ?? Date.now;
    const until = now() + this.opts.sliceMs;
    while (this.#head < this.#jobs.length && !this.#stopped) {
      const job = this.#jobs[this.#head]!;
      this.#jobs[this.#head++] = undefined;
      try {
        job.resolve(job.run());
      } catch (err) {
        job.reject(err);
      }
      if (now() >= until) break;
    }
    if (this.#head >= this.#jobs.length) {
      this.#jobs = [];
      this.#head = 0;
    } else {
      // a backlog that never empties (requests arriving about as fast as they run) must not grow the
      // array by every job that ever ran: the waiting ones move to the front once they are the minority
      if (this.#head > 1024 && this.#head * 2 > this.#jobs.length) {
        this.#jobs = this.#jobs.slice(this.#head);
        this.#head = 0;
      }
      if (!this.#stopped) this.#immediate = setImmediate(() => this.#slice());
    }
  }
}

function stopping(): OrreryError {
  return new OrreryError('GCS_STOPPING', 'the GCS is stopping and takes no new nodes or actors');
}

/**
 * For a long loop inside a handler (a finished job's thousands of groups or actors): the returned
 * function answers a promise that resolves on the next turn of the event loop (setImmediate) once
 * `sliceMs` have passed since the last one, and undefined before — `const p = breathe(); if (p) await p;`.
 * Heartbeats, lease renewals and cheap queries are served between slices, as IntakeQueue does for
 * registrations.
 */
export function slicer(sliceMs: number, now: () => number = () => performance.now()): () => Promise<void> | undefined {
  let since = now();
  return () => {
    if (now() - since < sliceMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = now();
        resolve();
      }),
    );
  };
}
