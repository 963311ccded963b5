import { expressionMatches } from '../../selectors/expression.ts';
import { expressionRejection } from './rejections.ts';
import type { Filter } from './filter.ts';

export const NODE_AFFINITY_MISMATCH = "didn't match node affinity";

/** The node's labels must satisfy the attempt's node-affinity terms (seed 001). */
export const nodeAffinity: Filter = {
  name: 'node-affinity',
  kind: 'constraint',
  check(node, attempt) {
    for (const expr of attempt.nodeAffinity) {
      if (!expressionMatches(expr, node.labels)) {
        return expressionRejection(NODE_AFFINITY_MISMATCH, 'infeasible', expr);
      }
    }
    return undefined;
  },
};
