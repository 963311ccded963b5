import { OrreryError } from '../../lib/errors.ts';
import type { ObjectBucket } from '../bus/objects.ts';

/**
 * Removes from the code store (docs/code-shipping.md) the chunks no bundle names: what an upload
 * cut off midway left — the driver killed, or the NATS server gone before the upload could clean up
 * after itself — and anything written there by hand. Nothing reads them; without this they stay in
 * the store's stream for good, up to a bundle's size per failed upload.
 *
 * An upload that is still running has no name yet either (its name is written after its last
 * chunk). So a chunk set is removed only once it has been seen unnamed, with the same number of
 * chunks, for `graceMs`: an upload writes a chunk at least every few seconds (each waits at most
 * 10 s for JetStream's acknowledgement) and its name right after the last, so a set unchanged for
 * minutes belongs to an upload that will never finish. The bucket checks the names once more just
 * before it removes anything (nats-obj.ts).
 *
 * Only the GCS that serves runs it (the leader, under its lease: `valid`), and what it remembers is
 * in memory: a GCS that takes over starts the count again, which only delays a removal.
 */
export interface CodeSweepOptions {
  /** The code store, or undefined when there is none (no JetStream): nothing to do. */
  readonly bucket: () => Promise<ObjectBucket | undefined>;
  /** How long a chunk set must stay unnamed and unchanged before it goes; 0 turns sweeping off. */
  readonly graceMs: number;
  /** Whether this GCS may act now (holds its lease); a sweep while it may not does nothing. */
  readonly valid?: () => boolean;
  readonly log: (line: string) => void;
  readonly now?: () => number;
}

/** Default `--code-sweep-ms`: ten minutes. */
export const DEFAULT_CODE_SWEEP_MS = 600_000;
/**
 * The shortest grace `--code-sweep-ms` takes (besides 0, off). A grace shorter than a running upload
 * can pause between two chunks (each waits up to 10 s for its acknowledgement; a driver frozen in a
 * debugger waits longer) could remove chunks that upload still names once it finishes; values
 * under a minute are for tests.
 */
export const MIN_CODE_SWEEP_MS = 1000;

/** How often to look: a quarter of the grace, between 250 ms and a minute. */
export function sweepIntervalMs(graceMs: number): number {
  return Math.min(60_000, Math.max(250, Math.floor(graceMs / 4)));
}

export interface SweepResult {
  /** Chunk sets unnamed at this look. */
  readonly unnamed: number;
  /** Chunk sets removed, and the chunks they held. */
  readonly removedSets: number;
  readonly removedChunks: number;
}

export class CodeStoreSweeper {
  readonly #opts: CodeSweepOptions;
  readonly #now: () => number;
  /** Each unnamed chunk set: its chunk count when first seen so, and since when. */
  readonly #seen = new Map<string, { chunks: number; since: number }>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;
  /** The last failure said, so an outage is one line, not one per look. */
  #failing: string | undefined;

  constructor(opts: CodeSweepOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? (() => performance.now());
  }

  /** Looks every sweepIntervalMs(graceMs) until stop(); does nothing when graceMs is 0. */
  start(): void {
    if (this.#opts.graceMs <= 0 || this.#stopped) return;
    const every = sweepIntervalMs(this.#opts.graceMs);
    const next = (): void => {
      this.#timer = setTimeout(() => {
        this.#running = this.sweep().finally(() => {
          this.#running = undefined;
          if (!this.#stopped) next();
        });
      }, every);
      this.#timer.unref();
    };
    next();
  }

  /** Stops looking; resolves once a look under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One look: notes the unnamed chunk sets and removes those unchanged for the grace. Never throws. */
  async sweep(): Promise<SweepResult> {
    const none = { unnamed: 0, removedSets: 0, removedChunks: 0 };
    if (this.#opts.valid && !this.#opts.valid()) return none;
    try {
      const bucket = await this.#opts.bucket();
      if (!bucket?.unnamedChunks || !bucket.removeChunks) return none;
      const unnamed = await bucket.unnamedChunks();
      const now = this.#now();
      const due: string[] = [];
      for (const id of this.#seen.keys()) if (!unnamed.has(id)) this.#seen.delete(id);
      for (const [id, chunks] of unnamed) {
        const seen = this.#seen.get(id);
        if (seen === undefined || seen.chunks !== chunks) this.#seen.set(id, { chunks, since: now });
        else if (now - seen.since >= this.#opts.graceMs) due.push(id);
      }
      let removedChunks = 0;
      if (due.length > 0) {
        if (this.#opts.valid && !this.#opts.valid()) return { ...none, unnamed: unnamed.size };
        // asked before each set: a GCS frozen in the middle wakes without its lease and stops there
        // (a standby may lead by then, and it keeps its own count)
        removedChunks = await bucket.removeChunks(due, this.#opts.valid);
        for (const id of due) this.#seen.delete(id);
        if (this.#opts.valid && !this.#opts.valid()) {
          this.#opts.log(`code store ${bucket.name}: removal stopped partway, after ${removedChunks} chunk(s): this GCS no longer holds its lease (the GCS that leads removes the rest)`);
          return { unnamed: unnamed.size, removedSets: 0, removedChunks };
        }
        this.#opts.log(`code store ${bucket.name}: removed ${removedChunks} chunk(s) of ${due.length} upload(s) that never finished`);
      }
      if (this.#failing !== undefined) this.#opts.log(`code store sweep: works again`);
      this.#failing = undefined;
      return { unnamed: unnamed.size, removedSets: due.length, removedChunks };
    } catch (err) {
      // a server without JetStream has no code store: nothing to sweep, nothing to say
      if (err instanceof OrreryError && err.code === 'JETSTREAM_UNAVAILABLE') return none;
      const why = err instanceof Error ? err.message : String(err);
      if (this.#failing === undefined) this.#opts.log(`code store sweep failed (tried again every ${sweepIntervalMs(this.#opts.graceMs)} ms): ${why}`);
      this.#failing = why;
      return none;
    }
  }
}
