import { describeTaint, firstUntoleratedTaint, untoleratedPreferences } from '../taints.ts';
import type { Filter, Rejection } from './filter.ts';

export const UNTOLERATED_TAINT = 'had untolerated taint';
export const MORE_PREFER_TAINTS = 'had more untolerated PreferNoSchedule taints than the level allows';
const PREFERENCE: Rejection = { code: 'infeasible', reason: MORE_PREFER_TAINTS };

/**
 * A tainted node admits only requests that tolerate each of its NoSchedule / NoExecute taints
 * (seed 003). At strict preference levels, a node may carry at most `maxPreferTaints` untolerated
 * PreferNoSchedule taints, so nodes with fewer are tried first (Kubernetes' TaintToleration score).
 */
export const taintToleration: Filter = {
  name: 'taint-toleration',
  kind: 'constraint',
  check(node, attempt) {
    if (node.taints.length === 0) return undefined;
    const taint = firstUntoleratedTaint(node.taints, attempt.req.tolerations);
    if (taint) return { code: 'infeasible', reason: `${UNTOLERATED_TAINT} ${describeTaint(taint)}`, detail: { taint } };
    if (attempt.maxPreferTaints !== Infinity && untoleratedPreferences(node.taints, attempt.req.tolerations) > attempt.maxPreferTaints) return PREFERENCE;
    return undefined;
  },
};
