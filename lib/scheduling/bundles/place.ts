import type { ClusterState } from '../../cluster/cluster-state.ts';
import type { SchedNode } from '../../cluster/sched-node.ts';
import { addResources, fits, subtractResources, type ResourceSet } from '../../resources/resource-set.ts';
import { attemptsFor } from '../attempts.ts';
import type { Attempt, Filter, Rejection } from '../filters/filter.ts';
import { passes, type Policy } from '../policy.ts';
import type { SchedulingRequest } from '../request.types.ts';
import type { BundleSpec, BundleStrategy, PlacementGroupRequest } from './request.ts';

/** Chooses one node for an attempt (the indexed pickHybrid, or a plain scan for the reference). */
export type NodePicker = (state: ClusterState, attempt: Attempt, policy: Policy) => SchedNode | undefined;

/**
 * Where placing a tier stopped: the bundle no node could take, the nodes already holding others,
 * and what those bundles held there — so an explanation can see the nodes as the stuck bundle did.
 */
export interface Stuck {
  readonly bundle: number;
  readonly request: SchedulingRequest;
  readonly used: ReadonlySet<string>;
  readonly held: readonly { readonly nodeId: string; readonly resources: ResourceSet }[];
  readonly strategy: BundleStrategy;
}

const HELD: Rejection = { code: 'infeasible', reason: 'already held another bundle of the group' };

/** Under STRICT_SPREAD (and SPREAD's first pass), a node takes at most one bundle of the group. */
export function excluding(used: ReadonlySet<string>): Filter {
  return { name: 'bundle-spread', kind: 'constraint', check: (node) => (used.has(node.id) ? HELD : undefined) };
}

export function bundleRequest(req: PlacementGroupRequest, bundle: BundleSpec): SchedulingRequest {
  return {
    target: req.target,
    namespace: '',
    resources: bundle.resources,
    selectorTiers: [bundle.selector],
    nodeAffinity: [],
    actorAffinity: [],
    tolerations: req.tolerations,
    spread: false,
  };
}

/**
 * Places every bundle of one tier or none. Bundles are taken largest first; each choice is
 * allocated on `state` as it is made (so later bundles see it) and everything is released before
 * returning — the caller commits the assignment it gets back.
 *
 *   STRICT_PACK    one node takes the sum of all bundles and satisfies every bundle's selector
 *   PACK           all on one node when possible; otherwise each bundle prefers a node the group
 *                  already uses, then the best new node
 *   STRICT_SPREAD  every bundle on a different node; when greedy choice fails, an exact bipartite
 *                  matching decides, so a placement that exists is never missed
 *   SPREAD         different nodes where possible, shared ones otherwise — the nodes holding the
 *                  fewest of the group's bundles first, so they share evenly
 *
 * When greedy choice fails under PACK or SPREAD, a bounded exact search decides (searchAssignment):
 * a bundle taken first must not strand a later one whose selector only its node matches.
 */
export function placeTier(state: ClusterState, req: PlacementGroupRequest, tier: number, policy: Policy, pick: NodePicker): { nodeIds: string[] } | { stuck: Stuck } {
  const bundles = req.tiers[tier];
  const placed = req.placed ?? [];
  if (req.strategy === 'STRICT_PACK' || (req.strategy === 'PACK' && placed.length === 0)) {
    const whole = strictPack(state, req, bundles, policy, pick);
    if (whole) return { nodeIds: bundles.map(() => whole.id) };
    if (req.strategy === 'STRICT_PACK') {
      return { stuck: { bundle: -1, request: mergedRequest(req, bundles), used: new Set(), held: [], strategy: req.strategy } };
    }
  }
  const order = bundles.map((_, i) => i).sort((a, b) => weight(bundles[b]) - weight(bundles[a]) || a - b);
  const nodeIds: string[] = new Array(bundles.length);
  const taken: { nodeId: string; bundle: BundleSpec }[] = [];
  const used = new Set<string>(placed);
  /** Bundles of the group per node (a node holding an earlier-placed bundle counts one): SPREAD shares the least-held nodes first. */
  const perNode = new Map<string, number>(placed.map((id) => [id, 1]));
  try {
    for (const i of order) {
      const request = bundleRequest(req, bundles[i]);
      const node = pickForBundle(state, request, used, req.strategy, policy, pick, perNode);
      if (!node) {
        const held = req.strategy === 'STRICT_SPREAD' ? [] : taken.map((t) => ({ nodeId: t.nodeId, resources: t.bundle.resources }));
        for (const t of taken) state.release(t.nodeId, t.bundle.resources);
        taken.length = 0;
        const exact = req.strategy === 'STRICT_SPREAD' ? matchDistinct(state, req, bundles, policy) : searchAssignment(state, req, bundles, policy);
        if (exact) return { nodeIds: exact };
        return { stuck: { bundle: i, request, used: new Set(used), held, strategy: req.strategy } };
      }
      state.allocate(node.id, bundles[i].resources);
      taken.push({ nodeId: node.id, bundle: bundles[i] });
      used.add(node.id);
      perNode.set(node.id, (perNode.get(node.id) ?? 0) + 1);
      nodeIds[i] = node.id;
    }
    return { nodeIds };
  } finally {
    for (const t of taken) state.release(t.nodeId, t.bundle.resources);
  }
}

function pickForBundle(
  state: ClusterState,
  request: SchedulingRequest,
  used: Set<string>,
  strategy: BundleStrategy,
  policy: Policy,
  pick: NodePicker,
  held: ReadonlyMap<string, number>,
): SchedNode | undefined {
  const attempts = attemptsFor(state, request, 0);
  if (strategy === 'PACK') {
    for (const attempt of attempts) {
      for (const id of [...used].sort()) {
        const node = state.nodes.get(id)!;
        if (passes(node, attempt, state, policy.filters)) return node;
      }
    }
  }
  if (strategy === 'SPREAD' || strategy === 'STRICT_SPREAD') {
    const apart: Policy = Object.assign({}, policy, { filters: [...policy.filters, excluding(used)] });
    for (const attempt of attempts) {
      const node = pick(state, attempt, apart);
      if (node) return node;
    }
    if (strategy === 'STRICT_SPREAD') return undefined;
    // every node that can take it holds a bundle of the group already: the ones holding the fewest
    // first, a level at a time, so the bundles share the nodes evenly (as Ray's SPREAD does). The
    // plain pick alone packed them: 10,000 bundles on two nodes went 9,999 and 1.
    const levels = [...new Set(held.values())].sort((a, b) => a - b);
    for (const level of levels) {
      const over = new Set<string>();
      for (const [id, n] of held) if (n > level) over.add(id);
      if (over.size === 0) break;
      const fewest: Policy = Object.assign({}, policy, { filters: [...policy.filters, excluding(over)] });
      for (const attempt of attempts) {
        const node = pick(state, attempt, fewest);
        if (node) return node;
      }
    }
  }
  for (const attempt of attempts) {
    const node = pick(state, attempt, policy);
    if (node) return node;
  }
  return undefined;
}

function strictPack(state: ClusterState, req: PlacementGroupRequest, bundles: readonly BundleSpec[], policy: Policy, pick: NodePicker): SchedNode | undefined {
  const merged = mergedRequest(req, bundles);
  for (const attempt of attemptsFor(state, merged, 0)) {
    const node = pick(state, attempt, policy);
    if (node) return node;
  }
  return undefined;
}

/** All bundles as one request: the summed resources, every bundle's selector. */
export function mergedRequest(req: PlacementGroupRequest, bundles: readonly BundleSpec[]): SchedulingRequest {
  const resources = bundles.reduce<Record<string, number>>((acc, b) => addResources(acc, b.resources), {});
  return bundleRequest(req, { resources, selector: bundles.flatMap((b) => b.selector) });
}

/** Bundles with more of the scarce resources go first, so they get the first pick of nodes. */
function weight(b: BundleSpec): number {
  return (b.resources.GPU ?? 0) * 1e6 + (b.resources.CPU ?? 0) + (b.resources.memory ?? 0) / 1e9;
}

/** Exact STRICT_SPREAD: a bipartite matching of bundles to distinct nodes (augmenting paths). */
function matchDistinct(state: ClusterState, req: PlacementGroupRequest, bundles: readonly BundleSpec[], policy: Policy): string[] | undefined {
  const away = new Set(req.placed ?? []);
  const nodes = [...state.nodes.values()].filter((n) => !away.has(n.id));
  const edges = bundles.map((b) => {
    const attempt = attemptsFor(state, bundleRequest(req, b), 0).at(-1)!;
    return nodes.filter((n) => passes(n, attempt, state, policy.filters)).map((n) => n.id).sort();
  });
  const owner = new Map<string, number>();
  const assign = (i: number, seen: Set<string>): boolean => {
    for (const id of edges[i]) {
      if (seen.has(id)) continue;
      seen.add(id);
      const other = owner.get(id);
      if (other === undefined || assign(other, seen)) {
        owner.set(id, i);
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < bundles.length; i++) if (!assign(i, new Set())) return undefined;
  const out: string[] = new Array(bundles.length);
  for (const [id, i] of owner) out[i] = id;
  return out;
}

/** Node tries the exact PACK / SPREAD search may make before giving up: it is a fallback, not the rule. */
const SEARCH_BUDGET = 10_000;

/**
 * Exact PACK / SPREAD, after greedy choice failed: a depth-first search for any assignment that fits
 * every node's available resources, most constrained bundle first, trying the nodes the group
 * already uses first (PACK) or last (SPREAD). Undefined when there is none or the budget runs out.
 */
function searchAssignment(state: ClusterState, req: PlacementGroupRequest, bundles: readonly BundleSpec[], policy: Policy): string[] | undefined {
  const nodes = [...state.nodes.values()];
  const byShape = new Map<string, { ids: string[]; set: Set<string> }>();
  const found = bundles.map((b) => {
    const shape = JSON.stringify(b);
    let c = byShape.get(shape);
    if (!c) {
      const attempt = attemptsFor(state, bundleRequest(req, b), 0).at(-1)!;
      const ids = nodes.filter((n) => passes(n, attempt, state, policy.filters)).map((n) => n.id).sort();
      byShape.set(shape, (c = { ids, set: new Set(ids) }));
    }
    return c;
  });
  const candidates = found.map((c) => c.ids);
  const candidateSets = found.map((c) => c.set);
  const order = bundles.map((_, i) => i).sort((a, b) => candidates[a].length - candidates[b].length || weight(bundles[b]) - weight(bundles[a]) || a - b);
  const left = new Map<string, ResourceSet>();
  const count = new Map<string, number>((req.placed ?? []).map((id) => [id, 1]));
  const out: string[] = new Array(bundles.length);
  let budget = SEARCH_BUDGET;
  const place = (k: number): boolean => {
    if (k === order.length) return true;
    const i = order[k];
    const tryNode = (id: string): boolean => {
      const room = left.get(id) ?? state.nodes.get(id)!.available;
      if (!fits(room, bundles[i].resources)) return false;
      left.set(id, subtractResources(room, bundles[i].resources));
      count.set(id, (count.get(id) ?? 0) + 1);
      out[i] = id;
      if (place(k + 1)) return true;
      left.set(id, room);
      count.set(id, count.get(id)! - 1);
      return false;
    };
    const inUse = [...count].filter(([id, n]) => n > 0 && candidateSets[i].has(id)).map(([id]) => id).sort();
    const tryAll = (ids: readonly string[], skipUsed: boolean): boolean => {
      for (const id of ids) {
        if (skipUsed && count.get(id)) continue;
        if (--budget < 0 || tryNode(id)) return budget >= 0;
      }
      return false;
    };
    return req.strategy === 'PACK' ? tryAll(inUse, false) || tryAll(candidates[i], true) : tryAll(candidates[i], true) || tryAll(inUse, false);
  };
  return place(0) ? out : undefined;
}
