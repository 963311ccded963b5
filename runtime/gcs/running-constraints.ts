import type { SchedNode } from '../../lib/cluster/sched-node.ts';
import { anyOfMatches, conditionMatches, describeAnyOf, describeExpression, expressionMatches, type LabelMatchExpression } from '../../lib/selectors/expression.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import { describeTaint, tolerates, type Taint } from '../../lib/scheduling/taints.ts';

/**
 * Whether an actor that is already on a node may stay there: the hard constraints it was placed
 * with, checked against the node as it is now. Resources are left out (the actor holds its own),
 * and so is the actor itself: its own labels never satisfy, nor break, its actor affinity.
 *
 *   label selector   some tier (the selector or a fallback) still matches the node's labels
 *   node affinity    every hard node-label expression and anyOf group still matches
 *   actor affinity   every hard actor-label expression still holds among the *other* actors there
 *
 * Each returns a one-line description of the first constraint that broke, or undefined.
 */
export function brokenConstraint(node: SchedNode, actor: { actorId: string; namespace: string }, req: SchedulingRequest): string | undefined {
  const tiers = req.selectorTiers;
  if (!tiers.some((tier) => tier.every((expr) => expressionMatches(expr, node.labels)))) {
    // tier 0 failed, so it has an expression that does not match
    const first = tiers[0].find((expr) => !expressionMatches(expr, node.labels))!;
    return `label selector ${describeExpression(first)} no longer matches node ${node.id}`;
  }
  for (const expr of req.nodeAffinity) {
    if (!expr.soft && !expressionMatches(expr, node.labels)) return `node affinity ${describeExpression(expr)} no longer matches node ${node.id}`;
  }
  for (const group of req.nodeAffinityAnyOf ?? []) {
    if (!group.soft && !anyOfMatches(group, node.labels)) return `node affinity ${describeAnyOf(group)} no longer matches node ${node.id}`;
  }
  for (const expr of req.actorAffinity) {
    // a term over a topology domain is checked at placement only (docs/scheduling.md: not yet during execution)
    if (expr.soft || expr.topologyKey !== undefined || actorExpressionHolds(node, actor, expr, req.namespace)) continue;
    const anti = expr.operator === 'NOT_IN' || expr.operator === 'DOES_NOT_EXIST';
    return `actor ${anti ? 'anti-affinity' : 'affinity'} ${describeExpression(expr)} no longer holds on node ${node.id}`;
  }
  return undefined;
}

/** The first NoExecute taint of the node the request does not tolerate. */
export function untoleratedNoExecute(node: SchedNode, req: SchedulingRequest): Taint | undefined {
  return node.taints.find((t) => t.effect === 'NoExecute' && !tolerates(req.tolerations, t));
}

export function describeNoExecute(node: SchedNode, taint: Taint): string {
  return `evicted by taint ${describeTaint(taint)} (NoExecute) on node ${node.id}`;
}

/** An actor-label expression over the node's actors other than `self` (seed 000 semantics). */
function actorExpressionHolds(node: SchedNode, self: { actorId: string; namespace: string }, expr: LabelMatchExpression, namespace: string): boolean {
  const ns = expr.namespace ?? namespace;
  const positive = expr.operator !== 'NOT_IN' && expr.operator !== 'DOES_NOT_EXIST';
  for (const other of node.actors.values()) {
    if (other.actorId === self.actorId || other.namespace !== ns) continue;
    const value = Object.hasOwn(other.labels, expr.key) ? other.labels[expr.key] : undefined;
    if (positive && conditionMatches(expr, value)) return true;
    // NOT_IN / DOES_NOT_EXIST: broken by any other actor that has the label (with one of the values)
    if (!positive && value !== undefined && (expr.operator === 'DOES_NOT_EXIST' || expr.values.includes(value))) return false;
  }
  return !positive;
}
