import type { ClusterState } from '../../cluster/cluster-state.ts';
import type { SchedNode } from '../../cluster/sched-node.ts';
import { actorScope } from '../../label-index/label-index.ts';
import { conditionMatches, type LabelMatchExpression } from '../../selectors/expression.ts';
import { topologyExpressionMatches } from './actor-topology.ts';
import { expressionRejection } from './rejections.ts';
import type { Filter } from './filter.ts';

export const ACTOR_AFFINITY_MISMATCH = "didn't match actor affinity";
export const ACTOR_ANTI_AFFINITY_MISMATCH = "didn't match actor anti-affinity";

/**
 * Does the node satisfy an actor-label expression (seed 000)? IN / EXISTS need some actor on the
 * node with the label; NOT_IN / DOES_NOT_EXIST need no actor there with it. GT / LT need an actor
 * whose integer label compares. Label lookups go through the index, O(values). With a topologyKey
 * the node's whole topology domain counts (actor-topology.ts).
 */
export function actorExpressionMatches(state: ClusterState, node: SchedNode, expr: LabelMatchExpression, namespace: string): boolean {
  if (expr.topologyKey !== undefined) return topologyExpressionMatches(state, node, expr, namespace);
  const scope = actorScope(expr.namespace ?? namespace);
  switch (expr.operator) {
    case 'IN':
      return state.index.nodeHas(scope, node.id, expr.key, expr.values);
    case 'NOT_IN':
      return !state.index.nodeHas(scope, node.id, expr.key, expr.values);
    case 'EXISTS':
      return state.index.nodeHas(scope, node.id, expr.key);
    case 'DOES_NOT_EXIST':
      return !state.index.nodeHas(scope, node.id, expr.key);
    default: {
      const ns = expr.namespace ?? namespace;
      for (const actor of node.actors.values()) {
        if (actor.namespace === ns && Object.hasOwn(actor.labels, expr.key) && conditionMatches(expr, actor.labels[expr.key])) {
          return true;
        }
      }
      // the counts a raylet's view holds in place of actors
      for (const [value, n] of node.actorLabels?.get(ns)?.get(expr.key) ?? []) if (n > 0 && conditionMatches(expr, value)) return true;
      return false;
    }
  }
}

const isAnti = (expr: LabelMatchExpression): boolean => expr.operator === 'NOT_IN' || expr.operator === 'DOES_NOT_EXIST';

/** Affinity and anti-affinity to actors through their labels. Peers move, so this may fit later. */
export const actorAffinity: Filter = {
  name: 'actor-affinity',
  kind: 'constraint',
  check(node, attempt, state) {
    for (const expr of attempt.actorAffinity) {
      if (!actorExpressionMatches(state, node, expr, attempt.req.namespace)) {
        return expressionRejection(isAnti(expr) ? ACTOR_ANTI_AFFINITY_MISMATCH : ACTOR_AFFINITY_MISMATCH, 'unschedulable', expr);
      }
    }
    return undefined;
  },
};
