import { anyOfMatches, describeAnyOf, type LabelMatchAnyOf } from '../../selectors/expression.ts';
import type { Filter, Rejection } from './filter.ts';
import { NODE_AFFINITY_MISMATCH } from './node-affinity.ts';

/** Reason: `didn't match node affinity (gpu in (a100)) or (gpu in (h100), nvlink exists)`. */
export const NODE_AFFINITY_ANY_OF_MISMATCH = NODE_AFFINITY_MISMATCH;

/** Built once per group: a request's groups are immutable, and the hot path rejects the same one on many nodes. */
const rejections = new WeakMap<LabelMatchAnyOf, Rejection>();

/**
 * OR'ed node-affinity terms (Kubernetes' nodeSelectorTerms): the node must meet every expression of
 * at least one term of each group the attempt requires.
 */
export const nodeAffinityAnyOf: Filter = {
  name: 'node-affinity-any-of',
  kind: 'constraint',
  check(node, attempt) {
    for (const group of attempt.nodeAffinityAnyOf) {
      if (anyOfMatches(group, node.labels)) continue;
      let r = rejections.get(group);
      if (!r) rejections.set(group, (r = { code: 'infeasible', reason: `${NODE_AFFINITY_ANY_OF_MISMATCH} ${describeAnyOf(group)}` }));
      return r;
    }
    return undefined;
  },
};
