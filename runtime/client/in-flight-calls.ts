// The calls one actor handle has sent and not had answered yet, and the one actor_state watch that
// fails them all when their actor dies or restarts.
import { ActorDiedError } from '../errors.ts';
import type { ActorWatcher } from './actor-watch.ts';
import type { OutgoingCall } from './call-resend.ts';
import type { ActorInfo } from './cluster-info.types.ts';
import { UnavailableNow } from './restart-gate.ts';

/**
 * A call sent and not answered yet, linked into its handle's InFlightCalls: a list rather than a
 * Set, so adding and taking a call hashes nothing and allocates nothing beyond the call itself.
 */
export class PendingCall implements OutgoingCall {
  prev: PendingCall | undefined;
  next: PendingCall | undefined;
  /** In its list: neither answered nor failed yet. */
  live = false;
  sent = 0;
  resent = false;
  /** It has gone to the bus at least once (parked or held calls may not have). */
  dispatched = false;

  constructor(
    readonly resolve: (value: unknown) => void,
    readonly reject: (err: unknown) => void,
    readonly data: Uint8Array,
    readonly deadline: number,
    /** The call's timeout as given: what a TimeoutError names, whenever it was sent. */
    readonly timeoutMs: number,
  ) {}
}

/**
 * A handle's calls that were sent and are not answered yet. While there are any, it follows the
 * actor's actor_state events — one watch for all of them, registered when the first call goes out
 * and dropped when the last is settled — and fails every one of them at once when an event says the
 * actor is DEAD (ActorDiedError) or RESTARTING (ActorUnavailableError): their host is gone, and no
 * answer will come. A watch per call cost a registration, a watcher and three closures per call.
 */
export class InFlightCalls {
  #first: PendingCall | undefined;
  #last: PendingCall | undefined;
  #size = 0;
  #unwatch: (() => void) | undefined;

  constructor(
    private readonly actorId: string,
    private readonly watch: (watcher: ActorWatcher) => () => void,
    private readonly observe: (info: ActorInfo) => void,
    /** After an event or the client's end failed every call. */
    private readonly failedAll: () => void,
  ) {}

  /** Made once: a handle making one call at a time registers it again for each. */
  readonly #watcher: ActorWatcher = {
    next: (info) => {
      this.observe(info);
      if (info.state === 'DEAD') this.#failAll(new ActorDiedError(this.actorId, info.deathCause));
      else if (info.state === 'RESTARTING') this.#failAll(new UnavailableNow(this.actorId, info));
    },
    end: (err) => this.#failAll(err),
  };

  add(call: PendingCall): void {
    if (this.#size === 0) this.#unwatch = this.watch(this.#watcher);
    call.live = true;
    call.prev = this.#last;
    if (this.#last === undefined) this.#first = call;
    else this.#last.next = call;
    this.#last = call;
    this.#size++;
  }

  resolve(call: PendingCall, value: unknown): void {
    if (this.#take(call)) call.resolve(value);
  }

  reject(call: PendingCall, err: unknown): void {
    if (this.#take(call)) call.reject(err);
  }

  /** Removes `call`; false when it was settled already. */
  #take(call: PendingCall): boolean {
    if (!call.live) return false;
    call.live = false;
    const { prev, next } = call;
    if (prev === undefined) this.#first = next;
    else prev.next = next;
    if (next === undefined) this.#last = prev;
    else next.prev = prev;
    call.prev = call.next = undefined;
    if (--this.#size === 0) {
      const unwatch = this.#unwatch;
      this.#unwatch = undefined;
      unwatch?.();
    }
    return true;
  }

  #failAll(err: unknown): void {
    const calls: PendingCall[] = [];
    for (let call = this.#first; call !== undefined; call = call.next) calls.push(call);
    for (const call of calls) this.reject(call, err);
    if (calls.length > 0) this.failedAll();
  }
}
