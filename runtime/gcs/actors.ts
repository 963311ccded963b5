import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { Rng } from '../../lib/random.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import { ExplainBackoff } from './explain-backoff.ts';
import type { DryRun } from '../../lib/scheduling/dry-run.ts';
import type { Decision } from '../../lib/scheduling/schedule.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import type { ActorInfoWire, RegisterActor } from '../../protocols/messages/actor.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import { ActorNameTakenError, ActorNotFoundError } from '../errors.ts';
import { actorStateOf, type ActorContext, type ActorMachineInput, type ActorSnapshot } from './actor.machine.ts';
import { compileActor, SCHEDULING_DEFAULT_CPUS, type CompiledActor } from './actor-options.ts';
import type { WaitingActor } from './demands.ts';
import type { DeadActors } from './dead-actors.ts';
import type { EventPublisher, EvictionReason } from './events.ts';
import type { EvictionGuard, RunningActor } from './eviction.ts';
import { stopMachine, type ActorRef } from './gcs.machine.ts';
import type { PendingQueue, PlaceOutcome } from './pending-queue.ts';
import { Placement } from './placement.ts';
import { PlacementGroupDirectory } from './placement-groups.ts';
import { describe, type CreateOutcome, type RayletClient } from './raylets.ts';
import { pageOf, SortedKeys, type Page } from './paging.ts';
import type { ActorRecord, GcsStore } from './store.ts';
import { tokenField } from './wire.ts';

/**
 * The GCS's actors: registration (validation, named actors, the decision taken at once), queries,
 * kill, failure reports, and the pending queue's placement attempts. Each actor is an Actor machine
 * spawned under the Gcs machine; this watches its snapshots to keep the actor table, the name index
 * and the pending queue current and to publish `actor_state` on every state change.
 */
export interface ActorDirectoryDeps {
  readonly state: ClusterState;
  readonly store: GcsStore;
  /** Which dead actors are still remembered (dead-actors.ts). */
  readonly deadActors: DeadActors;
  readonly events: EventPublisher;
  readonly raylets: RayletClient;
  readonly queue: () => PendingQueue;
  readonly eviction: () => EvictionGuard;
  /** Live nodes placements keep off for now: their raylet did not answer (nodes.ts). */
  readonly unreachableNodes: () => ReadonlySet<string>;
  readonly nodeUnreachable: (nodeId: string) => void;
  readonly spawn: (input: ActorMachineInput) => ActorRef;
  /** Starts the Actor machine of a sleeping actor again, ALIVE with this context (see ActorEntry). */
  readonly wake: (context: ActorContext) => ActorRef;
  readonly rng: Rng;
  readonly rareResources: readonly string[];
  readonly log: (line: string) => void;
  /** Throws unless the job an actor is registered under runs (jobs.ts, checkRunning). */
  readonly jobRunning?: (jobId: string | undefined) => void;
  /** Milliseconds, for the explanation backoff; default performance.now. */
  readonly now?: () => number;
  /** The explanation backoff; default EXPLAIN_BACKOFF_MS. `initial: 0` refreshes on every attempt. */
  readonly explainBackoffMs?: { readonly initial: number; readonly max: number };
}

/** The id a dry run's request carries (an actor that does not exist; never placed). */
const EXPLAIN_ACTOR_ID = 'dry-run';

/**
 * One actor. Its Actor machine runs while the actor is PENDING, SCHEDULED or RESTARTING; once ALIVE
 * it waits, often for the rest of its life, for an event that may never come — so an ALIVE actor's
 * machine is stopped and the actor *sleeps* (`asleep`): everything its context held is in
 * `registration`, `compiled` and `info` (nodeId, numRestarts, incarnation), and the first event for
 * it (a failure, kill, eviction) starts the machine again from that ALIVE snapshot (#awake). An
 * xstate actor with its mailbox, observers and snapshot is about 3 KB; a GCS holding 100,000 idle
 * actors keeps 300 MB less (docs/benchmarks.md, "The simulator").
 */
interface ActorEntry {
  readonly registration: RegisterActor;
  readonly compiled: CompiledActor;
  /** The running machine; undefined while the actor sleeps (ALIVE) and once it is DEAD. */
  ref: ActorRef | undefined;
  /** ALIVE with its machine stopped, to be woken by its next event. */
  asleep: boolean;
  info: ActorInfoWire;
  /** The placement group whose bundles it runs in, if any. */
  readonly placementGroupId: string | undefined;
}

const nameKey = (namespace: string, name: string): string => `${namespace}\u0000${name}`;

/** What an Actor machine starts from: the registration and compiled options, and where its counts stand. */
function machineInput(reg: RegisterActor, compiled: CompiledActor, counts: { numRestarts: number; incarnation: number }): ActorMachineInput & { numRestarts: number; incarnation: number } {
  return {
    actorId: reg.actorId,
    namespace: reg.namespace,
    ...(reg.name === undefined ? {} : { name: reg.name }),
    className: reg.code.className,
    labels: compiled.labels,
    resources: { ...compiled.held },
    maxRestarts: compiled.maxRestarts,
    ...counts,
  };
}

export class ActorDirectory {
  readonly #entries = new Map<string, ActorEntry>();
  /**
   * The live (not DEAD) actors of each placement group, and those each job owns (not detached): what
   * remove_pg and a finished job kill. Reading every entry for them cost 3.3 ms per call at 100,000
   * actors, so a cluster removing groups by the hundred a second spent its GCS on it.
   */
  readonly #liveInGroup = new Map<string, Set<string>>();
  readonly #liveOwnedBy = new Map<string, Set<string>>();
  readonly #names = new Map<string, string>();
  readonly #kills = new Map<string, Promise<void>>();
  /** Actor ids in list_actors order, re-sorted after an actor is added or forgotten. */
  readonly #order = new SortedKeys(() => this.#entries.keys());
  readonly #placement: Placement;
  /** Unplaceable actors' explanations, refreshed after a backoff (explain-backoff.ts). */
  readonly #explanations: ExplainBackoff;

  constructor(private readonly deps: ActorDirectoryDeps) {
    this.#placement = new Placement({
      state: deps.state,
      rng: deps.rng,
      generation: () => deps.queue().generation,
      unreachableNodes: deps.unreachableNodes,
    });
    this.#explanations = new ExplainBackoff({ now: deps.now, backoffMs: deps.explainBackoffMs, retry: (actorId) => deps.queue().retry(actorId) });
  }

  /** register_actor: the ActorInfo right after registration (PENDING or SCHEDULED). */
  register(reg: RegisterActor): ActorInfoWire {
    tokenField('actorId', reg.actorId);
    const existing = this.#entries.get(reg.actorId);
    if (existing) return existing.info;
    this.deps.jobRunning?.(reg.jobId);
    const compiled = compileActor(reg, { rareResources: this.deps.rareResources });
    if (reg.name !== undefined && this.#names.has(nameKey(reg.namespace, reg.name))) throw new ActorNameTakenError(reg.name, reg.namespace);
    const decision = this.#placement.decide({ actorId: reg.actorId, namespace: reg.namespace, compiled });
    if (decision.status === 'failed') throw decision.error;

    const ref = this.#start(reg, compiled, { numRestarts: 0, incarnation: 0 });
    this.#apply(ref, decision);
    // decided against the cluster as it is: the queue need not try it again until something changes
    if (decision.status === 'unschedulable') {
      this.deps.queue().tried(reg.actorId);
      this.#explanations.explained(reg.actorId, decision.failure, this.#explanations.now());
    }
    return this.#entries.get(reg.actorId)!.info;
  }

  /**
   * Brings back an actor from the store after a GCS restart (recovery.ts decides how): `running`
   * puts it back on the node that still runs this incarnation — placed there without a decision,
   * and the raylet answers the create of an incarnation it runs as created, so nothing restarts;
   * `starting` does the same for an incarnation whose constructor had not returned when its raylet
   * registered: SCHEDULED there, and its create_actor sent again, which the raylet answers once the
   * constructor returns (or fails). Taken as ALIVE, it answered no call until then, and one whose
   * constructor then threw stayed ALIVE here for good, with nothing running;
   * `lost` restarts it when it may (else it is DEAD with `cause`); `waiting` queues it again; a
   * DEAD record is kept as it is, without a machine.
   */
  restore(
    record: ActorRecord,
    how: { kind: 'running'; nodeId: string } | { kind: 'starting'; nodeId: string } | { kind: 'lost'; cause: string } | { kind: 'waiting' } | { kind: 'dead' },
  ): void {
    const reg = record.registration;
    if (this.#entries.has(reg.actorId)) return;
    const incarnation = record.incarnation ?? 0;
    const numRestarts = record.info.numRestarts;
    let compiled: CompiledActor;
    try {
      compiled = compileActor(reg, { rareResources: this.deps.rareResources });
    } catch (err) {
      how = { kind: 'dead' };
      this.deps.log(`actor ${reg.actorId} from the store no longer compiles: ${err instanceof Error ? err.message : String(err)}`);
      compiled = undefined as unknown as CompiledActor;
    }
    if (how.kind === 'dead') {
      this.#entries.set(reg.actorId, { registration: reg, compiled, ref: undefined, asleep: false, info: record.info, placementGroupId: PlacementGroupDirectory.groupOf(reg.options) });
      this.#order.added(reg.actorId);
      return;
    }
    if (how.kind === 'lost') {
      const restartable = compiled.maxRestarts === -1 || numRestarts < compiled.maxRestarts;
      if (!restartable) {
        const info: ActorInfoWire = Object.assign({}, record.info, { state: 'DEAD' as const, deathCause: how.cause });
        delete (info as { nodeId?: string }).nodeId;
        this.#entries.set(reg.actorId, { registration: reg, compiled, ref: undefined, asleep: false, info, placementGroupId: PlacementGroupDirectory.groupOf(reg.options) });
        this.#order.added(reg.actorId);
        this.deps.store.putActor({ registration: reg, info, incarnation });
        this.deps.events.actorState(info);
        return;
      }
      this.deps.log(`actor ${reg.actorId} restarts: ${how.cause}`);
      this.#start(reg, compiled, { numRestarts: numRestarts + 1, incarnation: incarnation + 1 });
      return;
    }
    const ref = this.#start(reg, compiled, { numRestarts, incarnation });
    // still running there, this incarnation: ALIVE at once, not created again (actor.machine.ts)
    if (how.kind === 'running') ref.send({ type: 'ADOPTED', nodeId: how.nodeId });
    // still starting there: placed there as it was, and its create asked again (the same incarnation)
    else if (how.kind === 'starting') ref.send({ type: 'PLACED', nodeId: how.nodeId });
  }

  /**
   * What a registering raylet still runs, while the GCS serves: only the incarnation the GCS has
   * placed on that node stays; every other one is killed there (the node was declared dead and its
   * actors restarted elsewhere, or the GCS never knew them). Answers how many were killed.
   */
  reconcileNode(nodeId: string, running: readonly { actorId: string; incarnation: number }[]): number {
    let killed = 0;
    for (const { actorId, incarnation } of running) {
      const context = this.#context(this.#entries.get(actorId));
      if (context?.nodeId === nodeId && context.incarnation === incarnation) continue;
      void this.deps.raylets.kill(nodeId, actorId, incarnation);
      killed++;
    }
    return killed;
  }

  #start(reg: RegisterActor, compiled: CompiledActor, counts: { numRestarts: number; incarnation: number }): ActorRef {
    const ref = this.deps.spawn(machineInput(reg, compiled, counts));
    const snapshot = ref.getSnapshot();
    const entry: ActorEntry = { registration: reg, compiled, ref, asleep: false, info: this.#infoOf(reg, snapshot), placementGroupId: PlacementGroupDirectory.groupOf(reg.options) };
    this.#entries.set(reg.actorId, entry);
    this.#order.added(reg.actorId);
    this.#indexLive(entry, true);
    if (reg.name !== undefined) this.#names.set(nameKey(reg.namespace, reg.name), reg.actorId);
    if (compiled.requiredDuringExecution) this.deps.eviction().requiredActors(1);
    this.#observe(entry, snapshot, true, entry.info);
    this.#follow(entry, ref);
    return ref;
  }

  #follow(entry: ActorEntry, ref: ActorRef): void {
    ref.subscribe({ next: (snapshot) => this.#observe(entry, snapshot, false), error: (err) => this.deps.log(`actor ${entry.registration.actorId} machine failed: ${String(err)}`) });
  }

  /** The machine's context, read without waking a sleeping actor; undefined once DEAD. */
  #context(entry: ActorEntry | undefined): ActorContext | undefined {
    if (entry === undefined) return undefined;
    if (entry.ref !== undefined) return entry.ref.getSnapshot().context;
    return entry.asleep ? this.#sleepingContext(entry) : undefined;
  }

  #sleepingContext(entry: ActorEntry): ActorContext {
    const { registration: reg, compiled, info } = entry;
    return {
      ...machineInput(reg, compiled, { numRestarts: info.numRestarts, incarnation: info.incarnation ?? 0 }),
      creationFailures: 0, // reset on reaching ALIVE
      nodeId: info.nodeId,
    };
  }

  /** The running machine, started again if the actor sleeps; undefined once DEAD. */
  #awake(entry: ActorEntry | undefined): ActorRef | undefined {
    if (entry === undefined || entry.ref !== undefined || !entry.asleep) return entry?.ref;
    const ref = this.deps.wake(this.#sleepingContext(entry));
    entry.ref = ref;
    entry.asleep = false;
    this.#follow(entry, ref);
    return ref;
  }

  /**
   * Puts an actor that reached ALIVE to sleep once the event that got it there is done (a microtask:
   * never inside its machine's own step), if nothing moved it on in between.
   */
  #sleepSoon(entry: ActorEntry, ref: ActorRef): void {
    queueMicrotask(() => {
      if (entry.ref !== ref || actorStateOf(ref.getSnapshot()) !== 'ALIVE') return;
      entry.ref = undefined;
      entry.asleep = true;
      stopMachine(ref);
    });
  }

  get(query: MessageBody<'get_actor'>): ActorInfoWire {
    if (query.actorId !== undefined) {
      const entry = this.#entries.get(query.actorId);
      if (!entry) throw new ActorNotFoundError({ actorId: query.actorId });
      return entry.info;
    }
    if (query.name === undefined) throw new ProtocolError('INVALID_MESSAGE', 'get_actor needs an actorId or a name', { detail: { path: '', rule: 'actorId or name' } });
    const namespace = query.namespace ?? 'default';
    const id = this.#names.get(nameKey(namespace, query.name));
    if (id === undefined) throw new ActorNotFoundError({ name: query.name, namespace });
    return this.#entries.get(id)!.info;
  }

  list(): ActorInfoWire[] {
    return [...this.#entries.values()].map((e) => e.info);
  }

  /** list_actors: one page in actor-id order (paging.ts), of the given states only when asked. */
  page(query: MessageBody<'list_actors'>, opts: { maxBytes: number }): Page<ActorInfoWire> {
    const states = query.states === undefined ? undefined : new Set<string>(query.states);
    const get = (actorId: string): ActorInfoWire | undefined => {
      const info = this.#entries.get(actorId)?.info;
      return info === undefined || (states !== undefined && !states.has(info.state)) ? undefined : info;
    };
    return pageOf({ keys: this.#order.get(), get }, query, opts);
  }

  /** Stops every Actor machine still running (the GCS is stopping); their actors stay as they are. */
  stopAll(): void {
    for (const entry of this.#entries.values()) if (entry.ref !== undefined) stopMachine(entry.ref);
  }

  /** How many Actor machines run now, and how many actors sleep (ALIVE, machine stopped). */
  get machines(): { running: number; asleep: number } {
    let running = 0;
    let asleep = 0;
    for (const entry of this.#entries.values()) {
      if (entry.ref !== undefined) running++;
      else if (entry.asleep) asleep++;
    }
    return { running, asleep };
  }

  /** kill_actor: moves the actor on at once, then waits for its raylet to drop the instance. */
  async kill(body: MessageBody<'kill_actor'>): Promise<ActorInfoWire> {
    const entry = this.#entries.get(body.actorId);
    if (!entry) throw new ActorNotFoundError({ actorId: body.actorId });
    this.#awake(entry)?.send({ type: 'KILL', noRestart: body.noRestart });
    await this.#kills.get(body.actorId);
    return entry.info;
  }

  /** actor_died: a raylet reports actors whose worker host exited. */
  died(body: MessageBody<'actor_died'>): { failed: number } {
    let failed = 0;
    for (const { actorId, incarnation } of body.actors) {
      const entry = this.#entries.get(actorId);
      const context = this.#context(entry);
      if (context?.nodeId !== body.nodeId || context.incarnation !== incarnation) continue;
      this.#awake(entry)!.send({ type: 'FAILED', incarnation, cause: body.cause });
      failed++;
    }
    return { failed };
  }

  /**
   * Kills every live actor placed in (or waiting for) a placement group's bundles: the group is gone.
   * Resolves once their raylets dropped them (as kill_actor does), so an answer to remove_pg means
   * no call can reach them any more.
   */
  killInGroup(pgId: string, cause: string): Promise<void> {
    const kills: Promise<void>[] = [];
    // a copy: a KILL may take an actor DEAD (and out of the index) at once
    for (const actorId of [...(this.#liveInGroup.get(pgId) ?? [])]) {
      const entry = this.#entries.get(actorId);
      if (entry === undefined || entry.placementGroupId !== pgId) continue;
      const ref = this.#awake(entry);
      if (!ref) continue;
      ref.send({ type: 'KILL', noRestart: true, cause });
      const kill = this.#kills.get(entry.registration.actorId);
      if (kill) kills.push(kill);
    }
    return Promise.all(kills).then(() => undefined);
  }

  /**
   * A job finished: every live actor it owns (created under it, not detached) is killed with
   * `cause(jobId)`, so its name is free at once, pausing whenever `breathe` says (intake-queue.ts, slicer). Resolves once their raylets dropped them. Answers
   * how many were killed.
   */
  async killOwnedBy(jobIds: ReadonlySet<string>, cause: (jobId: string) => string, breathe: () => Promise<void> | undefined = () => undefined): Promise<number> {
    const kills: Promise<void>[] = [];
    let killed = 0;
    const owned = [...jobIds].flatMap((jobId) => [...(this.#liveOwnedBy.get(jobId) ?? [])]);
    for (const actorId of owned) {
      const entry = this.#entries.get(actorId);
      if (entry === undefined) continue;
      const { jobId } = entry.registration;
      if (jobId === undefined || !jobIds.has(jobId) || entry.info.state === 'DEAD' || entry.registration.options.lifetime === 'detached') continue;
      const ref = this.#awake(entry);
      if (!ref) continue;
      ref.send({ type: 'KILL', noRestart: true, cause: cause(jobId) });
      killed++;
      const kill = this.#kills.get(entry.registration.actorId);
      if (kill) kills.push(kill);
      const pause = breathe();
      if (pause) await pause;
    }
    await Promise.all(kills);
    return killed;
  }

  /** Every actor placed on a node that died (or stopped) fails with `cause`, and restarts elsewhere when it may. */
  failOnNode(nodeId: string, cause = `node ${nodeId} died`): void {
    for (const entry of this.#entries.values()) {
      // the info says where an actor is as its machine does (#observe, on every step; a sleeping
      // actor's context is made from it): checked first, so a death costs a field read per actor, not
      // a context made for each sleeping one (330 ms per node with 100,000 actors; a zone of 1,000
      // nodes lost at once held the GCS for minutes)
      if (entry.info.nodeId !== nodeId) continue;
      const context = this.#context(entry);
      if (context?.nodeId === nodeId) this.#awake(entry)!.send({ type: 'FAILED', incarnation: context.incarnation, cause });
    }
  }

  /**
   * Moves a running actor off its node (eviction.ts): it restarts elsewhere when it may, else dies
   * with `cause`; an actor_evicted event says why.
   */
  evict(actorId: string, reason: EvictionReason, cause: string): void {
    const entry = this.#entries.get(actorId);
    const from = this.#context(entry)?.nodeId;
    if (entry === undefined || from === undefined) return;
    this.#awake(entry)!.send({ type: 'EVICT', cause });
    this.deps.log(`actor ${actorId} left node ${from}: ${cause}`);
    this.deps.events.actorEvicted(entry.info, reason, cause);
  }

  /** A placed actor's request, for the eviction guard. */
  running(actorId: string): RunningActor | undefined {
    const entry = this.#entries.get(actorId);
    if (entry === undefined || (entry.ref === undefined && !entry.asleep)) return undefined;
    return { request: entry.compiled.request, namespace: entry.registration.namespace, required: entry.compiled.requiredDuringExecution };
  }

  /**
   * A PENDING or RESTARTING actor as resource_demands groups it (demands.ts): its options as sent,
   * and whether its last explanation found it infeasible rather than waiting for resources.
   */
  waiting(actorId: string): WaitingActor | undefined {
    const entry = this.#entries.get(actorId);
    if (entry === undefined || (entry.info.state !== 'PENDING' && entry.info.state !== 'RESTARTING')) return undefined;
    const explained = this.#explanations.last(actorId);
    // one object of one shape per actor: resource_demands asks for ten thousand at a time
    return {
      actorId,
      namespace: entry.registration.namespace,
      options: entry.registration.options,
      compiled: entry.compiled,
      defaultCpus: SCHEDULING_DEFAULT_CPUS,
      infeasible: explained?.code === 'infeasible',
      reason: entry.info.pendingReason ?? explained?.reason,
      explainedAt: explained?.at,
    };
  }

  /** Whether another actor's placement can let this one fit (the pending queue's filter). */
  waitsOnPeers(actorId: string): boolean {
    return this.#entries.get(actorId)?.compiled.waitsOnPeers ?? false;
  }

  /** The pending queue's attempt to place one waiting actor. */
  tryPlace(actorId: string): PlaceOutcome {
    const entry = this.#entries.get(actorId);
    const state = entry?.ref ? actorStateOf(entry.ref.getSnapshot()) : 'DEAD';
    if (!entry?.ref || (state !== 'PENDING' && state !== 'RESTARTING')) {
      this.#explanations.forget(actorId);
      return 'gone';
    }
    const decision = this.#placement.decide({ actorId, namespace: entry.registration.namespace, compiled: entry.compiled });
    if (decision.status === 'unschedulable') {
      // still unplaceable: its reason is refreshed only once its backoff has run
      const now = this.#explanations.now();
      if (!this.#explanations.mayRefresh(actorId, now)) return 'waiting';
      this.#apply(entry.ref, decision);
      this.#explanations.explained(actorId, decision.failure, now);
      return 'waiting';
    }
    this.#explanations.forget(actorId);
    this.#apply(entry.ref, decision);
    return decision.status === 'placed' ? 'placed' : 'gone';
  }

  // ---- effects the Actor machine asks for (see actor-effects.ts) ----

  requestCreate(context: ActorContext): void {
    const entry = this.#entries.get(context.actorId);
    const { nodeId, incarnation, actorId } = context;
    if (!entry || nodeId === undefined) return;
    const reg = entry.registration;
    const request = {
      actorId,
      code: reg.code,
      namespace: reg.namespace,
      ...(reg.name === undefined ? {} : { name: reg.name }),
      labels: context.labels,
      resources: context.resources,
      maxConcurrency: entry.compiled.maxConcurrency,
      isolation: entry.compiled.isolation,
      incarnation,
      // its owner, which what it creates inside the worker shares; a detached actor has none
      ...(reg.jobId === undefined || reg.options.lifetime === 'detached' ? {} : { jobId: reg.jobId }),
    };
    const sent = { nodeId, incarnation };
    // sent again (a lost answer, this GCS's own fence) only while the actor still waits for this create
    void this.deps.raylets.create(nodeId, request, () => this.#awaits(entry, sent)).then((outcome) => this.#created(entry, sent, outcome));
  }

  requestKill(context: ActorContext): void {
    if (context.nodeId === undefined) return;
    const kill = this.deps.raylets.kill(context.nodeId, context.actorId, context.incarnation);
    this.#kills.set(context.actorId, kill);
    void kill.finally(() => {
      if (this.#kills.get(context.actorId) === kill) this.#kills.delete(context.actorId);
    });
  }

  placed(context: ActorContext): void {
    const entry = this.#entries.get(context.actorId);
    if (entry && context.nodeId !== undefined) this.#placement.placed({ actorId: context.actorId, namespace: context.namespace, compiled: entry.compiled }, context.nodeId);
  }

  left(context: ActorContext): void {
    this.#placement.left(context.actorId);
  }

  scheduleFailed(context: ActorContext, failure: ScheduleFailure): void {
    this.deps.events.scheduleFailed({ kind: 'actor', id: context.actorId, ...(context.name === undefined ? {} : { name: context.name }) }, failure);
  }

  /**
   * explain: where an actor with these options would be placed now (a dry run, changing nothing):
   * compiled and constrained exactly as register does (anti-affinity of residents, nodes that did
   * not answer), then lib's dryRun.
   */
  explain(namespace: string, options: Record<string, unknown>): DryRun {
    const reg: RegisterActor = { actorId: EXPLAIN_ACTOR_ID, code: { moduleUrl: 'file:///explain', className: 'Explain', args: [] }, namespace, options };
    const compiled = compileActor(reg, { rareResources: this.deps.rareResources });
    return this.#placement.explain({ actorId: EXPLAIN_ACTOR_ID, namespace, compiled });
  }

  /** Stops the refresh timer (the GCS stops). */
  stopRefreshes(): void {
    this.#explanations.stop();
  }

  // ---- internals ----

  #apply(ref: ActorRef, decision: Decision): void {
    if (decision.status === 'placed') ref.send({ type: 'PLACED', nodeId: decision.nodeId });
    else if (decision.status === 'unschedulable') ref.send({ type: 'UNSCHEDULABLE', failure: decision.failure });
    else ref.send({ type: 'REJECTED', cause: describe(decision.error) });
  }

  /** A create_actor answer: applies to the incarnation still SCHEDULED there, else it is an orphan. */
  /** Whether the actor still waits for the create it was `sent`: SCHEDULED, that incarnation, on that node. */
  #awaits(entry: ActorEntry, sent: { nodeId: string; incarnation: number }): boolean {
    const snapshot = entry.ref?.getSnapshot();
    return snapshot !== undefined && actorStateOf(snapshot) === 'SCHEDULED' && snapshot.context.incarnation === sent.incarnation && snapshot.context.nodeId === sent.nodeId;
  }

  #created(entry: ActorEntry, sent: { nodeId: string; incarnation: number }, outcome: CreateOutcome): void {
    if (!this.#awaits(entry, sent)) {
      if (outcome.kind === 'created') void this.deps.raylets.kill(sent.nodeId, entry.registration.actorId, sent.incarnation);
      return;
    }
    const { incarnation } = sent;
    if (outcome.kind === 'created') entry.ref!.send({ type: 'CREATED', incarnation });
    else if (outcome.kind === 'failed') entry.ref!.send({ type: 'CREATE_FAILED', incarnation, cause: outcome.cause });
    else if (outcome.kind === 'host_gone') entry.ref!.send({ type: 'FAILED', incarnation, cause: outcome.cause });
    else {
      // no raylet heard it: the constructor never ran, so the actor waits again (keeping off that
      // node until it heartbeats) rather than spending a restart; a timeout may have created it
      if (outcome.noResponders) {
        this.deps.nodeUnreachable(sent.nodeId);
        entry.ref!.send({ type: 'UNDELIVERED', incarnation, cause: outcome.cause });
      } else {
        // a stopping raylet: the restart must not be placed there again while it unregisters
        if (outcome.stopping) this.deps.nodeUnreachable(sent.nodeId);
        entry.ref!.send({ type: 'FAILED', incarnation, cause: outcome.cause });
      }
    }
  }

  #observe(entry: ActorEntry, snapshot: ActorSnapshot, initial: boolean, known?: ActorInfoWire): void {
    const previous = entry.info.state;
    const info = known ?? this.#infoOf(entry.registration, snapshot);
    entry.info = info;
    this.deps.store.putActor({ registration: entry.registration, info, incarnation: snapshot.context.incarnation });
    const queue = this.deps.queue();
    if (info.state === 'PENDING' || info.state === 'RESTARTING') queue.add(info.actorId);
    else queue.delete(info.actorId);
    if (!initial && info.state === previous) return;
    this.deps.events.actorState(info);
    if (info.state === 'ALIVE' && entry.ref !== undefined) this.#sleepSoon(entry, entry.ref);
    else if (info.state === 'SCHEDULED') queue.kick('actor_placed');
    else if (info.state === 'RESTARTING' || (info.state === 'PENDING' && previous === 'SCHEDULED')) queue.kick('actor_waiting');
    else if (info.state === 'DEAD') {
      entry.ref = undefined;
      this.#indexLive(entry, false);
      // an actor killed while it waited leaves the queue without another tryPlace: its explanation goes here
      this.#explanations.forget(info.actorId);
      if (entry.compiled.requiredDuringExecution) this.deps.eviction().requiredActors(-1);
      const name = entry.registration.name;
      if (name !== undefined && this.#names.get(nameKey(info.namespace, name)) === info.actorId) this.#names.delete(nameKey(info.namespace, name));
      for (const oldest of this.deps.deadActors.died(info.actorId)) this.#forget(oldest);
    }
  }

  /** Adds a live actor to (or, once DEAD, drops it from) its group's and its owner job's sets. */
  #indexLive(entry: ActorEntry, live: boolean): void {
    const { actorId, jobId, options } = entry.registration;
    const keys: [Map<string, Set<string>>, string | undefined][] = [
      [this.#liveInGroup, entry.placementGroupId],
      [this.#liveOwnedBy, options.lifetime === 'detached' ? undefined : jobId],
    ];
    for (const [index, key] of keys) {
      if (key === undefined) continue;
      let set = index.get(key);
      if (live) {
        if (set === undefined) index.set(key, (set = new Set()));
        set.add(actorId);
      } else if (set !== undefined) {
        set.delete(actorId);
        if (set.size === 0) index.delete(key);
      }
    }
  }

  /** A dead actor past the retention bound: gone from the table and the store (its name was freed at death). */
  #forget(actorId: string): void {
    this.#entries.delete(actorId);
    this.#order.removed(actorId);
    this.deps.store.deleteActor(actorId);
  }

  #infoOf(reg: RegisterActor, snapshot: ActorSnapshot): ActorInfoWire {
    const state = actorStateOf(snapshot);
    const c = snapshot.context;
    return {
      actorId: c.actorId,
      ...(reg.name === undefined ? {} : { name: reg.name }),
      namespace: c.namespace,
      className: c.className,
      state,
      ...((state === 'SCHEDULED' || state === 'ALIVE') && c.nodeId !== undefined ? { nodeId: c.nodeId } : {}),
      numRestarts: c.numRestarts,
      ...(c.incarnation > 0 ? { incarnation: c.incarnation } : {}),
      // the compiled labels, never changed after registration: shared, not copied, by every info
      // (the actor table's and the event log's) — a copy per transition was ~200 B each
      labels: c.labels,
      ...(c.deathCause === undefined ? {} : { deathCause: c.deathCause }),
      ...(state === 'PENDING' && c.pendingReason !== undefined ? { pendingReason: c.pendingReason } : {}),
      ...(reg.jobId === undefined ? {} : { jobId: reg.jobId }),
      ...(reg.options.lifetime === 'detached' ? { lifetime: 'detached' as const } : {}),
    };
  }
}
