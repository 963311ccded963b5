// An actor handle: what a driver holds to call an actor, wait for it, follow its state and kill it.
// Its parts beside it: call options and their checks (call-options.ts), the way its calls travel
// (call-sender.ts, with in-flight-calls.ts), what it knows of the actor's state (actor-watch.ts) and
// its waits for a state (actor-wait.ts).
import type { JobOwner } from './job-session.ts';
import type { Observable } from 'rxjs';
import { plainDataProblem } from '../../protocols/plain-data.ts';
import { actorInfo } from '../../protocols/messages/actor.ts';
import { ActorRef } from '../../protocols/actor-ref.ts';
import { rx } from '../rx.ts';
import { unknown } from '../../protocols/validate.ts';
import { ConnectionLostError } from '../bus/errors.ts';
import type { MethodArgs, MethodNames, MethodResult } from './actor-class.ts';
import type { ActorInfo } from './cluster-info.types.ts';
import { CallAbortedError, CallArgumentError } from './errors.ts';
import { actorFromWire } from './from-wire.ts';
import type { GcsClient } from './gcs-client.ts';
import { abortable } from './abort-watch.ts';
import { RestartGate, UnavailableNow } from './restart-gate.ts';
import { isNewer, type CreationWatch } from './actor-watch.ts';
import { waitForState } from './actor-wait.ts';
import { callSignalOf, callTimeoutOf, type CallOptions } from './call-options.ts';
import { CallSender, type CallContext } from './call-sender.ts';

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

/** What a handle needs from its cluster connection. */
export interface HandleContext extends CallContext {
  readonly gcs: GcsClient;
  readonly callTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** The connection's job (job-session.ts): creations are registered under it; absent outside a job. */
  readonly job?: JobOwner | undefined;
}

/**
 * Extends ActorRef: a handle passed as an argument or returned from a method travels as a reference
 * to its actor (protocols/actor-ref.ts) and arrives as a handle on the receiver's connection.
 */
export class ClientActorHandle<T> extends ActorRef implements ActorHandle<T> {
  /** Made on the first read of state$ (rxjs is loaded then, see rx.ts). */
  #state$: Observable<ActorInfo> | undefined;
  /** Where calls with retries wait while the actor restarts (restart-gate.ts). */
  private readonly gate: RestartGate;
  /** Numbers calls in the order they were made. */
  private nextCall = 0;
  /** How its calls travel to the actor and back (call-sender.ts). */
  readonly #calls: CallSender;

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
    const info = (): Promise<ActorInfo> => this.info();
    this.gate = new RestartGate({ actorId, watch: (w) => ctx.watchActor(actorId, w), info });
    this.#calls = new CallSender({ ctx, actorId, creation, info });
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
        this.#calls.observe(info);
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
    const timeoutMs = callTimeoutOf(opts, this.ctx.callTimeoutMs);
    const signal = callSignalOf(opts);
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
    if (this.maxTaskRetries === 0) return this.#calls.callOnce(method, args, timeoutMs, timeoutMs, signal);
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
      if (left <= 0) throw this.#calls.timedOut(timeoutMs);
      try {
        const value = await this.#calls.callOnce(method, args, left, timeoutMs, signal);
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
    return this.gate.wait(seq, { deadline, timedOut: () => this.#calls.timedOut(timeoutMs) });
  }

  ready(opts: { timeoutMs?: number } = {}): Promise<ActorInfo> {
    return waitForState(this, (info) => info.state === 'ALIVE', { what: `ready() of actor ${this.actorId}`, timeoutMs: opts.timeoutMs });
  }

  async info(): Promise<ActorInfo> {
    const info = actorFromWire(await this.ctx.gcs.request('get_actor', { actorId: this.actorId }, actorInfo));
    this.#calls.observe(info);
    // remote()'s watch takes the answer like an event: an ALIVE or DEAD one ends it, so a watch whose
    // event was lost (a NATS outage) does not stay registered for the client's life
    this.creation?.seen(info);
    return info;
  }

  async kill(opts: { noRestart?: boolean } = {}): Promise<void> {
    const noRestart = opts.noRestart ?? true;
    await this.ctx.gcs.request('kill_actor', { actorId: this.actorId, noRestart }, unknown());
    if (noRestart) {
      await waitForState(this, (info) => info.state === 'DEAD', { what: `kill() of actor ${this.actorId}`, timeoutMs: this.ctx.requestTimeoutMs });
    }
  }
}
