import type { ClusterState } from '../../cluster/cluster-state.ts';
import type { SchedNode } from '../../cluster/sched-node.ts';
import { NODE_SCOPE, actorScope } from '../../label-index/label-index.ts';
import { conditionMatches, type LabelMatchExpression } from '../../selectors/expression.ts';

/**
 * An actor-label expression over a topology domain (Kubernetes' InterPodAffinity topologyKey): the
 * node's domain is its value of the node label `topologyKey`, and the expression looks at the
 * actors of every node in that domain.
 *
 *   IN / EXISTS / GT / LT     some actor in the domain matches (affinity)
 *   NOT_IN / DOES_NOT_EXIST   no actor in the domain has the label (with a listed value) (anti-affinity)
 *   node without the label    affinity fails; anti-affinity holds (as Kubernetes: no domain, no peer)
 *
 * Lookups go through the per-domain aggregation of actor labels (ClusterState.topology), O(values).
 */
export function topologyExpressionMatches(state: ClusterState, node: SchedNode, expr: LabelMatchExpression, namespace: string): boolean {
  const key = expr.topologyKey!;
  const anti = expr.operator === 'NOT_IN' || expr.operator === 'DOES_NOT_EXIST';
  if (!Object.hasOwn(node.labels, key)) return anti;
  const domain = node.labels[key];
  const ns = expr.namespace ?? namespace;
  const domains = state.topology(key);
  const scope = actorScope(ns);
  switch (expr.operator) {
    case 'IN':
      return domains.nodeHas(scope, domain, expr.key, expr.values);
    case 'NOT_IN':
      return !domains.nodeHas(scope, domain, expr.key, expr.values);
    case 'EXISTS':
      return domains.nodeHas(scope, domain, expr.key);
    case 'DOES_NOT_EXIST':
      return !domains.nodeHas(scope, domain, expr.key);
    default:
      if (!domains.nodeHas(scope, domain, expr.key)) return false;
      for (const value of domains.valuesOf(scope, expr.key)) {
        if (conditionMatches(expr, value) && domains.nodeHas(scope, domain, expr.key, [value])) return true;
      }
      return false;
  }
}

/** The nodes of a node's domain (for the plain reference and for specs). */
export function domainNodes(state: ClusterState, topologyKey: string, domain: string): Set<string> {
  return state.index.nodesByKeyValue(NODE_SCOPE, topologyKey, [domain]);
}
