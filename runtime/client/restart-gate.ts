import { BusClosedError } from '../bus/errors.ts';
import { ActorDiedError, ActorUnavailableError } from '../errors.ts';
import type { ActorWatcher } from './actor-watch.ts';
import type { ActorInfo } from './cluster-info.types.ts';
import { actorRank } from './actor-rank.ts';
import { stallAwareTimeout } from '../process/stall.ts';

/**
 * Calls with `maxTaskRetries` ≠ 0 that meet an actor which cannot take them (restarting, or its
 * node gone) wait here and are let through together, in the order they were made, once the actor
 * is ALIVE again — a later incarnation than the one they failed on. Calls made while the gate is
 * shut wait behind them, so the actor receives every waiting call in call order. The actor's death
 * fails them all with ActorDiedError.
 *
 * The gate learns the actor's state from its actor_state events and from get_actor: once when it
 * shuts (the event it waits for may have passed already), then again after a back-off (250 ms,
 * doubling to 4 s) when it shut on an actor reported ALIVE; such a probe that finds it ALIVE opens
 * the gate for another try. (No call path shuts it on ALIVE now: a call that meets no responder on
 * an ALIVE actor is sent again by call-resend.ts itself, and fails there when its time is up.)
 */
export class UnavailableNow extends ActorUnavailableError {
  constructor(actorId: string, readonly info: ActorInfo) {
    super(actorId, info.state);
  }
}

export interface GateDeps {
  readonly actorId: string;
  watch(watcher: ActorWatcher): () => void;
  info(): Promise<ActorInfo>;
}

const rankOf = actorRank;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 4000;

interface Waiter {
  readonly seq: number;
  resolve(): void;
  reject(err: unknown): void;
  /** Its own time ran out: failed already, and no longer waiting (removed lazily). */
  gone?: boolean;
  /** Cancels its deadline's timer. */
  cancel?: () => void;
}

/** How long a call may wait at the gate, and what it fails with once that has passed. */
export interface GateWaitLimit {
  /** Absolute (Date.now() ms). */
  readonly deadline: number;
  timedOut(): Error;
}

export class RestartGate {
  /** The newest state a call failed in, while shut. */
  #since: ActorInfo | undefined;
  #waiters: Waiter[] = [];
  /** Waiters in #waiters whose time ran out, not yet taken out. */
  #gone = 0;
  #unwatch: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #backoffMs = FIRST_BACKOFF_MS;

  constructor(private readonly deps: GateDeps) {}

  get shut(): boolean {
    return this.#since !== undefined;
  }

  /** A call failed on the actor in state `info`: shut until a later incarnation is ALIVE. */
  shutAfter(info: ActorInfo): void {
    if (info.state === 'DEAD') return this.#fail(new ActorDiedError(this.deps.actorId, info.deathCause));
    const first = this.#since === undefined;
    if (first || rankOf(info) > rankOf(this.#since!)) this.#since = info;
    if (!first) return;
    this.#unwatch = this.deps.watch({ next: (i) => this.#seen(i, false), end: (err) => this.#fail(err) });
    this.#probe(false);
  }

  /**
   * A call's connection dropped while it waited (CONNECTION_LOST): the actor is probably fine, but
   * the GCS cannot be asked until the connection is back. Shut until a probe (repeated with the
   * back-off while the GCS cannot be reached) or an event reports the actor ALIVE, in any
   * incarnation; DEAD fails the waiting calls.
   */
  shutUntilAlive(): void {
    if (this.#since !== undefined) return this.#probe(false);
    // below every real state, so the first ALIVE seen opens the gate
    this.#since = { actorId: this.deps.actorId, namespace: '', className: '', state: 'RESTARTING', numRestarts: -1, labels: {} };
    this.#unwatch = this.deps.watch({ next: (i) => this.#seen(i, false), end: (err) => this.#fail(err) });
    this.#probe(false);
  }

  /**
   * Resolves when the call numbered `seq` may go (after every waiting call with a lower number).
   * With `limit`, fails with its `timedOut()` at its deadline and stops waiting: a call that gave up
   * leaves nothing behind, however long the gate stays shut. The deadline follows the stall rule
   * (runtime/process/stall.ts): a process held past it reads what came meanwhile — the ALIVE that
   * opens the gate — before the call fails.
   */
  wait(seq: number, limit?: GateWaitLimit): Promise<void> {
    if (!this.shut) return Promise.resolve();
    if (limit !== undefined && limit.deadline <= Date.now()) return Promise.reject(limit.timedOut());
    return new Promise<void>((resolve, reject) => {
      const waiters = this.#waiters;
      const waiter: Waiter = { seq, resolve, reject };
      if (limit !== undefined) waiter.cancel = stallAwareTimeout(() => this.#leave(waiter, limit.timedOut()), limit.deadline - Date.now());
      // calls are numbered as they are made, so a new one almost always goes last; else after the
      // last waiter numbered at or below it, found by bisection (a scan per call was quadratic: 100,000
      // calls made while an actor restarted took 5.7 s to queue)
      if (waiters.length === 0 || waiters[waiters.length - 1].seq <= seq) {
        waiters.push(waiter);
        return;
      }
      let lo = 0;
      let hi = waiters.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (waiters[mid].seq > seq) hi = mid;
        else lo = mid + 1;
      }
      waiters.splice(lo, 0, waiter);
    });
  }

  /** How many calls wait at the gate. */
  get waiting(): number {
    return this.#waiters.length - this.#gone;
  }

  #leave(waiter: Waiter, err: Error): void {
    waiter.gone = true;
    waiter.reject(err);
    // taken out in bulk, not one by one: calls made together time out together
    if (++this.#gone * 2 > this.#waiters.length) {
      this.#waiters = this.#waiters.filter((w) => !w.gone);
      this.#gone = 0;
    }
  }

  /** A call went through: the next stale failure starts its back-off afresh. */
  succeeded(): void {
    this.#backoffMs = FIRST_BACKOFF_MS;
  }

  #probe(afterBackoff: boolean): void {
    this.deps.info().then(
      (info) => this.#seen(info, afterBackoff),
      (err: unknown) => (err instanceof BusClosedError ? this.#fail(err) : this.#retryLater()),
    );
  }

  #seen(info: ActorInfo, fromBackoffProbe: boolean): void {
    const since = this.#since;
    if (since === undefined) return;
    if (info.state === 'DEAD') return this.#fail(new ActorDiedError(this.deps.actorId, info.deathCause));
    if (info.state === 'ALIVE' && rankOf(info) > rankOf(since)) {
      this.#backoffMs = FIRST_BACKOFF_MS;
      return this.#open();
    }
    if (info.state === 'ALIVE' && fromBackoffProbe) return this.#open();
    // reported ALIVE but unreachable: look again after a back-off
    if (since.state === 'ALIVE' && this.#timer === undefined) this.#retryLater();
  }

  #retryLater(): void {
    clearTimeout(this.#timer);
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, MAX_BACKOFF_MS);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.shut) this.#probe(true);
    }, delay);
  }

  #open(): void {
    for (const w of this.#reset()) {
      if (w.gone) continue;
      w.cancel?.();
      w.resolve();
    }
  }

  #fail(err: unknown): void {
    for (const w of this.#reset()) {
      if (w.gone) continue;
      w.cancel?.();
      w.reject(err);
    }
  }

  #reset(): Waiter[] {
    this.#since = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#unwatch?.();
    this.#unwatch = undefined;
    const waiters = this.#waiters;
    this.#waiters = [];
    this.#gone = 0;
    return waiters;
  }
}
