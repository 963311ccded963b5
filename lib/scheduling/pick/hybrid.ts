import type { ClusterState } from '../../cluster/cluster-state.ts';
import type { SchedNode } from '../../cluster/sched-node.ts';
import type { NodeOrder } from '../../cluster/node-order.ts';
import { randomInt, type Rng } from '../../random.ts';
import { before, candidatesFor } from '../candidates.ts';
import type { Attempt } from '../filters/filter.ts';
import { passes, type Policy } from '../policy.ts';

/**
 * The hybrid policy (Ray's default): nodes ordered by score — 0 below the spread threshold, so
 * light nodes pack in node-id order, then loaded ones least-loaded first — and a uniformly random
 * choice among the passing nodes of the best window of k = max(1, 20%) positions. When the best
 * window has no passing node, the next window is used, and so on.
 *
 * Ray takes the top k of the *filtered* list, which needs every node filtered and sorted on every
 * decision. Windows over the cluster-wide order keep the same preference (least loaded first,
 * random among the best fifth) while letting a decision cost O(1) expected: random probes of the
 * first window find a passing node without touching the rest. Selective constraints (an actor-
 * affinity peer, a rare label) are evaluated exhaustively over their index candidates instead.
 */
export function pickHybrid(state: ClusterState, attempt: Attempt, policy: Policy, rng: Rng): SchedNode | undefined {
  const n = state.order.size;
  if (n === 0) return undefined;
  const k = Math.max(policy.topKMin, Math.floor(policy.topKFraction * n));
  const cand = candidatesFor(state, attempt);
  if (cand && cand.size <= policy.candidateScanLimit) return pickAmong(state, attempt, policy, rng, cand.ids(), k);

  const first = Math.min(k, n);
  // probing the whole first window is a waste when the candidates are a small part of it
  const sparse = cand !== undefined && cand.walks.length > 0 && cand.size * 4 < n;
  for (let t = 0; t < (sparse ? 0 : policy.sampleTries); t++) {
    const node = state.order.at(randomInt(rng, first));
    if (passes(node, attempt, state, policy.filters)) return node;
  }
  if (cand?.walks.length) {
    // The first passing node sits about (its rank × size ÷ n) deep in each list, so lists much longer
    // than the narrowest only add steps; those of similar length are walked side by side, which
    // bounds the cost by (walks × the shortest walk) whichever of them finds it first.
    const sizes = cand.walkSizes ?? [];
    const narrowest = Math.min(...sizes);
    const walks = cand.walks.filter((_, i) => !(sizes[i] > 2 * narrowest));
    return pickOrdered(state, attempt, policy, rng, { walks: walks.map((w) => w()[Symbol.iterator]()), narrowest: cand.narrowest }, k);
  }
  if (cand && cand.size * Math.log2(n + 1) < n) return pickAmong(state, attempt, policy, rng, cand.ids(), k);
  for (let start = 0; start < n; start += k) {
    const pool: SchedNode[] = [];
    for (let i = start; i < Math.min(start + k, n); i++) {
      const node = state.order.at(i);
      if (passes(node, attempt, state, policy.filters)) pool.push(node);
    }
    if (pool.length) return pool[randomInt(rng, pool.length)];
  }
  return undefined;
}

/**
 * Walks the candidate lists best-first, side by side, to the first passing node; its window is the
 * best window holding a passing node. Within that window the passing nodes are all in the narrowest
 * candidate list, so random probes of that list's part of the window come first (uniform over the
 * passing nodes, as the pool would be), else every passing node of that part is collected.
 * A list that ends before any node passes proves that none does.
 */
function pickOrdered(
  state: ClusterState, attempt: Attempt, policy: Policy, rng: Rng,
  lists: { walks: Iterator<SchedNode>[]; narrowest?: readonly NodeOrder<SchedNode>[] }, k: number,
): SchedNode | undefined {
  let first: SchedNode | undefined;
  let walk: Iterator<SchedNode> | undefined;
  while (!first) {
    for (const w of lists.walks) {
      const step = w.next();
      if (step.done) return undefined;
      if (passes(step.value, attempt, state, policy.filters)) {
        first = step.value;
        walk = w;
        break;
      }
    }
  }
  const n = state.order.size;
  const start = Math.floor(state.order.rankOf(first) / k) * k;
  const end = start + k < n ? state.order.at(start + k) : undefined;
  if (lists.narrowest) return pickInWindow(state, attempt, policy, rng, lists.narrowest, { start: start > 0 ? state.order.at(start) : undefined, end }) ?? first;
  if (start > 0) {
    const width = Math.min(k, n - start);
    for (let t = 0; t < policy.sampleTries; t++) {
      const probe = state.order.at(start + randomInt(rng, width));
      if (passes(probe, attempt, state, policy.filters)) return probe;
    }
  }
  const pool = [first];
  for (let step = walk!.next(); !step.done && (!end || before(step.value, end)); step = walk!.next()) {
    if (passes(step.value, attempt, state, policy.filters)) pool.push(step.value);
  }
  return pool[randomInt(rng, pool.length)];
}

/** A passing node of the window [start, end) among the given orders, uniformly at random. */
function pickInWindow(
  state: ClusterState, attempt: Attempt, policy: Policy, rng: Rng,
  orders: readonly NodeOrder<SchedNode>[], window: { start?: SchedNode; end?: SchedNode },
): SchedNode | undefined {
  const ranges: { order: NodeOrder<SchedNode>; lo: number; hi: number }[] = [];
  let total = 0;
  for (const order of orders) {
    const lo = window.start ? order.rankBefore(window.start.score, window.start.id) : 0;
    const hi = window.end ? order.rankBefore(window.end.score, window.end.id) : order.size;
    if (hi > lo) {
      ranges.push({ order, lo, hi });
      total += hi - lo;
    }
  }
  const at = (i: number): SchedNode => {
    for (const r of ranges) {
      if (i < r.hi - r.lo) return r.order.at(r.lo + i);
      i -= r.hi - r.lo;
    }
    throw new Error('unreachable: index past the window');
  };
  if (total > policy.sampleTries) {
    for (let t = 0; t < policy.sampleTries; t++) {
      const probe = at(randomInt(rng, total));
      if (passes(probe, attempt, state, policy.filters)) return probe;
    }
  }
  const pool: SchedNode[] = [];
  for (const r of ranges) {
    for (let i = r.lo; i < r.hi; i++) {
      const node = r.order.at(i);
      if (passes(node, attempt, state, policy.filters)) pool.push(node);
    }
  }
  return pool.length ? pool[randomInt(rng, pool.length)] : undefined;
}

/** Exhaustive over a candidate set: the passing candidates in the best window, one at random. */
function pickAmong(state: ClusterState, attempt: Attempt, policy: Policy, rng: Rng, ids: Iterable<string>, k: number): SchedNode | undefined {
  let bestWindow = Infinity;
  let pool: SchedNode[] = [];
  for (const id of ids) {
    const node = state.nodes.get(id);
    if (!node || !passes(node, attempt, state, policy.filters)) continue;
    const window = Math.floor(state.order.rankOf(node) / k);
    if (window < bestWindow) {
      bestWindow = window;
      pool = [node];
    } else if (window === bestWindow) {
      pool.push(node);
    }
  }
  if (pool.length === 0) return undefined;
  pool.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return pool[randomInt(rng, pool.length)];
}
