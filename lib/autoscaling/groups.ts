import { ClusterState } from '../cluster/cluster-state.ts';
import { NODE_ID_LABEL, NODE_NAME_LABEL } from '../labels/builtin.ts';
import { baseAttempt } from '../scheduling/attempts.ts';
import { bundleRequest } from '../scheduling/bundles/place.ts';
import type { PlacementGroupRequest } from '../scheduling/bundles/request.ts';
import { scheduleBundles } from '../scheduling/bundles/schedule-bundles.ts';
import { passes } from '../scheduling/policy.ts';
import { POLICY, byPrice, type PreparedType, type Round } from './round.ts';
import type { DemandOutcome, GroupDemand } from './types.ts';

/*
 * Pending placement groups (decide.ts): placed whole by the scheduler's scheduleBundles; when they do
 * not fit, nodes are added bundle by bundle until they do, then the ones not needed are dropped.
 */

export function placeGroups(round: Round, d: GroupDemand): DemandOutcome {
  const req = d.request;
  const launch: Record<string, number> = {};
  let onExisting = 0;
  let onNew = 0;
  let placed = 0;
  let stop: { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean } | undefined;
  for (; placed < d.count; placed++) {
    let dec = scheduleBundles(round.state, req, { rng: round.rng, policy: POLICY });
    if (dec.status !== 'placed') {
      const added = launchForGroup(round, req);
      if ('stop' in added) {
        stop = added.stop;
        break;
      }
      for (const t of added.types) launch[t] = (launch[t] ?? 0) + 1;
      dec = scheduleBundles(round.state, req, { rng: round.rng, policy: POLICY });
      if (dec.status !== 'placed') {
        stop = { status: 'waiting', reason: 'the new nodes did not let the group be placed' };
        break;
      }
    }
    const bundles = req.tiers[dec.tier];
    dec.nodeIds.forEach((nodeId, i) => round.state.allocate(nodeId, bundles[i].resources));
    for (const nodeId of new Set(dec.nodeIds)) round.closeIfFull(round.state.nodes.get(nodeId)!);
    if (dec.nodeIds.some((id) => round.plannedIds.has(id))) onNew++;
    else onExisting++;
  }
  const waiting = d.count - placed;
  return {
    key: d.key,
    kind: 'placement_group',
    count: d.count,
    onExisting,
    onNew,
    launch,
    waiting,
    status: waiting === 0 ? 'placed' : stop?.status ?? 'waiting',
    ...(waiting > 0 && stop ? { reason: stop.reason, ...(stop.atMax ? { atMax: true } : {}) } : {}),
  };
}

/**
 * Adds the nodes one more copy of the group needs, tier by tier: for PACK and STRICT_PACK one node
 * of a type that holds the whole group, if one does; else a node per bundle, for the bundles in
 * turn, until scheduleBundles places the group — then every added node the group can do without
 * is dropped again.
 */
function launchForGroup(round: Round, req: PlacementGroupRequest): { types: string[] } | { stop: { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean } } {
  const eligible = round.types.filter((t) => round.tolerated(t, req.tolerations));
  const room = (t: PreparedType) => round.count.get(t.type.name)! < t.type.maxWorkers;
  const places = () => scheduleBundles(round.state, req, { rng: round.rng, policy: POLICY }).status === 'placed';
  for (let tier = 0; tier < req.tiers.length; tier++) {
    const only: PlacementGroupRequest = { ...req, tiers: [req.tiers[tier]] };
    if (req.strategy === 'PACK' || req.strategy === 'STRICT_PACK') {
      const fitting = eligible.filter(room).filter((t) => {
        const node = round.addNodeOf(t, 'candidate');
        try {
          return scheduleBundles(round.state, only, { rng: round.rng, policy: POLICY }).status === 'placed';
        } finally {
          round.state.removeNode(node.id);
        }
      });
      fitting.sort(byPrice);
      if (fitting.length > 0) {
        round.plan(fitting[0]);
        if (places()) return { types: [fitting[0].type.name] };
        round.unplan(fitting[0]);
      }
    }
    const added: { t: PreparedType; id: string }[] = [];
    const bundles = req.tiers[tier];
    let ok = false;
    for (let i = 0; i < bundles.length && !ok; i++) {
      const breq = bundleRequest(req, bundles[i]);
      const fitting = eligible.filter(room).filter((t) => {
        const node = round.addNodeOf(t, 'candidate');
        try {
          return passes(node, baseAttempt(breq, 0), round.state, POLICY.filters);
        } finally {
          round.state.removeNode(node.id);
        }
      });
      if (fitting.length === 0) break;
      fitting.sort(byPrice);
      added.push({ t: fitting[0], id: round.plan(fitting[0]).id });
      ok = places();
    }
    if (!ok) {
      for (const a of added.reverse()) round.unplan(a.t, a.id);
      continue;
    }
    for (let i = added.length - 1; i >= 0 && added.length > 1; i--) {
      const a = added[i];
      round.unplan(a.t, a.id);
      if (places()) added.splice(i, 1);
      else a.id = round.plan(a.t).id;
    }
    return { types: added.map((a) => a.t.type.name) };
  }
  const full = eligible.filter((t) => !room(t));
  if (full.length > 0 && groupFitsOnTypes(round, req, full)) {
    return { stop: { status: 'waiting', atMax: true, reason: `node types ${full.map((t) => t.type.name).join(', ')} could take it but are at maxWorkers` } };
  }
  if (groupFitsOnTypes(round, req, eligible)) return { stop: { status: 'waiting', reason: 'the node types could take it only together with nodes at maxWorkers' } };
  const fails = scheduleBundles(groupIdeal(round, req, eligible), req, { rng: round.rng, policy: POLICY });
  const why = fails.status === 'placed' ? '' : fails.failure.message.replace(/^0\/(\d+) nodes are available/, (_, n: string) => `0/${n} nodes of the node types are available`);
  return { stop: { status: 'infeasible', reason: `no combination of node types can take it: ${why}`.replace(/\.$/, '') } };
}

/** Could the group be placed on idle nodes of these types, as many of each as it has bundles? */
function groupFitsOnTypes(round: Round, req: PlacementGroupRequest, types: readonly PreparedType[]): boolean {
  return types.length > 0 && scheduleBundles(groupIdeal(round, req, types), req, { rng: round.rng, policy: POLICY }).status === 'placed';
}

function groupIdeal(round: Round, req: PlacementGroupRequest, types: readonly PreparedType[]): ClusterState {
  const s = new ClusterState();
  const n = Math.max(...req.tiers.map((b) => b.length));
  for (const t of types) {
    for (let i = 0; i < n; i++) {
      const id = `${t.type.name}-${i}`;
      s.addNode({ nodeId: id, name: id, labels: { ...t.labels, [NODE_ID_LABEL]: id, [NODE_NAME_LABEL]: id }, taints: t.taints, total: t.type.resources });
    }
  }
  return s;
}
