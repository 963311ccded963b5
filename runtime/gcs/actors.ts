import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { Rng } from '../../lib/random.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import type { DryRun } from '../../lib/scheduling/dry-run.ts';
import type { ActorInfoWire, RegisterActor } from '../../protocols/messages/actor.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import { ActorNameTakenError } from '../errors.ts';
import type { ActorContext, ActorMachineInput } from './actor.machine.ts';
import { ActorCreates } from './actor-creates.ts';
import { ActorIndexes } from './actor-indexes.ts';
import { ActorKills } from './actor-kills.ts';
import { compileActor, type CompiledActor } from './actor-options.ts';
import { ActorPlacing } from './actor-placing.ts';
import { ActorTable } from './actor-table.ts';
import type { WaitingActor } from './demands.ts';
import type { DeadActors } from './dead-actors.ts';
import type { EventPublisher, EvictionReason } from './events.ts';
import type { EvictionGuard, RunningActor } from './eviction.ts';
import { ExplainBackoff } from './explain-backoff.ts';
import type { ActorRef } from './gcs.machine.ts';
import type { PendingQueue, PlaceOutcome } from './pending-queue.ts';
import { Placement } from './placement.ts';
import { PlacementGroupDirectory } from './placement-groups.ts';
import type { RayletClient } from './raylets.ts';
import type { Page } from './paging.ts';
import type { ActorRecord, GcsStore } from './store.ts';
import { tokenField } from './wire.ts';

/**
 * The GCS's actors: registration (validation, named actors, the decision taken at once), queries,
 * kill, failure reports, and the pending queue's placement attempts. Each actor is an Actor machine
 * spawned under the Gcs machine; this watches its snapshots to keep the actor table, the name index
 * and the pending queue current and to publish `actor_state` on every state change.
 *
 * The directory is the GCS's one entry to its actors; the work is in the parts beside it, built here
 * in order: the name, group and owner indexes (actor-indexes.ts), placement and its explanations
 * (actor-placing.ts), create_actor and its answers (actor-creates.ts), the table kept from the
 * machines' snapshots (actor-table.ts; each entry, asleep or not, in actor-entry.ts, its ActorInfo
 * in actor-info.ts), and the kills and failure reports that move actors on (actor-kills.ts).
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

export class ActorDirectory {
  readonly #indexes = new ActorIndexes();
  readonly #placing: ActorPlacing;
  readonly #creates: ActorCreates;
  readonly #table: ActorTable;
  readonly #kills: ActorKills;

  constructor(private readonly deps: ActorDirectoryDeps) {
    const placement = new Placement({
      state: deps.state,
      rng: deps.rng,
      generation: () => deps.queue().generation,
      unreachableNodes: deps.unreachableNodes,
    });
    const explanations = new ExplainBackoff({ now: deps.now, backoffMs: deps.explainBackoffMs, retry: (actorId) => deps.queue().retry(actorId) });
    this.#placing = new ActorPlacing(deps, { placement, explanations });
    this.#creates = new ActorCreates(deps);
    this.#table = new ActorTable(deps, { indexes: this.#indexes, placing: this.#placing });
    this.#kills = new ActorKills(deps, { table: this.#table, indexes: this.#indexes });
  }

  /** register_actor: the ActorInfo right after registration (PENDING or SCHEDULED). */
  register(reg: RegisterActor): ActorInfoWire {
    tokenField('actorId', reg.actorId);
    const existing = this.#table.entry(reg.actorId);
    if (existing) return existing.info;
    this.deps.jobRunning?.(reg.jobId);
    const compiled = compileActor(reg, { rareResources: this.deps.rareResources });
    if (reg.name !== undefined && this.#indexes.named(reg.namespace, reg.name) !== undefined) throw new ActorNameTakenError(reg.name, reg.namespace);
    const decision = this.#placing.decide({ actorId: reg.actorId, namespace: reg.namespace, compiled });
    if (decision.status === 'failed') throw decision.error;

    const ref = this.#table.start(reg, compiled, { numRestarts: 0, incarnation: 0 });
    this.#placing.registered(ref, reg.actorId, decision);
    return this.#table.entry(reg.actorId)!.info;
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
    if (this.#table.entry(reg.actorId) !== undefined) return;
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
      this.#table.add({ registration: reg, compiled, ref: undefined, asleep: false, info: record.info, placementGroupId: PlacementGroupDirectory.groupOf(reg.options) });
      return;
    }
    if (how.kind === 'lost') {
      const restartable = compiled.maxRestarts === -1 || numRestarts < compiled.maxRestarts;
      if (!restartable) {
        const info: ActorInfoWire = Object.assign({}, record.info, { state: 'DEAD' as const, deathCause: how.cause });
        delete (info as { nodeId?: string }).nodeId;
        this.#table.add({ registration: reg, compiled, ref: undefined, asleep: false, info, placementGroupId: PlacementGroupDirectory.groupOf(reg.options) });
        this.deps.store.putActor({ registration: reg, info, incarnation });
        this.deps.events.actorState(info);
        return;
      }
      this.deps.log(`actor ${reg.actorId} restarts: ${how.cause}`);
      this.#table.start(reg, compiled, { numRestarts: numRestarts + 1, incarnation: incarnation + 1 });
      return;
    }
    const ref = this.#table.start(reg, compiled, { numRestarts, incarnation });
    // still running there, this incarnation: ALIVE at once, not created again (actor.machine.ts)
    if (how.kind === 'running') ref.send({ type: 'ADOPTED', nodeId: how.nodeId });
    // still starting there: placed there as it was, and its create asked again (the same incarnation)
    else if (how.kind === 'starting') ref.send({ type: 'PLACED', nodeId: how.nodeId });
  }

  /** What a registering raylet still runs, while the GCS serves: strays are killed (actor-kills.ts). Answers how many. */
  reconcileNode(nodeId: string, running: readonly { actorId: string; incarnation: number }[]): number {
    return this.#kills.reconcileNode(nodeId, running);
  }

  get(query: MessageBody<'get_actor'>): ActorInfoWire {
    return this.#table.get(query);
  }

  list(): ActorInfoWire[] {
    return this.#table.list();
  }

  /** list_actors: one page in actor-id order (paging.ts), of the given states only when asked. */
  page(query: MessageBody<'list_actors'>, opts: { maxBytes: number }): Page<ActorInfoWire> {
    return this.#table.page(query, opts);
  }

  /** Stops every Actor machine still running (the GCS is stopping); their actors stay as they are. */
  stopAll(): void {
    this.#table.stopAll();
  }

  /** How many Actor machines run now, and how many actors sleep (ALIVE, machine stopped). */
  get machines(): { running: number; asleep: number } {
    return this.#table.machines;
  }

  /** kill_actor: moves the actor on at once, then waits for its raylet to drop the instance. */
  kill(body: MessageBody<'kill_actor'>): Promise<ActorInfoWire> {
    return this.#kills.kill(body);
  }

  /** actor_died: a raylet reports actors whose worker host exited. */
  died(body: MessageBody<'actor_died'>): { failed: number } {
    return this.#kills.died(body);
  }

  /** Kills every live actor of a removed placement group; resolves once their raylets dropped them (actor-kills.ts). */
  killInGroup(pgId: string, cause: string): Promise<void> {
    return this.#kills.killInGroup(pgId, cause);
  }

  /** A job finished: kills every live actor it owns (actor-kills.ts). Answers how many were killed. */
  killOwnedBy(jobIds: ReadonlySet<string>, cause: (jobId: string) => string, breathe: () => Promise<void> | undefined = () => undefined): Promise<number> {
    return this.#kills.killOwnedBy(jobIds, cause, breathe);
  }

  /** Every actor placed on a node that died (or stopped) fails with `cause`, and restarts elsewhere when it may. */
  failOnNode(nodeId: string, cause = `node ${nodeId} died`): void {
    this.#kills.failOnNode(nodeId, cause);
  }

  /** Moves a running actor off its node (eviction.ts; actor-kills.ts). */
  evict(actorId: string, reason: EvictionReason, cause: string): void {
    this.#kills.evict(actorId, reason, cause);
  }

  /** A placed actor's request, for the eviction guard. */
  running(actorId: string): RunningActor | undefined {
    const entry = this.#table.entry(actorId);
    if (entry === undefined || (entry.ref === undefined && !entry.asleep)) return undefined;
    return { request: entry.compiled.request, namespace: entry.registration.namespace, required: entry.compiled.requiredDuringExecution };
  }

  /** A PENDING or RESTARTING actor as resource_demands groups it (demands.ts; actor-placing.ts). */
  waiting(actorId: string): WaitingActor | undefined {
    return this.#placing.waiting(actorId, this.#table.entry(actorId));
  }

  /** Whether another actor's placement can let this one fit (the pending queue's filter). */
  waitsOnPeers(actorId: string): boolean {
    return this.#table.entry(actorId)?.compiled.waitsOnPeers ?? false;
  }

  /** The pending queue's attempt to place one waiting actor. */
  tryPlace(actorId: string): PlaceOutcome {
    return this.#placing.tryPlace(actorId, this.#table.entry(actorId));
  }

  // ---- effects the Actor machine asks for (see actor-effects.ts) ----

  requestCreate(context: ActorContext): void {
    const entry = this.#table.entry(context.actorId);
    if (entry) this.#creates.request(entry, context);
  }

  requestKill(context: ActorContext): void {
    this.#kills.requestKill(context);
  }

  placed(context: ActorContext): void {
    const entry = this.#table.entry(context.actorId);
    if (entry) this.#placing.placed(context, entry.compiled);
  }

  left(context: ActorContext): void {
    this.#placing.left(context.actorId);
  }

  scheduleFailed(context: ActorContext, failure: ScheduleFailure): void {
    this.deps.events.scheduleFailed({ kind: 'actor', id: context.actorId, ...(context.name === undefined ? {} : { name: context.name }) }, failure);
  }

  /** explain: where an actor with these options would be placed now (a dry run, changing nothing; actor-placing.ts). */
  explain(namespace: string, options: Record<string, unknown>): DryRun {
    return this.#placing.explain(namespace, options);
  }

  /** Stops the refresh timer (the GCS stops). */
  stopRefreshes(): void {
    this.#placing.stop();
  }
}
