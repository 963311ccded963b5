import { systemClock, type FenceClock } from '../raylet/fence.ts';
import type { HostLease } from '../../protocols/ipc.ts';

/**
 * A worker host's own watch on its raylet (issue 13): a frozen raylet can fence nothing, so a host
 * that hears no renewal for the lease its raylet last granted stops answering on its own. The raylet
 * sends `renew { remainingMs, sentAt }` with every acknowledged heartbeat and `fence` when it fences
 * itself (protocols/ipc.ts). The time a renewal spent on its way (wall clock `sentAt` to now, never less than
 * zero) is taken off what it grants, so a raylet frozen between reading its deadline and writing
 * the message cannot stretch the lease. `onExpire` runs when the lease runs out or is fenced,
 * `onRenew` when a renewal arrives after that; nothing runs per call.
 *
 * The expiry is not put off when its timer fires late, as the stall-aware timers of
 * runtime/process/stall.ts are: reading what arrived first would also run the calls that arrived
 * while the lease was out, which is what the fence is for. A host whose event loop was held past
 * its lease (a constructor that does not yield) therefore fences, and a renewal waiting unread lifts
 * the fence at once. `onExpire` is told how late it noticed, so the host's log can say why.
 */
export interface LeaseWatchdogOptions {
  /** `lateMs`: how long after the lease's end the expiry was noticed (0 when the raylet fenced it, or on time). */
  onExpire(lateMs: number): void;
  onRenew(): void;
  clock?: FenceClock;
  /** Wall clock, comparable between the raylet and its hosts (same machine); default Date.now. */
  wallNow?: () => number;
}

export class LeaseWatchdog {
  #live = true;
  #timer: unknown;
  readonly #clock: FenceClock;
  readonly #wallNow: () => number;

  constructor(private readonly opts: LeaseWatchdogOptions) {
    this.#clock = opts.clock ?? systemClock;
    this.#wallNow = opts.wallNow ?? Date.now;
  }

  get live(): boolean {
    return this.#live;
  }

  /** Applies what the raylet sent. */
  apply(lease: HostLease): void {
    if (lease.type === 'fence') return this.#expire(0);
    const left = lease.remainingMs - Math.max(0, this.#wallNow() - lease.sentAt);
    if (left <= 0) return this.#expire(0);
    this.#clear();
    const due = this.#clock.now() + left;
    this.#timer = this.#clock.setTimer(() => this.#expire(Math.max(0, this.#clock.now() - due)), left);
    if (!this.#live) {
      this.#live = true;
      this.opts.onRenew();
    }
  }

  stop(): void {
    this.#clear();
  }

  #expire(lateMs: number): void {
    this.#clear();
    if (!this.#live) return;
    this.#live = false;
    this.opts.onExpire(lateMs);
  }

  #clear(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }
}
