import { ActorUnavailableError } from '../errors.ts';
import type { ActorInfo } from './cluster-info.types.ts';
import { actorRank } from './actor-rank.ts';
import { UnavailableNow } from './restart-gate.ts';

/**
 * Calls that met no responder while the GCS reports their actor ALIVE, sent again (one handle's).
 *
 * No responder means no subscriber took the message, so sending it again cannot run the method
 * twice. While the GCS says ALIVE, it is a host whose subscription has not reached the caller's
 * server yet — a new actor's host on another server of a NATS cluster, a host reconnecting after its
 * server was lost — or a host that fenced itself (its raylet's lease lapsed) and will answer again
 * once its raylet's next heartbeat is acknowledged, unless the GCS declares the node dead first.
 *
 * Such calls are parked, in the order they were sent, and sent again, in that order, after a pause
 * (RESEND_MS, doubling while they keep meeting no responder). Meanwhile the GCS is asked where the
 * actor stands (one get_actor at a time, not waited for: a GCS that is itself catching up after
 * an outage may take its request timeout to answer, while the host is back sooner): DEAD fails the
 * parked calls with ActorDiedError, RESTARTING (or PENDING after a restart) with ActorUnavailableError.
 * Calls made meanwhile wait behind them and are sent, in call order, once none is parked or out
 * again. An actor_state event saying RESTARTING or DEAD fails them wherever they are (InFlightCalls).
 *
 * An actor that has never been ALIVE (no restart yet, PENDING or SCHEDULED: its first creation is
 * under way, or nothing can place it yet) keeps its parked calls, as Ray queues calls made before an
 * actor is created: none of them reached a host, so waiting runs none twice. They are not sent
 * again meanwhile — that would be a send and a get_actor per pause per handle, for as long as the
 * actor waits for a node — but as soon as the handle learns the actor is ALIVE (`alive()`: an
 * actor_state event, or any answer of the GCS), in the order they were sent. Events can be lost (a
 * NATS outage), so the GCS is asked again after CREATION_RESYNC_MS, doubling.
 *
 * A parked call fails instead of being sent again — ActorUnavailableError: it did not run — when
 * its own time is up, or once a call sent after it has been answered: sending it then would run it
 * after a later call. A held call fails the same way at its own deadline, which may come before the
 * parked calls' (a shorter `timeoutMs`): it does not wait for them to be through.
 */
export interface OutgoingCall {
  /** Whether it may still be answered or failed: false once an actor_state event failed it. */
  readonly live: boolean;
  /** Its absolute deadline (Date.now() ms). */
  readonly deadline: number;
  /** The number of its latest send, counted by the handle across all its calls. */
  sent: number;
  /** Sent again by this and not yet back. */
  resent: boolean;
}

/** An actor whose first incarnation is not ALIVE yet: calls to it wait for it (see above). */
export function beingCreated(info: ActorInfo): boolean {
  return info.numRestarts === 0 && (info.state === 'PENDING' || info.state === 'SCHEDULED' || info.state === 'DEPENDENCIES_UNREADY');
}

/** How long parked calls wait for a created actor's ALIVE on events alone before the GCS is asked again. */
export const CREATION_RESYNC_MS = { first: 3_000, max: 15_000 } as const;

export interface CallResendDeps<C extends OutgoingCall> {
  readonly actorId: string;
  /** Asks the GCS: ActorDiedError for DEAD, UnavailableNow (with the state) otherwise; rejects when it cannot be asked. */
  why(): Promise<Error>;
  send(call: C): void;
  fail(call: C, err: unknown): void;
  /** The pauses before the GCS is asked again while calls wait for a creation; default CREATION_RESYNC_MS. */
  readonly creationResyncMs?: { readonly first: number; readonly max: number };
}

/**
 * The least time between two sweeps of the held calls for those past their deadline: a sweep reads
 * every held call, and calls made one after another have deadlines a few ms apart.
 */
const HELD_SWEEP_MS = 20;

/** The pause before parked calls are sent again; doubles while they keep meeting no responder. */
export const RESEND_MS = { first: 10, max: 500 } as const;

export class CallResend<C extends OutgoingCall> {
  /**
   * The highest send number answered since this was made. Answers from before do not matter: the
   * server writes a call's "no responders" to the caller before it routes any later call, so the
   * first parked call's NO_RESPONDERS comes before the answer to any call sent after it.
   */
  #lastAnswered = 0;
  #parked: C[] = [];
  /** New calls waiting behind the parked ones, in call order. */
  #held: C[] = [];
  /** Calls sent again whose answer (or failure) has not come back. */
  #out = 0;
  /** The pause before the parked calls go again. */
  #timer: NodeJS.Timeout | undefined;
  #pauseMs: number = RESEND_MS.first;
  /** A get_actor is under way. */
  #asking = false;
  /** Fails the held calls whose time is up; armed for the earliest deadline among them. */
  #heldTimer: NodeJS.Timeout | undefined;
  #heldDue = Infinity;
  /** Set while the parked calls wait for the actor's first ALIVE: the state the GCS last reported. */
  #creating: ActorInfo | undefined;
  /** When the GCS is asked again while #creating (Date.now() ms), and the pause after that. */
  #resyncAt = 0;
  #resyncMs: number = CREATION_RESYNC_MS.first;
  /** When the timer armed while #creating fires (Date.now() ms); Infinity when none is. */
  #creationDue = Infinity;
  /** The rank (actor-rank.ts) of the latest ALIVE the handle has seen; -1 before any. */
  #aliveRank = -1;

  constructor(private readonly deps: CallResendDeps<C>) {}

  /** Whether new calls must wait (hold) rather than be sent now. */
  get holding(): boolean {
    return this.#parked.length > 0 || this.#out > 0;
  }

  /** A call made while holding: sent once the calls before it are through. */
  hold(call: C): void {
    this.#held.push(call);
    if (call.deadline < this.#heldDue) this.#armHeld(call.deadline);
  }

  #armHeld(due: number): void {
    clearTimeout(this.#heldTimer);
    this.#heldDue = due;
    // unref'd: while the connection is open it keeps the process up; once it closed, the calls failed with it
    this.#heldTimer = setTimeout(() => this.#expireHeld(), Math.max(0, due - Date.now()));
    this.#heldTimer.unref?.();
  }

  /** The held calls past their time fail (they never left); the rest keep their places. */
  #expireHeld(): void {
    this.#heldTimer = undefined;
    this.#heldDue = Infinity;
    const now = Date.now();
    const { kept, next } = this.#sweep(this.#held, now);
    this.#held = kept;
    if (next !== Infinity) this.#armHeld(Math.max(next, now + HELD_SWEEP_MS));
  }

  /**
   * Calls that never left: those past their deadline (at `now`) fail with #unavailable(); the live
   * rest are kept in order, with the earliest deadline among them (Infinity when none is left).
   */
  #sweep(calls: readonly C[], now: number): { kept: C[]; next: number } {
    let next = Infinity;
    const kept: C[] = [];
    for (const call of calls) {
      if (!call.live) continue;
      if (call.deadline <= now) this.deps.fail(call, this.#unavailable());
      else {
        kept.push(call);
        if (call.deadline < next) next = call.deadline;
      }
    }
    return { kept, next };
  }

  /** Send number `sent` was answered. */
  answered(sent: number): void {
    if (sent > this.#lastAnswered) this.#lastAnswered = sent;
  }

  /**
   * The handle learned that the actor is ALIVE (an actor_state event, a get_actor answer): calls
   * that wait for its creation go now.
   */
  alive(info: ActorInfo): void {
    const rank = actorRank(info);
    if (rank > this.#aliveRank) this.#aliveRank = rank;
    if (this.#creating === undefined) return;
    this.#creating = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#creationDue = Infinity;
    this.#resendParked();
  }

  /**
   * Calls failed elsewhere (an actor_state event saying RESTARTING or DEAD: InFlightCalls) leave the
   * parked list at once, so that calls made after them are not held behind calls that are gone
   * until the next timer.
   */
  prune(): void {
    if (this.#parked.length === 0) return;
    this.#parked = this.#parked.filter((call) => call.live);
    if (this.#parked.length > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#creationDue = Infinity;
    this.#creating = undefined;
    this.#release();
  }

  /**
   * A newer state of an actor whose calls wait for its creation (an actor_state event): what a call
   * that times out while it waits says — the state, and why it waits when it waits for a node.
   */
  seen(info: ActorInfo): void {
    if (this.#creating !== undefined && beingCreated(info) && actorRank(info) >= actorRank(this.#creating)) this.#creating = info;
  }

  /** What a call that could not be sent in its time fails with: while it waited for a creation, the state and why. */
  #unavailable(): ActorUnavailableError {
    const creating = this.#creating;
    return new ActorUnavailableError(this.deps.actorId, creating?.state, creating?.state === 'PENDING' ? creating.pendingReason : undefined);
  }

  /** Whether parked calls wait for the actor's first ALIVE. */
  get awaitingCreation(): boolean {
    return this.#creating !== undefined;
  }

  /**
   * A call not sent, because the handle knows the actor is being created (`info`, from remote()'s
   * watch): parked to wait for its ALIVE as if it had met no responder, without the round trip
   * to learn it, nor a get_actor. `call.sent` numbers it among the handle's sends.
   */
  awaitCreationOf(call: C, info: ActorInfo): void {
    this.#parked.push(call);
    this.#awaitCreation(info);
  }

  /** `call` (its latest send, `call.sent`) met no responder. */
  noResponder(call: C): void {
    let at = this.#parked.length;
    while (at > 0 && this.#parked[at - 1]!.sent > call.sent) at--;
    this.#parked.splice(at, 0, call);
    if (this.#creating !== undefined) {
      // it waits with the others; its deadline may be the first
      if (call.deadline < this.#creationDue) this.#armCreationAt(call.deadline);
      return;
    }
    this.#ask();
    if (this.#timer === undefined) {
      // not past the first parked call's deadline: it fails then, not up to a pause later
      const due = this.#parked.reduce((first, c) => Math.min(first, c.deadline), Infinity) - Date.now();
      const pause = Math.max(0, Math.min(this.#pauseMs, due));
      this.#pauseMs = Math.min(this.#pauseMs * 2, RESEND_MS.max);
      this.#timer = setTimeout(() => this.#resendParked(), pause);
    }
  }

  /** A call this sent again came back (answered, failed or parked again: noResponder first). */
  back(call: C): void {
    call.resent = false;
    this.#out--;
    this.#release();
  }

  /**
   * One get_actor at a time. ALIVE: the parked calls go on being sent again (they wait for a
   * subscription); an actor being created: they wait for its ALIVE; anything else fails them.
   */
  #ask(): void {
    if (this.#asking) return;
    this.#asking = true;
    this.deps.why().then(
      (why) => {
        this.#asking = false;
        if (this.#parked.length === 0) return;
        if (why instanceof UnavailableNow && why.info.state === 'ALIVE') {
          // the actor was created while they waited for it: they go now
          if (this.#creating !== undefined) this.alive(why.info);
          return;
        }
        if (why instanceof UnavailableNow && beingCreated(why.info)) {
          // an answer from before an ALIVE the handle has seen since: the resend goes on
          if (actorRank(why.info) < this.#aliveRank) return;
          this.#awaitCreation(why.info);
          return;
        }
        this.#failParked(why);
      },
      () => {
        this.#asking = false; // the GCS cannot be asked now: the calls go on until their time is up
      },
    );
  }

  /** The parked calls wait for the actor's first ALIVE: not sent again meanwhile. */
  #awaitCreation(info: ActorInfo): void {
    if (this.#creating === undefined) {
      this.#resyncMs = (this.deps.creationResyncMs ?? CREATION_RESYNC_MS).first;
      this.#resyncAt = Date.now() + this.#resyncMs;
    }
    this.#creating = info;
    this.#armCreationAt(this.#parked.reduce((first, c) => Math.min(first, c.deadline), Infinity));
  }

  /**
   * One timer while #creating, for `due` (a parked call's deadline) or the next question to the
   * GCS, whichever comes first.
   */
  #armCreationAt(due: number): void {
    clearTimeout(this.#timer);
    this.#creationDue = Math.min(due, this.#resyncAt);
    this.#timer = setTimeout(() => this.#creationTimer(), Math.max(0, this.#creationDue - Date.now()));
    this.#timer.unref?.();
  }

  /** The parked calls past their time fail (they never left); the GCS is asked again when that is due. */
  #creationTimer(): void {
    this.#timer = undefined;
    this.#creationDue = Infinity;
    if (this.#creating === undefined) return;
    const now = Date.now();
    const { kept, next } = this.#sweep(this.#parked, now);
    this.#parked = kept;
    if (kept.length === 0) {
      this.#creating = undefined;
      this.#release();
      return;
    }
    if (now >= this.#resyncAt) {
      this.#resyncMs = Math.min(this.#resyncMs * 2, (this.deps.creationResyncMs ?? CREATION_RESYNC_MS).max);
      this.#resyncAt = now + this.#resyncMs;
      this.#ask();
    }
    // a sweep reads every parked call: not more often than the held calls' sweep
    this.#armCreationAt(Math.max(next, now + HELD_SWEEP_MS));
  }

  #resendParked(): void {
    this.#timer = undefined;
    const parked = this.#parked;
    this.#parked = [];
    const now = Date.now();
    for (const call of parked) {
      if (!call.live) continue;
      // past its time, or a later call already ran: it fails rather than run late or out of order
      if (call.deadline <= now || call.sent < this.#lastAnswered) {
        this.deps.fail(call, new ActorUnavailableError(this.deps.actorId, 'ALIVE'));
        continue;
      }
      call.resent = true;
      this.#out++;
      this.deps.send(call);
    }
    this.#release();
  }

  #failParked(err: unknown): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#creationDue = Infinity;
    this.#creating = undefined;
    const parked = this.#parked;
    this.#parked = [];
    for (const call of parked) if (call.live) this.deps.fail(call, err);
    this.#release();
  }

  /** Nothing parked or out again: the held calls go, in call order. */
  #release(): void {
    if (this.holding) return;
    this.#pauseMs = RESEND_MS.first;
    const held = this.#held;
    if (held.length === 0) return;
    this.#held = [];
    clearTimeout(this.#heldTimer);
    this.#heldTimer = undefined;
    this.#heldDue = Infinity;
    const now = Date.now();
    for (let i = 0; i < held.length; i++) {
      const call = held[i]!;
      if (!call.live) continue;
      if (call.deadline <= now) this.deps.fail(call, this.#unavailable());
      else if (this.holding) this.hold(call); // an earlier one of these met no responder (memory bus: at once)
      else this.deps.send(call);
    }
  }
}
