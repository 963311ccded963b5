import { OrreryError } from '../../lib/errors.ts';
import { compilePlacementGroup, type PlacementGroupOptions, type PlacementGroupRequest } from '../../lib/scheduling/bundles/index.ts';
import type { CreatePg, PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { InspectionEvent } from 'xstate';
import { lifetimeOption } from './actor-options.ts';
import type { BundleLedger } from './bundle-ledger.ts';
import { placementGroupChildId } from './gcs.machine.ts';
import type { PendingQueue } from './pending-queue.ts';
import type { PlacementGroupContext, PlacementGroupMachineInput } from './placement-group.machine.ts';
import { GroupRunner } from './placement-group.runner.ts';
import { groupAt, initialGroup, type GroupSnapshot } from './placement-group.step.ts';
import type { GroupEffectRunner } from './placement-group-effects.ts';
import { groupInfoOf } from './placement-group-info.ts';
import type { GroupPlacing } from './placement-group-placing.ts';
import { PG_QUEUE_PREFIX, type GroupEntry, type GroupTable } from './placement-group-table.ts';
import type { GroupRecord } from './store.ts';
import { tokenField } from './wire.ts';

/**
 * How a placement group comes into the directory (placement-groups.ts): create_pg — validated, its
 * machine started, placed at once when it can be — and a group brought back from the store after a
 * GCS restart (recovery.ts). Each starts the group's machine (placement-group.runner.ts), its
 * effects run by placement-group-effects.ts and its snapshots kept in the table
 * (placement-group-table.ts).
 */
export interface GroupRegistrationDeps {
  readonly rareResources: readonly string[];
  /** Throws unless the job a group is created under runs (jobs.ts, checkRunning). */
  readonly jobRunning?: (jobId: string | undefined) => void;
  readonly queue: () => PendingQueue;
  /** Throws GCS_STOPPING once the GCS stops taking new groups. */
  readonly accepting: () => void;
  /** The GCS's inspection: every group machine's steps are announced there, as its actors' are. */
  readonly inspect?: (event: InspectionEvent) => void;
}

/** The table, placement, the machine's effects and the ledger, built by the directory before this. */
export interface GroupRegistrationParts {
  readonly table: Pick<GroupTable, 'entry' | 'isRemoved' | 'keepRemoved' | 'named' | 'add' | 'observe'>;
  readonly placing: Pick<GroupPlacing, 'place'>;
  readonly effects: Pick<GroupEffectRunner, 'run'>;
  readonly ledger: Pick<BundleLedger, 'reserve' | 'commit'>;
}

export class GroupRegistration {
  constructor(
    private readonly deps: GroupRegistrationDeps,
    private readonly parts: GroupRegistrationParts,
  ) {}

  /** create_pg: validates, starts the group's machine, tries to place it at once; answers its info. */
  create(body: CreatePg, opts: { restoring?: boolean } = {}): PlacementGroupInfoWire {
    tokenField('pgId', body.pgId);
    const existing = this.parts.table.entry(body.pgId);
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
    if (body.name !== undefined && this.parts.table.named(body.namespace, body.name)) {
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
    const outcome = this.parts.placing.place(entry);
    if (outcome === 'waiting') this.deps.queue().tried(PG_QUEUE_PREFIX + body.pgId);
    return entry.info;
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
    if (this.parts.table.entry(info.id) !== undefined || this.parts.table.isRemoved(info.id) || info.state === 'REMOVED') {
      if (info.state === 'REMOVED' && this.parts.table.entry(info.id) === undefined) this.parts.table.keepRemoved(info);
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
    this.parts.ledger.reserve(context.pgId, placing, bundles);
    this.parts.ledger.commit(context.pgId, placing);
    for (const i of placing) kept.add(`${bundles[i].nodeId}/${i}`);
    for (const nodeId of new Set(bundles.filter((b) => !live(b.nodeId)).map((b) => b.nodeId))) ref.send({ type: 'NODE_DIED', nodeId });
    return { how: 'kept', kept };
  }

  /** Starts a group's machine from `snapshot`, enters it in the tables and looks at its first state. */
  #start(registration: CreatePg, request: PlacementGroupRequest, snapshot: GroupSnapshot): GroupEntry {
    this.deps.accepting();
    const pgId = registration.pgId;
    let entry: GroupEntry | undefined;
    const ref = new GroupRunner({
      id: placementGroupChildId(pgId),
      snapshot,
      effects: (effect) => this.parts.effects.run(effect),
      observe: (s) => this.parts.table.observe(entry!, s, false),
      ...(this.deps.inspect === undefined ? {} : { inspect: this.deps.inspect }),
    });
    entry = { registration, request, ref, info: groupInfoOf(snapshot) };
    this.parts.table.add(entry);
    this.parts.table.observe(entry, snapshot, true);
    return entry;
  }
}
