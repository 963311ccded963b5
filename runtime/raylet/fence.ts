/**
 * The raylet's fence: its actors stop answering before the GCS can start them elsewhere (issue 13).
 *
 * The GCS declares a node DEAD when no heartbeat *arrived* for its node timeout T, and only then
 * restarts the node's actors elsewhere. A heartbeat the GCS acknowledged arrived after it was sent,
 * so `sentAt + T` (the raylet's clock) is never later than the GCS's deadline. The raylet holds a
 * *lease* of `leaseMs` (default 60% of T, see leaseFromNodeTimeout) counted from the send time of
 * the newest acknowledged heartbeat (or registration); when it runs out the raylet is *fenced*: its
 * worker hosts drop their actors' call subscriptions. The 40% margin covers what lies between the
 * raylet's deadline and the moment a second incarnation can answer: the hosts' own timers firing
 * late on a busy machine, the IPC hop, the UNSUBs reaching nats-server — and it leaves a healthy
 * node several heartbeats of slack before it fences itself for nothing.
 *
 * The one exception — NO_RESPONDERS: a heartbeat that fails with NO_RESPONDERS proves that, when it
 * was sent, the raylet reached the server and no GCS was subscribed at all (the GCS process died, or
 * is between leaders). Nobody can restart the actors elsewhere until a GCS serves again, and a GCS
 * that starts with the node in its tables first gives raylets a grace window to register again
 * (runtime/gcs/recovery.ts); one that lost its own connection gives every node a fresh timeout when
 * it is back. So a NO_RESPONDERS failure counts as an acknowledgement at its send time: calls keep
 * being answered while the GCS is merely down — also after a heartbeat that was in flight when the
 * GCS died and timed out. (Known limit: with a NATS *cluster* split between the raylet's server and
 * the GCS's, NO_RESPONDERS would not mean "no GCS anywhere".)
 *
 * An answer `known: false` (the GCS declared the node dead, or is a new GCS) stops that exception
 * until a registration is acknowledged: a GCS that declared the node dead may have started its
 * actors elsewhere and then died itself. It does not fence at once — a GCS can only have declared
 * the node dead after the node's timeout without heartbeats, by which time the lease ran out — so a
 * raylet that a restarted GCS answers `known: false` keeps answering calls while it registers again;
 * the GCS kills what it does not keep before it answers that registration.
 * An acknowledgement whose lease has already run out (a raylet frozen while its answer waited)
 * lifts nothing. Without a node timeout from the GCS (a GCS from before fencing) the fence is
 * never armed. Time is injected; nothing here does I/O.
 */
export interface FenceClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(timer: unknown): void;
}

export interface FenceOptions {
  /** Hosts stop answering. */
  onFence(): void;
  /** The fence is lifted (an onRenew follows at once). */
  onUnfence(): void;
  /** The lease moved forward while not fenced: hosts may answer for `remainingMs` more. */
  onRenew(remainingMs: number): void;
  clock?: FenceClock;
}

/**
 * The lease from the GCS's node timeout: `fraction` of it (default 0.6), rounded down. A fraction
 * outside (0, 1) is refused: at 1 or more the GCS could restart the actors before they stop answering.
 */
export function leaseFromNodeTimeout(nodeTimeoutMs: number, fraction = 0.6): number {
  if (!(fraction > 0 && fraction < 1)) throw new RangeError(`the fence lease fraction must lie strictly between 0 and 1 (got ${fraction})`);
  return Math.max(1, Math.floor(nodeTimeoutMs * fraction));
}

export const systemClock: FenceClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

export class Fence {
  #leaseMs: number | undefined;
  #deadline = Number.NEGATIVE_INFINITY;
  #fenced = false;
  /** A GCS answered known:false and no registration was acknowledged since: NO_RESPONDERS counts for nothing. */
  #awaitingRegistration = false;
  /** When the GCS last answered known:false; acknowledgements of beats sent before it lift nothing. */
  #forgottenAt = Number.NEGATIVE_INFINITY;
  #timer: unknown;
  readonly #clock: FenceClock;

  constructor(private readonly opts: FenceOptions) {
    this.#clock = opts.clock ?? systemClock;
  }

  get fenced(): boolean {
    return this.#fenced;
  }

  /** Whether a lease is known (the GCS told the node timeout). */
  get armed(): boolean {
    return this.#leaseMs !== undefined;
  }

  /** What hosts may still answer for: 0 when fenced; undefined when the fence is not armed. */
  remainingMs(): number | undefined {
    if (this.#leaseMs === undefined) return undefined;
    return this.#fenced ? 0 : Math.max(0, this.#deadline - this.#clock.now());
  }

  /** The lease period, from the registration reply. */
  setLease(leaseMs: number): void {
    this.#leaseMs = leaseMs;
  }

  /** A heartbeat answered `known: true`, or a registration succeeded; both sent at `sentAt`. */
  acked(sentAt: number): void {
    if (this.#leaseMs === undefined || sentAt < this.#forgottenAt) return;
    this.#awaitingRegistration = false;
    this.#extend(sentAt + this.#leaseMs);
  }

  /** A heartbeat sent at `sentAt` failed with `code`. */
  failed(code: string, sentAt: number): void {
    if (this.#leaseMs === undefined) return;
    if (code === 'NO_RESPONDERS' && !this.#awaitingRegistration && sentAt >= this.#forgottenAt) this.#extend(sentAt + this.#leaseMs);
  }

  /** The GCS answered `known: false`: only a registration's acknowledgement extends the lease now. */
  forgotten(): void {
    this.#forgottenAt = this.#clock.now();
    this.#awaitingRegistration = true;
  }

  stop(): void {
    this.#clearTimer();
  }

  #extend(deadline: number): void {
    if (deadline <= this.#deadline) return;
    this.#deadline = deadline;
    const remaining = deadline - this.#clock.now();
    if (remaining <= 0) return this.#fence(); // the answer came too late to count
    this.#clearTimer();
    this.#timer = this.#clock.setTimer(() => this.#expired(), remaining);
    if (this.#fenced) {
      this.#fenced = false;
      this.opts.onUnfence();
    }
    this.opts.onRenew(remaining);
  }

  #expired(): void {
    this.#timer = undefined;
    const left = this.#deadline - this.#clock.now();
    if (left <= 0) this.#fence();
    else this.#timer = this.#clock.setTimer(() => this.#expired(), left);
  }

  #fence(): void {
    if (this.#fenced) return;
    this.#fenced = true;
    this.opts.onFence();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }
}
