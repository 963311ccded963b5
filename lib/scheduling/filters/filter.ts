import type { ClusterState } from '../../cluster/cluster-state.ts';
import type { SchedNode } from '../../cluster/sched-node.ts';
import type { LabelMatchAnyOf, LabelMatchExpression } from '../../selectors/expression.ts';
import type { PreferredTerms } from './preferred-terms.ts';
import type { SchedulingRequest } from '../request.types.ts';

/**
 * A filter's verdict on one node: undefined (the node passes) or a rejection.
 *
 *   code 'unschedulable'  the node may take the request later (busy, an affinity peer may move)
 *   code 'infeasible'     it never will as the cluster stands (labels, taints, total resources)
 *
 * `reason` is a stable one-line phrase that reads after "N node(s) " and groups in tallies;
 * node-specific values go in `detail`.
 */
export interface Rejection {
  readonly code: 'unschedulable' | 'infeasible';
  readonly reason: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/**
 * One attempt at placing a request: a selector tier and a preference level. Strict levels turn
 * soft terms into requirements; the loosest level keeps only the hard ones.
 */
export interface Attempt {
  readonly req: SchedulingRequest;
  readonly tier: number;
  readonly selector: readonly LabelMatchExpression[];
  readonly nodeAffinity: readonly LabelMatchExpression[];
  /** Required anyOf(...) groups: hard ones, and soft ones this level requires. */
  readonly nodeAffinityAnyOf: readonly LabelMatchAnyOf[];
  readonly actorAffinity: readonly LabelMatchExpression[];
  /** Untolerated PreferNoSchedule taints a node may carry at this level (Infinity: any number). */
  readonly maxPreferTaints: number;
  /** Soft terms this level does not require one by one, and the weight they must reach together. */
  readonly preferred?: PreferredTerms;
  /** A hard node-id pin, if any. */
  readonly nodeId?: string;
}

/** What the three-case explanation (seed 000) counts a rejection as. */
export type FilterKind = 'constraint' | 'resources';

export interface Filter {
  readonly name: string;
  readonly kind: FilterKind;
  check(node: SchedNode, attempt: Attempt, state: ClusterState): Rejection | undefined;
}
