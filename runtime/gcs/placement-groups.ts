import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import { OrreryError } from '../../lib/errors.ts';
import type { Rng } from '../../lib/random.ts';
import { dryRunPlacementGroup, type PlacementGroupDryRun } from '../../lib/scheduling/dry-run.ts';
import { compilePlacementGroup, scheduleBundles, type BundleDecision, type PlacementGroupOptions, type PlacementGroupRequest } from '../../lib/scheduling/bundles/index.ts';
import type { Filter } from '../../lib/scheduling/filters/filter.ts';
import { DEFAULT_POLICY, type Policy } from '../../lib/scheduling/policy.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import type { CreatePg, PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import type { BundleClient, BundleOutcome } from './bundle-client.ts';
import { BundleCancels } from './bundle-cancels.ts';
import { BundleLedger } from './bundle-ledger.ts';
import type { EventPublisher } from './events.ts';
import type { PendingQueue, PlaceOutcome } from './pending-queue.ts';
import { awaitsPlacement, placementGroupStateOf, REMOVED_BY_USER, type PlacementGroupContext, type PlacementGroupMachineInput } from './placement-group.machine.ts';
import { GroupRunner } from './placement-group.runner.ts';
import { groupAt, initialGroup, type GroupEffect, type GroupSnapshot } from './placement-group.step.ts';
import { DEFAULT_MAX_REMOVED_GROUPS, DeadActors } from './dead-actors.ts';
import type { GcsStore, GroupRecord } from './store.ts';
import { tokenField } from './wire.ts';
import { lifetimeOption } from './actor-options.ts';
import type { WaitingGroup } from './demands.ts';
import type { InspectionEvent } from 'xstate';
import { placementGroupChildId } from './gcs.machine.ts';

/** Queue ids of placement groups in the GCS's pending queue: a '.' never appears in an actor id (a subject token). */
export const PG_QUEUE_PREFIX = 'pg.';

export interface PlacementGroupDirectoryDeps {
  readonly state: ClusterState;
  readonly events: EventPublisher;
  readonly bundles: BundleClient;
  readonly rng: Rng;
  readonly rareResources: readonly string[];
  readonly log: (line: string) => void;
  /** Throws unless the job a group is created under runs (jobs.ts, checkRunning). */
  readonly jobRunning?: (jobId: string | undefined) => void;
  readonly queue: () => PendingQueue;
  /** Live nodes placements keep off for now: their raylet did not answer (nodes.ts). */
  readonly unreachableNodes: () => ReadonlySet<string>;
  readonly nodeUnreachable: (nodeId: string) => void;
  /** Throws GCS_STOPPING once the GCS stops taking new groups. */
  readonly accepting: () => void;
  /** The GCS's inspection: every group machine's steps are announced there, as its actors' are. */
  readonly inspect?: (event: InspectionEvent) => void;
  /** The group table (store.ts): a group is written when created and when it enters a state a restart reads (STORED_STATES). */
  readonly store: GcsStore;
  /** How many REMOVED groups stay listed (and answer get_pg); default DEFAULT_MAX_REMOVED_GROUPS. */
  readonly maxRemovedGroups?: number;
  /** A node's resources changed (view broadcast, node table). */
  readonly nodeChanged: (nodeId: string) => void;
  /** Resources were freed or bundle resources appeared: waiting actors and groups may fit now. */
  readonly resourcesChanged: () => void;
  /** Kills every actor placed (or waiting to be placed) in the group's bundles. */
  /** Kills every actor placed (or waiting to be placed) in the group's bundles; resolves once their raylets dropped them. */
  readonly killActorsInGroup: (pgId: string, cause: string) => Promise<void>;
}

interface Entry {
  readonly registration: CreatePg;
  readonly request: PlacementGroupRequest;
  readonly ref: GroupRunner;
  info: PlacementGroupInfoWire;
}

const nameKey = (namespace: string, name: string): string => `${namespace}\u0000${name}`;

/**
 * The states whose record a restarted GCS reads differently (recovery.ts, `restore`): CREATED is
 * kept with its bundles, REMOVED is kept as a record, and every other state is placed again from
 * its registration. So a group's record is written when it is created and when it enters one of
 * these; PENDING ⇄ PREPARED and the steps inside PENDING or RESCHEDULING would be JetStream round
 * trips that change nothing a restart reads (bench:pg: a third of the group table's writes).
 */
const STORED_STATES: ReadonlySet<PlacementGroupInfoWire['state']> = new Set(['CREATED', 'REMOVED', 'RESCHEDULING']);

/** A node whose raylet did not answer: placements keep off it until it heartbeats again. */
function unreachable(nodes: ReadonlySet<string>): Filter {
  return {
    name: 'unreachable',
    kind: 'constraint',
    check: (node) => (nodes.has(node.id) ? { code: 'unschedulable', reason: "did not answer the GCS's last request" } : undefined),
  };
}

/**
 * The GCS's placement groups (docs/placement-groups.md): create_pg / remove_pg / get_pg /
 * list_placement_groups, the pending queue's attempts to place a waiting group, and the effects of
 * the PlacementGroup machine — reserving in the cluster state, the two-phase commit with raylets
 * (bundle-client.ts), bundle resources appearing on nodes, and giving everything back — what each
 * group holds in the cluster state is the ledger's (bundle-ledger.ts), and cancels on raylets are
 * sent again while unanswered (bundle-cancels.ts).
 */
export class PlacementGroupDirectory {
  readonly #entries = new Map<string, Entry>();
  readonly #names = new Map<string, string>();
  readonly #ledger: BundleLedger;
  readonly #cancels: BundleCancels;
  /** Removed groups: settles once their actors are dropped and their bundles cancelled on the raylets. */
  readonly #removals = new Map<string, Promise<void>>();
  /** REMOVED groups recovered from the store after a restart: reported, no machine. */
  readonly #removed = new Map<string, PlacementGroupInfoWire>();
  /** Waiting groups: the code of their last failure (infeasible, or unschedulable: waiting for resources). */
  readonly #failureCodes = new Map<string, 'unschedulable' | 'infeasible'>();
  /** State changes made in this run of microtasks, published once stored (#report). */
  #unreported: PlacementGroupInfoWire[] = [];
  /** The last batch of reports on its way out: the next one follows it. */
  #reporting: Promise<void> = Promise.resolve();
  /**
   * REMOVED groups in the order their removal ended (the same bounded FIFO as dead actors'): past
   * the bound the oldest is forgotten, from the tables and the store. Kept forever, every group ever
   * created stayed in memory (~4 KB each), in the store and in every list walk.
   */
  readonly #gone: DeadActors;

  constructor(private readonly deps: PlacementGroupDirectoryDeps) {
    this.#gone = new DeadActors(deps.maxRemovedGroups ?? DEFAULT_MAX_REMOVED_GROUPS);
    this.#ledger = new BundleLedger({ state: deps.state, nodeChanged: deps.nodeChanged, resourcesChanged: deps.resourcesChanged, log: deps.log });
    // sent again while the node lives and the GCS has not placed that bundle there again
    this.#cancels = new BundleCancels({ bundles: deps.bundles, stillWanted: (nodeId, b) => this.#ledger.alive(nodeId) && this.#ledger.nodeOf(b.pgId, b.index) !== nodeId });
  }

  /** A group's removal ended: the oldest REMOVED groups past the bound are forgotten. */
  #buried(pgId: string): void {
    for (const id of this.#gone.died(pgId)) {
      const entry = this.#entries.get(id);
      if (entry !== undefined && entry.info.state !== 'REMOVED') continue;
      if (entry !== undefined) {
        entry.ref.stop();
        this.#entries.delete(id);
      }
      this.#removed.delete(id);
      this.#removals.delete(id);
      this.#failureCodes.delete(id);
      this.deps.store.deleteGroup(id);
    }
  }

  /** create_pg: validates, starts the group's machine, tries to place it at once; answers its info. */
  /** explain for a placement group: its bundles' nodes now, or why not (a dry run, nothing reserved). */
  explain(namespace: string, options: Record<string, unknown>): PlacementGroupDryRun {
    const request = compilePlacementGroup(options as unknown as PlacementGroupOptions, { id: 'dry-run', rareResources: this.deps.rareResources });
    const unreachableNodes = this.deps.unreachableNodes();
    const policy: Policy = unreachableNodes.size ? { ...DEFAULT_POLICY, filters: [...DEFAULT_POLICY.filters, unreachable(unreachableNodes)] } : DEFAULT_POLICY;
    void namespace;
    return dryRunPlacementGroup(this.deps.state, request, { rng: this.deps.rng, policy });
  }

  create(body: CreatePg, opts: { restoring?: boolean } = {}): PlacementGroupInfoWire {
    tokenField('pgId', body.pgId);
    const existing = this.#entries.get(body.pgId);
    if (existing) return existing.info;
    // a group a restarted GCS places again may belong to a job that has finished meanwhile: the
    // job's end removes it once the GCS serves (jobs.ts); refusing it here threw out of the
    // reconciliation and left every record after it unrestored
    if (!opts.restoring) this.deps.jobRunning?.(body.jobId);
    lifetimeOption(body.options.lifetime);
    const request = compilePlacementGroup(body.options as unknown as PlacementGroupOptions, {
      id: body.pgId,
      ...(body.name === undefined ? {} : { name: body.name }),
      rareResources: this.deps.rareResources,
    });
    if (body.name !== undefined && this.#names.has(nameKey(body.namespace, body.name))) {
      throw new OrreryError('PLACEMENT_GROUP_NAME_TAKEN', `a placement group named ${JSON.stringify(body.name)} already exists in namespace ${JSON.stringify(body.namespace)}`, {
        detail: { name: body.name, namespace: body.namespace },
      });
    }
    const entry = this.#start(
      body,
      request,
      initialGroup({
        pgId: body.pgId,
        namespace: body.namespace,
        ...(body.name === undefined ? {} : { name: body.name }),
        strategy: request.strategy,
        tiers: request.tiers.map((tier) => tier.map((b) => ({ ...b.resources }))),
      }),
    );
    const outcome = this.#place(entry);
    if (outcome === 'waiting') this.deps.queue().tried(PG_QUEUE_PREFIX + body.pgId);
    return entry.info;
  }

  get(query: MessageBody<'get_pg'>): PlacementGroupInfoWire {
    if (query.pgId !== undefined) {
      const entry = this.#entries.get(query.pgId);
      const removed = this.#removed.get(query.pgId);
      if (!entry && removed) return removed;
      if (!entry) throw notFound(`no placement group with id ${JSON.stringify(query.pgId)}`, { pgId: query.pgId });
      return entry.info;
    }
    if (query.name === undefined) throw new ProtocolError('INVALID_MESSAGE', 'get_pg needs a pgId or a name', { detail: { path: '', rule: 'pgId or name' } });
    const namespace = query.namespace ?? 'default';
    const id = this.#names.get(nameKey(namespace, query.name));
    if (id === undefined) throw notFound(`no placement group named ${JSON.stringify(query.name)} in namespace ${JSON.stringify(namespace)}`, { name: query.name, namespace });
    return this.#entries.get(id)!.info;
  }

  /**
   * get_pg as answered on the wire: the group as it is now, sent once that is stored — the answer,
   * like the events, never tells of a CREATED that a GCS restart would not know.
   */
  async getStored(query: MessageBody<'get_pg'>): Promise<PlacementGroupInfoWire> {
    const info = this.get(query);
    await this.deps.store.durable();
    return info;
  }

  list(): PlacementGroupInfoWire[] {
    return [...this.#removed.values(), ...[...this.#entries.values()].map((e) => e.info)];
  }

  /**
   * Brings back a group from the store after a GCS restart (recovery.ts). A CREATED group whose
   * bundles on live nodes are all still committed there (`held(nodeId, index)`) comes back CREATED
   * as it was — its machine restored in that state, its bundles taken again in the cluster state
   * without asking the raylets — and the bundles on nodes that did not come back are lost as when a
   * node dies (the group reschedules them). Any other group that is not REMOVED is placed again from
   * the start; a REMOVED one is kept as a record. Answers how, and the bundles it kept (`nodeId/index`).
   */
  restore(record: GroupRecord, live: (nodeId: string) => boolean, held: (nodeId: string, index: number) => boolean): { how: 'kept' | 'again' | 'removed'; kept: Set<string> } {
    const { registration, info } = record;
    const kept = new Set<string>();
    if (this.#entries.has(info.id) || this.#removed.has(info.id) || info.state === 'REMOVED') {
      if (info.state === 'REMOVED' && !this.#entries.has(info.id)) {
        this.#removed.set(info.id, info);
        this.#buried(info.id);
      }
      return { how: 'removed', kept };
    }
    const whole = info.state === 'CREATED' && info.bundles.every((b) => b.nodeId !== undefined && (!live(b.nodeId) || held(b.nodeId, b.index)));
    if (!whole) {
      this.create(registration, { restoring: true });
      return { how: 'again', kept };
    }
    const request = compilePlacementGroup(registration.options as unknown as PlacementGroupOptions, {
      id: registration.pgId,
      ...(registration.name === undefined ? {} : { name: registration.name }),
      rareResources: this.deps.rareResources,
    });
    const input: PlacementGroupMachineInput = {
      pgId: registration.pgId,
      namespace: registration.namespace,
      ...(registration.name === undefined ? {} : { name: registration.name }),
      strategy: request.strategy,
      tiers: request.tiers.map((tier) => tier.map((b) => ({ ...b.resources }))),
    };
    const bundles = info.bundles.map((b) => ({ index: b.index, resources: { ...b.resources }, nodeId: b.nodeId!, committed: true }));
    const context: PlacementGroupContext = Object.assign({}, input, { tier: info.tier, bundles, placing: [], round: 0, failures: 0 });
    const { ref } = this.#start(registration, request, groupAt('CREATED', context));
    // what the raylets still hold is taken again here, as the two-phase commit took it first
    const placing = bundles.filter((b) => live(b.nodeId)).map((b) => b.index);
    this.#ledger.reserve(context.pgId, placing, bundles);
    this.#ledger.commit(context.pgId, placing);
    for (const i of placing) kept.add(`${bundles[i].nodeId}/${i}`);
    for (const nodeId of new Set(bundles.filter((b) => !live(b.nodeId)).map((b) => b.nodeId))) ref.send({ type: 'NODE_DIED', nodeId });
    return { how: 'kept', kept };
  }

  /**
   * Bundles a registering raylet holds, while the GCS serves: those the GCS has committed on that
   * node stay; every other one is cancelled there. Answers how many were cancelled.
   */
  reconcileNode(nodeId: string, bundles: readonly { pgId: string; index: number }[]): number {
    let cancelled = 0;
    for (const { pgId, index } of bundles) {
      if (this.#ledger.nodeOf(pgId, index) === nodeId) continue;
      void this.#cancels.cancel(nodeId, { pgId, index });
      cancelled++;
    }
    return cancelled;
  }

  /**
   * remove_pg: kills the group's actors and gives back every bundle at once in the GCS; answers the
   * info, REMOVED, once the raylets dropped those actors and cancelled the bundles (each bounded by
   * its request timeout) — after the answer no call reaches an actor of the group. A second
   * remove_pg waits for the same.
   */
  async remove(body: MessageBody<'remove_pg'>): Promise<PlacementGroupInfoWire> {
    const entry = this.#entries.get(body.pgId);
    if (!entry) throw notFound(`no placement group with id ${JSON.stringify(body.pgId)}`, { pgId: body.pgId });
    entry.ref.send({ type: 'REMOVE', cause: REMOVED_BY_USER });
    await this.#removals.get(body.pgId);
    return entry.info;
  }

  /**
   * A job finished: every group it owns (created under it, not detached) is removed with
   * `cause(jobId)`, its actors killed, pausing whenever `breathe` says (intake-queue.ts, slicer).
   * Resolves once the raylets have dropped them; answers how many.
   */
  async removeOwnedBy(jobIds: ReadonlySet<string>, cause: (jobId: string) => string, breathe: () => Promise<void> | undefined = () => undefined): Promise<number> {
    const removals: Promise<void>[] = [];
    for (const entry of [...this.#entries.values()]) {
      const { jobId, options } = entry.registration;
      if (jobId === undefined || !jobIds.has(jobId) || options.lifetime === 'detached' || entry.info.state === 'REMOVED') continue;
      entry.ref.send({ type: 'REMOVE', cause: cause(jobId) });
      removals.push(this.#removals.get(entry.registration.pgId) ?? Promise.resolve());
      // a job with 100,000 groups held the GCS for seconds: heartbeats went unanswered and nats-server dropped its connection
      const pause = breathe();
      if (pause) await pause;
    }
    await Promise.all(removals);
    return removals.length;
  }

  /** The pending queue's attempt to place a waiting group (`queueId` = PG_QUEUE_PREFIX + pgId). */
  tryPlace(queueId: string): PlaceOutcome {
    const entry = this.#entries.get(queueId.slice(PG_QUEUE_PREFIX.length));
    if (!entry) return 'gone';
    return this.#place(entry);
  }

  /** A node died: groups holding bundles there lose them (and reschedule them). Before the node leaves the cluster state. */
  failOnNode(nodeId: string): void {
    for (const entry of this.#entries.values()) {
      if (entry.ref.getSnapshot().status === 'active') entry.ref.send({ type: 'NODE_DIED', nodeId });
    }
  }

  /** The group an actor's options place it in, if any. */
  static groupOf(options: Record<string, unknown>): string | undefined {
    const s = options.schedulingStrategy as { type?: unknown; placementGroupId?: unknown } | undefined;
    return s !== null && typeof s === 'object' && s.type === 'PLACEMENT_GROUP' && typeof s.placementGroupId === 'string' ? s.placementGroupId : undefined;
  }

  /** The GCS stops: no group's machine steps any more (backoff timers end), no cancel is sent again. */
  stopAll(): void {
    for (const entry of this.#entries.values()) entry.ref.stop();
    this.#cancels.stop();
  }

  /** Starts a group's machine from `snapshot`, enters it in the tables and looks at its first state. */
  #start(registration: CreatePg, request: PlacementGroupRequest, snapshot: GroupSnapshot): Entry {
    this.deps.accepting();
    const pgId = registration.pgId;
    let entry: Entry | undefined;
    const ref = new GroupRunner({
      id: placementGroupChildId(pgId),
      snapshot,
      effects: (effect) => this.#run(effect),
      observe: (s) => this.#observe(entry!, s, false),
      ...(this.deps.inspect === undefined ? {} : { inspect: this.deps.inspect }),
    });
    entry = { registration, request, ref, info: this.#infoOf(snapshot) };
    this.#entries.set(pgId, entry);
    if (registration.name !== undefined) this.#names.set(nameKey(registration.namespace, registration.name), pgId);
    this.#observe(entry, snapshot, true);
    return entry;
  }

  // ---- placing ----

  #place(entry: Entry): PlaceOutcome {
    const snapshot = entry.ref.getSnapshot();
    if (snapshot.status !== 'active') return 'gone';
    if (!awaitsPlacement(snapshot)) return 'gone';
    const c = snapshot.context;
    const rescheduling = placementGroupStateOf(snapshot) === 'RESCHEDULING';
    const unreachableNodes = this.deps.unreachableNodes();
    const policy: Policy = unreachableNodes.size ? { ...DEFAULT_POLICY, filters: [...DEFAULT_POLICY.filters, unreachable(unreachableNodes)] } : DEFAULT_POLICY;
    if (!rescheduling) {
      const decision = scheduleBundles(this.deps.state, entry.request, { rng: this.deps.rng, policy });
      this.#apply(entry, decision, (d) => [...d.nodeIds]);
    } else {
      // only the lost bundles, of the tier in use, beside the nodes holding the others
      const spec = entry.request.tiers[c.tier];
      const placed = [...new Set(c.bundles.filter((b) => b.nodeId !== undefined).map((b) => b.nodeId!))];
      const request: PlacementGroupRequest = Object.assign({}, entry.request, { tiers: [c.placing.map((i) => spec[i])], placed });
      const decision = scheduleBundles(this.deps.state, request, { rng: this.deps.rng, policy });
      if (decision.status === 'placed') {
        const nodeIds: string[] = c.bundles.map((b) => b.nodeId ?? '');
        c.placing.forEach((i, k) => (nodeIds[i] = decision.nodeIds[k]));
        entry.ref.send({ type: 'PLACED', tier: c.tier, nodeIds });
      } else {
        this.#failureCodes.set(c.pgId, decision.failure.code);
        entry.ref.send({ type: 'UNSCHEDULABLE', tier: c.tier, failure: decision.failure });
      }
    }
    return awaitsPlacement(entry.ref.getSnapshot()) ? 'waiting' : 'placed';
  }

  #apply(entry: Entry, decision: BundleDecision, nodeIds: (d: Extract<BundleDecision, { status: 'placed' }>) => string[]): void {
    if (decision.status === 'placed') entry.ref.send({ type: 'PLACED', tier: decision.tier, nodeIds: nodeIds(decision) });
    else {
      this.#failureCodes.set(entry.registration.pgId, decision.failure.code);
      entry.ref.send({ type: 'UNSCHEDULABLE', tier: entry.ref.getSnapshot().context.tier, failure: decision.failure });
    }
  }

  /**
   * A waiting group as resource_demands groups it (demands.ts): a PENDING group's options as sent
   * (without its name; strategy filled in), a RESCHEDULING group's bundles still to place again, of
   * the tier in use, with their selectors and the group's tolerations (no fallbacks: the tier is
   * chosen). Undefined when the group does not wait.
   */
  waiting(queueId: string): WaitingGroup | undefined {
    const entry = this.#entries.get(queueId.slice(PG_QUEUE_PREFIX.length));
    const snapshot = entry?.ref.getSnapshot();
    if (entry === undefined || snapshot === undefined || snapshot.status !== 'active' || !awaitsPlacement(snapshot)) return undefined;
    const opts = entry.registration.options as unknown as PlacementGroupOptions;
    const strategy = entry.request.strategy;
    const tolerations = opts.tolerations === undefined ? {} : { tolerations: opts.tolerations };
    let options: WaitingGroup['options'];
    if (placementGroupStateOf(snapshot) === 'RESCHEDULING') {
      const c = snapshot.context;
      const tier = c.tier === 0 ? opts : opts.fallbackStrategy![c.tier - 1];
      const selectors = tier.bundleLabelSelector;
      options = {
        bundles: c.placing.map((i) => tier.bundles[i]),
        strategy,
        ...(selectors === undefined ? {} : { bundleLabelSelector: c.placing.map((i) => selectors[i]) }),
        ...tolerations,
      };
    } else {
      options = {
        bundles: opts.bundles,
        strategy,
        ...(opts.bundleLabelSelector === undefined ? {} : { bundleLabelSelector: opts.bundleLabelSelector }),
        ...(opts.fallbackStrategy === undefined ? {} : { fallbackStrategy: opts.fallbackStrategy }),
        ...tolerations,
      };
    }
    const reason = entry.info.pendingReason;
    return { pgId: entry.registration.pgId, namespace: entry.registration.namespace, options, infeasible: this.#failureCodes.get(entry.registration.pgId) === 'infeasible', ...(reason === undefined ? {} : { reason }) };
  }

  /** Bundles reserved or committed on each node, as the GCS's cluster state holds them. */
  bundleCounts(): Map<string, number> {
    return this.#ledger.countsByNode();
  }

  // ---- the machine's effects ----

  /** Runs one of a group machine's effects; a failure is logged, never thrown into the machine. */
  #run(effect: GroupEffect): void {
    const { context } = effect;
    try {
      switch (effect.type) {
        case 'reserve':
          return this.#ledger.reserve(context.pgId, context.placing, context.bundles);
        case 'requestPrepare':
          return this.#twoPhase(context, 'prepare');
        case 'requestCommit':
          return this.#twoPhase(context, 'commit');
        case 'commitBundles':
          return this.#ledger.commit(context.pgId, context.placing);
        case 'abandon':
          return void this.#giveBack(context.pgId, context.placing);
        case 'loseNode':
          return this.#ledger.lose(context.pgId, effect.params.nodeId);
        case 'release': {
          const killed = this.deps.killActorsInGroup(context.pgId, `placement group ${context.pgId} was removed`);
          const cancelled = this.#giveBack(context.pgId, undefined);
          const pgId = context.pgId;
          const settled = Promise.all([killed, ...cancelled]).then(() => undefined);
          this.#removals.set(pgId, settled);
          void settled.then(() => {
            if (this.#removals.get(pgId) === settled) this.#removals.delete(pgId);
            this.#buried(pgId);
          });
          return;
        }
        case 'reportScheduleFailed':
          return this.deps.events.scheduleFailed({ kind: 'placement_group', id: context.pgId, ...(context.name === undefined ? {} : { name: context.name }) }, effect.params.failure);
      }
    } catch (err) {
      this.deps.log(`${effect.type} for placement group ${context.pgId} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Asks every raylet of the round to prepare (or commit) its bundles; one answer event for the round. */
  #twoPhase(c: PlacementGroupContext, phase: 'prepare' | 'commit'): void {
    const { pgId, round } = c;
    const asks = c.placing.map((index) => {
      const b = c.bundles[index];
      const nodeId = b.nodeId!;
      const outcome = phase === 'prepare' ? this.deps.bundles.prepare(nodeId, { pgId, index, resources: b.resources }) : this.deps.bundles.commit(nodeId, { pgId, index });
      return outcome.then((o): BundleOutcome => {
        if (!o.ok && o.unreachable) this.deps.nodeUnreachable(nodeId);
        return o;
      });
    });
    void Promise.all(asks).then((outcomes) => {
      const ref = this.#entries.get(pgId)?.ref;
      if (!ref || ref.getSnapshot().status !== 'active') return;
      const failed = outcomes.find((o): o is Extract<BundleOutcome, { ok: false }> => !o.ok);
      if (phase === 'prepare') ref.send(failed ? { type: 'PREPARE_FAILED', round, cause: failed.cause } : { type: 'PREPARED', round });
      else ref.send(failed ? { type: 'COMMIT_FAILED', round, cause: failed.cause } : { type: 'COMMITTED', round });
    });
  }

  /** Gives back the given bundles (all when undefined): in the cluster state, and on their raylets. */
  #giveBack(pgId: string, indexes: readonly number[] | undefined): Promise<unknown>[] {
    return this.#ledger.giveBack(pgId, indexes).map(({ nodeId, index }) => this.#cancels.cancel(nodeId, { pgId, index }));
  }

  // ---- the table ----

  #observe(entry: Entry, snapshot: GroupSnapshot, initial: boolean): void {
    const previous = entry.info;
    const info = this.#infoOf(snapshot);
    entry.info = info;
    const queueId = PG_QUEUE_PREFIX + info.id;
    const queue = this.deps.queue();
    if (snapshot.status === 'active' && awaitsPlacement(snapshot)) {
      if (!queue.has(queueId)) {
        queue.add(queueId);
        // back from a backoff or a lost node: a pass tries it (a newcomer is news to nobody else)
        if (!initial) queue.kick('actor_waiting');
      }
    } else {
      queue.delete(queueId);
      this.#failureCodes.delete(info.id);
    }
    if (info.state === 'REMOVED' && info.name !== undefined && this.#names.get(nameKey(info.namespace, info.name)) === info.id) {
      this.#names.delete(nameKey(info.namespace, info.name));
    }
    if (initial || (info.state !== previous.state && STORED_STATES.has(info.state))) this.deps.store.putGroup({ registration: entry.registration, info });
    if (initial || info.state !== previous.state) this.#report(info);
  }

  /**
   * Publishes a group's placement_group_state once what the store holds of it is durable: a group
   * anyone was told is CREATED (or REMOVED) is so after a GCS restart too. The reports of one run of
   * microtasks wait for one durable() and go out in the order they were made.
   */
  #report(info: PlacementGroupInfoWire): void {
    if (this.#unreported.length === 0) queueMicrotask(() => this.#reportDurable());
    this.#unreported.push(info);
  }

  #reportDurable(): void {
    const batch = this.#unreported;
    this.#unreported = [];
    const durable = this.deps.store.durable().catch((err: unknown) => this.deps.log(`placement-group records not stored: ${err instanceof Error ? err.message : String(err)}`));
    this.#reporting = Promise.all([this.#reporting, durable]).then(() => {
      for (const info of batch) this.deps.events.placementGroupState(info);
    });
  }

  #infoOf(snapshot: GroupSnapshot): PlacementGroupInfoWire {
    const c = snapshot.context;
    const state = placementGroupStateOf(snapshot);
    return {
      id: c.pgId,
      ...(c.name === undefined ? {} : { name: c.name }),
      namespace: c.namespace,
      state,
      strategy: c.strategy,
      bundles: c.bundles.map((b) => ({ index: b.index, resources: { ...b.resources }, ...(b.nodeId === undefined ? {} : { nodeId: b.nodeId }) })),
      tier: c.tier,
      ...((state === 'PENDING' || state === 'RESCHEDULING') && c.pendingReason !== undefined ? { pendingReason: c.pendingReason } : {}),
      ...(c.removedCause === undefined ? {} : { removedCause: c.removedCause }),
    };
  }
}


function notFound(message: string, detail: Record<string, unknown>): OrreryError {
  return new OrreryError('PLACEMENT_GROUP_NOT_FOUND', message, { detail });
}
