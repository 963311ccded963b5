import type { ClusterState } from '../cluster/cluster-state.ts';
import { describeAnyOf, describeExpression } from '../selectors/expression.ts';
import { scheduleBundles } from './bundles/schedule-bundles.ts';
import type { PlacementGroupRequest } from './bundles/request.ts';
import { explain, type ScheduleFailure } from './explain.ts';
import { actorExpressionMatches } from './filters/actor-affinity.ts';
import { softTermHolds, softTermsOf } from './filters/preferred-terms.ts';
import { DEFAULT_POLICY, type Policy } from './policy.ts';
import type { SchedulingRequest } from './request.types.ts';
import { schedule } from './schedule.ts';

/**
 * "Where would this go, and why not there?" — answered without placing anything (issue 17: Ray's
 * most repeated scheduling question; Kubernetes closed its dry-run request unimplemented).
 *
 * A dry run is `schedule` itself on the cluster as it is — the same pipeline, so the answer cannot
 * drift from what a creation would do — and then the words for every node. It changes nothing: no
 * resources are taken, and SPREAD's round-robin cursor (the one thing `schedule` moves) is put back.
 * With the same randomness (the hybrid policy picks at random among the best-scored nodes that
 * fit) it names the node `schedule` picks; `fits` lists every node the request could go to at that
 * tier, so a caller knows the pick was one draw among them.
 */
export interface DryRun {
  readonly decision: 'placed' | 'unschedulable' | 'failed';
  /** Where it would be placed now. */
  readonly nodeId?: string;
  /** Which selector decided: 0 the labelSelector, i the fallbackStrategy entry i − 1. */
  readonly tier?: number;
  /** The request's preferred (soft) terms, and whether each holds on the chosen node. */
  readonly softTerms: readonly DryRunSoftTerm[];
  /** Why nothing can take it (the message the pending actor would carry). */
  readonly failure?: ScheduleFailure;
  /** Why it never can (a hard node-id affinity to an unknown node…): the error creation would raise. */
  readonly error?: { readonly code: string; readonly message: string };
  /** Every live node: whether it could take the request at the deciding tier, else why not. */
  readonly nodes: readonly DryRunNode[];
}

export interface DryRunSoftTerm {
  readonly term: string;
  readonly weight: number;
  readonly held: boolean;
}

export interface DryRunNode {
  readonly nodeId: string;
  readonly fits: boolean;
  readonly reasons: readonly string[];
}

export function dryRun(state: ClusterState, req: SchedulingRequest, opts: { rng: () => number; policy?: Policy }): DryRun {
  const policy = opts.policy ?? DEFAULT_POLICY;
  const cursor = state.spreadCursor;
  let decision;
  try {
    decision = schedule(state, req, { rng: opts.rng, policy });
  } finally {
    state.spreadCursor = cursor;
  }
  if (decision.status === 'failed') {
    return { decision: 'failed', error: { code: decision.error.code, message: decision.error.message }, softTerms: [], nodes: nodesAt(state, req, 0, policy) };
  }
  if (decision.status === 'unschedulable') {
    const failure = decision.failure;
    return {
      decision: 'unschedulable',
      failure: { code: failure.code, reason: failure.reason, message: failure.message, nodes: failure.nodes },
      softTerms: softTermsOf(req).map((t) => ({ term: describeSoft(t), weight: t.weight, held: false })),
      nodes: failure.nodes.map((n) => ({ nodeId: n.nodeId, fits: n.reasons.length === 0, reasons: n.reasons })),
    };
  }
  const node = state.node(decision.nodeId)!;
  return {
    decision: 'placed',
    nodeId: decision.nodeId,
    tier: decision.tier,
    softTerms: softTermsOf(req).map((t) => ({ term: describeSoft(t), weight: t.weight, held: softTermHolds(state, node, t, req.namespace, actorExpressionMatches) })),
    nodes: nodesAt(state, req, decision.tier, policy),
  };
}

/** A placement group's dry run: the node of each bundle, or why the group cannot be placed. */
export interface PlacementGroupDryRun {
  readonly decision: 'placed' | 'unschedulable';
  /** One node id per bundle, in bundle order. */
  readonly bundles?: readonly { readonly index: number; readonly nodeId: string }[];
  /** 0 the bundles as given, i the fallbackStrategy entry i − 1. */
  readonly tier?: number;
  readonly failure?: ScheduleFailure;
}

export function dryRunPlacementGroup(state: ClusterState, req: PlacementGroupRequest, opts: { rng: () => number; policy?: Policy }): PlacementGroupDryRun {
  const cursor = state.spreadCursor;
  let decision;
  try {
    decision = scheduleBundles(state, req, opts);
  } finally {
    state.spreadCursor = cursor;
  }
  if (decision.status === 'placed') return { decision: 'placed', tier: decision.tier, bundles: decision.nodeIds.map((nodeId, index) => ({ index, nodeId })) };
  const f = decision.failure;
  return { decision: 'unschedulable', failure: { code: f.code, reason: f.reason, message: f.message, nodes: f.nodes } };
}

/** Each live node judged on the hard constraints of one tier alone: fits, or the reasons. */
function nodesAt(state: ClusterState, req: SchedulingRequest, tier: number, policy: Policy): DryRunNode[] {
  const one: SchedulingRequest = { ...req, selectorTiers: [req.selectorTiers[tier] ?? req.selectorTiers[0]] };
  return explain(state, one, policy.filters, 1).nodes.map((n) => ({ nodeId: n.nodeId, fits: n.reasons.length === 0, reasons: n.reasons }));
}

function describeSoft(t: ReturnType<typeof softTermsOf>[number]): string {
  switch (t.kind) {
    case 'node':
      return `node ${describeExpression(t.term)}`;
    case 'anyOf':
      return `node ${describeAnyOf(t.term)}`;
    case 'actor':
      return `actor ${describeExpression(t.term)}`;
  }
}
