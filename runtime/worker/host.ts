import type { CodeSourcePolicy } from '../../protocols/code-source.ts';
import { decodeCallBatch, isCallBatch } from '../../protocols/call-batch.ts';
import { decodeCallOrCancel, isCancelCall } from '../../protocols/fast-path.ts';
import type { CallBatch, CancelCall, CreateActor } from '../../protocols/messages/actor.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { subjects, type ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, BusMsg, Subscription } from '../bus/bus.ts';
import { ActorDiedError, ActorFencedError, RemoteError } from '../errors.ts';
import { OrreryError } from '../../lib/errors.ts';
import { NEVER_ABORTED, runInContext, type RuntimeContext } from './context.ts';
import { cancelKeyMatches } from './cancel.ts';
import { loadActorClass } from './load.ts';
import { Answers, BatchAnswers } from './answers.ts';
import { Mailbox, type MailboxJob } from './mailbox.ts';
import { MalformedCounter } from './malformed.ts';
import { toRemoteError, unsendableResult } from './remote-error.ts';
import { replyBytes, respond } from './respond.ts';
import { containsRef, refsDecoded } from '../../protocols/actor-ref.ts';
import { plainDataProblem } from '../../protocols/plain-data.ts';
import type { WorkerClusterSource } from './worker-cluster.ts';

/** The node a host runs on, as getRuntimeContext() reports it (protocols/ipc.ts). */
export type { HostNode } from '../../protocols/ipc.ts';
import type { HostNode } from '../../protocols/ipc.ts';

export interface ActorHostOptions {
  bus: Bus;
  /** Cluster name, the second subject token; default 'default'. */
  cluster?: string;
  node: HostNode;
  log?: (line: string) => void;
  /** Which module URLs this host loads code from (protocols/code-source.ts); default: any file: URL. */
  codeSources?: CodeSourcePolicy;
  /** Turns actor references in arguments into handles (worker-cluster.ts); without it they stay references. */
  workerCluster?: WorkerClusterSource;
}

interface HostedActor {
  readonly actorId: string;
  readonly className: string;
  readonly incarnation: number;
  readonly instance: object;
  readonly context: RuntimeContext;
  readonly mailbox: Mailbox;
  sub?: Subscription;
  /** Its calls that can be cancelled (sent with a cancel key) and are not answered yet, by call id; made at the first. */
  cancellable: Map<string, CancellableCallJob> | undefined;
}

interface Starting {
  readonly incarnation: number;
  done: Promise<void>;
  killed: boolean;
}

/**
 * Runs actors on a bus: creates each from its module URL and class name, subscribes its
 * `actor.<actorId>.call` subject (no queue group: one host holds an actor), and runs its calls
 * through its mailbox. Replies carry the awaited return value, or REMOTE_ERROR when the method
 * throws. Anything malformed on a call subject is answered with its wire error and counted.
 */
export class ActorHost {
  private readonly actors = new Map<string, HostedActor>();
  private readonly starting = new Map<string, Starting>();
  private readonly subjects: ClusterSubjects;
  private readonly bus: Bus;
  private readonly node: HostNode;
  private readonly log: (line: string) => void;
  private readonly codeSources: CodeSourcePolicy;
  private readonly workerCluster: WorkerClusterSource | undefined;
  private stopped = false;
  /** Fenced: no actor's call subject is subscribed (fence() / unfence()). */
  private fenced = false;
  readonly malformed: MalformedCounter;
  /**
   * What cancel_call messages did: calls dropped from a mailbox unstarted, running calls whose
   * signal was aborted, and cancels that matched no call waiting or running here (already answered,
   * never received, or a wrong key).
   */
  readonly cancels = { dropped: 0, signalled: 0, unmatched: 0 };

  constructor(opts: ActorHostOptions) {
    this.bus = opts.bus;
    this.node = opts.node;
    this.subjects = subjects(opts.cluster ?? 'default');
    this.log = opts.log ?? (() => {});
    this.codeSources = opts.codeSources ?? {};
    this.workerCluster = opts.workerCluster;
    this.malformed = new MalformedCounter('worker host: malformed call', this.log);
  }

  /** Number of live actors. */
  get size(): number {
    return this.actors.size;
  }

  has(actorId: string): boolean {
    return this.actors.has(actorId);
  }

  /** Calls of one actor that are running and waiting, or undefined when the host does not hold it. */
  load(actorId: string): { inFlight: number; waiting: number } | undefined {
    const mailbox = this.actors.get(actorId)?.mailbox;
    return mailbox && { inFlight: mailbox.inFlight, waiting: mailbox.waiting };
  }

  actorIds(): string[] {
    return [...this.actors.keys()];
  }

  /**
   * Creates an actor and subscribes its call subject; resolves once its constructor has returned.
   * Rejects with CodeSourceRefusedError (CODE_SOURCE_REFUSED: the module URL is not accepted here,
   * and nothing was imported), CodeLoadError (CODE_LOAD_FAILED), RemoteError (the constructor threw) or
   * ActorDiedError (killed before it finished starting). The same incarnation twice is one actor.
   */
  async create(spec: CreateActor): Promise<void> {
    if (this.stopped) throw new ActorDiedError(spec.actorId, 'the worker host is stopping');
    const running = this.actors.get(spec.actorId);
    if (running?.incarnation === spec.incarnation) return;
    const pending = this.starting.get(spec.actorId);
    if (pending?.incarnation === spec.incarnation) return pending.done;
    this.kill(spec.actorId);
    const entry: Starting = { incarnation: spec.incarnation, killed: false, done: Promise.resolve() };
    entry.done = this.start(spec, entry);
    this.starting.set(spec.actorId, entry);
    try {
      await entry.done;
    } finally {
      if (this.starting.get(spec.actorId) === entry) this.starting.delete(spec.actorId);
    }
  }

  /** Drops an actor: unsubscribes it, and fails its waiting and running calls with ACTOR_DIED. */
  kill(actorId: string): boolean {
    const pending = this.starting.get(actorId);
    if (pending) {
      pending.killed = true;
      this.starting.delete(actorId);
    }
    const actor = this.actors.get(actorId);
    if (!actor) return pending !== undefined;
    this.actors.delete(actorId);
    actor.sub?.unsubscribe();
    actor.mailbox.close(new ActorDiedError(actorId, 'killed'));
    return true;
  }

  /**
   * Stops answering calls (issue 13: the raylet's lease ran out, the GCS may start these actors
   * elsewhere): every actor's call subscription ends, and actors created meanwhile are not
   * subscribed. Callers get NO_RESPONDERS, as from a host that is gone. Calls already in a mailbox
   * finish. The subscriptions are drained, not dropped: a call the server routed here before it
   * had our UNSUB is answered ACTOR_FENCED without running (onCall), so its caller sends it again
   * at once rather than waiting out its timeout for an answer that would never come. The cost is
   * paid here, once per transition, not per call.
   */
  fence(): void {
    if (this.fenced) return;
    this.fenced = true;
    for (const actor of this.actors.values()) {
      void actor.sub?.drain();
      actor.sub = undefined;
    }
  }

  /** Answers calls again: every actor's call subject is subscribed anew. */
  unfence(): void {
    if (!this.fenced) return;
    this.fenced = false;
    for (const actor of this.actors.values()) this.subscribe(actor);
  }

  get isFenced(): boolean {
    return this.fenced;
  }

  /** Kills every actor and refuses new ones. */
  stop(): void {
    this.stopped = true;
    for (const id of [...this.starting.keys(), ...this.actors.keys()]) this.kill(id);
  }

  private async start(spec: CreateActor, entry: Starting): Promise<void> {
    const cls = await loadActorClass(spec.code.moduleUrl, spec.code.className, this.codeSources);
    // Named fields, not `{ ...this.node, actorId }`: V8 gave each spread copy of the node a hidden
    // class of its own (~0.5 KB per actor in a host with 2,500; heap snapshot), this one shape is shared.
    const { nodeId, nodeName, labels } = this.node;
    const context: RuntimeContext = { nodeId, nodeName, labels, actorId: spec.actorId, jobId: spec.jobId, namespace: spec.namespace, cluster: this.workerCluster, signal: NEVER_ABORTED };
    // handles passed to the constructor arrive as references: handles on this host's connection
    const args = this.workerCluster !== undefined && containsRef(spec.code.args) ? ((await this.workerCluster.get()).revive(spec.code.args) as unknown[]) : spec.code.args;
    if (entry.killed || this.stopped) throw new ActorDiedError(spec.actorId, 'killed while starting');
    let instance: object;
    try {
      instance = runInContext(context, () => new cls(...args));
    } catch (err) {
      throw toRemoteError(err);
    }
    if (entry.killed || this.stopped) throw new ActorDiedError(spec.actorId, 'killed while starting');
    const actor: HostedActor = {
      actorId: spec.actorId,
      className: spec.code.className,
      incarnation: spec.incarnation,
      instance,
      context,
      mailbox: new Mailbox(spec.maxConcurrency),
      cancellable: undefined,
    };
    if (!this.fenced) this.subscribe(actor);
    this.actors.set(spec.actorId, actor);
  }

  private subscribe(actor: HostedActor): void {
    actor.sub = this.bus.subscribe(this.subjects.actorCall(actor.actorId), (msg) => this.onCall(actor, msg));
  }


  private onCall(actor: HostedActor, msg: BusMsg): void {
    if (isCallBatch(msg.data)) this.onBatch(actor, msg);
    else this.onOneCall(actor, msg);
  }

  /**
   * Calls one handle made in one turn (protocols/call-batch.ts): each taken as if it had come alone,
   * in the batch's order, and answered through BatchAnswers. A batch that cannot be read is answered
   * with the error as a whole: the caller fails each of its calls with it.
   */
  private onBatch(actor: HostedActor, msg: BusMsg): void {
    let batch: CallBatch;
    try {
      batch = decodeCallBatch(msg.data);
    } catch (err) {
      this.malformed.count(err);
      respond(msg, () => encodeError(err));
      return;
    }
    const answers = new BatchAnswers(msg, this.publishReply);
    for (let i = 0; i < batch.tokens.length; i++) this.onOneCall(actor, answers.call(batch.tokens[i]!, batch.calls[i]!));
  }

  /** A reply too large for a reply_batch, sent alone to its call's own reply subject (BatchAnswers). */
  private readonly publishReply = (subject: string, data: Uint8Array): void => this.bus.publish(subject, data);

  private onOneCall(actor: HostedActor, msg: BusMsg): void {
    // delivered by a subscription still draining since fence(): not run, and answered so; unfenced
    // again, the host runs what the old subscription still brings, in order, as the server routes
    // every later call to the fresh one
    if (this.fenced) return void respond(msg, () => encodeError(new ActorFencedError(actor.actorId)));
    const refs = refsDecoded();
    let call: ReturnType<typeof decodeCallOrCancel>;
    try {
      call = decodeCallOrCancel(msg.data);
    } catch (err) {
      this.malformed.count(err);
      respond(msg, () => encodeError(err));
      return;
    }
    if (isCancelCall(call)) return this.onCancel(actor, call);
    // handles passed as arguments arrive as references (protocols/actor-ref.ts): made handles on
    // this host's connection before the method sees them — in the mailbox, so calls keep their order
    const revive = refsDecoded() !== refs ? this.workerCluster : undefined;
    const { method, args, callId, cancelKey } = call;
    if (callId === undefined || cancelKey === undefined) return actor.mailbox.push(new CallJob(actor, method, args, msg, revive));
    const cancellable = (actor.cancellable ??= new Map());
    // a call id seen twice (a call sent again after no responder, a hostile caller) keeps the first
    if (cancellable.has(callId)) return actor.mailbox.push(new CallJob(actor, method, args, msg, revive));
    const job = new CancellableCallJob(actor, method, args, msg, revive, callId, cancelKey);
    cancellable.set(callId, job);
    actor.mailbox.push(job);
  }

  /**
   * cancel_call: the call's caller aborted it. Waiting in the mailbox, it is answered ABORTED now and
   * skipped when its turn comes; running, its signal aborts. Anything else changes nothing.
   */
  private onCancel(actor: HostedActor, cancel: CancelCall): void {
    const job = actor.cancellable?.get(cancel.callId);
    if (job === undefined || !cancelKeyMatches(job.cancelKey, cancel.cancelKey)) {
      this.cancels.unmatched++;
      return;
    }
    if (job.cancel()) this.cancels.signalled++;
    else this.cancels.dropped++;
  }
}

/** Shared by every actor of this process: msg.respond() answers on the connection each call came on. */
const answers = new Answers();

/** One call as a mailbox job: runs the method in the actor's context and answers exactly once. */
class CallJob implements MailboxJob {
  #answered = false;

  constructor(
    protected readonly actor: HostedActor,
    protected readonly method: string,
    private args: unknown[],
    private readonly msg: BusMsg,
    /** Set when the arguments hold actor references to make handles of first. */
    private readonly revive?: WorkerClusterSource,
  ) {}

  run(): Promise<void> | void {
    const { revive } = this;
    if (revive === undefined) return this.invoke();
    const cluster = revive.loaded;
    if (cluster !== undefined) {
      this.args = cluster.revive(this.args) as unknown[];
      return this.invoke();
    }
    // the first handle this host receives loads its cluster; the mailbox waits for it
    return revive.get().then(
      (loaded) => {
        this.args = loaded.revive(this.args) as unknown[];
        return this.invoke();
      },
      (err: unknown) => this.fail(err),
    );
  }

  private invoke(): Promise<void> | void {
    const { actor, args } = this;
    let value: unknown;
    let thenable: boolean;
    try {
      const fn = methodOf(actor, this.method);
      value = runInContext(this.context(), () => fn.apply(actor.instance, args));
      thenable = isThenable(value); // inside the try: a `then` getter may throw
    } catch (err) {
      return this.fail(toRemoteError(err));
    }
    // A plain value is answered now; only a method that returned a promise (or thenable) is awaited.
    if (!thenable) return this.succeed(value);
    return Promise.resolve(value).then(
      (result) => this.succeed(result),
      (err: unknown) => this.fail(toRemoteError(err)),
    );
  }

  abort(err: Error): void {
    this.fail(err);
  }

  /** The runtime context the method runs in: its actor's. */
  protected context(): RuntimeContext {
    return this.actor.context;
  }

  /** The answer has been sent. */
  protected answered(): void {}

  private succeed(value: unknown): void {
    if (this.#answered) return;
    // what would arrive changed (a Map as an object, a class instance without its class) is refused
    const problem = plainDataProblem(value);
    if (problem) return this.fail(unsendableResult(`${this.actor.className}.${this.method}`, problem));
    this.#answered = true;
    this.answered();
    let data: Uint8Array;
    try {
      data = encodeOk(value);
    } catch (err) {
      data = encodeError(err); // a value msgpack cannot carry, a reply over the size limit
    }
    answers.send(this.msg, data);
  }

  protected fail(err: unknown): void {
    if (this.#answered) return;
    this.#answered = true;
    this.answered();
    answers.send(this.msg, replyBytes(() => encodeError(err)));
  }
}

/**
 * A call its caller can cancel (it came with a call id and a cancel key): it runs with a signal of
 * its own in its runtime context, and is kept in its actor's `cancellable` map until answered, where
 * a cancel_call finds it (ActorHost.onCancel).
 */
class CancellableCallJob extends CallJob {
  #started = false;
  #dropped = false;
  /** Made when the method first reads its signal: an AbortController costs more than the rest of a call's work here. */
  #controller: AbortController | undefined;
  /** Why it was cancelled while running, if it was before anything read its signal. */
  #abortedWith: Error | undefined;

  constructor(actor: HostedActor, method: string, args: unknown[], msg: BusMsg, revive: WorkerClusterSource | undefined, readonly callId: string, readonly cancelKey: string) {
    super(actor, method, args, msg, revive);
  }

  override run(): Promise<void> | void {
    if (this.#dropped) return; // cancelled while it waited: answered then
    this.#started = true;
    return super.run();
  }

  protected override context(): RuntimeContext {
    return new CallContext(this.actor.context, this);
  }

  protected override answered(): void {
    this.actor.cancellable?.delete(this.callId);
  }

  /** The signal the running method sees (CallContext). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortedWith !== undefined) this.#controller.abort(this.#abortedWith);
    }
    return this.#controller.signal;
  }

  /** Its caller cancelled it: false when it had not started (answered ABORTED, it never will), true when its running method's signal aborted. */
  cancel(): boolean {
    const what = `${this.actor.className}.${this.method}`;
    const detail = { actorId: this.actor.actorId, method: this.method };
    if (!this.#started) {
      this.#dropped = true;
      this.fail(new OrreryError('ABORTED', `call ${what} was cancelled by its caller before it started; it did not run`, { detail }));
      return false;
    }
    this.#abortedWith ??= new OrreryError('ABORTED', `call ${what} was cancelled by its caller`, { detail });
    this.#controller?.abort(this.#abortedWith);
    return true;
  }
}

/**
 * A cancellable call's runtime context: its actor's, with the call's own signal, made only if the
 * method asks for it (getRuntimeContext() reads `signal`).
 */
class CallContext implements RuntimeContext {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly actorId: string | undefined;
  readonly jobId: string | undefined;
  readonly namespace: string | undefined;
  readonly cluster: RuntimeContext['cluster'];

  constructor(
    base: RuntimeContext,
    private readonly job: CancellableCallJob,
  ) {
    this.nodeId = base.nodeId;
    this.nodeName = base.nodeName;
    this.labels = base.labels;
    this.actorId = base.actorId;
    this.jobId = base.jobId;
    this.namespace = base.namespace;
    this.cluster = base.cluster;
  }

  get signal(): AbortSignal {
    return this.job.signal;
  }
}
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function methodOf(actor: HostedActor, method: string): (...args: unknown[]) => unknown {
  const fn: unknown = (actor.instance as Record<string, unknown>)[method];
  const inherited = (Object.prototype as unknown as Record<string, unknown>)[method];
  if (typeof fn !== 'function' || method === 'constructor' || fn === inherited) {
    throw new RemoteError({ name: 'TypeError', message: `${actor.className}.${method} is not a function` });
  }
  return fn as (...args: unknown[]) => unknown;
}

