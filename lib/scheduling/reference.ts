import type { ClusterState } from '../cluster/cluster-state.ts';
import type { SchedNode } from '../cluster/sched-node.ts';
import { CRITICAL_RESOURCES } from '../cluster/cluster-state.ts';
import { NodeNotFoundError, NodeUnavailableError } from '../errors.ts';
import { randomInt, type Rng } from '../random.ts';
import { conditionMatches, describeExpression, type LabelMatchExpression } from '../selectors/expression.ts';
import { baseAttempt } from './attempts.ts';
import { ACTOR_AFFINITY_MISMATCH, ACTOR_ANTI_AFFINITY_MISMATCH } from './filters/actor-affinity.ts';
import type { Attempt, Filter } from './filters/filter.ts';
import { preferredTermsFilter, softTermHolds, softTermsOf } from './filters/preferred-terms.ts';
import { untoleratedPreferences } from './taints.ts';
import { explain, unschedulable } from './explain.ts';
import { DEFAULT_FILTERS } from './policy.ts';
import type { SchedulingRequest } from './request.types.ts';
import type { Decision } from './schedule.ts';

/**
 * The plain reference scheduler, for specs and benchmarks: the same rules as schedule(), written
 * the way Ray's policies work — every node through every filter, scores computed afresh and every
 * node sorted on every decision, actor labels found by looking at each node's actors. No label
 * index, no candidate sets, no sampling, no incremental ordering.
 *
 * Besides the decision it returns `eligible`: every node the decision could have chosen (the
 * passing nodes of the best window; for SPREAD, the one node round robin gives).
 */
export interface ReferenceDecision {
  readonly decision: Decision;
  readonly eligible: readonly string[];
}

/**
 * An actor-label expression by looking at actors: the node's own, or with a topologyKey those of
 * every node whose label has the node's value — the definition the index must agree with.
 */
export function plainActorExpressionHolds(state: ClusterState, node: SchedNode, expr: LabelMatchExpression, namespace: string): boolean {
  const ns = expr.namespace ?? namespace;
  const anti = expr.operator === 'NOT_IN' || expr.operator === 'DOES_NOT_EXIST';
  const positive: LabelMatchExpression = anti ? { ...expr, operator: expr.operator === 'NOT_IN' ? 'IN' : 'EXISTS' } : expr;
  const topo = expr.topologyKey;
  if (topo !== undefined && !Object.hasOwn(node.labels, topo)) return anti;
  const nodes = topo === undefined ? [node] : [...state.nodes.values()].filter((n) => Object.hasOwn(n.labels, topo) && n.labels[topo] === node.labels[topo]);
  let some = false;
  for (const n of nodes) {
    for (const actor of n.actors.values()) {
      if (actor.namespace !== ns || !Object.hasOwn(actor.labels, expr.key)) continue;
      if (conditionMatches(positive, actor.labels[expr.key])) some = true;
    }
    for (const [value, count] of n.actorLabels?.get(ns)?.get(expr.key) ?? []) if (count > 0 && conditionMatches(positive, value)) some = true;
  }
  return some !== anti;
}

/** Actor affinity by scanning the actors (plainActorExpressionHolds). */
export const plainActorAffinity: Filter = {
  name: 'actor-affinity',
  kind: 'constraint',
  check(node, attempt, state) {
    for (const expr of attempt.actorAffinity) {
      if (!plainActorExpressionHolds(state, node, expr, attempt.req.namespace)) {
        const anti = expr.operator === 'NOT_IN' || expr.operator === 'DOES_NOT_EXIST';
        return { code: 'unschedulable', reason: `${anti ? ACTOR_ANTI_AFFINITY_MISMATCH : ACTOR_AFFINITY_MISMATCH} ${describeExpression(expr)}` };
      }
    }
    return undefined;
  },
};

const plainPreferredTerms = preferredTermsFilter(plainActorExpressionHolds);

export const REFERENCE_FILTERS: readonly Filter[] = DEFAULT_FILTERS.map((f) =>
  f.name === 'actor-affinity' ? plainActorAffinity : f.name === 'preferred-terms' ? plainPreferredTerms : f,
);

export function referenceSchedule(state: ClusterState, req: SchedulingRequest, rng: Rng, topKFraction = 0.2): ReferenceDecision {
  const failedOrWait = (eligible: string[] = []): ReferenceDecision => ({
    decision: unschedulable(() => explain(state, req, REFERENCE_FILTERS)),
    eligible,
  });
  if (req.nodeId) {
    const pin = req.nodeId;
    const node = state.nodes.get(pin.nodeId);
    const rest = { ...req, nodeId: undefined };
    if (!node || node.state === 'DEAD') {
      return pin.soft ? referenceSchedule(state, rest, rng, topKFraction) : { decision: { status: 'failed', error: new NodeNotFoundError(pin.nodeId) }, eligible: [] };
    }
    const pinned = { ...req, nodeId: { ...pin, soft: false } };
    let later = false;
    for (let tier = 0; tier < req.selectorTiers.length && !later; tier++) {
      if (passesAll(node, baseAttempt(pinned, tier), state)) {
        return { decision: { status: 'placed', nodeId: node.id, tier }, eligible: [node.id] };
      }
      later = feasibleOn(node, baseAttempt(pinned, tier), state);
    }
    if (pin.soft && (!later || pin.spillOnUnavailable)) return referenceSchedule(state, rest, rng, topKFraction);
    if (!pin.soft && pin.failOnUnavailable) {
      const failure = explain(state, pinned, REFERENCE_FILTERS);
      return { decision: { status: 'failed', error: new NodeUnavailableError(node.id, failure.nodes.find((n) => n.nodeId === node.id)?.reasons ?? []) }, eligible: [] };
    }
    return { decision: unschedulable(() => explain(state, pinned, REFERENCE_FILTERS)), eligible: [] };
  }

  const all = [...state.nodes.values()];
  const byId = [...all].sort((a, b) => cmp(a.id, b.id));
  for (let tier = 0; tier < req.selectorTiers.length; tier++) {
    const attempt = baseAttempt(req, tier);
    const best = bestScored(state, req, all.filter((n) => passesAll(n, attempt, state)));
    if (best.size > 0) {
      if (req.spread) {
        const after = byId.filter((n) => n.id > state.spreadCursor);
        const chosen = [...after, ...byId].find((n) => best.has(n.id))!;
        return { decision: { status: 'placed', nodeId: chosen.id, tier }, eligible: [chosen.id] };
      }
      const pool = plainPool(state, attempt, [...REFERENCE_FILTERS, onlyAmong(best)], topKFraction);
      return { decision: { status: 'placed', nodeId: pool[randomInt(rng, pool.length)], tier }, eligible: pool };
    }
    if (all.some((n) => feasibleOn(n, baseAttempt(req, tier), state))) {
      return { decision: unschedulable(() => explain(state, req, REFERENCE_FILTERS, tier + 1)), eligible: [] };
    }
  }
  return failedOrWait();
}

/**
 * The passing nodes with the best score, computed Kubernetes style on every node: first the sum of
 * the weights of the soft terms met (higher is better), then the number of untolerated
 * PreferNoSchedule taints (fewer is better) — the order attemptsFor's levels must reproduce.
 */
function bestScored(state: ClusterState, req: SchedulingRequest, passing: readonly SchedNode[]): Set<string> {
  const soft = softTermsOf(req);
  let best: SchedNode[] = [];
  let top = { soft: -1, prefer: Infinity };
  for (const node of passing) {
    let sum = 0;
    for (const t of soft) if (softTermHolds(state, node, t, req.namespace, plainActorExpressionHolds)) sum += t.weight;
    const prefer = untoleratedPreferences(node.taints, req.tolerations);
    if (sum > top.soft || (sum === top.soft && prefer < top.prefer)) {
      top = { soft: sum, prefer };
      best = [];
    }
    if (sum === top.soft && prefer === top.prefer) best.push(node);
  }
  return new Set(best.map((n) => n.id));
}

const onlyAmong = (ids: ReadonlySet<string>): Filter => ({
  name: 'best-scored',
  kind: 'constraint',
  check: (node) => (ids.has(node.id) ? undefined : { code: 'infeasible', reason: 'scored below the best' }),
});

/** Every filter's rejections of one node for a tier's hard constraints, reference style. */
export function referenceVerdicts(state: ClusterState, node: SchedNode, req: SchedulingRequest, tier = 0): string[] {
  const attempt = baseAttempt(req, tier);
  return REFERENCE_FILTERS.map((f) => f.check(node, attempt, state)?.reason).filter((r): r is string => r !== undefined);
}

/**
 * The hybrid choice done plainly: score every node afresh, sort them all by (score, id), and return
 * the passing nodes of the first window of k = max(1, floor(fraction × nodes)) positions that has any.
 */
export function plainPool(state: ClusterState, attempt: Attempt, filters: readonly Filter[], topKFraction = 0.2): string[] {
  const scored = [...state.nodes.values()].map((node) => ({ node, score: freshScore(node, state.spreadThreshold) }));
  scored.sort((a, b) => a.score - b.score || cmp(a.node.id, b.node.id));
  const k = Math.max(1, Math.floor(topKFraction * scored.length));
  for (let start = 0; start < scored.length; start += k) {
    const pool = scored.slice(start, start + k).filter((s) => filters.every((f) => f.check(s.node, attempt, state) === undefined));
    if (pool.length) return pool.map((s) => s.node.id);
  }
  return [];
}

function passesAll(node: SchedNode, attempt: Attempt, state: ClusterState): boolean {
  return REFERENCE_FILTERS.every((f) => f.check(node, attempt, state) === undefined);
}

function feasibleOn(node: SchedNode, attempt: Attempt, state: ClusterState): boolean {
  return REFERENCE_FILTERS.every((f) => {
    const r = f.check(node, attempt, state);
    return r === undefined || (f.kind === 'resources' && r.code === 'unschedulable');
  });
}

function freshScore(node: SchedNode, threshold: number): number {
  let util = 0;
  for (const r of CRITICAL_RESOURCES) {
    const total = node.total[r] ?? 0;
    if (total > 0) util = Math.max(util, (total - (node.available[r] ?? 0)) / total);
  }
  return util < threshold ? 0 : util;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
