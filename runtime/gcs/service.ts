import { performance } from 'node:perf_hooks';
import { createActor, fromPromise, waitFor, type Actor, type AnyActorRef, type AnyStateMachine, type InspectionEvent, type Snapshot } from 'xstate';
import { ClusterState } from '../../lib/cluster/cluster-state.ts';
import { InvalidOptionError, OrreryError } from '../../lib/errors.ts';
import type { Rng } from '../../lib/random.ts';
import { DEFAULT_MAX_BYTES } from '../../protocols/codec.ts';
import { subjects, type ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, Subscription } from '../bus/bus.ts';
import { gcsVerbsOf, inboxRole } from '../auth/roles.ts';
import { RejectionLog } from '../process/rejection-log.ts';
import { RESUMED_INPUT } from '../inspect/mapper.ts';
import type { ActorContext, ActorMachine, ActorMachineInput } from './actor.machine.ts';
import { provideActorEffects } from './actor-effects.ts';
import { ActorDirectory } from './actors.ts';
import { DEFAULT_MAX_DEAD_ACTORS, DEFAULT_MAX_DEAD_NODES, DEFAULT_MAX_REMOVED_GROUPS, DeadActors } from './dead-actors.ts';
import { DEFAULT_EVENT_HISTORY, EventLog } from './event-log.ts';
import { EventPublisher } from './events.ts';
import { EvictionGuard } from './eviction.ts';
import { IntakeQueue, slicer } from './intake-queue.ts';
import { actorChildId, gcsMachine, nodeChildId, stopMachine, type ActorRef, type GcsMachine, type NodeRef } from './gcs.machine.ts';
import { NodeDirectory } from './nodes.ts';
import { nodeMachine, type NodeMachine, type NodeMachineInput } from './node.machine.ts';
import { PendingQueue } from './pending-queue.ts';
import { BundleClient } from './bundle-client.ts';
import { PlacementGroupDirectory } from './placement-groups.ts';
import { PG_QUEUE_PREFIX } from './placement-group-table.ts';
import { RayletClient } from './raylets.ts';
import { serveVerbs } from './routes.ts';
import { MemoryStore, type GcsStore } from './store.ts';
import { Recovery } from './recovery.ts';
import type { GcsStatusWire } from '../../protocols/messages/cluster.ts';
import { DEFAULT_VIEW_INTERVAL_MS, ViewBroadcaster } from './view.ts';
import { AutoscalerReports } from './autoscaler-reports.ts';
import { Demands } from './demands.ts';
import { WireIntake } from './wire.ts';
import { DEFAULT_JOB_TIMEOUT_MS, JobDirectory } from './jobs.ts';

export interface GcsOptions {
  bus: Bus;
  /** The cluster name, the second subject token; default 'default'. */
  cluster?: string;
  /** How often raylets heartbeat (told to them at registration); default 500 ms. */
  heartbeatMs?: number;
  /** A node with no heartbeat for this long is DEAD; default 3,000 ms. */
  nodeTimeoutMs?: number;
  /** Resources whose nodes get a rare-resource taint (`['GPU']` → `orrery.io/rare-gpu=true`). */
  rareResources?: string[];
  /** Randomness of the scheduler; default Math.random. */
  rng?: Rng;
  /** Where the GCS reports what an operator should know; default: nowhere. */
  log?: (line: string) => void;
  /** How long a raylet may take to create an actor (constructor included); default 30,000 ms. */
  createTimeoutMs?: number;
  /** How long kill_actor waits for the raylet; default 5,000 ms. */
  killTimeoutMs?: number;
  /** How long one prepare/commit/cancel_bundle request waits for its raylet; default 5,000 ms. */
  bundleTimeoutMs?: number;
  /** Least time between two cluster-view deltas; default 100 ms. */
  viewIntervalMs?: number;
  /** Largest accepted message; default 1 MiB (nats-server's default max_payload). */
  maxMessageBytes?: number;
  /** The node and actor tables; default a fresh MemoryStore. */
  store?: GcsStore;
  /**
   * How many dead actors the GCS remembers (listed, answering get_actor); older deaths are forgotten,
   * from memory and the store. Default 100,000, Ray's `maximum_gcs_destroyed_actor_cached_count`.
   */
  maxDeadActors?: number;
  /**
   * How many dead nodes the node table keeps (listed, answering get_node); older deaths are
   * forgotten, from memory and the store. Default 1,000, Ray's `maximum_gcs_dead_node_cached_count`.
   */
  maxDeadNodes?: number;
  /** How many REMOVED placement groups stay listed (answering get_pg); older removals are forgotten. Default 10,000. */
  maxRemovedGroups?: number;
  /** How many recent events the GCS keeps for `list_events` (`orrery events`); default 10,000. */
  eventHistory?: number;
  /**
   * Longest stretch of one pending-queue pass, or of registrations handled back to back, before the
   * GCS yields to the event loop; default 5 ms.
   */
  queueSliceMs?: number;
  /** The leader epoch this GCS holds (leader.ts); every message to raylets carries it. Default 0: no lease. */
  epoch?: number;
  /** A raylet refused a message as STALE_EPOCH: a newer leader runs and this one must step down. */
  onStaleEpoch?: () => void;
  /**
   * Longest a GCS that found live nodes or actors in its store waits for raylets to register again
   * before it reconciles (the grace window); default 3,000 ms (docs/failover.md).
   */
  graceMs?: number;
  /**
   * How long an unplaceable actor's reason waits before it is worked out again (explain-backoff.ts,
   * EXPLAIN_BACKOFF_MS: 1 s doubling to 30 s); `initial: 0` explains on every attempt.
   */
  explainBackoffMs?: { initial: number; max: number };
  /**
   * A job (a driver connection) with no heartbeat for this long is FINISHED and what it owns is
   * killed; default 30,000 ms (docs/jobs.md). Drivers are told to beat six times per timeout.
   */
  jobTimeoutMs?: number;
  /** Finished jobs the GCS keeps listed; default 10,000. */
  maxFinishedJobs?: number;
  /** xstate inspection of the Gcs machine and every Node and Actor machine it spawned. */
  inspect?: (event: InspectionEvent) => void;
}

export class GcsService {
  readonly cluster: string;
  readonly subjects: ClusterSubjects;
  readonly state = new ClusterState();
  readonly store: GcsStore;
  readonly intake: WireIntake;
  readonly view: ViewBroadcaster;
  readonly queue: PendingQueue;
  /** The GCS's requests to raylets (create_actor, kill_actor). */
  readonly #raylets: RayletClient;
  readonly history: EventLog;
  /** Where register_actor requests wait their turn (intake-queue.ts). */
  readonly registrations: IntakeQueue;
  readonly eviction: EvictionGuard;
  readonly nodes: NodeDirectory;
  readonly actors: ActorDirectory;
  readonly groups: PlacementGroupDirectory;
  /** The job table: drivers' connections, their heartbeats and what they own (jobs.ts). */
  readonly jobs: JobDirectory;
  readonly bundles: BundleClient;
  readonly recovery: Recovery;
  /** resource_demands: what waits, grouped, and the nodes (demands.ts). */
  readonly demands: Demands;
  /** The autoscaler's latest status and its events (autoscaler-reports.ts). */
  readonly autoscaler: AutoscalerReports;
  readonly actor: Actor<GcsMachine>;
  /** Resolves when the Gcs machine serves: mutating requests that arrive earlier wait for it. */
  readonly serving: Promise<void>;
  #markServing!: () => void;
  /** When and why the grace window ended (recovering only): what `start()` times serving from. */
  #graceEnded: { at: number; by: string } | undefined;
  /** When the grace window began (recovering only): gcs_status counts what is left of it from here. */
  #graceFrom: number | undefined;
  readonly #epoch: number;
  #subscriptions: Subscription[] = [];
  #stopWatchingBus: (() => void) | undefined;
  #actorLogic: ActorMachine;
  /** Answers from raylets refused for want of their node's secret (node-owner.ts, answerSecret). */
  forgedAnswers = 0;
  #nodeLogic!: NodeMachine;
  readonly #actorRefs = new Set<AnyActorRef>();

  constructor(readonly opts: GcsOptions) {
    const log = opts.log ?? (() => {});
    this.cluster = opts.cluster ?? 'default';
    this.subjects = subjects(this.cluster);
    const heartbeatMs = positiveInt('heartbeatMs', opts.heartbeatMs, 500, 10);
    const nodeTimeoutMs = positiveInt('nodeTimeoutMs', opts.nodeTimeoutMs, 3000, 1);
    const rareResources = [...(opts.rareResources ?? [])];
    const rng = opts.rng ?? Math.random;
    const { bus } = opts;
    const epoch = positiveInt('epoch', opts.epoch, 0, 0);
    this.#epoch = epoch;
    let staleSaid = false;
    const staleEpoch = (): void => {
      if (staleSaid) return;
      staleSaid = true;
      log(`a raylet refused epoch ${epoch} as stale: a newer GCS leads`);
      opts.onStaleEpoch?.();
    };
    this.store = opts.store ?? new MemoryStore();
    const cluster = this.cluster;
    this.intake = new WireIntake({
      log,
      maxBytes: positiveInt('maxMessageBytes', opts.maxMessageBytes, DEFAULT_MAX_BYTES, 1),
      mayRequest: (verb, reply) => {
        const role = inboxRole(cluster, reply);
        return role === undefined || role === 'gcs' || (gcsVerbsOf(role) as readonly string[]).includes(verb);
      },
    });
    this.history = new EventLog(positiveInt('eventHistory', opts.eventHistory, DEFAULT_EVENT_HISTORY, 1), {
      // event seqs go on above the mark an earlier GCS stored ahead of them, so readers never see one twice
      firstSeq: this.store.getMeta('eventSeq') ?? 0,
      reserve: (upTo) => this.store.putMeta('eventSeq', upTo),
    });
    this.serving = new Promise((resolve) => (this.#markServing = resolve));
    const events = new EventPublisher({ bus, subjects: this.subjects, log, history: this.history });
    this.view = new ViewBroadcaster({ bus, subjects: this.subjects, state: this.state, intervalMs: positiveInt('viewIntervalMs', opts.viewIntervalMs, DEFAULT_VIEW_INTERVAL_MS, 1), log, maxBytes: positiveInt('maxMessageBytes', opts.maxMessageBytes, DEFAULT_MAX_BYTES, 1) });
    // answers to create_actor and the bundle verbs count only with the node's own secret
    const forgedAnswers = new RejectionLog('refused an answer', log);
    const answeredBy = (nodeId: string, secret: string | undefined): boolean => this.nodes.owners.owns(nodeId, secret);
    const forged = (nodeId: string, verb: string): void => {
      this.forgedAnswers++;
      forgedAnswers.note('NODE_NOT_OWNED', `refused an answer to ${verb} for node ${nodeId}: it does not carry that node's secret`);
    };
    const raylets = new RayletClient({
      bus,
      subjects: this.subjects,
      createTimeoutMs: positiveInt('createTimeoutMs', opts.createTimeoutMs, 30_000, 1),
      killTimeoutMs: positiveInt('killTimeoutMs', opts.killTimeoutMs, 5000, 1),
      log,
      epoch,
      staleEpoch,
      answeredBy,
      forged,
      nodeLive: (nodeId) => this.nodes.has(nodeId),
      nodeTimeoutMs,
    });
    this.#raylets = raylets;
    this.queue = new PendingQueue({
      tryPlace: (id) => (id.startsWith(PG_QUEUE_PREFIX) ? this.groups.tryPlace(id) : this.actors.tryPlace(id)),
      waitsOnPeers: (id) => !id.startsWith(PG_QUEUE_PREFIX) && this.actors.waitsOnPeers(id),
      log,
      sliceMs: positiveInt('queueSliceMs', opts.queueSliceMs, 5, 1),
    });
    const kick = this.queue.kick.bind(this.queue);
    this.registrations = new IntakeQueue({ sliceMs: positiveInt('queueSliceMs', opts.queueSliceMs, 5, 1) });
    this.eviction = new EvictionGuard({
      state: this.state,
      running: (id) => this.actors.running(id),
      evict: (id, reason, cause) => this.actors.evict(id, reason, cause),
      whenSettled: (fn) => this.queue.whenIdle(fn),
    });
    this.jobs = new JobDirectory({
      store: this.store,
      events,
      log,
      timeoutMs: positiveInt('jobTimeoutMs', opts.jobTimeoutMs, DEFAULT_JOB_TIMEOUT_MS, 1),
      ...(opts.maxFinishedJobs === undefined ? {} : { maxFinishedJobs: positiveInt('maxFinishedJobs', opts.maxFinishedJobs, 0, 0) }),
      // groups first: removing a group kills its actors too, with the group's cause
      endOwned: async (jobIds, cause) => {
        const sliceMs = positiveInt('queueSliceMs', opts.queueSliceMs, 5, 1);
        const groups = await this.groups.removeOwnedBy(jobIds, cause, slicer(sliceMs));
        const actors = await this.actors.killOwnedBy(jobIds, cause, slicer(sliceMs));
        return { actors, groups };
      },
    });
    const jobRunning = (jobId: string | undefined): void => this.jobs.checkRunning(jobId);
    this.actors = new ActorDirectory({
      state: this.state, store: this.store, events, raylets, rng, rareResources, log, jobRunning,
      deadActors: new DeadActors(positiveInt('maxDeadActors', opts.maxDeadActors, DEFAULT_MAX_DEAD_ACTORS, 0)),
      queue: () => this.queue,
      eviction: () => this.eviction,
      unreachableNodes: () => this.nodes.unreachableNodes,
      nodeUnreachable: (nodeId) => this.nodes.unreachable(nodeId),
      spawn: (input) => this.#startActor(input),
      wake: (context) => this.#wakeActor(context),
      explainBackoffMs: opts.explainBackoffMs,
    });
    this.bundles = new BundleClient({ bus, subjects: this.subjects, timeoutMs: positiveInt('bundleTimeoutMs', opts.bundleTimeoutMs, 5000, 1), log, epoch, staleEpoch, answeredBy, forged });
    this.groups = new PlacementGroupDirectory({
      state: this.state, events, bundles: this.bundles, rng, rareResources, log, jobRunning,
      maxRemovedGroups: positiveInt('maxRemovedGroups', opts.maxRemovedGroups, DEFAULT_MAX_REMOVED_GROUPS, 0),
      queue: () => this.queue,
      unreachableNodes: () => this.nodes.unreachableNodes,
      nodeUnreachable: (nodeId) => this.nodes.unreachable(nodeId),
      accepting: () => this.#accepting(),
      // group machines are stepped without an xstate actor (placement-group.runner.ts); their steps
      // go to the Gcs actor system's inspection observers, as its actors' do
      inspect: (event) => (this.actor.system as unknown as { _sendInspectionEvent(event: InspectionEvent): void })._sendInspectionEvent(event),
      store: this.store,
      nodeChanged: (nodeId) => {
        this.nodes.touched(nodeId);
        this.eviction.mark(nodeId);
      },
      resourcesChanged: () => kick('resources_freed'),
      killActorsInGroup: (pgId, cause) => this.actors.killInGroup(pgId, cause),
    });
    this.nodes = new NodeDirectory({
      state: this.state, store: this.store, events, view: this.view, heartbeatMs, nodeTimeoutMs, rareResources, log, kick, epoch,
      maxDeadNodes: positiveInt('maxDeadNodes', opts.maxDeadNodes, DEFAULT_MAX_DEAD_NODES, 0),
      constraintsChanged: (nodeId) => this.eviction.mark(nodeId),
      spawn: (input) => this.#startChild(this.#nodeLogic, nodeChildId(input.nodeId), input) as NodeRef,
      failActorsOn: (nodeId, cause) => this.actors.failOnNode(nodeId, cause),
      registered: (nodeId, running) => this.recovery.registered(nodeId, running),
      failGroupsOn: (nodeId) => this.groups.failOnNode(nodeId),
    });
    this.recovery = new Recovery({
      store: this.store,
      nodes: this.nodes,
      actors: this.actors,
      groups: this.groups,
      log,
      allBack: () => {
        this.#graceEnded ??= { at: performance.now(), by: 'early: every node the table held as live is back' };
        this.actor.send({ type: 'NODES_BACK' });
      },
    });
    this.demands = new Demands({
      state: this.state,
      rareResources,
      waiting: () => this.queue.ids(),
      isGroup: (id) => id.startsWith(PG_QUEUE_PREFIX),
      actor: (id) => this.actors.waiting(id),
      group: (id) => this.groups.waiting(id),
      bundleCounts: () => this.groups.bundleCounts(),
      maxBytes: this.intake.maxBytes,
    });
    this.autoscaler = new AutoscalerReports({ events });
    const actorLogic = provideActorEffects({
      state: this.state,
      log,
      nodeChanged: (nodeId) => {
        this.nodes.touched(nodeId);
        this.eviction.mark(nodeId);
      },
      resourcesFreed: () => kick('resources_freed'),
      requestCreate: (c) => this.actors.requestCreate(c),
      requestKill: (c) => this.actors.requestKill(c),
      scheduleFailed: (c, failure) => this.actors.scheduleFailed(c, failure),
      actorPlaced: (c) => this.actors.placed(c),
      actorLeft: (c) => this.actors.left(c),
    });
    this.#actorLogic = actorLogic;
    this.#nodeLogic = nodeMachine.provide({
      actions: {
        timeoutUnheard: ({ context }) => log(`node ${context.nodeId}: no heartbeat for ${context.nodeTimeoutMs} ms while the GCS could not hear it; not counted`),
      },
    });
    const machine = gcsMachine.provide({
      actors: {
        actor: actorLogic,
        openSubjects: fromPromise(async () => this.#open()),
        closeSubjects: fromPromise(async () => this.#close()),
        reconcile: fromPromise(async () => {
          this.#graceEnded ??= { at: performance.now(), by: 'the full window ran out' };
          await this.recovery.reconcile({
            sliceMs: positiveInt('queueSliceMs', opts.queueSliceMs, 5, 1),
            pause: () => new Promise((resolve) => setImmediate(() => resolve(this.actor.getSnapshot().matches({ recovering: 'reconciling' })))),
          });
          kick('node_registered');
        }),
      },
      actions: {
        reportChildError: (_, { childId, error }) => log(`${childId} stopped after an error: ${error instanceof Error ? error.message : String(error)}`),
        reportStartFailure: (_, { error }) => log(`cannot serve: ${error instanceof Error ? error.message : String(error)}`),
        reportReconcileFailure: (_, { error }) => log(`reconciling after a restart failed part-way: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
      },
    });
    const graceMs = positiveInt('graceMs', opts.graceMs, 3000, 0);
    this.actor = createActor(machine, { input: { cluster: this.cluster, recover: this.recovery.needed, graceMs }, ...(opts.inspect ? { inspect: opts.inspect } : {}) });
    let announced = false;
    this.actor.subscribe((snapshot) => {
      // subjects open (recovering or serving): said once, so clients send again at once what they
      // sent to a GCS that may be frozen or cut off (protocols/messages/cluster.ts, gcs_leader)
      if (!announced && (snapshot.value === 'serving' || snapshot.matches('recovering'))) {
        announced = true;
        const who = epoch > 0 ? `leader epoch ${epoch}` : 'no leader lease';
        events.leader(epoch, `the GCS opened its subjects (${who})${this.recovery.needed ? ', recovering what an earlier GCS left' : ''}`);
      }
      if (this.#graceFrom === undefined && snapshot.matches({ recovering: 'grace' })) this.#graceFrom = performance.now();
      if (snapshot.value === 'serving') {
        this.#markServing();
        void this.jobs.serve();
      }
    });
  }

  /**
   * Starts the Gcs machine; resolves once it serves: every request subject open and, when the store
   * held an earlier GCS's nodes or actors, the grace window over and everything reconciled.
   */
  async start(): Promise<void> {
    if (this.recovery.needed) {
      const { expected } = this.recovery;
      this.opts.log?.(`recovering: ${expected.size} node(s) and ${this.store.counts().actors} actor record(s) in the store; waiting up to ${this.actor.getSnapshot().context.graceMs} ms for the raylets`);
    }
    this.actor.start();
    const snapshot = await waitFor(this.actor, (s) => s.value === 'serving' || s.status !== 'active');
    if (snapshot.value !== 'serving') {
      this.actor.stop();
      throw new OrreryError('GCS_START_FAILED', `the GCS of cluster ${JSON.stringify(this.cluster)} could not open its subjects`, { detail: { cluster: this.cluster } });
    }
    // the part of a recovery the grace window does not bound (bench:gcs reads this line)
    if (this.#graceEnded) this.opts.log?.(`serving: recovered in ${(performance.now() - this.#graceEnded.at).toFixed(1)} ms after the grace window ended (${this.#graceEnded.by})`);
  }

  async stop(): Promise<void> {
    if (this.actor.getSnapshot().status !== 'active') return;
    this.actor.send({ type: 'STOP' });
    await waitFor(this.actor, (s) => s.status !== 'active');
    this.actor.stop();
  }

  /**
   * gcs_status: what this GCS is doing now — answered at once, so `orrery status` and the dashboard
   * can say a GCS is recovering (and for how long at most) while the reads they need wait for it.
   */
  status(): GcsStatusWire {
    const snapshot = this.actor.getSnapshot();
    if (snapshot.matches('recovering')) {
      const waiting = snapshot.matches({ recovering: 'grace' });
      const elapsed = this.#graceFrom === undefined ? 0 : performance.now() - this.#graceFrom;
      return {
        epoch: this.#epoch,
        state: 'RECOVERING',
        recovering: {
          phase: waiting ? 'WAITING' : 'RECONCILING',
          nodesExpected: this.recovery.expected.size,
          nodesBack: this.recovery.nodesBack,
          graceLeftMs: waiting ? Math.max(0, Math.round(snapshot.context.graceMs - elapsed)) : 0,
        },
      };
    }
    return { epoch: this.#epoch, state: snapshot.value === 'serving' ? 'SERVING' : 'STOPPING' };
  }

  /** Whether the Gcs machine serves (not starting, recovering or stopping). */
  get isServing(): boolean {
    return this.actor.getSnapshot().value === 'serving';
  }

  /**
   * Starts an Actor machine with the Gcs actor as its parent (see gcs.machine.ts for why it is not a
   * spawned child); it is stopped when the GCS stops.
   */
  #startActor(input: ActorMachineInput): ActorRef {
    // The actor directory holds every live Actor machine (until DEAD) and stops them at close, so
    // this does not follow it too: one subscription per actor fewer on the register path.
    return this.#startChild(this.#actorLogic, actorChildId(input.actorId), input, false) as ActorRef;
  }

  /**
   * Starts the Actor machine of a sleeping actor (actor-entry.ts, ActorEntry) again from its ALIVE
   * snapshot: no entry action runs again, and the inspection mapper does not record the restart of
   * the machine as a transition (RESUMED_INPUT).
   */
  #wakeActor(context: ActorContext): ActorRef {
    const snapshot = this.#actorLogic.resolveState({ value: { onNode: 'ALIVE' }, context });
    return this.#startChild(this.#actorLogic, actorChildId(context.actorId), RESUMED_INPUT as never, false, snapshot) as ActorRef;
  }

  /** Starts an Actor or Node machine with the Gcs actor as its parent (not a spawned child). */
  #startChild(logic: ActorMachine | NodeMachine, id: string, input: ActorMachineInput | NodeMachineInput, track = true, snapshot?: Snapshot<unknown>): AnyActorRef {
    this.#accepting();
    const ref: AnyActorRef = createActor(logic as AnyStateMachine, { parent: this.actor, id, input, ...(snapshot ? { snapshot } : {}) });
    if (track) {
      this.#actorRefs.add(ref);
      ref.subscribe({ complete: () => this.#actorRefs.delete(ref), error: () => this.#actorRefs.delete(ref) });
    }
    ref.start();
    return ref;
  }

  /** Throws GCS_STOPPING once the GCS stops: it takes no new nodes, actors or placement groups. */
  #accepting(): void {
    const value = this.actor.getSnapshot().value;
    if (value === 'stopping' || value === 'stopped' || value === 'failed') throw new OrreryError('GCS_STOPPING', 'the GCS is stopping and takes no new nodes, actors or placement groups');
  }

  /** Spawns a child of the Gcs machine through `event` and returns it. */
  async #open(): Promise<void> {
    this.#subscriptions = serveVerbs(this);
    this.#stopWatchingBus = this.opts.bus.onStatus((status, cause) => {
      this.nodes.connectionChanged(status, cause);
      this.jobs.connectionChanged(status);
    });
    await this.opts.bus.flush();
  }

  async #close(): Promise<void> {
    for (const sub of this.#subscriptions) sub.unsubscribe();
    this.#subscriptions = [];
    this.#stopWatchingBus?.();
    this.registrations.stop();
    this.queue.stop();
    this.eviction.stop();
    this.view.stop();
    this.nodes.stop();
    this.jobs.stop();
    this.actors.stopRefreshes();
    for (const ref of this.#actorRefs) stopMachine(ref);
    this.groups.stopAll();
    this.#raylets.stop();
    this.#actorRefs.clear();
    this.actors.stopAll();
  }
}

function positiveInt(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) throw new InvalidOptionError(name, value, `expected an integer >= ${min}`);
  return value;
}
