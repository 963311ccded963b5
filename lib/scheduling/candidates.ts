import type { ClusterState } from '../cluster/cluster-state.ts';
import { NODE_SCOPE, actorScope } from '../label-index/label-index.ts';
import type { LabelMatchExpression } from '../selectors/expression.ts';
import type { Attempt } from './filters/filter.ts';

/**
 * The narrowest node set an attempt's constraints imply, from the label index: a hard node-id pin,
 * or the IN / EXISTS expression (node labels or actor labels) that matches the fewest nodes.
 * Undefined when nothing is selective (NOT_IN, DOES_NOT_EXIST, GT and LT admit most nodes).
 * Filters still run on every candidate; this only decides where to look.
 */
export interface Candidates {
  readonly size: number;
  ids(): Iterable<string>;
}

export function candidatesFor(state: ClusterState, attempt: Attempt): Candidates | undefined {
  if (attempt.nodeId !== undefined) {
    const id = attempt.nodeId;
    return { size: 1, ids: () => [id] };
  }
  let best: Candidates | undefined;
  const consider = (scope: string, expr: LabelMatchExpression): void => {
    if (expr.operator === 'IN') {
      const size = state.index.countByKeyValue(scope, expr.key, expr.values);
      if (!best || size < best.size) best = { size, ids: () => state.index.nodesByKeyValue(scope, expr.key, expr.values) };
    } else if (expr.operator === 'EXISTS') {
      const size = state.index.countByKey(scope, expr.key);
      if (!best || size < best.size) best = { size, ids: () => state.index.nodesByKey(scope, expr.key) };
    }
  };
  for (const expr of attempt.selector) consider(NODE_SCOPE, expr);
  for (const expr of attempt.nodeAffinity) consider(NODE_SCOPE, expr);
  for (const expr of attempt.actorAffinity) consider(actorScope(expr.namespace ?? attempt.req.namespace), expr);
  return best;
}
