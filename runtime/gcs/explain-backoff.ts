import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';

export const EXPLAIN_BACKOFF_MS = { initial: 1_000, max: 30_000 } as const;

/** An actor's last explanation: when, the backoff until the next, the reason and its code. */
export interface Explained {
  readonly at: number;
  readonly backoffMs: number;
  readonly reason: string;
  readonly code: 'unschedulable' | 'infeasible';
}

/**
 * An actor that stays unplaceable is tried again on every change that may let it fit (a cheap
 * attempt: the label index finds the candidates), but its explanation — the pendingReason and the
 * schedule_failed event, which judge every node — is refreshed only after a backoff: 1 s, doubled
 * each time the refreshed reason comes out the same, up to 30 s, and back to 1 s when it changed.
 * Without it, each kick re-explained every waiting actor: 1,000 unplaceable actors on 5,000 nodes
 * made one pass take 9 s (bench/sim), on every node join, death or label change. Kubernetes backs
 * off unschedulable pods the same way (1 s to 10 s); an attempt that places the actor is never held back.
 * A refresh held back is not lost: when the backoff runs out the actor is tried again (`retry`, one
 * timer for all of them), so its reason catches up even if nothing else changes.
 */
export class ExplainBackoff {
  readonly #explained = new Map<string, Explained>();
  /** Actors whose refresh was held back, and when it is due; one timer for the earliest. */
  readonly #due = new Map<string, number>();
  #timer: { at: number; handle: NodeJS.Timeout } | undefined;

  constructor(
    private readonly deps: {
      /** Milliseconds; default performance.now. */
      readonly now?: () => number;
      /** Default EXPLAIN_BACKOFF_MS. `initial: 0` refreshes on every attempt. */
      readonly backoffMs?: { readonly initial: number; readonly max: number };
      /** A held-back refresh is due: the actor is to be tried again. */
      readonly retry: (actorId: string) => void;
    },
  ) {}

  now(): number {
    return (this.deps.now ?? (() => performance.now()))();
  }

  /** The actor's last explanation, if it waits unplaceable. */
  last(actorId: string): Explained | undefined {
    return this.#explained.get(actorId);
  }

  /**
   * Whether a still-unplaceable actor's explanation may be refreshed at `now`; when not, its refresh
   * is held back until its backoff has run (then it is retried).
   */
  mayRefresh(actorId: string, now: number): boolean {
    const last = this.#explained.get(actorId);
    if (last === undefined || now >= last.at + last.backoffMs) return true;
    this.#defer(actorId, last.at + last.backoffMs, now);
    return false;
  }

  /** The actor was explained now: its backoff doubles if the reason is the one it had, else starts over. */
  explained(actorId: string, failure: ScheduleFailure, now: number): void {
    const { initial, max } = this.deps.backoffMs ?? EXPLAIN_BACKOFF_MS;
    const last = this.#explained.get(actorId);
    const reason = failure.message;
    const backoffMs = last && last.reason === reason ? Math.min(last.backoffMs * 2, max) : initial;
    this.#explained.set(actorId, { at: now, backoffMs, reason, code: failure.code });
    this.#due.delete(actorId);
  }

  /** The actor was placed, or waits no more: its explanation and any refresh held back are dropped. */
  forget(actorId: string): void {
    this.#explained.delete(actorId);
    this.#due.delete(actorId);
  }

  /** Stops the refresh timer (the GCS stops). */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    this.#due.clear();
  }

  #defer(actorId: string, due: number, now: number): void {
    this.#due.set(actorId, due);
    if (this.#timer && this.#timer.at <= due) return;
    if (this.#timer) clearTimeout(this.#timer.handle);
    this.#timer = { at: due, handle: setTimeout(() => this.#dueNow(), Math.max(1, Math.ceil(due - now))) };
  }

  /** The held-back refreshes that are due: their actors are tried again; the timer is set for the next. */
  #dueNow(): void {
    this.#timer = undefined;
    const now = this.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [actorId, due] of this.#due) {
      if (due <= now) {
        this.#due.delete(actorId);
        this.deps.retry(actorId);
      } else if (due < next) next = due;
    }
    if (next !== Number.POSITIVE_INFINITY) this.#timer = { at: next, handle: setTimeout(() => this.#dueNow(), Math.max(1, Math.ceil(next - now))) };
  }
}
