import { OrreryError } from '../../lib/errors.ts';

/**
 * Counts refused messages by wire code and logs the first of each code, so a peer that keeps
 * sending garbage cannot flood the log.
 */
export class MalformedCounter {
  private readonly counts = new Map<string, number>();

  constructor(private readonly what: string, private readonly log: (line: string) => void) {}

  count(err: unknown): void {
    const code = err instanceof OrreryError ? err.code : 'INTERNAL';
    const seen = this.counts.get(code) ?? 0;
    this.counts.set(code, seen + 1);
    if (seen === 0) this.log(`${this.what} (${code}): ${err instanceof Error ? err.message : String(err)}; further ${code} are counted, not logged`);
  }

  /** Refused messages so far, by code. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  get total(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }
}
