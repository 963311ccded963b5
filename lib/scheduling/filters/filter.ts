import type { ClusterState, SchedNode } from '../../cluster/cluster-state.ts';
import type { LabelMatchExpression } from '../../selectors/expression.ts';
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
  readonly actorAffinity: readonly LabelMatchExpression[];
  readonly avoidPreferTaints: boolean;
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
