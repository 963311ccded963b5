import type { JobOwner } from './job-session.ts';
import type { Observable, Subscription } from 'rxjs';
import { encode } from '../../protocols/codec.ts';
import { encodeCall } from '../../protocols/fast-path.ts';
import { plainDataProblem } from '../../protocols/plain-data.ts';
import { actorInfo } from '../../protocols/messages/actor.ts';
import { ActorRef, refsDecoded } from '../../protocols/actor-ref.ts';
import { decodeReply } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import { rx } from '../rx.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus, BusMsg } from '../bus/bus.ts';
import { InvalidOptionError } from '../../lib/errors.ts';
import { BusClosedError, ConnectionLostError, NoRespondersError, TimeoutError } from '../bus/errors.ts';
import { ActorDiedError, ActorFencedError, WaitTimeoutError } from '../errors.ts';
import type { MethodArgs, MethodNames, MethodResult } from './actor-class.ts';
import type { ActorInfo, ActorState } from './cluster-info.types.ts';
import { CallAbortedError, CallArgumentError, specializeWireError } from './errors.ts';
import { actorFromWire } from './from-wire.ts';
import type { GcsClient } from './gcs-client.ts';
import { abortable, watchAbort } from './abort-watch.ts';
import { CallOutbox } from './call-outbox.ts';
import { beingCreated, CallResend, type OutgoingCall } from './call-resend.ts';
import { RestartGate, UnavailableNow } from './restart-gate.ts';
import { actorRank } from './actor-rank.ts';
import { newCallCancel } from './random-id.ts';
import { stallAwareTimeout } from '../process/stall.ts';

/** Options of the calls made through `handle.options(opts)`. */
export interface CallOptions {
  /**
   * How long a call may wait for its answer before it fails with TIMEOUT (the method may still be
   * running); default the connection's `callTimeoutMs` (60,000 ms unless connect() set another).
   */
  timeoutMs?: number;
  /**
   * Stops the call when aborted: it fails with CallAbortedError (ABORTED). A call not sent yet —
   * waiting for its actor's creation, held behind calls sent again, at the restart gate — is then
   * never sent. For one already sent the handle publishes cancel_call to its actor: still waiting in
   * the actor's mailbox, it is dropped unstarted; running, its `getRuntimeContext().signal` aborts
   * and the method decides how to end. A cancel lost on the way (a NATS outage) lets it run.
   */
  signal?: AbortSignal;
}

/** Calls with options of their own: `handle.options({ timeoutMs: 5000 }).call('method', ...args)`. */
export interface ActorCaller<T = unknown> {
  call<K extends MethodNames<T>>(method: K, ...args: MethodArgs<T, K>): Promise<MethodResult<T, K>>;
}

/** A reference to one actor: call its methods, wait for it, follow its state, kill it. */
export interface ActorHandle<T = unknown> extends ActorCaller<T> {
  readonly actorId: string;
  readonly namespace: string;
  /** The same actor, its calls made with these options (checked here: INVALID_OPTION). */
  options(opts: CallOptions): ActorCaller<T>;
  /** Resolves when the actor is ALIVE; ActorDiedError if it dies first, TIMEOUT after timeoutMs (default: no limit). */
  ready(opts?: { timeoutMs?: number }): Promise<ActorInfo>;
  info(): Promise<ActorInfo>;
  /** noRestart defaults to true; then resolves once the actor is DEAD. */
  kill(opts?: { noRestart?: boolean }): Promise<void>;
  /** The current ActorInfo, then every change; completes after DEAD, or when the client closes. */
  readonly state$: Observable<ActorInfo>;
}

export interface ActorWatcher {
  next(info: ActorInfo): void;
  /** The client closed: no more events will come. */
  end(err: Error): void;
}

/** How long a wait for an actor state goes on events alone before it asks the GCS (waitFor). */
export const RESYNC_MS = { first: 3_000, max: 15_000 } as const;
/** What a handle needs from its cluster connection. */
export interface HandleContext {
  readonly bus: Bus;
  readonly gcs: GcsClient;
  readonly subjects: ClusterSubjects;
  readonly callTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** The connection's job (job-session.ts): creations are registered under it; absent outside a job. */
  readonly job?: JobOwner | undefined;
  /** Delivers this actor's actor_state events until the returned function is called. */
  watchActor(actorId: string, watcher: ActorWatcher): () => void;
  /** `value` (a decoded payload) with each actor reference in it made a handle on this connection. */
  revive(value: unknown): unknown;
}

/** Whether `next` is news after `last`: a later state, or the same state with other details. */
export function isNewer(last: ActorInfo | undefined, next: ActorInfo): boolean {
  if (last === undefined) return true;
  const a = actorRank(last);
  const b = actorRank(next);
  if (b !== a) return b > a;
  return last.state !== 'DEAD' && (last.nodeId !== next.nodeId || last.pendingReason !== next.pendingReason || last.deathCause !== next.deathCause);
}

/**
 * What a handle made by remote() has seen of its actor from before it was registered: remote()
 * starts following the actor's actor_state events before it sends register_actor, so this holds
 * every change since — with the register reply merged in by rank, as state$ merges a get_actor
 * answer. While it follows, state$ (and so ready()) starts from what it holds instead of asking
 * get_actor: the answer could tell nothing it has not seen. That was one GCS round trip per actor
 * created (remote() then ready()). It stops following once the actor is ALIVE or DEAD (or the
 * client closes), so no handle stays registered for a long-lived actor; state$ subscribed after
 * that asks get_actor as before.
 */
export class CreationWatch {
  #latest: ActorInfo | undefined;
  #stop: (() => void) | undefined;

  constructor(watch: (watcher: ActorWatcher) => () => void) {
    this.#stop = watch({ next: (info) => this.seen(info), end: () => this.stop() });
  }

  /** What it holds, while it still follows the actor; undefined once it stopped. */
  get latest(): ActorInfo | undefined {
    return this.#stop === undefined ? undefined : this.#latest;
  }

  get following(): boolean {
    return this.#stop !== undefined;
  }

  /** An event, or the register reply. */
  seen(info: ActorInfo): void {
    if (this.#stop === undefined) return;
    if (isNewer(this.#latest, info)) this.#latest = info;
    if (info.state === 'ALIVE' || info.state === 'DEAD') this.stop();
  }

  stop(): void {
    const stop = this.#stop;
    this.#stop = undefined;
    this.#latest = undefined;
    stop?.();
  }
}

/** The longest timer Node.js keeps (2^31-1 ms): the bound of a call's timeoutMs. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Any reply value: a method's result is whatever it returned. */
const ANY_VALUE = { value: unknown() };

/**
 * A call sent and not answered yet, linked into its handle's InFlightCalls: a list rather than a
 * Set, so adding and taking a call hashes nothing and allocates nothing beyond the call itself.
 */
class PendingCall implements OutgoingCall {
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
class InFlightCalls {
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

/**
 * Extends ActorRef: a handle passed as an argument or returned from a method travels as a reference
 * to its actor (protocols/actor-ref.ts) and arrives as a handle on the receiver's connection.
 */
export class ClientActorHandle<T> extends ActorRef implements ActorHandle<T> {
  /** Made on the first read of state$ (rxjs is loaded then, see rx.ts). */
  #state$: Observable<ActorInfo> | undefined;
  /** Set once the actor was seen DEAD: DEAD is final, so later calls fail without a round trip. */
  private death: { cause?: string } | undefined;
  /** Where calls with retries wait while the actor restarts (restart-gate.ts). */
  private readonly gate: RestartGate;
  /** Numbers calls in the order they were made. */
  private nextCall = 0;
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

  constructor(
    private readonly ctx: HandleContext,
    actorId: string,
    namespace: string,
    /** maxTaskRetries of the options it was created with; 0 for a handle from getActor or one that arrived in a payload. */
    private readonly maxTaskRetries = 0,
    /** remote()'s watch from before registration (see CreationWatch); none for getActor. */
    private readonly creation?: CreationWatch,
  ) {
    super(actorId, namespace);
    this.gate = new RestartGate({ actorId, watch: (w) => ctx.watchActor(actorId, w), info: () => this.info() });
    this.#inFlight = new InFlightCalls(actorId, (w) => ctx.watchActor(actorId, w), (info) => this.observe(info), () => this.#resend?.prune());
  }

  /** The actor's states from now on (the latest known first); completes at DEAD or when the client closes. */
  get state$(): Observable<ActorInfo> {
    const { actorId, ctx } = this;
    return (this.#state$ ??= new (rx().Observable)<ActorInfo>((subscriber) => {
      // Events and the get_actor answer are merged by rank (see isNewer), not by arrival order.
      let last: ActorInfo | undefined;
      const emit = (info: ActorInfo): void => {
        if (subscriber.closed || !isNewer(last, info)) return;
        last = info;
        this.observe(info);
        subscriber.next(info);
        if (info.state === 'DEAD') subscriber.complete();
      };
      const stop = ctx.watchActor(actorId, { next: emit, end: () => subscriber.complete() });
      // Watching from here on; what came before is what remote()'s watch holds, while it still
      // follows the actor — else it is what get_actor answers.
      const seen = this.creation?.latest;
      if (seen !== undefined) emit(seen);
      else this.info().then(emit, (err: unknown) => subscriber.error(err));
      return stop;
    }));
  }

  /**
   * One call to the actor. A call made before the actor is first ALIVE (its creation under way, or
   * nothing can place it yet) waits for it, up to its timeout: it reaches no host before then, so it
   * runs once. When the actor cannot take it later (restarting, its node gone): with
   * maxTaskRetries 0 it fails at once with ActorUnavailableError; otherwise it waits — with every
   * other call that waits, in the order they were made — until the actor is ALIVE again, and is sent
   * again, up to maxTaskRetries times (-1: no limit). A dead actor fails it with ActorDiedError.
   */
  call<K extends MethodNames<T>>(method: K, ...args: MethodArgs<T, K>): Promise<MethodResult<T, K>> {
    return this.callWithin(this.ctx.callTimeoutMs, method, args) as Promise<MethodResult<T, K>>;
  }

  options(opts: CallOptions): ActorCaller<T> {
    if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new InvalidOptionError('options', opts, 'expected an object');
    for (const key of Object.keys(opts)) if (key !== 'timeoutMs' && key !== 'signal') throw new InvalidOptionError(key, (opts as Record<string, unknown>)[key], 'unknown call option; expected timeoutMs or signal');
    const timeoutMs = opts.timeoutMs ?? this.ctx.callTimeoutMs;
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMER_MS) {
      throw new InvalidOptionError('timeoutMs', timeoutMs, `expected a number of ms from 1 to ${MAX_TIMER_MS}`);
    }
    const { signal } = opts;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidOptionError('signal', signal, 'expected an AbortSignal');
    return {
      call: <K extends MethodNames<T>>(method: K, ...args: MethodArgs<T, K>) => this.callWithin(timeoutMs, method, args, signal) as Promise<MethodResult<T, K>>,
    };
  }

  private callWithin(timeoutMs: number, method: string, args: unknown[], signal?: AbortSignal): Promise<unknown> {
    // a connection whose job the GCS finished calls nothing more (its owned actors are gone)
    const finished = this.ctx.job?.finished;
    if (finished) return Promise.reject(finished);
    // what would arrive changed (a Map as an object, a function as null) is refused before it is sent
    for (let index = 0; index < args.length; index++) {
      const problem = plainDataProblem(args[index]);
      if (problem) return Promise.reject(new CallArgumentError(this.actorId, method, index, problem.path, problem.problem));
    }
    if (signal?.aborted) return Promise.reject(new CallAbortedError(this.actorId, method, false, signal.reason));
    const seq = this.nextCall++;
    // Without retries the gate never shuts (only a retry shuts it): the call is the one request.
    if (this.maxTaskRetries === 0) return this.callOnce(method, args, timeoutMs, timeoutMs, signal);
    return this.callWithRetries(seq, method, args, timeoutMs, signal);
  }

  /**
   * A call sent again after it met an actor that could not take it (UnavailableNow), or after the
   * connection dropped while it waited (CONNECTION_LOST: the actor may or may not have run it, so a
   * retried call runs at least once). Either shuts the gate, and the retry waits there until the
   * GCS reports the actor ALIVE. Each sending again counts against maxTaskRetries.
   */
  private async callWithRetries(seq: number, method: string, args: unknown[], timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    let retriesLeft = this.maxTaskRetries;
    let retried = false;
    // the call's timeout bounds it whole — its waits at the gate and every sending — not each sending
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if ((retriesLeft !== 0 || retried) && this.gate.shut) {
        const waited = this.#waitGate(seq, deadline, timeoutMs);
        await (signal === undefined ? waited : abortable(waited, signal, () => new CallAbortedError(this.actorId, method, retried, signal.reason)));
      }
      // aborted while a try failed, or after the gate let it through: callOnce's listener would never hear it
      if (signal?.aborted) throw new CallAbortedError(this.actorId, method, retried, signal.reason);
      const left = deadline - Date.now();
      if (left <= 0) throw this.#timedOut(timeoutMs);
      try {
        const value = await this.callOnce(method, args, left, timeoutMs, signal);
        this.gate.succeeded();
        return value;
      } catch (err) {
        // UnavailableNow is an ActorUnavailableError that knows the state the actor was in
        const unavailable = err instanceof UnavailableNow;
        if ((!unavailable && !(err instanceof ConnectionLostError)) || retriesLeft === 0) throw err;
        if (retriesLeft > 0) retriesLeft--;
        retried = true;
        if (unavailable) this.gate.shutAfter(err.info);
        else this.gate.shutUntilAlive();
      }
    }
  }

  /** The gate's wait, up to the call's deadline: TIMEOUT then (the call was not sent again, so it did not run then). */
  #waitGate(seq: number, deadline: number, timeoutMs: number): Promise<void> {
    return this.gate.wait(seq, { deadline, timedOut: () => this.#timedOut(timeoutMs) });
  }

  #timedOut(timeoutMs: number): TimeoutError {
    return new TimeoutError((this.#callSubject ??= this.ctx.subjects.actorCall(this.actorId)), timeoutMs);
  }

  ready(opts: { timeoutMs?: number } = {}): Promise<ActorInfo> {
    return this.waitFor((info) => info.state === 'ALIVE', { what: `ready() of actor ${this.actorId}`, timeoutMs: opts.timeoutMs });
  }

  async info(): Promise<ActorInfo> {
    const info = actorFromWire(await this.ctx.gcs.request('get_actor', { actorId: this.actorId }, actorInfo));
    this.observe(info);
    // remote()'s watch takes the answer like an event: an ALIVE or DEAD one ends it, so a watch whose
    // event was lost (a NATS outage) does not stay registered for the client's life
    this.creation?.seen(info);
    return info;
  }

  async kill(opts: { noRestart?: boolean } = {}): Promise<void> {
    const noRestart = opts.noRestart ?? true;
    await this.ctx.gcs.request('kill_actor', { actorId: this.actorId, noRestart }, unknown());
    if (noRestart) {
      await this.waitFor((info) => info.state === 'DEAD', { what: `kill() of actor ${this.actorId}`, timeoutMs: this.ctx.requestTimeoutMs });
    }
  }

  /** Every state the handle learns of, from events and the GCS's answers. */
  private observe(info: ActorInfo): void {
    if (info.state === 'DEAD') this.death = { cause: info.deathCause };
    // calls waiting for the actor's creation go once it is ALIVE (call-resend.ts)
    else if (info.state === 'ALIVE') this.#resend?.alive(info);
    else this.#resend?.seen(info);
  }

  /**
   * Resolves with the first state that passes; a DEAD that does not is an ActorDiedError.
   *
   * It follows the actor's actor_state events, and while it waits it also asks the GCS now and then
   * (get_actor after RESYNC_MS.first, doubling up to RESYNC_MS.max): events travel on core NATS and
   * one can be lost — published while the GCS's leader lease had lapsed after a NATS outage, or
   * while this connection was reconnecting — and a wait must not hang on it (the relist of a
   * Kubernetes informer, for the same reason).
   */
  private waitFor(pass: (info: ActorInfo) => boolean, opts: { what: string; timeoutMs?: number }): Promise<ActorInfo> {
    return new Promise<ActorInfo>((resolve, reject) => {
      let stopTimer: (() => void) | undefined;
      let resync: NodeJS.Timeout | undefined;
      let sub: Subscription | undefined;
      let settled = false;
      const settle = (done: () => void): void => {
        if (settled) return;
        settled = true;
        stopTimer?.();
        clearTimeout(resync);
        sub?.unsubscribe();
        done();
      };
      const judge = (info: ActorInfo): void => {
        if (pass(info)) settle(() => resolve(info));
        else if (info.state === 'DEAD') settle(() => reject(new ActorDiedError(this.actorId, info.deathCause)));
      };
      sub = this.state$.subscribe({
        next: judge,
        error: (err: unknown) => settle(() => reject(err)),
        complete: () => settle(() => reject(new BusClosedError())),
      });
      if (settled) {
        sub.unsubscribe();
        return;
      }
      if (opts.timeoutMs !== undefined) {
        // stall-aware: an ALIVE that arrived while the driver's loop was held is read first (runtime/process/stall.ts)
        stopTimer = stallAwareTimeout(() => settle(() => reject(new WaitTimeoutError(opts.what, opts.timeoutMs!))), opts.timeoutMs);
      }
      let backoffMs: number = RESYNC_MS.first;
      const askLater = (): void => {
        resync = setTimeout(() => {
          this.info().then(
            (info) => {
              if (settled) return;
              judge(info);
              if (!settled) askLater();
            },
            (err: unknown) => {
              if (settled) return;
              if (err instanceof BusClosedError) settle(() => reject(err));
              else askLater(); // the GCS is not answering now: ask again later
            },
          );
          backoffMs = Math.min(backoffMs * 2, RESYNC_MS.max);
        }, backoffMs);
        resync.unref?.();
      };
      askLater();
    });
  }

  /**
   * One call straight to the actor's host. While it is in flight, an actor_state event saying the
   * actor died or is restarting fails it at once (see InFlightCalls), rather than leaving it
   * waiting on a host that is gone. One that meets no responder while the GCS reports the actor
   * ALIVE is sent again (call-resend.ts); calls made meanwhile wait behind it, in call order.
   */
  /**
   * One sending, waiting `timeoutMs`; a TimeoutError names `reportedMs`, the call's own timeout
   * (default the same). An abort of `signal` fails it at once, wherever it is (InFlightCalls).
   */
  private callOnce(method: string, args: unknown[], timeoutMs: number, reportedMs = timeoutMs, signal?: AbortSignal): Promise<unknown> {
    if (this.death) return Promise.reject(new ActorDiedError(this.actorId, this.death.cause));
    let data: Uint8Array;
    // a call with a signal carries an id and a key of its own: what its cancel_call must name
    const cancel = signal === undefined ? undefined : newCallCancel();
    try {
      data = encodeCall(method, args, cancel);
      this.#callSubject ??= this.ctx.subjects.actorCall(this.actorId);
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
          this.#inFlight.reject(call, new CallAbortedError(this.actorId, method, sent, signal.reason));
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
        (this.#resend ??= this.#newResend()).awaitCreationOf(call, this.creation!.latest!);
      } else this.#send(call, timeoutMs);
    });
  }

  /** Sends `call`; one sent again, or held first, has what is left of its time. */
  #send(call: PendingCall, timeoutMs = Math.max(1, call.deadline - Date.now())): void {
    const sent = (call.sent = ++this.#sends);
    call.dispatched = true;
    (this.#outbox ??= new CallOutbox(this.ctx.bus)).send(this.#callSubject!, call.data, timeoutMs, (err, msg) => {
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
      this.ctx.bus.publish(this.#callSubject!, encode('cancel_call', cancel));
    } catch {
      // the connection closed: the host will not hear it, as after a lost message
    }
  }

  /** Whether remote()'s watch still follows the actor and has seen it only being created (call-resend.ts). */
  #creating(): boolean {
    const latest = this.creation?.latest;
    return latest !== undefined && beingCreated(latest);
  }

  /** Made at the first call that meets no responder. */
  #newResend(): CallResend<PendingCall> {
    return new CallResend<PendingCall>({
      actorId: this.actorId,
      why: () => this.unreachable(),
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
    return refsDecoded() !== refs ? this.ctx.revive(value) : value;
  }

  /** Nothing hosts the actor: ask the GCS whether it is dead or just not alive right now. */
  private async unreachable(): Promise<Error> {
    const info = await this.info();
    return info.state === 'DEAD' ? new ActorDiedError(this.actorId, info.deathCause) : new UnavailableNow(this.actorId, info);
  }
}
