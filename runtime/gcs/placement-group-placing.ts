import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { Rng } from '../../lib/random.ts';
import { dryRunPlacementGroup, type PlacementGroupDryRun } from '../../lib/scheduling/dry-run.ts';
import { compilePlacementGroup, scheduleBundles, type BundleDecision, type PlacementGroupOptions, type PlacementGroupRequest } from '../../lib/scheduling/bundles/index.ts';
import type { Filter } from '../../lib/scheduling/filters/filter.ts';
import { DEFAULT_POLICY, type Policy } from '../../lib/scheduling/policy.ts';
import type { WaitingGroup } from './demands.ts';
import type { PlaceOutcome } from './pending-queue.ts';
import { awaitsPlacement, placementGroupStateOf } from './placement-group.machine.ts';
import type { GroupEntry } from './placement-group-table.ts';

/**
 * Placing the placement-group directory's groups (placement-groups.ts): lib's scheduleBundles for a
 * PENDING group, or for a RESCHEDULING group's lost bundles beside the nodes holding the others,
 * sent to the group's machine as PLACED or UNSCHEDULABLE; the code of each waiting group's last
 * failure, and what resource_demands and explain read of them.
 */
export interface GroupPlacingDeps {
  readonly state: ClusterState;
  readonly rng: Rng;
  readonly rareResources: readonly string[];
  /** Live nodes placements keep off for now: their raylet did not answer (nodes.ts). */
  readonly unreachableNodes: () => ReadonlySet<string>;
}

/** A node whose raylet did not answer: placements keep off it until it heartbeats again. */
function unreachable(nodes: ReadonlySet<string>): Filter {
  return {
    name: 'unreachable',
    kind: 'constraint',
    check: (node) => (nodes.has(node.id) ? { code: 'unschedulable', reason: "did not answer the GCS's last request" } : undefined),
  };
}

export class GroupPlacing {
  /** Waiting groups: the code of their last failure (infeasible, or unschedulable: waiting for resources). */
  readonly #failureCodes = new Map<string, 'unschedulable' | 'infeasible'>();

  constructor(private readonly deps: GroupPlacingDeps) {}

  /** explain for a placement group: its bundles' nodes now, or why not (a dry run, nothing reserved). */
  explain(namespace: string, options: Record<string, unknown>): PlacementGroupDryRun {
    const request = compilePlacementGroup(options as unknown as PlacementGroupOptions, { id: 'dry-run', rareResources: this.deps.rareResources });
    void namespace;
    return dryRunPlacementGroup(this.deps.state, request, { rng: this.deps.rng, policy: this.#policy() });
  }

  /** The default policy, keeping off the nodes whose raylet did not answer (nodes.ts, unreachable). */
  #policy(): Policy {
    const unreachableNodes = this.deps.unreachableNodes();
    return unreachableNodes.size ? { ...DEFAULT_POLICY, filters: [...DEFAULT_POLICY.filters, unreachable(unreachableNodes)] } : DEFAULT_POLICY;
  }

  /** The group no longer waits, or is forgotten: its last failure's code goes. */
  forget(pgId: string): void {
    this.#failureCodes.delete(pgId);
  }

  place(entry: GroupEntry): PlaceOutcome {
    const snapshot = entry.ref.getSnapshot();
    if (snapshot.status !== 'active') return 'gone';
    if (!awaitsPlacement(snapshot)) return 'gone';
    const c = snapshot.context;
    const rescheduling = placementGroupStateOf(snapshot) === 'RESCHEDULING';
    const policy = this.#policy();
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

  #apply(entry: GroupEntry, decision: BundleDecision, nodeIds: (d: Extract<BundleDecision, { status: 'placed' }>) => string[]): void {
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
  waiting(entry: GroupEntry | undefined): WaitingGroup | undefined {
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
}
