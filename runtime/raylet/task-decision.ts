import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { OrreryError } from '../../lib/errors.ts';
import type { Rng } from '../../lib/random.ts';
import { attemptsFor, baseAttempt } from '../../lib/scheduling/attempts.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import { DEFAULT_POLICY, feasible, passes, type Policy } from '../../lib/scheduling/policy.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import { schedule } from '../../lib/scheduling/schedule.ts';

/**
 * What a raylet does with a task, decided on its own view:
 *   local  run it here now (this node passes every filter, resources included)
 *   spill  the view prefers node `nodeId`: send the driver there
 *   wait   no node can take it now; `failure` explains why (computed when first read)
 *   fail   it never can (hard node-id affinity to a node not in the view, failOnUnavailable)
 */
export type TaskDecision =
  | { readonly kind: 'local' }
  | { readonly kind: 'spill'; readonly nodeId: string }
  | { readonly kind: 'wait'; readonly failure: ScheduleFailure }
  | { readonly kind: 'fail'; readonly error: OrreryError };

/**
 * Decides a task with lib's `schedule` on the raylet's view, plus Ray's local preference for tasks:
 * when the chosen node is another one, but this node is below the spread threshold (score 0) and
 * passes the same attempt the chosen node passed (soft terms included), the task stays here. SPREAD
 * and node-id affinity are left as `schedule` decides them (a soft pin it let go of is the default
 * policy, local preference included).
 */
export function decideTask(state: ClusterState, req: SchedulingRequest, localNodeId: string, opts: { rng: Rng; policy?: Policy }): TaskDecision {
  const policy = opts.policy ?? DEFAULT_POLICY;
  const decision = schedule(state, req, { rng: opts.rng, policy });
  switch (decision.status) {
    case 'failed':
      return { kind: 'fail', error: decision.error };
    case 'unschedulable':
      return {
        kind: 'wait',
        get failure() {
          return decision.failure;
        },
      };
  }
  if (decision.nodeId === localNodeId) return { kind: 'local' };
  // a soft pin that schedule() let go of (its node is gone or cannot take it) is the default policy
  const free = req.nodeId?.soft && req.nodeId.nodeId !== decision.nodeId ? Object.assign({}, req, { nodeId: undefined }) : req;
  if (!free.spread && !free.nodeId && localIsAsGood(state, free, { chosen: decision.nodeId, tier: decision.tier, localNodeId, policy })) return { kind: 'local' };
  return { kind: 'spill', nodeId: decision.nodeId };
}

function localIsAsGood(state: ClusterState, req: SchedulingRequest, at: { chosen: string; tier: number; localNodeId: string; policy: Policy }): boolean {
  const local = state.node(at.localNodeId);
  const chosen = state.node(at.chosen);
  if (!local || !chosen || local.score > 0) return false;
  for (const attempt of attemptsFor(state, req, at.tier)) {
    if (passes(local, attempt, state, at.policy.filters)) return true;
    if (passes(chosen, attempt, state, at.policy.filters)) return false;
  }
  return false;
}

/**
 * The node a task would be passed on to, leaving out `visited` (nodes it came through): decided as
 * if those were draining — marked so for the call only, on this raylet's own copy of the cluster.
 */
export function onwardTarget(state: ClusterState, req: SchedulingRequest, visited: readonly string[], opts: { localNodeId: string; rng: Rng; policy?: Policy }): string | undefined {
  const marked = visited.map((id) => state.node(id)).filter((n) => n !== undefined && n.id !== opts.localNodeId && n.state === 'ALIVE');
  for (const n of marked) state.setNodeState(n!.id, 'DRAINING');
  try {
    const decision = decideTask(state, req, opts.localNodeId, opts);
    return decision.kind === 'spill' ? decision.nodeId : undefined;
  } finally {
    for (const n of marked) state.setNodeState(n!.id, 'ALIVE');
  }
}

/** Could this node ever run the task as its view stands (hard constraints, total resources)? */
export function feasibleHere(state: ClusterState, req: SchedulingRequest, localNodeId: string, policy: Policy = DEFAULT_POLICY): boolean {
  const local = state.node(localNodeId);
  if (!local) return false;
  for (let tier = 0; tier < req.selectorTiers.length; tier++) {
    if (feasible(local, baseAttempt(req, tier), state, policy.filters)) return true;
  }
  return false;
}

/** Does this node pass the task's hard constraints, resources included, right now? */
export function passesHere(state: ClusterState, req: SchedulingRequest, localNodeId: string, policy: Policy = DEFAULT_POLICY): boolean {
  const local = state.node(localNodeId);
  if (!local) return false;
  for (let tier = 0; tier < req.selectorTiers.length; tier++) {
    if (passes(local, baseAttempt(req, tier), state, policy.filters)) return true;
  }
  return false;
}
