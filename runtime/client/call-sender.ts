// How one actor handle's calls travel to its actor's host and back: each encoded and sent through
// the outbox, its answer read, sent again when it met no responder (call-resend.ts), its abort
// published as cancel_call. The handle (actor-handle.ts) decides when a call is made and retried.
import { encode } from '../../protocols/codec.ts';
import { encodeCall } from '../../protocols/fast-path.ts';
import { refsDecoded } from '../../protocols/actor-ref.ts';
import { decodeReply } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus, BusMsg } from '../bus/bus.ts';
import { NoRespondersError, TimeoutError } from '../bus/errors.ts';
import { ActorDiedError, ActorFencedError } from '../errors.ts';
import type { ActorInfo } from './cluster-info.types.ts';
import { CallAbortedError, specializeWireError } from './errors.ts';
import { watchAbort } from './abort-watch.ts';
import type { ActorWatcher, CreationWatch } from './actor-watch.ts';
import { CallOutbox } from './call-outbox.ts';
import { beingCreated, CallResend } from './call-resend.ts';
import { InFlightCalls, PendingCall } from './in-flight-calls.ts';
import { UnavailableNow } from './restart-gate.ts';
import { newCallCancel } from './random-id.ts';

/** What a handle's calls need from its cluster connection (a HandleContext is one). */
export interface CallContext {
  readonly bus: Bus;
  readonly subjects: ClusterSubjects;
  /** Delivers this actor's actor_state events until the returned function is called. */
  watchActor(actorId: string, watcher: ActorWatcher): () => void;
  /** `value` (a decoded payload) with each actor reference in it made a handle on this connection. */
  revive(value: unknown): unknown;
}

export interface CallSenderDeps {
  readonly ctx: CallContext;
  readonly actorId: string;
  /** remote()'s watch from before registration (see CreationWatch); none for getActor. */
  readonly creation: CreationWatch | undefined;
  /** The handle's info(): get_actor, its answer taken as news. */
  readonly info: () => Promise<ActorInfo>;
}

/** Any reply value: a method's result is whatever it returned. */
const ANY_VALUE = { value: unknown() };

export class CallSender {
  readonly #ctx: CallContext;
  readonly #actorId: string;
  readonly #creation: CreationWatch | undefined;
  readonly #info: () => Promise<ActorInfo>;
  /** Set once the actor was seen DEAD: DEAD is final, so later calls fail without a round trip. */
  #death: { cause?: string } | undefined;
  /** `…actor.<actorId>.call`, formed on the first call. */
  #callSubject: string | undefined;
  /** Calls sent and not yet answered. */
  readonly #inFlight: InFlightCalls;
  /** Sends made on this handle: a call's number tells whether a later one was answered (call-resend.ts). */
  #sends = 0;
  /** Calls that met no responder on an ALIVE actor, sent again (call-resend.ts); made when first needed. */
  #resend: CallResend<PendingCall> | undefined;
  /** Where calls leave, several of one turn as one message (call-outbox.ts); made at the first call. */
  #outbox: CallOutbox | undefined;

  constructor(deps: CallSenderDeps) {
    const { ctx, actorId } = deps;
    this.#ctx = ctx;
    this.#actorId = actorId;
    this.#creation = deps.creation;
    this.#info = deps.info;
    this.#inFlight = new InFlightCalls(actorId, (w) => ctx.watchActor(actorId, w), (info) => this.observe(info), () => this.#resend?.prune());
  }

  /** Every state the handle learns of, from events and the GCS's answers. */
  observe(info: ActorInfo): void {
    if (info.state === 'DEAD') this.#death = { cause: info.deathCause };
    // calls waiting for the actor's creation go once it is ALIVE (call-resend.ts)
    else if (info.state === 'ALIVE') this.#resend?.alive(info);
    else this.#resend?.seen(info);
  }

  /** A TimeoutError for a call of this handle that waited `timeoutMs`. */
  timedOut(timeoutMs: number): TimeoutError {
    return new TimeoutError((this.#callSubject ??= this.#ctx.subjects.actorCall(this.#actorId)), timeoutMs);
  }

  /**
   * One call straight to the actor's host, one sending waiting `timeoutMs`; a TimeoutError names
   * `reportedMs`, the call's own timeout (default the same). While it is in flight, an actor_state
   * event saying the actor died or is restarting fails it at once (see InFlightCalls), rather than
   * leaving it waiting on a host that is gone, and an abort of `signal` fails it at once wherever it
   * is. One that meets no responder while the GCS reports the actor ALIVE is sent again
   * (call-resend.ts); calls made meanwhile wait behind it, in call order.
   */
  callOnce(method: string, args: unknown[], timeoutMs: number, reportedMs = timeoutMs, signal?: AbortSignal): Promise<unknown> {
    if (this.#death) return Promise.reject(new ActorDiedError(this.#actorId, this.#death.cause));
    let data: Uint8Array;
    // a call with a signal carries an id and a key of its own: what its cancel_call must name
    const cancel = signal === undefined ? undefined : newCallCancel();
    try {
      data = encodeCall(method, args, cancel);
      this.#callSubject ??= this.#ctx.subjects.actorCall(this.#actorId);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<unknown>((resolve, reject) => {
      let call: PendingCall;
      if (signal === undefined || cancel === undefined) call = new PendingCall(resolve, reject, data, Date.now() + timeoutMs, reportedMs);
      else {
        // one listener per signal, however many calls share it (abort-watch.ts)
        const settled = watchAbort(signal, () => {
          if (!call.live) return;
          const sent = call.dispatched;
          this.#inFlight.reject(call, new CallAbortedError(this.#actorId, method, sent, signal.reason));
          this.#resend?.prune();
          if (sent) this.#cancel(cancel);
        });
        call = new PendingCall(
          (value) => (settled(), resolve(value)),
          (err) => (settled(), reject(err)),
          data,
          Date.now() + timeoutMs,
          reportedMs,
        );
      }
      this.#inFlight.add(call);
      if (this.#resend?.holding) this.#resend.hold(call);
      else if (this.#creating()) {
        // remote()'s watch has not seen it ALIVE: it would meet no responder, and get_actor would say what the watch holds
        call.sent = ++this.#sends;
        (this.#resend ??= this.#newResend()).awaitCreationOf(call, this.#creation!.latest!);
      } else this.#send(call, timeoutMs);
    });
  }

  /** Sends `call`; one sent again, or held first, has what is left of its time. */
  #send(call: PendingCall, timeoutMs = Math.max(1, call.deadline - Date.now())): void {
    const sent = (call.sent = ++this.#sends);
    call.dispatched = true;
    (this.#outbox ??= new CallOutbox(this.#ctx.bus)).send(this.#callSubject!, call.data, timeoutMs, (err, msg) => {
      if (err === undefined) {
        try {
          const value = this.#valueOf(msg!);
          this.#resend?.answered(sent);
          if (call.live) this.#inFlight.resolve(call, value);
        } catch (failure) {
          // a host that had fenced itself did not run it: as if nobody had received it
          if (failure instanceof ActorFencedError) {
            if (call.live) (this.#resend ??= this.#newResend()).noResponder(call);
          } else {
            this.#resend?.answered(sent);
            if (call.live) this.#inFlight.reject(call, failure);
          }
        }
      } else if (call.live) {
        if (err instanceof NoRespondersError) (this.#resend ??= this.#newResend()).noResponder(call);
        else if (err instanceof TimeoutError && timeoutMs !== call.timeoutMs) this.#inFlight.reject(call, new TimeoutError(this.#callSubject!, call.timeoutMs));
        else this.#inFlight.reject(call, err);
      }
      if (call.resent) this.#resend!.back(call);
    });
  }

  /**
   * Tells the actor's host that a call it was sent is aborted (cancel_call, published): dropped if it
   * waits in the mailbox, its signal aborted if it runs. Calls of this turn still in the outbox leave
   * first, so the cancel never overtakes its call. Best effort: a cancel lost on the way lets the call
   * run, its answer going nowhere.
   */
  #cancel(cancel: { callId: string; cancelKey: string }): void {
    this.#outbox?.flush();
    try {
      this.#ctx.bus.publish(this.#callSubject!, encode('cancel_call', cancel));
    } catch {
      // the connection closed: the host will not hear it, as after a lost message
    }
  }

  /** Whether remote()'s watch still follows the actor and has seen it only being created (call-resend.ts). */
  #creating(): boolean {
    const latest = this.#creation?.latest;
    return latest !== undefined && beingCreated(latest);
  }

  /** Made at the first call that meets no responder. */
  #newResend(): CallResend<PendingCall> {
    return new CallResend<PendingCall>({
      actorId: this.#actorId,
      why: () => this.#unreachable(),
      send: (call) => this.#send(call),
      fail: (call, err) => this.#inFlight.reject(call, err),
    });
  }

  /** A call's answer: its value, or thrown, the error it carries (a wire error as its runtime class). */
  #valueOf(msg: BusMsg): unknown {
    const refs = refsDecoded();
    let value: unknown;
    try {
      value = decodeReply(msg.data, ANY_VALUE);
    } catch (err) {
      throw specializeWireError(err);
    }
    // a handle returned by the method arrives as a reference: a handle on this connection
    return refsDecoded() !== refs ? this.#ctx.revive(value) : value;
  }

  /** Nothing hosts the actor: ask the GCS whether it is dead or just not alive right now. */
  async #unreachable(): Promise<Error> {
    const info = await this.#info();
    return info.state === 'DEAD' ? new ActorDiedError(this.#actorId, info.deathCause) : new UnavailableNow(this.#actorId, info);
  }
}
