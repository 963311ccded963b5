import type { Observable, Subscription } from 'rxjs';
import type { InspectAck, InspectRecord } from '../../protocols/messages/inspect.ts';

/** The records kept per machine instance for pages that connect later: the newest this many. */
const KEEP_PER_INSTANCE = 1000;
/** Instances kept: those that changed most recently (an actor churn must not grow the dashboard). */
const KEEP_INSTANCES = 5000;

/**
 * One shared inspection subscription for every page: it runs while at least one page follows the
 * stream, or from retain() on (the dashboard's history, on by default), and keeps the newest
 * records, which a page that connects later receives first (the newest 1,000 of each instance:
 * heartbeating machines make two records a second; of the 5,000 instances that changed last).
 */
export class InspectionFeed {
  /** In order of last change, oldest first (a changed instance is moved to the end). */
  private readonly kept = new Map<string, InspectRecord[]>();
  private retained = false;
  /** When the subscription last started (ms since the epoch); undefined while it is not running. */
  private startedAt: number | undefined;
  private readonly listeners = new Set<(r: InspectRecord) => void>();
  /** Publishers that have attached their inspectors for this feed (their acknowledgements). */
  private readonly attached = new Set<string>();
  private readonly ackListeners = new Set<(publisher: string) => void>();
  private sub: Subscription | undefined;

  /** `source` is given the function to call with each publisher's acknowledgement (watch.ts `onAck`). */
  constructor(private readonly source: (onAck: (ack: InspectAck) => void) => Observable<InspectRecord>) {}

  /**
   * Replays the kept records to `listener`, then every new one until the returned function is called;
   * `onAttached` hears each publisher that has attached (those already attached first), so a page —
   * or a spec — knows from when a machine's transitions reach it.
   */
  follow(listener: (r: InspectRecord) => void, onAttached?: (publisher: string) => void): () => void {
    for (const list of this.kept.values()) for (const r of list) listener(r);
    this.listeners.add(listener);
    if (onAttached) {
      for (const p of this.attached) onAttached(p);
      this.ackListeners.add(onAttached);
    }
    this.open();
    return () => {
      this.listeners.delete(listener);
      if (onAttached) this.ackListeners.delete(onAttached);
      if (this.listeners.size === 0 && !this.retained) this.stop();
    };
  }

  /**
   * Follows from now on whether pages do or not, so a page opened later can step through what
   * changed before it (the cluster publishes inspection records all that time), until stop().
   */
  retain(): void {
    this.retained = true;
    this.open();
  }

  /** Since when records have been kept without a gap, and which publishers have attached. */
  status(): { since: number | undefined; attached: string[] } {
    return { since: this.startedAt, attached: [...this.attached].sort() };
  }

  stop(): void {
    this.retained = false;
    this.sub?.unsubscribe();
    this.sub = undefined;
    this.startedAt = undefined;
    this.attached.clear(); // publishers detach once no watcher is left
  }

  private open(): void {
    if (this.sub) return;
    this.startedAt = Date.now();
    this.sub = this.source((ack) => this.ack(ack.publisher)).subscribe({
      next: (r) => this.receive(r),
      error: () => this.stop(),
      complete: () => this.stop(),
    });
  }

  private ack(publisher: string): void {
    if (this.attached.has(publisher)) return;
    this.attached.add(publisher);
    for (const l of this.ackListeners) l(publisher);
  }

  private receive(r: InspectRecord): void {
    const key = `${r.machine}/${r.id}`;
    let list = this.kept.get(key);
    if (list) this.kept.delete(key); // to the end: the most recently changed
    else list = [];
    this.kept.set(key, list);
    if (this.kept.size > KEEP_INSTANCES) this.kept.delete(this.kept.keys().next().value!);
    list.push(r);
    if (list.length > KEEP_PER_INSTANCE) list.splice(0, list.length - KEEP_PER_INSTANCE);
    for (const listener of this.listeners) listener(r);
  }
}
