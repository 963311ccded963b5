import { ClusterState } from '../../cluster/cluster-state.ts';
import type { Rng } from '../../random.ts';
import { explain, type ScheduleFailure } from '../explain.ts';
import { pickHybrid } from '../pick/hybrid.ts';
import { DEFAULT_POLICY, type Policy } from '../policy.ts';
import { plainPool, REFERENCE_FILTERS } from '../reference.ts';
import { excluding, placeTier, type NodePicker, type Stuck } from './place.ts';
import type { PlacementGroupRequest } from './request.ts';

export type BundleDecision =
  | { readonly status: 'placed'; readonly nodeIds: readonly string[]; readonly tier: number }
  | { readonly status: 'unschedulable'; readonly failure: ScheduleFailure };

/**
 * Places a placement group: a whole assignment (one node id per bundle) or a reason, never part of
 * one. Tiers (bundles, then each fallback) are tried in order; a tier that would fit once busy
 * nodes free up makes the group wait rather than fall back — fallbacks are for what cannot exist
 * as the cluster stands (seed 002: "prefer 2 H100s, else 4 A100s, else 8 V100s").
 */
export function scheduleBundles(state: ClusterState, req: PlacementGroupRequest, opts: { rng: Rng; policy?: Policy }): BundleDecision {
  const policy = opts.policy ?? DEFAULT_POLICY;
  return decide(state, req, policy, (s, attempt, p) => pickHybrid(s, attempt, p, opts.rng));
}

/** The same decision with every bundle's node found by a plain scan of all nodes (the reference). */
export function referenceScheduleBundles(state: ClusterState, req: PlacementGroupRequest, rng: Rng): BundleDecision {
  const policy: Policy = { ...DEFAULT_POLICY, filters: REFERENCE_FILTERS };
  return decide(state, req, policy, (s, attempt, p) => {
    const pool = plainPool(s, attempt, p.filters, p.topKFraction);
    return pool.length ? s.nodes.get(pool[Math.floor(rng() * pool.length)]) : undefined;
  });
}

/**
 * The failure's code is the decision's own: a tier that fits once nodes are idle means the group may
 * be placed later ('unschedulable'); no tier fitting even then means it never will as the cluster
 * stands ('infeasible'). One bundle's explanation cannot tell — bundle 2 of three on two 1-CPU nodes
 * only sees nodes that are busy with bundles 0 and 1.
 */
function decide(state: ClusterState, req: PlacementGroupRequest, policy: Policy, pick: NodePicker): BundleDecision {
  let first: Stuck | undefined;
  for (let tier = 0; tier < req.tiers.length; tier++) {
    const result = placeTier(state, req, tier, policy, pick);
    if ('nodeIds' in result) return { status: 'placed', nodeIds: result.nodeIds, tier };
    first ??= result.stuck;
    if (fitsWhenIdle(state, req, tier, policy, pick)) {
      return { status: 'unschedulable', failure: Object.assign({}, describe(state, result.stuck, policy), { code: 'unschedulable' as const }) };
    }
  }
  return { status: 'unschedulable', failure: Object.assign({}, describe(state, first!, policy), { code: 'infeasible' as const }) };
}

/** Would the tier fit if every live node were idle? (Then waiting can succeed.) */
function fitsWhenIdle(state: ClusterState, req: PlacementGroupRequest, tier: number, policy: Policy, pick: NodePicker): boolean {
  const idle = new ClusterState({ spreadThreshold: state.spreadThreshold });
  for (const node of state.nodes.values()) {
    if (node.state === 'DEAD') continue;
    idle.addNode({ nodeId: node.id, name: node.name, state: node.state, labels: node.labels, taints: node.taints, total: node.total });
  }
  return 'nodeIds' in placeTier(idle, req, tier, policy, pick);
}

/** Explains the stuck bundle against the nodes as it saw them: the tier's other bundles held again, then released. */
function describe(state: ClusterState, stuck: Stuck, policy: Policy): ScheduleFailure {
  const filters = stuck.used.size && stuck.strategy === 'STRICT_SPREAD' ? [...policy.filters, excluding(stuck.used)] : policy.filters;
  const subject = stuck.bundle < 0 ? `the whole group (${stuck.strategy})` : `bundle ${stuck.bundle}`;
  for (const h of stuck.held) state.allocate(h.nodeId, h.resources);
  try {
    return explain(state, stuck.request, filters, 1, subject);
  } finally {
    for (const h of stuck.held) state.release(h.nodeId, h.resources);
  }
}
