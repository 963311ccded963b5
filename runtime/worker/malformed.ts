import { OrreryError } from '../../lib/errors.ts';
import { RejectionLog } from '../process/rejection-log.ts';

/**
 * Counts refused messages by wire code; what is logged about them is RejectionLog's (the first of
 * each code, then one line per minute while more come), so a peer that keeps sending garbage cannot
 * flood the log.
 */
export class MalformedCounter {
  private readonly counts = new Map<string, number>();
  private readonly rejections: RejectionLog;

  constructor(private readonly what: string, log: (line: string) => void) {
    this.rejections = new RejectionLog(what, log);
  }

  count(err: unknown): void {
    const code = err instanceof OrreryError ? err.code : 'INTERNAL';
    this.counts.set(code, (this.counts.get(code) ?? 0) + 1);
    this.rejections.note(code, `${this.what} (${code}): ${err instanceof Error ? err.message : String(err)}`);
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
