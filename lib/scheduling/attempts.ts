import type { ClusterState } from '../cluster/cluster-state.ts';
import type { LabelMatchAnyOf, LabelMatchExpression } from '../selectors/expression.ts';
import type { Attempt } from './filters/filter.ts';
import { softTermsOf, type SoftTerm } from './filters/preferred-terms.ts';
import type { SchedulingRequest } from './request.types.ts';

/**
 * The attempts for one selector tier, best first; the first with a passing node decides.
 *
 *   soft score   the sums of soft-term weights that some set of terms reaches, highest first
 *                (Kubernetes' preferred terms: meeting 1 of 2 ranks above none, heavier terms win).
 *                A term so heavy that the level cannot be reached without it is required outright,
 *                which keeps the label index's candidate sets for selective soft terms.
 *   PreferNoSchedule  within each score level, nodes with fewer untolerated PreferNoSchedule
 *                taints first (Kubernetes' TaintToleration score), then any number.
 *
 * The last attempt holds the hard constraints only. Without soft terms or PreferNoSchedule taints
 * there is one attempt; with one soft term and one taint level, the four Ray-style levels.
 */
export function attemptsFor(state: ClusterState, req: SchedulingRequest, tier: number): Attempt[] {
  return [...attemptLevels(state, req, tier)];
}

/** attemptsFor one at a time: a decision usually stops at the first, so the rest are never built. */
export function* attemptLevels(state: ClusterState, req: SchedulingRequest, tier: number): Generator<Attempt> {
  const base = baseAttempt(req, tier);
  const soft = softTermsOf(req);
  const maxPrefer = state.maxPreferNoScheduleTaints;
  for (const level of soft.length === 0 ? [0] : scoreLevels(soft)) {
    const attempt = level === 0 ? base : atLevel(base, soft, level);
    for (let p = 0; p < maxPrefer; p++) yield Object.assign({}, attempt, { maxPreferTaints: p });
    yield attempt;
  }
}

/** The distinct sums of weights that subsets of the soft terms reach, highest first (0 last). */
export function scoreLevels(soft: readonly SoftTerm[]): number[] {
  let sums = [0];
  for (const t of soft) sums = sums.concat(sums.map((s) => s + t.weight));
  sums.sort((a, b) => b - a);
  return sums.filter((s, i) => i === 0 || s !== sums[i - 1]);
}

/** The attempt for soft score `level`: terms it cannot do without are required, the rest scored. */
function atLevel(base: Attempt, soft: readonly SoftTerm[], level: number): Attempt {
  let total = 0;
  for (const t of soft) total += t.weight;
  const nodeAffinity: LabelMatchExpression[] = [...base.nodeAffinity];
  const anyOf: LabelMatchAnyOf[] = [...base.nodeAffinityAnyOf];
  const actorAffinity: LabelMatchExpression[] = [...base.actorAffinity];
  const rest: SoftTerm[] = [];
  let min = level;
  for (const t of soft) {
    if (total - t.weight >= level) {
      rest.push(t);
      continue;
    }
    min -= t.weight;
    if (t.kind === 'node') nodeAffinity.push(t.term);
    else if (t.kind === 'anyOf') anyOf.push(t.term);
    else actorAffinity.push(t.term);
  }
  const preferred = min > 0 ? { terms: rest, min } : undefined;
  return Object.assign({}, base, { nodeAffinity, nodeAffinityAnyOf: anyOf, actorAffinity }, preferred ? { preferred } : {});
}

/** The hard-constraints-only attempt for a tier: what decides feasibility and explanations. */
export function baseAttempt(req: SchedulingRequest, tier: number): Attempt {
  return {
    req,
    tier,
    selector: req.selectorTiers[tier],
    nodeAffinity: req.nodeAffinity.filter((e) => !e.soft),
    nodeAffinityAnyOf: (req.nodeAffinityAnyOf ?? []).filter((g) => !g.soft),
    actorAffinity: req.actorAffinity.filter((e) => !e.soft),
    maxPreferTaints: Infinity,
    nodeId: req.nodeId && !req.nodeId.soft ? req.nodeId.nodeId : undefined,
  };
}
