import { ClusterState } from '../cluster/cluster-state.ts';
import type { SchedNode } from '../cluster/sched-node.ts';
import { NODE_GROUP_LABEL, NODE_ID_LABEL, NODE_NAME_LABEL } from '../labels/builtin.ts';
import { fits } from '../resources/resource-set.ts';
import { attemptLevels, baseAttempt } from '../scheduling/attempts.ts';
import { explain } from '../scheduling/explain.ts';
import { feasible } from '../scheduling/policy.ts';
import type { SchedulingRequest } from '../scheduling/request.types.ts';
import { pickHybrid } from '../scheduling/pick/hybrid.ts';
import { pickSpread } from '../scheduling/pick/spread.ts';
import { describeTaint, tolerates } from '../scheduling/taints.ts';
import { POLICY, TRY, scaled, unitsIn, type Candidate, type PreparedType, type Round, type Stop } from './round.ts';
import type { ActorDemand, DemandOutcome } from './types.ts';

/*
 * Pending actors (decide.ts): their units go where the scheduler puts them; when it places nothing,
 * the best node type is launched and filled, and the scheduler runs again.
 */

export function placeActors(round: Round, d: ActorDemand): DemandOutcome {
  const req = d.request;
  const pin = req.nodeId;
  const free: SchedulingRequest = pin ? { ...req, nodeId: undefined } : req;
  const hardPin: SchedulingRequest | undefined = pin ? { ...req, nodeId: { ...pin, soft: false } } : undefined;
  const blocked = launchBlocked(round, req);
  // labels placed by one unit change where the next may go only through actor-affinity terms
  const bulk = req.actorAffinity.length === 0;
  const launch: Record<string, number> = {};
  let remaining = d.count;
  let onExisting = 0;
  let onNew = 0;
  let sticky: { node: SchedNode; tier: number } | undefined;
  /** After the first unit nothing took: the nodes this demand used since (nothing else can take more of it). */
  let own: SchedNode[] | undefined;
  let chosen: PreparedType | undefined;
  let chosenTier = 0;
  let rechosen = false;
  const domains = req.actorAffinity.some((e) => e.topologyKey !== undefined);
  let stop: Stop | undefined;
  while (remaining > 0) {
    let at: { node: SchedNode; tier: number } | undefined;
    const pinned = pin ? round.state.nodes.get(pin.nodeId) : undefined;
    const pinTier = pinned ? round.passesUpTo(pinned, hardPin!, req.selectorTiers.length - 1) : undefined;
    if (pinned && pinTier !== undefined) at = { node: pinned, tier: pinTier };
    else if (blocked) {
      stop = blocked;
      break;
    } else if (sticky && !bulk && round.state.nodes.has(sticky.node.id) && round.passesUpTo(sticky.node, free, sticky.tier) !== undefined) at = sticky;
    else if (own === undefined) {
      if (fits(round.maxAvailable, free.resources)) at = place(round, free);
      if (!at) own = [];
    } else {
      // a node that fails now fails for the rest of the demand: its units only make nodes stricter,
      // except the node they land on (kept) and, with topology domains, that node's domain
      for (let i = own.length - 1; i >= 0 && !at; i--) {
        const node = own[i];
        const tier = round.state.nodes.has(node.id) ? round.passesUpTo(node, free, free.selectorTiers.length - 1) : undefined;
        if (tier !== undefined) at = { node, tier };
        else if (!domains) own.splice(i, 1);
      }
    }
    if (!at) {
      if (!chosen || round.count.get(chosen.type.name)! >= chosen.type.maxWorkers) {
        const pick = chooseType(round, free, remaining);
        if ('stop' in pick) {
          stop = pick.stop;
          break;
        }
        chosen = pick.t;
        chosenTier = pick.tier;
      }
      if (bulk && !round.domains) {
        // Nodes this demand fills to the brim, with nothing left that any demand's shape fits, would
        // be closed as soon as added: count them without adding them (no other demand can use them,
        // and without topology domains nothing reads their actors).
        const fit = unitsIn(chosen.type.resources, req.resources);
        if (fit !== Infinity && remaining >= fit && !round.roomLeft(chosen, req.resources, fit)) {
          const n = Math.min(Math.floor(remaining / fit), chosen.type.maxWorkers - round.count.get(chosen.type.name)!);
          if (n > 0) {
            round.planUnseen(chosen, n);
            launch[chosen.type.name] = (launch[chosen.type.name] ?? 0) + n;
            onNew += n * fit;
            remaining -= n * fit;
            continue;
          }
        }
      }
      const node = round.plan(chosen);
      // a fresh node passes as the type's probe did, unless topology domains are involved
      const tier = domains ? round.passesUpTo(node, free, free.selectorTiers.length - 1) : chosenTier;
      if (tier !== undefined) rechosen = false;
      if (tier === undefined) {
        // a choice kept from an earlier unit no longer holds (a topology domain filled): choose again
        round.unplan(chosen, node.id);
        if (rechosen) {
          stop = { status: 'waiting', reason: `a new ${chosen.type.name} node would not take it` };
          break;
        }
        chosen = undefined;
        rechosen = true;
        continue;
      }
      launch[node.labels[NODE_GROUP_LABEL]] = (launch[node.labels[NODE_GROUP_LABEL]] ?? 0) + 1;
      at = { node, tier };
    }
    // a bulk fill takes all the node holds, so the node is done with this demand
    if (own && !bulk && !own.includes(at.node)) own.push(at.node);
    sticky = at;
    const k = bulk ? Math.min(remaining, unitsIn(at.node.available, req.resources)) : 1;
    round.state.allocate(at.node.id, scaled(req.resources, k));
    // actor terms ask whether a node (or domain) holds some matching actor, never how many: one
    // stands for the k placed together
    if (round.matters(undefined, d.labels)) round.state.addActor(at.node.id, { actorId: `~${++round.units}`, namespace: req.namespace, labels: d.labels });
    if (round.plannedIds.has(at.node.id)) onNew += k;
    else onExisting += k;
    remaining -= k;
    round.closeIfFull(at.node);
  }
  return {
    key: d.key,
    kind: 'actor',
    count: d.count,
    onExisting,
    onNew,
    launch,
    waiting: remaining,
    status: remaining === 0 ? 'placed' : stop?.status ?? 'waiting',
    ...(remaining > 0 && stop ? { reason: stop.reason, ...(stop.atMax ? { atMax: true } : {}) } : {}),
  };
}

/**
 * Where the scheduler would put the request now (schedule() without its explanations): the first
 * tier and preference level with a passing node; no fallback past a tier that is feasible once its
 * nodes have room, full nodes of the cluster included.
 */
function place(round: Round, req: SchedulingRequest): { node: SchedNode; tier: number } | undefined {
  const last = req.selectorTiers.length - 1;
  for (let tier = 0; tier <= last; tier++) {
    for (const attempt of attemptLevels(round.state, req, tier)) {
      const node = req.spread ? pickSpread(round.state, attempt, TRY) : pickHybrid(round.state, attempt, TRY, round.rng);
      if (node) return { node, tier };
    }
    if (tier < last && round.anyFeasible(req, tier)) return undefined;
  }
  return undefined;
}

/** Node-id affinity that a new node cannot satisfy: a hard pin, or a soft pin the scheduler waits on. */
function launchBlocked(round: Round, req: SchedulingRequest): { status: 'waiting' | 'infeasible'; reason: string } | undefined {
  const pin = req.nodeId;
  if (!pin) return undefined;
  const node = round.state.nodes.get(pin.nodeId) ?? round.closedNode(pin.nodeId);
  const alive = node !== undefined && node.state !== 'DEAD';
  if (!pin.soft) {
    return alive
      ? { status: 'waiting', reason: `pinned to node ${pin.nodeId} by hard node affinity: it waits for that node, a new one cannot take it` }
      : { status: 'infeasible', reason: `pinned to node ${pin.nodeId} by hard node affinity, and the cluster has no such node` };
  }
  if (!alive || pin.spillOnUnavailable) return undefined;
  const pinned: SchedulingRequest = { ...req, nodeId: { ...pin, soft: false } };
  for (let tier = 0; tier < pinned.selectorTiers.length; tier++) {
    if (feasible(node!, baseAttempt(pinned, tier), round.whole.nodes.has(node!.id) ? round.whole : round.state, POLICY.filters)) {
      return { status: 'waiting', reason: `waits for node ${pin.nodeId} (soft node affinity without spillOnUnavailable)` };
    }
  }
  return undefined;
}

/**
 * The type to launch for a request nothing can take: every type with room and no untolerated
 * taint whose node the scheduler would take, best by (selector tier, preference level, nodes or
 * price for the remaining units, size, name). A type is passed over at a fallback tier while an
 * earlier tier is feasible on the cluster: the scheduler would wait for those nodes, not use it.
 */
function chooseType(round: Round, req: SchedulingRequest, remaining: number): { t: PreparedType; tier: number } | { stop: { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean } } {
  const candidates: Candidate[] = [];
  const full: string[] = [];
  let waitsForTier = false;
  // a fresh node carries no actors, so whether it passes depends on the node alone — except for
  // actor terms over a topology domain, which read the other nodes of the domain
  const domains = req.actorAffinity.some((e) => e.topologyKey !== undefined);
  const earlier: boolean[] = [];
  const earlierFeasible = (tier: number): boolean => (earlier[tier] ??= round.anyFeasible(req, tier));
  for (const t of round.types) {
    if (!round.tolerated(t, req.tolerations)) continue;
    let found: { tier: number; level: number } | undefined;
    if (domains) {
      const node = round.addNodeOf(t, 'candidate');
      try {
        found = round.firstPass(node, req, round.state);
      } finally {
        round.state.removeNode(node.id);
      }
    } else {
      const probe = round.probe(t);
      found = round.firstPass(probe.node, req, probe.state);
    }
    if (found && found.tier > 0) {
      for (let tier = 0; tier < found.tier; tier++) {
        if (earlierFeasible(tier)) {
          found = undefined;
          waitsForTier = true;
          break;
        }
      }
    }
    if (!found) continue;
    if (round.count.get(t.type.name)! >= t.type.maxWorkers) full.push(t.type.name);
    else candidates.push({ t, ...found, fit: unitsIn(t.type.resources, req.resources) });
  }
  if (candidates.length > 0) {
    const costed = candidates.every((c) => c.t.type.cost !== undefined);
    const price = (c: Candidate): number => Math.ceil(remaining / Math.min(c.fit, remaining)) * (costed ? c.t.type.cost! : 1);
    candidates.sort((a, b) => a.tier - b.tier || a.level - b.level || price(a) - price(b) || a.t.size - b.t.size || (a.t.type.name < b.t.type.name ? -1 : 1));
    return { t: candidates[0].t, tier: candidates[0].tier };
  }
  if (full.length > 0) {
    return { stop: { status: 'waiting', atMax: true, reason: `node type${full.length > 1 ? 's' : ''} ${full.join(', ')} could take it but ${full.length > 1 ? 'are' : 'is'} at maxWorkers` } };
  }
  if (waitsForTier) {
    return { stop: { status: 'waiting', reason: 'the nodes of an earlier selector tier could take it once they have room; fallbacks are for what cannot exist' } };
  }
  return { stop: never(round, req) };
}

/** Why no type can take the request, and whether the live cluster can (then it only waits). */
function never(round: Round, req: SchedulingRequest): { status: 'waiting' | 'infeasible'; reason: string } {
  const why = typesExplain(round, req);
  for (let tier = 0; tier < req.selectorTiers.length; tier++) {
    if (round.anyFeasible(req, tier)) {
      return { status: 'waiting', reason: `only nodes already in the cluster can take it (${why})` };
    }
  }
  return { status: 'infeasible', reason: why };
}

/** The scheduler's explanation over one idle node of each type, worded for types. */
function typesExplain(round: Round, req: SchedulingRequest): string {
  if (round.types.length === 0) return 'no node types are configured';
  round.ideal ??= idealState(round);
  const message = explain(round.ideal, req, POLICY.filters).message;
  // the scheduler explains NoSchedule taints; a PreferNoSchedule one only lowers a node's rank there,
  // but keeps a type out of the autoscaler's choice, so it is named here
  const preferring = round.types
    .map((t) => ({ t, taints: t.taints.filter((x) => x.effect === 'PreferNoSchedule' && !tolerates(req.tolerations, x)) }))
    .filter((x) => x.taints.length > 0);
  const taints = preferring.length ? `; ${preferring.map((x) => `${x.t.type.name} has untolerated taint ${x.taints.map(describeTaint).join(', ')} (PreferNoSchedule)`).join('; ')}` : '';
  return (
    message
      .replace(/^0\/(\d+) nodes are available:/, (_, n: string) => `no node type can take it: 0/${n} node types fit:`)
      .replace(/ node\(s\) /g, ' type(s) ')
      .replace('(a node is counted under each reason it fails)', '(a type is counted under each reason it fails)')
      .replace(/\.$/, '') + taints
  );
}

function idealState(round: Round): ClusterState {
  const s = new ClusterState();
  for (const t of round.types) {
    s.addNode({ nodeId: t.type.name, name: t.type.name, labels: { ...t.labels, [NODE_ID_LABEL]: `${t.type.name}-new`, [NODE_NAME_LABEL]: `${t.type.name}-new` }, taints: t.taints, total: t.type.resources });
  }
  return s;
}
