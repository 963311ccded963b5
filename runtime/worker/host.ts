// A worker host's actors: ActorHost creates, fences and kills them (an actor's start is
// hosted-actor.ts), and takes in each call on an actor's call subject for its mailbox (call-job.ts).
import type { CodeSourcePolicy } from '../../protocols/code-source.ts';
import { decodeCallBatch, isCallBatch } from '../../protocols/call-batch.ts';
import { decodeCallOrCancel, isCancelCall } from '../../protocols/fast-path.ts';
import type { CallBatch, CancelCall, CreateActor } from '../../protocols/messages/actor.ts';
import { encodeError } from '../../protocols/reply.ts';
import { subjects, type ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, BusMsg } from '../bus/bus.ts';
import { ActorDiedError, ActorFencedError } from '../errors.ts';
import { cancelKeyMatches } from './cancel.ts';
import { BatchAnswers } from './answers.ts';
import { CallJob } from './call-job.ts';
import { CancellableCallJob } from './cancellable-call-job.ts';
import { startActor, type HostedActor } from './hosted-actor.ts';
import { MalformedCounter } from './malformed.ts';
import { respond } from './respond.ts';
import { refsDecoded } from '../../protocols/actor-ref.ts';
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

  /** Starts an actor (hosted-actor.ts); once constructed, unless killed meanwhile, it is held and, unfenced, subscribed. */
  private start(spec: CreateActor, entry: Starting): Promise<void> {
    return startActor(spec, {
      node: this.node,
      codeSources: this.codeSources,
      workerCluster: this.workerCluster,
      isKilled: () => entry.killed || this.stopped,
      onStarted: (actor) => {
        if (!this.fenced) this.subscribe(actor);
        this.actors.set(spec.actorId, actor);
      },
    });
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
