import type { ClusterState } from '../cluster/cluster-state.ts';
import type { SchedNode } from '../cluster/sched-node.ts';
import { baseAttempt } from './attempts.ts';
import type { Attempt, Filter, Rejection } from './filters/filter.ts';
import type { SchedulingRequest } from './request.types.ts';

/**
 * Why a request cannot be placed, Kubernetes style:
 *
 *   message  "0/5 nodes are available: 3 node(s) didn't match label selector region in (us),
 *             2 node(s) had insufficient CPU."   (each reason counted once per node, sorted; a
 *             node counts under every reason it fails, and when the counts add up to more than the
 *             nodes the message ends "(a node is counted under each reason it fails).")
 *   reason   seed 000's three cases —
 *            'constraints'               resources would fit somewhere, but rules reject every such node
 *            'resources'                 some node passes every rule, but none of those has the resources
 *            'constraints_and_resources' no node passes the rules, and none has the resources either
 *   code     'unschedulable' when some node may take it later (busy, an affinity peer may move),
 *            'infeasible' when none will as the cluster stands
 *   nodes    every node's reasons, by node id
 *
 * With fallback selectors, each node's reasons gather every tier tried. `subject` names what could
 * not be placed when the request is part of something larger ("bundle 2").
 */
export interface ScheduleFailure {
  readonly code: 'unschedulable' | 'infeasible';
  readonly reason: 'constraints' | 'resources' | 'constraints_and_resources';
  readonly message: string;
  readonly nodes: readonly { readonly nodeId: string; readonly reasons: readonly string[] }[];
}

export function explain(
  state: ClusterState,
  req: SchedulingRequest,
  filters: readonly Filter[],
  tiers = req.selectorTiers.length,
  subject?: string,
): ScheduleFailure {
  const counted = [...state.nodes.values()].filter((n) => n.state !== 'DEAD').sort((a, b) => (a.id < b.id ? -1 : 1));
  const tally = new Map<string, number>();
  const perNode: { nodeId: string; reasons: string[] }[] = [];
  let anyRulesPass = false;
  let anyResourcesFit = false;
  let anyLater = false;
  const attempts = Array.from({ length: tiers }, (_, tier) => baseAttempt(req, tier));
  for (const node of counted) {
    const reasons = new Set<string>();
    for (const attempt of attempts) {
      const verdicts = judge(state, node, attempt, filters);
      if (!verdicts.constraint.length) anyRulesPass = true;
      if (!verdicts.resources.length) anyResourcesFit = true;
      if ([...verdicts.constraint, ...verdicts.resources].every((r) => r.code === 'unschedulable')) anyLater = true;
      for (const r of [...verdicts.constraint, ...verdicts.resources]) reasons.add(r.reason);
    }
    const sorted = [...reasons].sort();
    for (const r of sorted) tally.set(r, (tally.get(r) ?? 0) + 1);
    perNode.push({ nodeId: node.id, reasons: sorted });
  }
  const parts = [...tally.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([r, n]) => `${n} node(s) ${r}`);
  const head = `0/${counted.length} nodes are available${subject ? ` for ${subject}` : ''}:`;
  // a node counts under every reason it fails (as in Kubernetes); when that makes the counts add up
  // to more than the nodes, the message says so, so nobody reads it as one reason per node
  const overlap = [...tally.values()].reduce((a, b) => a + b, 0) > counted.length;
  const message = counted.length === 0 ? `${head} the cluster has no nodes.` : `${head} ${parts.join(', ')}${overlap ? ' (a node is counted under each reason it fails)' : ''}.`;
  return {
    code: anyLater ? 'unschedulable' : 'infeasible',
    reason: anyRulesPass ? 'resources' : anyResourcesFit ? 'constraints' : 'constraints_and_resources',
    message,
    nodes: perNode,
  };
}

/** Every filter's verdict on one node for one tier's hard constraints (no short-circuit). */
function judge(state: ClusterState, node: SchedNode, attempt: Attempt, filters: readonly Filter[]) {
  const constraint: Rejection[] = [];
  const resources: Rejection[] = [];
  for (const f of filters) {
    const r = f.check(node, attempt, state);
    if (r) (f.kind === 'resources' ? resources : constraint).push(r);
  }
  return { constraint, resources };
}

/**
 * An unschedulable verdict whose explanation is computed when first read, then kept. Deciding that
 * nothing can take a request is cheap; explaining why walks every node. Callers that only need the
 * verdict (a retry that fails again) never pay for the walk.
 */
export function unschedulable(compute: () => ScheduleFailure): { readonly status: 'unschedulable'; readonly failure: ScheduleFailure } {
  let memo: ScheduleFailure | undefined;
  return {
    status: 'unschedulable',
    get failure() {
      return (memo ??= compute());
    },
  };
}
