import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { Rng } from '../../lib/random.ts';
import type { PlacementGroupDryRun } from '../../lib/scheduling/dry-run.ts';
import type { CreatePg, PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import type { BundleClient } from './bundle-client.ts';
import { BundleCancels } from './bundle-cancels.ts';
import { BundleLedger } from './bundle-ledger.ts';
import type { EventPublisher } from './events.ts';
import type { PendingQueue, PlaceOutcome } from './pending-queue.ts';
import { REMOVED_BY_USER } from './placement-group.machine.ts';
import { GroupEffectRunner } from './placement-group-effects.ts';
import { GroupPlacing } from './placement-group-placing.ts';
import { GroupRegistration } from './placement-group-registration.ts';
import { GroupTable, notFound, PG_QUEUE_PREFIX } from './placement-group-table.ts';
import type { GcsStore, GroupRecord } from './store.ts';
import type { WaitingGroup } from './demands.ts';
import type { InspectionEvent } from 'xstate';


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
  /** Kills every actor placed (or waiting to be placed) in the group's bundles; resolves once their raylets dropped them. */
  readonly killActorsInGroup: (pgId: string, cause: string) => Promise<void>;
}

/**
 * The GCS's placement groups (docs/placement-groups.md): create_pg / remove_pg / get_pg /
 * list_placement_groups, the pending queue's attempts to place a waiting group, and the effects of
 * the PlacementGroup machine — reserving in the cluster state, the two-phase commit with raylets
 * (bundle-client.ts), bundle resources appearing on nodes, and giving everything back — what each
 * group holds in the cluster state is the ledger's (bundle-ledger.ts), and cancels on raylets are
 * sent again while unanswered (bundle-cancels.ts).
 *
 * The directory is the GCS's one entry to its groups; the work is in the parts beside it, built here
 * in order: the ledger and the cancels, placement and the waiting groups' failure codes
 * (placement-group-placing.ts), the table kept from the machines' snapshots, its queries and the
 * forgetting of REMOVED groups (placement-group-table.ts; each group's info in
 * placement-group-info.ts, its events in placement-group-reports.ts), what the machine's effects
 * do (placement-group-effects.ts), and create_pg and restore, which start the machines
 * (placement-group-registration.ts).
 */
export class PlacementGroupDirectory {
  readonly #ledger: BundleLedger;
  readonly #cancels: BundleCancels;
  readonly #placing: GroupPlacing;
  readonly #table: GroupTable;
  readonly #effects: GroupEffectRunner;
  readonly #registration: GroupRegistration;

  constructor(deps: PlacementGroupDirectoryDeps) {
    this.#ledger = new BundleLedger({ state: deps.state, nodeChanged: deps.nodeChanged, resourcesChanged: deps.resourcesChanged, log: deps.log });
    // sent again while the node lives and the GCS has not placed that bundle there again
    this.#cancels = new BundleCancels({ bundles: deps.bundles, stillWanted: (nodeId, b) => this.#ledger.alive(nodeId) && this.#ledger.nodeOf(b.pgId, b.index) !== nodeId });
    this.#placing = new GroupPlacing(deps);
    this.#table = new GroupTable(deps, { placing: this.#placing });
    this.#effects = new GroupEffectRunner(deps, { table: this.#table, ledger: this.#ledger, cancels: this.#cancels });
    this.#registration = new GroupRegistration(deps, { table: this.#table, placing: this.#placing, effects: this.#effects, ledger: this.#ledger });
  }

  /** explain for a placement group: its bundles' nodes now, or why not (a dry run, nothing reserved; placement-group-placing.ts). */
  explain(namespace: string, options: Record<string, unknown>): PlacementGroupDryRun {
    return this.#placing.explain(namespace, options);
  }

  /** create_pg: validates, starts the group's machine, tries to place it at once; answers its info (placement-group-registration.ts). */
  create(body: CreatePg, opts: { restoring?: boolean } = {}): PlacementGroupInfoWire {
    return this.#registration.create(body, opts);
  }

  get(query: MessageBody<'get_pg'>): PlacementGroupInfoWire {
    return this.#table.get(query);
  }

  /** get_pg as answered on the wire: sent once what it tells is stored (placement-group-table.ts). */
  getStored(query: MessageBody<'get_pg'>): Promise<PlacementGroupInfoWire> {
    return this.#table.getStored(query);
  }

  list(): PlacementGroupInfoWire[] {
    return this.#table.list();
  }

  /**
   * Brings back a group from the store after a GCS restart (recovery.ts; placement-group-registration.ts):
   * CREATED as it was when its bundles are still held, else placed again, or kept as a REMOVED record.
   * Answers how, and the bundles it kept (`nodeId/index`).
   */
  restore(record: GroupRecord, live: (nodeId: string) => boolean, held: (nodeId: string, index: number) => boolean): { how: 'kept' | 'again' | 'removed'; kept: Set<string> } {
    return this.#registration.restore(record, live, held);
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
    const entry = this.#table.entry(body.pgId);
    if (!entry) throw notFound(`no placement group with id ${JSON.stringify(body.pgId)}`, { pgId: body.pgId });
    entry.ref.send({ type: 'REMOVE', cause: REMOVED_BY_USER });
    await this.#table.removal(body.pgId);
    return entry.info;
  }

  /**
   * A job finished: every group it owns (created under it, not detached) is removed with
   * `cause(jobId)`, its actors killed, pausing whenever `breathe` says (intake-queue.ts, slicer).
   * Resolves once the raylets have dropped them; answers how many.
   */
  async removeOwnedBy(jobIds: ReadonlySet<string>, cause: (jobId: string) => string, breathe: () => Promise<void> | undefined = () => undefined): Promise<number> {
    const removals: Promise<void>[] = [];
    for (const entry of [...this.#table.values()]) {
      const { jobId, options } = entry.registration;
      if (jobId === undefined || !jobIds.has(jobId) || options.lifetime === 'detached' || entry.info.state === 'REMOVED') continue;
      entry.ref.send({ type: 'REMOVE', cause: cause(jobId) });
      removals.push(this.#table.removal(entry.registration.pgId) ?? Promise.resolve());
      // a job with 100,000 groups held the GCS for seconds: heartbeats went unanswered and nats-server dropped its connection
      const pause = breathe();
      if (pause) await pause;
    }
    await Promise.all(removals);
    return removals.length;
  }

  /** The pending queue's attempt to place a waiting group (`queueId` = PG_QUEUE_PREFIX + pgId). */
  tryPlace(queueId: string): PlaceOutcome {
    const entry = this.#table.entry(queueId.slice(PG_QUEUE_PREFIX.length));
    if (!entry) return 'gone';
    return this.#placing.place(entry);
  }

  /** A node died: groups holding bundles there lose them (and reschedule them). Before the node leaves the cluster state. */
  failOnNode(nodeId: string): void {
    for (const entry of this.#table.values()) {
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
    for (const entry of this.#table.values()) entry.ref.stop();
    this.#cancels.stop();
  }

  /** A waiting group as resource_demands groups it (demands.ts; placement-group-placing.ts). Undefined when the group does not wait. */
  waiting(queueId: string): WaitingGroup | undefined {
    return this.#placing.waiting(this.#table.entry(queueId.slice(PG_QUEUE_PREFIX.length)));
  }

  /** Bundles reserved or committed on each node, as the GCS's cluster state holds them. */
  bundleCounts(): Map<string, number> {
    return this.#ledger.countsByNode();
  }
}
