import type { ClusterState } from '../cluster/cluster-state.ts';
import type { SchedNode } from '../cluster/sched-node.ts';
import { actorAffinity } from './filters/actor-affinity.ts';
import type { Attempt, Filter } from './filters/filter.ts';
import { labelSelector } from './filters/label-selector.ts';
import { nodeAffinity } from './filters/node-affinity.ts';
import { nodeAffinityAnyOf } from './filters/node-affinity-any-of.ts';
import { preferredTerms } from './filters/preferred-terms.ts';
import { nodeIdAffinity } from './filters/node-id.ts';
import { nodeStatus } from './filters/node-status.ts';
import { residentAntiAffinity } from './filters/resident-anti-affinity.ts';
import { resourcesFit } from './filters/resources.ts';
import { taintToleration } from './filters/taint-toleration.ts';

/**
 * A policy is data: the filters every placement runs, cheapest and most selective first, and the
 * knobs of the pickers. Nothing here reads globals; callers pass what they want.
 */
export interface Policy {
  readonly filters: readonly Filter[];
  /** Hybrid: pick among the best `max(topKMin, floor(topKFraction × nodes))` nodes (Ray: 0.2, 1). */
  readonly topKFraction: number;
  readonly topKMin: number;
  /** Hybrid: random probes of the best window before scanning it exactly. */
  readonly sampleTries: number;
  /** Constraint-derived candidate sets up to this size are evaluated exhaustively. */
  readonly candidateScanLimit: number;
}

export const DEFAULT_FILTERS: readonly Filter[] = [
  nodeStatus,
  nodeIdAffinity,
  labelSelector,
  nodeAffinity,
  nodeAffinityAnyOf,
  taintToleration,
  actorAffinity,
  residentAntiAffinity,
  preferredTerms,
  resourcesFit,
];

export const DEFAULT_POLICY: Policy = {
  filters: DEFAULT_FILTERS,
  topKFraction: 0.2,
  topKMin: 1,
  sampleTries: 32,
  candidateScanLimit: 64,
};

/** Does the node pass every filter (constraints, and available resources) for this attempt? */
export function passes(node: SchedNode, attempt: Attempt, state: ClusterState, filters: readonly Filter[]): boolean {
  for (const f of filters) if (f.check(node, attempt, state) !== undefined) return false;
  return true;
}

/** Could the node ever take the attempt as the cluster stands (constraints, and total resources)? */
export function feasible(node: SchedNode, attempt: Attempt, state: ClusterState, filters: readonly Filter[]): boolean {
  for (const f of filters) {
    const r = f.check(node, attempt, state);
    if (r !== undefined && (f.kind !== 'resources' || r.code === 'infeasible')) return false;
  }
  return true;
}
