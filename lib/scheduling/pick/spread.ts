import type { ClusterState } from '../../cluster/cluster-state.ts';
import type { SchedNode } from '../../cluster/sched-node.ts';
import { candidatesFor } from '../candidates.ts';
import type { Attempt } from '../filters/filter.ts';
import { passes, type Policy } from '../policy.ts';

/**
 * SPREAD: round robin in node-id order. Each decision takes the first passing node after the one
 * the previous SPREAD decision chose (the cluster's spread cursor), wrapping around.
 */
export function pickSpread(state: ClusterState, attempt: Attempt, policy: Policy): SchedNode | undefined {
  const ids = state.ids;
  const n = ids.length;
  if (n === 0) return undefined;
  const cand = candidatesFor(state, attempt);
  let chosen: SchedNode | undefined;
  if (cand && cand.size <= policy.candidateScanLimit) {
    const passing = [...cand.ids()]
      .map((id) => state.nodes.get(id))
      .filter((node): node is SchedNode => node !== undefined && passes(node, attempt, state, policy.filters))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    chosen = passing.find((node) => node.id > state.spreadCursor) ?? passing[0];
  } else {
    let start = ids.findIndex((id) => id > state.spreadCursor);
    if (start < 0) start = 0;
    for (let i = 0; i < n && !chosen; i++) {
      const node = state.nodes.get(ids[(start + i) % n])!;
      if (passes(node, attempt, state, policy.filters)) chosen = node;
    }
  }
  if (chosen) state.spreadCursor = chosen.id;
  return chosen;
}
