/**
 * Small measuring helpers for the end-to-end bench: percentiles, a bounded-concurrency runner, and
 * the machine's load average.
 */
import { loadavg } from 'node:os';

/** Nearest-rank percentile of unsorted samples (p in 0..100); NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export function mean(samples: readonly number[]): number {
  return samples.length === 0 ? NaN : samples.reduce((a, b) => a + b, 0) / samples.length;
}

/**
 * Runs `job(0) … job(count - 1)` with at most `concurrency` in flight, in index order of start.
 * A job that rejects does not stop the others; its error is returned in its slot.
 */
export async function runPool<T>(count: number, concurrency: number, job: (i: number) => Promise<T>): Promise<(T | { error: unknown })[]> {
  const out = new Array<T | { error: unknown }>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      try {
        out[i] = await job(i);
      } catch (error) {
        out[i] = { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return out;
}

/** "2.41 2.87 3.02" — the 1, 5 and 15 minute load averages. */
export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
