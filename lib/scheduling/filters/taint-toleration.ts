import { describeTaint, firstUntoleratedTaint, hasUntoleratedPreference } from '../taints.ts';
import type { Filter, Rejection } from './filter.ts';

export const UNTOLERATED_TAINT = 'had untolerated taint';
const PREFERENCE: Rejection = { code: 'infeasible', reason: 'had an untolerated PreferNoSchedule taint' };

/**
 * A tainted node admits only requests that tolerate each of its NoSchedule / NoExecute taints
 * (seed 003). At strict preference levels, untolerated PreferNoSchedule taints count as well.
 */
export const taintToleration: Filter = {
  name: 'taint-toleration',
  kind: 'constraint',
  check(node, attempt) {
    if (node.taints.length === 0) return undefined;
    const taint = firstUntoleratedTaint(node.taints, attempt.req.tolerations);
    if (taint) return { code: 'infeasible', reason: `${UNTOLERATED_TAINT} ${describeTaint(taint)}`, detail: { taint } };
    if (attempt.avoidPreferTaints && hasUntoleratedPreference(node.taints, attempt.req.tolerations)) return PREFERENCE;
    return undefined;
  },
};
