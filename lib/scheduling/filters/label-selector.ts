import { expressionMatches } from '../../selectors/expression.ts';
import { expressionRejection } from './rejections.ts';
import type { Filter } from './filter.ts';

export const SELECTOR_MISMATCH = "didn't match label selector";

/** The node's labels must satisfy every expression of the attempt's selector tier (seed 002). */
export const labelSelector: Filter = {
  name: 'label-selector',
  kind: 'constraint',
  check(node, attempt) {
    for (const expr of attempt.selector) {
      if (!expressionMatches(expr, node.labels)) {
        return expressionRejection(SELECTOR_MISMATCH, 'infeasible', expr);
      }
    }
    return undefined;
  },
};
