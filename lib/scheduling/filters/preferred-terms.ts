import type { ClusterState } from '../../cluster/cluster-state.ts';
import type { SchedNode } from '../../cluster/sched-node.ts';
import { anyOfMatches, expressionMatches, type LabelMatchAnyOf, type LabelMatchExpression } from '../../selectors/expression.ts';
import type { SchedulingRequest } from '../request.types.ts';
import { actorExpressionMatches } from './actor-affinity.ts';
import type { Filter, Rejection } from './filter.ts';

export const PREFERRED_TERMS_MISSED = "didn't meet enough preferred terms";
const MISSED: Rejection = { code: 'infeasible', reason: PREFERRED_TERMS_MISSED };

/**
 * A soft (preferred) term and its weight (1-100; Kubernetes' preferred-term weight, 1 for seed 001's
 * soft expressions and Ray's soft node-label conditions).
 */
export type SoftTerm =
  | { readonly kind: 'node'; readonly term: LabelMatchExpression; readonly weight: number }
  | { readonly kind: 'anyOf'; readonly term: LabelMatchAnyOf; readonly weight: number }
  | { readonly kind: 'actor'; readonly term: LabelMatchExpression; readonly weight: number };

/** At a preference level: the soft terms not already required, and the weight they must reach together. */
export interface PreferredTerms {
  readonly terms: readonly SoftTerm[];
  readonly min: number;
}

export type ActorExpressionHolds = (state: ClusterState, node: SchedNode, expr: LabelMatchExpression, namespace: string) => boolean;

/** The request's soft terms, in a fixed order: node expressions, anyOf groups, actor expressions. */
export function softTermsOf(req: SchedulingRequest): SoftTerm[] {
  const out: SoftTerm[] = [];
  for (const term of req.nodeAffinity) if (term.soft) out.push({ kind: 'node', term, weight: term.weight ?? 1 });
  for (const term of req.nodeAffinityAnyOf ?? []) if (term.soft) out.push({ kind: 'anyOf', term, weight: term.weight ?? 1 });
  for (const term of req.actorAffinity) if (term.soft) out.push({ kind: 'actor', term, weight: term.weight ?? 1 });
  return out;
}

export function softTermHolds(state: ClusterState, node: SchedNode, t: SoftTerm, namespace: string, actorHolds: ActorExpressionHolds): boolean {
  switch (t.kind) {
    case 'node':
      return expressionMatches(t.term, node.labels);
    case 'anyOf':
      return anyOfMatches(t.term, node.labels);
    case 'actor':
      return actorHolds(state, node, t.term, namespace);
  }
}

/**
 * Soft scoring (Kubernetes' NodeAffinity and InterPodAffinity preferred terms): at a preference
 * level, the weights of the terms a node meets must add up to the level's minimum. The attempts walk
 * the achievable sums from the highest down, so the first level with a passing node is the best
 * score — meeting 1 of 2 soft terms ranks above meeting none, and heavier terms win — while each
 * level keeps the hybrid window pick.
 */
export function preferredTermsFilter(actorHolds: ActorExpressionHolds): Filter {
  return {
    name: 'preferred-terms',
    kind: 'constraint',
    check(node, attempt, state) {
      const p = attempt.preferred;
      if (p === undefined) return undefined;
      let got = 0;
      let left = 0;
      for (const t of p.terms) left += t.weight;
      for (const t of p.terms) {
        if (got >= p.min) return undefined;
        if (got + left < p.min) return MISSED;
        left -= t.weight;
        if (softTermHolds(state, node, t, attempt.req.namespace, actorHolds)) got += t.weight;
      }
      return got >= p.min ? undefined : MISSED;
    },
  };
}

export const preferredTerms = preferredTermsFilter(actorExpressionMatches);
