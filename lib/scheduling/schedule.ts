import type { ClusterState } from '../cluster/cluster-state.ts';
import type { SchedNode } from '../cluster/sched-node.ts';
import { NodeNotFoundError, NodeUnavailableError, type OrreryError } from '../errors.ts';
import type { Rng } from '../random.ts';
import { attemptLevels, baseAttempt } from './attempts.ts';
import { candidatesFor } from './candidates.ts';
import { explain, unschedulable, type ScheduleFailure } from './explain.ts';
import { pickHybrid } from './pick/hybrid.ts';
import { pickSpread } from './pick/spread.ts';
import { DEFAULT_POLICY, feasible, passes, type Policy } from './policy.ts';
import type { SchedulingRequest } from './request.types.ts';

/**
 * The outcome of one scheduling decision:
 *   placed         on `nodeId`; `tier` says which selector won (0 = labelSelector, 1.. = fallbacks)
 *   unschedulable  nothing can take it now; it waits in the pending queue with the explanation
 *   failed         it never can and must not wait (hard node-id affinity to an unknown node, or
 *                  failOnUnavailable) — the caller reports the error
 */
export type Decision =
  | { readonly status: 'placed'; readonly nodeId: string; readonly tier: number }
  | { readonly status: 'unschedulable'; readonly failure: ScheduleFailure }
  | { readonly status: 'failed'; readonly error: OrreryError };

export interface ScheduleOptions {
  readonly rng: Rng;
  readonly policy?: Policy;
}

/**
 * Chooses a node for a request. Pure apart from the cluster's spread cursor (SPREAD's round robin
 * advances it); does not allocate — the caller commits the placement through ClusterState.
 *
 * Selector tiers are tried in order; a tier whose nodes are feasible but busy makes the request
 * wait rather than fall back (seed 002: fallbacks are for when the preferred nodes cannot exist).
 */
export function schedule(state: ClusterState, req: SchedulingRequest, opts: ScheduleOptions): Decision {
  const policy = opts.policy ?? DEFAULT_POLICY;
  if (req.nodeId) return scheduleWithNodeId(state, req, opts, policy);
  for (let tier = 0; tier < req.selectorTiers.length; tier++) {
    for (const attempt of attemptLevels(state, req, tier)) {
      const node = req.spread ? pickSpread(state, attempt, policy) : pickHybrid(state, attempt, policy, opts.rng);
      if (node) return { status: 'placed', nodeId: node.id, tier };
    }
    if (anyFeasible(state, req, tier, policy)) {
      return unschedulable(() => explain(state, req, policy.filters, tier + 1));
    }
  }
  return unschedulable(() => explain(state, req, policy.filters));
}

/** Is there a node that could take the tier's hard constraints once it has room? */
export function anyFeasible(state: ClusterState, req: SchedulingRequest, tier: number, policy: Policy): boolean {
  const attempt = baseAttempt(req, tier);
  const cand = candidatesFor(state, attempt);
  const nodes: Iterable<SchedNode | undefined> = cand ? [...cand.ids()].map((id) => state.nodes.get(id)) : state.nodes.values();
  for (const node of nodes) if (node && feasible(node, attempt, state, policy.filters)) return true;
  return false;
}

/**
 * Ray's NodeAffinitySchedulingStrategy semantics:
 *   hard  unknown or dead node → NODE_NOT_FOUND at once (seed 001: an error, not a pending state);
 *         node cannot take it now → wait, or NODE_UNAVAILABLE with failOnUnavailable
 *   soft  node gone or never able to take it → the default policy; node busy → wait for it, or
 *         the default policy with spillOnUnavailable
 */
function scheduleWithNodeId(state: ClusterState, req: SchedulingRequest, opts: ScheduleOptions, policy: Policy): Decision {
  const pin = req.nodeId!;
  const node = state.nodes.get(pin.nodeId);
  const withoutPin: SchedulingRequest = Object.assign({}, req, { nodeId: undefined });
  if (!node || node.state === 'DEAD') {
    return pin.soft ? schedule(state, withoutPin, opts) : { status: 'failed', error: new NodeNotFoundError(pin.nodeId) };
  }
  const pinned: SchedulingRequest = Object.assign({}, req, { nodeId: Object.assign({}, pin, { soft: false }) });
  let couldFitLater = false;
  for (let tier = 0; tier < pinned.selectorTiers.length && !couldFitLater; tier++) {
    for (const attempt of attemptLevels(state, pinned, tier)) {
      if (passes(node, attempt, state, policy.filters)) return { status: 'placed', nodeId: node.id, tier };
    }
    couldFitLater = feasible(node, baseAttempt(pinned, tier), state, policy.filters);
  }
  if (pin.soft && (!couldFitLater || pin.spillOnUnavailable)) return schedule(state, withoutPin, opts);
  if (!pin.soft && pin.failOnUnavailable) {
    const reasons = explain(state, pinned, policy.filters).nodes.find((n) => n.nodeId === node.id)?.reasons ?? [];
    return { status: 'failed', error: new NodeUnavailableError(node.id, reasons) };
  }
  return unschedulable(() => explain(state, pinned, policy.filters));
}
