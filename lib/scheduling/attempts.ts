import type { ClusterState } from '../cluster/cluster-state.ts';
import type { Attempt } from './filters/filter.ts';
import type { SchedulingRequest } from './request.types.ts';

/**
 * The attempts for one selector tier, strictest first. Soft terms (node affinity, node-label
 * conditions, actor affinity) are preferences: the first attempt requires all of them; if no node
 * can take that, the next drops them (Ray's NodeLabelSchedulingPolicy: hard+soft, then hard).
 * PreferNoSchedule taints are avoided the same way, at lower priority than soft terms.
 */
export function attemptsFor(state: ClusterState, req: SchedulingRequest, tier: number): Attempt[] {
  const base = baseAttempt(req, tier);
  const hasSoft = req.nodeAffinity.some((e) => e.soft) || req.actorAffinity.some((e) => e.soft);
  const prefer = state.hasPreferNoScheduleTaints;
  const strict = hasSoft ? { ...base, nodeAffinity: req.nodeAffinity, actorAffinity: req.actorAffinity } : undefined;
  const out: Attempt[] = [];
  if (strict && prefer) out.push({ ...strict, avoidPreferTaints: true });
  if (strict) out.push(strict);
  if (prefer) out.push({ ...base, avoidPreferTaints: true });
  out.push(base);
  return out;
}

/** The hard-constraints-only attempt for a tier: what decides feasibility and explanations. */
export function baseAttempt(req: SchedulingRequest, tier: number): Attempt {
  return {
    req,
    tier,
    selector: req.selectorTiers[tier],
    nodeAffinity: req.nodeAffinity.filter((e) => !e.soft),
    actorAffinity: req.actorAffinity.filter((e) => !e.soft),
    avoidPreferTaints: false,
    nodeId: req.nodeId && !req.nodeId.soft ? req.nodeId.nodeId : undefined,
  };
}
