import { ClusterState, type SchedNode } from '../cluster/cluster-state.ts';
import { ACTOR_ID_LABEL, NODE_GROUP_LABEL, NODE_ID_LABEL, NODE_NAME_LABEL } from '../labels/builtin.ts';
import { seededRng, type Rng } from '../random.ts';
import { fits, type ResourceSet } from '../resources/resource-set.ts';
import { attemptLevels, baseAttempt } from '../scheduling/attempts.ts';
import { bundleRequest } from '../scheduling/bundles/place.ts';
import type { PlacementGroupRequest } from '../scheduling/bundles/request.ts';
import { scheduleBundles } from '../scheduling/bundles/schedule-bundles.ts';
import { explain } from '../scheduling/explain.ts';
import type { Rejection } from '../scheduling/filters/filter.ts';
import { resourcesFit } from '../scheduling/filters/resources.ts';
import { DEFAULT_POLICY, feasible, passes, type Policy } from '../scheduling/policy.ts';
import type { SchedulingRequest } from '../scheduling/request.types.ts';
import { pickHybrid } from '../scheduling/pick/hybrid.ts';
import { pickSpread } from '../scheduling/pick/spread.ts';
import { anyFeasible } from '../scheduling/schedule.ts';
import { describeTaint, rareResourceTaints, tolerates, type Taint, type Tolerations } from '../scheduling/taints.ts';
import type { ActorDemand, AutoscalingDecision, AutoscalingInput, DemandOutcome, GroupDemand, LiveNode, NodeType } from './types.ts';

const POLICY = DEFAULT_POLICY;

/**
 * The scheduler's filters for trying nodes, with the resource check first and without building its
 * explanation: most nodes a round tries are full, and passes() needs only the verdict. Feasibility
 * and explanations keep the scheduler's own policy.
 */
const TRY: Policy = {
  ...DEFAULT_POLICY,
  filters: [
    { name: 'fits', kind: 'resources', check: (node, attempt) => (fits(node.available, attempt.req.resources) ? undefined : BUSY) },
    ...DEFAULT_POLICY.filters.filter((f) => f !== resourcesFit),
  ],
};

/**
 * One autoscaling round: which nodes to launch so the pending work can be placed.
 *
 * The decision runs the scheduler itself (lib/scheduling) against the cluster as it stands plus
 * hypothetical nodes — those being launched, and candidates of each node type — so every constraint
 * the scheduler knows is honoured here without a second implementation (seed 001's complaint about
 * an autoscaler that "simulates the scheduling again"). For each demand, in turn:
 *
 *   1. its units go where the scheduler puts them: live nodes, nodes being launched, nodes this
 *      round already decided to launch (so demands share new nodes);
 *   2. when the scheduler places nothing, a node of each type that has room under maxWorkers, and
 *      whose every taint the demand tolerates (seed 003 §5.4), is tried: the types whose node the
 *      scheduler would take, at the best selector tier and soft-preference level, compete on the
 *      number of nodes (or, with costs, the price) the demand needs, then size; the winner is added
 *      and filled, and step 1 resumes.
 *
 * The seeds' rules follow: affinity to running actors launches nothing (a new node has none of
 * them); anti-affinity launches; a soft preference launches a matching type when one exists, else any
 * that fits; a selector on a unique label (a node id or IP) matches no type. Placement groups are
 * placed whole by scheduleBundles, adding nodes bundle by bundle until the group fits and then
 * dropping those it can do without — STRICT_SPREAD of n bundles may need n.
 *
 * Pure: no I/O, no clock; the scheduler's random choices come from `input.seed`.
 */
export function decide(input: AutoscalingInput): AutoscalingDecision {
  return new Round(input).run();
}

interface PreparedType {
  readonly type: NodeType;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly size: number;
}

const BUSY: Rejection = { code: 'unschedulable', reason: 'had too few resources available' };

type Stop = { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean };

interface Candidate {
  readonly t: PreparedType;
  readonly tier: number;
  readonly level: number;
  /** Units of the demand one node of the type holds (Infinity for a demand that asks for nothing). */
  readonly fit: number;
}

class Round {
  readonly state = new ClusterState();
  readonly rng: Rng;
  readonly types: PreparedType[];
  /** Per type: live nodes (not DEAD), launches in flight, and this round's launches. */
  readonly count = new Map<string, number>();
  readonly planned = new Map<string, number>();
  /** Ids of the nodes this round launches. */
  readonly plannedIds = new Set<string>();
  /** An upper bound of every node's available resources (allocations only lower them). */
  readonly maxAvailable: Record<string, number> = {};
  /** The distinct resource shapes of the demands (actors, and every bundle), with the tolerations they come with. */
  readonly shapes: readonly Shape[];
  /** Some demand has actor terms over topology domains: then every node's actors can matter. */
  readonly domains: boolean;
  #seq = 0;
  #units = 0;
  #ideal: ClusterState | undefined;
  #whole: ClusterState | undefined;
  /** Nodes out of the round's state (nothing fits on them now), for feasibility questions. */
  readonly #closed: SchedNode[] = [];
  /** Live nodes nothing fits on that hold actors some demand's term can see: `whole` holds them. */
  readonly #withActors: LiveNode[] = [];
  readonly #probes = new Map<PreparedType, { state: ClusterState; node: SchedNode }>();
  /** Per label key, the values some demand's actor term asks about ('any': every value matters). */
  readonly #terms: ReadonlyMap<string, ReadonlySet<string> | 'any'>;

  constructor(readonly input: AutoscalingInput) {
    this.rng = seededRng(input.seed ?? 1);
    const rare = input.rareResources ?? [];
    this.types = input.nodeTypes.map((type) => ({
      type,
      labels: { ...type.labels, [NODE_GROUP_LABEL]: type.name },
      taints: [...type.taints, ...rareResourceTaints(type.resources, rare).filter((r) => !type.taints.some((t) => t.key === r.key))],
      size: Object.values(type.resources).reduce((a, b) => a + b, 0),
    }));
    this.shapes = shapesOf(input.demands);
    this.domains = input.demands.some((d) => d.kind === 'actor' && d.request.actorAffinity.some((e) => e.topologyKey !== undefined));
    this.#terms = actorTermsOf(input.demands);
    for (const t of this.types) this.count.set(t.type.name, 0);
    for (const n of input.nodes) {
      if (n.state === 'DEAD') continue;
      const group = n.labels?.[NODE_GROUP_LABEL];
      if (group !== undefined && this.count.has(group)) this.count.set(group, this.count.get(group)! + 1);
      // a node no demand fits on (full, or draining) only matters to explanations: see `whole`
      if (n.state === 'DRAINING' || !this.#roomFor(n.available ?? n.total, n.taints ?? [])) {
        if ((n.actors ?? []).some((a) => this.#matters(a.actorId, a.labels))) this.#withActors.push(n);
        else this.#closed.push(sketch(n));
        continue;
      }
      const node = this.state.addNode(n);
      this.#noteAvailable(node);
      for (const a of n.actors ?? []) if (this.#matters(a.actorId, a.labels)) this.state.addActor(node.id, a);
    }
    for (const t of this.types) {
      const inFlight = input.launching?.[t.type.name] ?? 0;
      for (let i = 0; i < inFlight; i++) this.#addNodeOf(t, 'launching');
      this.count.set(t.type.name, this.count.get(t.type.name)! + inFlight);
    }
  }

  /**
   * The live nodes nothing fits on that hold actors some demand's term can see, with those actors: for
   * what depends on nodes that are full now — whether a selector tier or a pinned node can take a
   * request once it has room (the scheduler waits then), and why a request waits. Built on first use.
   */
  get whole(): ClusterState {
    if (!this.#whole) {
      this.#whole = new ClusterState();
      for (const n of this.#withActors) {
        this.#whole.addNode(n);
        for (const a of n.actors ?? []) if (this.#matters(a.actorId, a.labels)) this.#whole.addActor(n.nodeId, a);
      }
    }
    return this.#whole;
  }

  /** Could a node of the cluster, or one planned, take the tier once it has room? */
  #anyFeasible(req: SchedulingRequest, tier: number): boolean {
    if (anyFeasible(this.state, req, tier, POLICY)) return true;
    // only actor terms read more than the node itself: closed nodes holding actors some term can see
    // are judged in a state of their own (with those actors), the others as they are
    if (req.actorAffinity.length > 0 && this.#withActors.length > 0 && anyFeasible(this.whole, req, tier, POLICY)) return true;
    const attempt = baseAttempt(req, tier);
    return this.#closed.some((node) => feasible(node, attempt, this.state, POLICY.filters));
  }

  /** A live or planned node out of the round's state, by id. */
  #closedNode(id: string): SchedNode | undefined {
    if (this.#withActors.some((n) => n.nodeId === id)) return this.whole.nodes.get(id);
    return this.#closed.find((n) => n.id === id);
  }

  /** Takes a node out of the round's state once no demand's shape fits on it any more. */
  #closeIfFull(node: SchedNode): void {
    if (this.#roomFor(node.available, node.taints)) return;
    this.state.removeNode(node.id);
    this.#closed.push(node);
  }

  run(): AutoscalingDecision {
    const forMinWorkers: Record<string, number> = {};
    for (const t of this.types) {
      while (this.count.get(t.type.name)! < t.type.minWorkers) {
        this.#plan(t);
        forMinWorkers[t.type.name] = (forMinWorkers[t.type.name] ?? 0) + 1;
      }
    }
    const outcomes = new Map<string, DemandOutcome>();
    for (const d of ordered(this.input.demands)) {
      outcomes.set(d.key, d.kind === 'actor' ? this.#actors(d) : this.#groups(d));
    }
    const launch: Record<string, number> = {};
    for (const [name, n] of this.planned) if (n > 0) launch[name] = n;
    return { launch, forMinWorkers, demands: this.input.demands.map((d) => outcomes.get(d.key)!) };
  }

  // ---- actors ----

  #actors(d: ActorDemand): DemandOutcome {
    const req = d.request;
    const pin = req.nodeId;
    const free: SchedulingRequest = pin ? { ...req, nodeId: undefined } : req;
    const hardPin: SchedulingRequest | undefined = pin ? { ...req, nodeId: { ...pin, soft: false } } : undefined;
    const blocked = this.#launchBlocked(req);
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
      const pinned = pin ? this.state.nodes.get(pin.nodeId) : undefined;
      const pinTier = pinned ? this.#passesUpTo(pinned, hardPin!, req.selectorTiers.length - 1) : undefined;
      if (pinned && pinTier !== undefined) at = { node: pinned, tier: pinTier };
      else if (blocked) {
        stop = blocked;
        break;
      } else if (sticky && !bulk && this.state.nodes.has(sticky.node.id) && this.#passesUpTo(sticky.node, free, sticky.tier) !== undefined) at = sticky;
      else if (own === undefined) {
        if (fits(this.maxAvailable, free.resources)) at = this.#place(free);
        if (!at) own = [];
      } else {
        // a node that fails now fails for the rest of the demand: its units only make nodes stricter,
        // except the node they land on (kept) and, with topology domains, that node's domain
        for (let i = own.length - 1; i >= 0 && !at; i--) {
          const node = own[i];
          const tier = this.state.nodes.has(node.id) ? this.#passesUpTo(node, free, free.selectorTiers.length - 1) : undefined;
          if (tier !== undefined) at = { node, tier };
          else if (!domains) own.splice(i, 1);
        }
      }
      if (!at) {
        if (!chosen || this.count.get(chosen.type.name)! >= chosen.type.maxWorkers) {
          const pick = this.#chooseType(free, remaining);
          if ('stop' in pick) {
            stop = pick.stop;
            break;
          }
          chosen = pick.t;
          chosenTier = pick.tier;
        }
        if (bulk && !this.domains) {
          // Nodes this demand fills to the brim, with nothing left that any demand's shape fits, would
          // be closed as soon as added: count them without adding them (no other demand can use them,
          // and without topology domains nothing reads their actors).
          const fit = unitsIn(chosen.type.resources, req.resources);
          if (fit !== Infinity && remaining >= fit && !this.#roomLeft(chosen, req.resources, fit)) {
            const n = Math.min(Math.floor(remaining / fit), chosen.type.maxWorkers - this.count.get(chosen.type.name)!);
            if (n > 0) {
              this.#planUnseen(chosen, n);
              launch[chosen.type.name] = (launch[chosen.type.name] ?? 0) + n;
              onNew += n * fit;
              remaining -= n * fit;
              continue;
            }
          }
        }
        const node = this.#plan(chosen);
        // a fresh node passes as the type's probe did, unless topology domains are involved
        const tier = domains ? this.#passesUpTo(node, free, free.selectorTiers.length - 1) : chosenTier;
        if (tier !== undefined) rechosen = false;
        if (tier === undefined) {
          // a choice kept from an earlier unit no longer holds (a topology domain filled): choose again
          this.#unplan(chosen, node.id);
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
      this.state.allocate(at.node.id, scaled(req.resources, k));
      // actor terms ask whether a node (or domain) holds some matching actor, never how many: one
      // stands for the k placed together
      if (this.#matters(undefined, d.labels)) this.state.addActor(at.node.id, { actorId: `~${++this.#units}`, namespace: req.namespace, labels: d.labels });
      if (this.plannedIds.has(at.node.id)) onNew += k;
      else onExisting += k;
      remaining -= k;
      this.#closeIfFull(at.node);
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
  #place(req: SchedulingRequest): { node: SchedNode; tier: number } | undefined {
    const last = req.selectorTiers.length - 1;
    for (let tier = 0; tier <= last; tier++) {
      for (const attempt of attemptLevels(this.state, req, tier)) {
        const node = req.spread ? pickSpread(this.state, attempt, TRY) : pickHybrid(this.state, attempt, TRY, this.rng);
        if (node) return { node, tier };
      }
      if (tier < last && this.#anyFeasible(req, tier)) return undefined;
    }
    return undefined;
  }

  /** Node-id affinity that a new node cannot satisfy: a hard pin, or a soft pin the scheduler waits on. */
  #launchBlocked(req: SchedulingRequest): { status: 'waiting' | 'infeasible'; reason: string } | undefined {
    const pin = req.nodeId;
    if (!pin) return undefined;
    const node = this.state.nodes.get(pin.nodeId) ?? this.#closedNode(pin.nodeId);
    const alive = node !== undefined && node.state !== 'DEAD';
    if (!pin.soft) {
      return alive
        ? { status: 'waiting', reason: `pinned to node ${pin.nodeId} by hard node affinity: it waits for that node, a new one cannot take it` }
        : { status: 'infeasible', reason: `pinned to node ${pin.nodeId} by hard node affinity, and the cluster has no such node` };
    }
    if (!alive || pin.spillOnUnavailable) return undefined;
    const pinned: SchedulingRequest = { ...req, nodeId: { ...pin, soft: false } };
    for (let tier = 0; tier < pinned.selectorTiers.length; tier++) {
      if (feasible(node!, baseAttempt(pinned, tier), this.whole.nodes.has(node!.id) ? this.whole : this.state, POLICY.filters)) {
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
  #chooseType(req: SchedulingRequest, remaining: number): { t: PreparedType; tier: number } | { stop: { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean } } {
    const candidates: Candidate[] = [];
    const full: string[] = [];
    let waitsForTier = false;
    // a fresh node carries no actors, so whether it passes depends on the node alone — except for
    // actor terms over a topology domain, which read the other nodes of the domain
    const domains = req.actorAffinity.some((e) => e.topologyKey !== undefined);
    const earlier: boolean[] = [];
    const earlierFeasible = (tier: number): boolean => (earlier[tier] ??= this.#anyFeasible(req, tier));
    for (const t of this.types) {
      if (!this.#tolerated(t, req.tolerations)) continue;
      let found: { tier: number; level: number } | undefined;
      if (domains) {
        const node = this.#addNodeOf(t, 'candidate');
        try {
          found = this.#firstPass(node, req, this.state);
        } finally {
          this.state.removeNode(node.id);
        }
      } else {
        const probe = this.#probe(t);
        found = this.#firstPass(probe.node, req, probe.state);
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
      if (this.count.get(t.type.name)! >= t.type.maxWorkers) full.push(t.type.name);
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
    return { stop: this.#never(req) };
  }

  /** Why no type can take the request, and whether the live cluster can (then it only waits). */
  #never(req: SchedulingRequest): { status: 'waiting' | 'infeasible'; reason: string } {
    const why = this.#typesExplain(req);
    for (let tier = 0; tier < req.selectorTiers.length; tier++) {
      if (this.#anyFeasible(req, tier)) {
        return { status: 'waiting', reason: `only nodes already in the cluster can take it (${why})` };
      }
    }
    return { status: 'infeasible', reason: why };
  }

  /** The scheduler's explanation over one idle node of each type, worded for types. */
  #typesExplain(req: SchedulingRequest): string {
    if (this.types.length === 0) return 'no node types are configured';
    this.#ideal ??= this.#idealState();
    const message = explain(this.#ideal, req, POLICY.filters).message;
    // the scheduler explains NoSchedule taints; a PreferNoSchedule one only lowers a node's rank there,
    // but keeps a type out of the autoscaler's choice, so it is named here
    const preferring = this.types
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

  #idealState(): ClusterState {
    const s = new ClusterState();
    for (const t of this.types) {
      s.addNode({ nodeId: t.type.name, name: t.type.name, labels: { ...t.labels, [NODE_ID_LABEL]: `${t.type.name}-new`, [NODE_NAME_LABEL]: `${t.type.name}-new` }, taints: t.taints, total: t.type.resources });
    }
    return s;
  }

  // ---- placement groups ----

  #groups(d: GroupDemand): DemandOutcome {
    const req = d.request;
    const launch: Record<string, number> = {};
    let onExisting = 0;
    let onNew = 0;
    let placed = 0;
    let stop: { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean } | undefined;
    for (; placed < d.count; placed++) {
      let dec = scheduleBundles(this.state, req, { rng: this.rng, policy: POLICY });
      if (dec.status !== 'placed') {
        const added = this.#launchForGroup(req);
        if ('stop' in added) {
          stop = added.stop;
          break;
        }
        for (const t of added.types) launch[t] = (launch[t] ?? 0) + 1;
        dec = scheduleBundles(this.state, req, { rng: this.rng, policy: POLICY });
        if (dec.status !== 'placed') {
          stop = { status: 'waiting', reason: 'the new nodes did not let the group be placed' };
          break;
        }
      }
      const bundles = req.tiers[dec.tier];
      dec.nodeIds.forEach((nodeId, i) => this.state.allocate(nodeId, bundles[i].resources));
      for (const nodeId of new Set(dec.nodeIds)) this.#closeIfFull(this.state.nodes.get(nodeId)!);
      if (dec.nodeIds.some((id) => this.plannedIds.has(id))) onNew++;
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
  #launchForGroup(req: PlacementGroupRequest): { types: string[] } | { stop: { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean } } {
    const eligible = this.types.filter((t) => this.#tolerated(t, req.tolerations));
    const room = (t: PreparedType) => this.count.get(t.type.name)! < t.type.maxWorkers;
    const places = () => scheduleBundles(this.state, req, { rng: this.rng, policy: POLICY }).status === 'placed';
    for (let tier = 0; tier < req.tiers.length; tier++) {
      const only: PlacementGroupRequest = { ...req, tiers: [req.tiers[tier]] };
      if (req.strategy === 'PACK' || req.strategy === 'STRICT_PACK') {
        const fitting = eligible.filter(room).filter((t) => {
          const node = this.#addNodeOf(t, 'candidate');
          try {
            return scheduleBundles(this.state, only, { rng: this.rng, policy: POLICY }).status === 'placed';
          } finally {
            this.state.removeNode(node.id);
          }
        });
        fitting.sort(byPrice);
        if (fitting.length > 0) {
          this.#plan(fitting[0]);
          if (places()) return { types: [fitting[0].type.name] };
          this.#unplan(fitting[0]);
        }
      }
      const added: { t: PreparedType; id: string }[] = [];
      const bundles = req.tiers[tier];
      let ok = false;
      for (let i = 0; i < bundles.length && !ok; i++) {
        const breq = bundleRequest(req, bundles[i]);
        const fitting = eligible.filter(room).filter((t) => {
          const node = this.#addNodeOf(t, 'candidate');
          try {
            return passes(node, baseAttempt(breq, 0), this.state, POLICY.filters);
          } finally {
            this.state.removeNode(node.id);
          }
        });
        if (fitting.length === 0) break;
        fitting.sort(byPrice);
        added.push({ t: fitting[0], id: this.#plan(fitting[0]).id });
        ok = places();
      }
      if (!ok) {
        for (const a of added.reverse()) this.#unplan(a.t, a.id);
        continue;
      }
      for (let i = added.length - 1; i >= 0 && added.length > 1; i--) {
        const a = added[i];
        this.#unplan(a.t, a.id);
        if (places()) added.splice(i, 1);
        else a.id = this.#plan(a.t).id;
      }
      return { types: added.map((a) => a.t.type.name) };
    }
    const full = eligible.filter((t) => !room(t));
    if (full.length > 0 && this.#groupFitsOnTypes(req, full)) {
      return { stop: { status: 'waiting', atMax: true, reason: `node types ${full.map((t) => t.type.name).join(', ')} could take it but are at maxWorkers` } };
    }
    if (this.#groupFitsOnTypes(req, eligible)) return { stop: { status: 'waiting', reason: 'the node types could take it only together with nodes at maxWorkers' } };
    const fails = scheduleBundles(this.#groupIdeal(req, eligible), req, { rng: this.rng, policy: POLICY });
    const why = fails.status === 'placed' ? '' : fails.failure.message.replace(/^0\/(\d+) nodes are available/, (_, n: string) => `0/${n} nodes of the node types are available`);
    return { stop: { status: 'infeasible', reason: `no combination of node types can take it: ${why}`.replace(/\.$/, '') } };
  }

  /** Could the group be placed on idle nodes of these types, as many of each as it has bundles? */
  #groupFitsOnTypes(req: PlacementGroupRequest, types: readonly PreparedType[]): boolean {
    return types.length > 0 && scheduleBundles(this.#groupIdeal(req, types), req, { rng: this.rng, policy: POLICY }).status === 'placed';
  }

  #groupIdeal(req: PlacementGroupRequest, types: readonly PreparedType[]): ClusterState {
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

  // ---- nodes ----

  #tolerated(t: PreparedType, tolerations: Tolerations): boolean {
    return t.taints.every((taint) => tolerates(tolerations, taint));
  }

  /** The first (tier, level) at which the node passes, tiers up to `lastTier`. */
  #passesUpTo(node: SchedNode, req: SchedulingRequest, lastTier: number): number | undefined {
    for (let tier = 0; tier <= lastTier; tier++) {
      for (const attempt of attemptLevels(this.state, req, tier)) if (passes(node, attempt, this.state, TRY.filters)) return tier;
    }
    return undefined;
  }

  /** The first (tier, level) at which the node passes; levels are the round's, so they compare across types. */
  #firstPass(node: SchedNode, req: SchedulingRequest, state: ClusterState): { tier: number; level: number } | undefined {
    for (let tier = 0; tier < req.selectorTiers.length; tier++) {
      let level = 0;
      for (const attempt of attemptLevels(this.state, req, tier)) {
        if (passes(node, attempt, state, TRY.filters)) return { tier, level };
        level++;
      }
    }
    return undefined;
  }

  /** An idle node of the type alone in a state of its own, to try requests on without touching the round's. */
  #probe(t: PreparedType): { state: ClusterState; node: SchedNode } {
    let probe = this.#probes.get(t);
    if (!probe) {
      const state = new ClusterState();
      const id = `probe:${t.type.name}`;
      const node = state.addNode({ nodeId: id, name: id, labels: { ...t.labels, [NODE_ID_LABEL]: id, [NODE_NAME_LABEL]: id }, taints: t.taints, total: t.type.resources });
      this.#probes.set(t, (probe = { state, node }));
    }
    return probe;
  }

  #addNodeOf(t: PreparedType, prefix: string): SchedNode {
    const id = `${prefix}:${t.type.name}:${++this.#seq}`;
    const node = this.state.addNode({ nodeId: id, name: id, labels: { ...t.labels, [NODE_ID_LABEL]: id, [NODE_NAME_LABEL]: id }, taints: t.taints, total: t.type.resources });
    this.#noteAvailable(node);
    return node;
  }

  /** Adds a node this round launches. */
  #plan(t: PreparedType): SchedNode {
    const node = this.#addNodeOf(t, 'new');
    this.plannedIds.add(node.id);
    this.count.set(t.type.name, this.count.get(t.type.name)! + 1);
    this.planned.set(t.type.name, (this.planned.get(t.type.name) ?? 0) + 1);
    return node;
  }

  /** Launches `n` nodes of the type that are full from the start: counted, never added to the state. */
  #planUnseen(t: PreparedType, n: number): void {
    this.count.set(t.type.name, this.count.get(t.type.name)! + n);
    this.planned.set(t.type.name, (this.planned.get(t.type.name) ?? 0) + n);
  }

  /** Does a node of the type holding `fit` units of `need` have room left for any demand's shape? */
  #roomLeft(t: PreparedType, need: ResourceSet, fit: number): boolean {
    const left: Record<string, number> = { ...t.type.resources };
    for (const name in need) left[name] = (left[name] ?? 0) - need[name] * fit;
    return this.#roomFor(left, t.taints);
  }

  /**
   * Could some demand's shape still go on a node with these free resources and taints? A shape counts
   * only where its tolerations cover the node's taints: the CPUs a GPU node has left over are no room
   * for work that does not tolerate its taint.
   */
  #roomFor(available: ResourceSet, taints: readonly Taint[]): boolean {
    return this.shapes.some((shape) => fits(available, shape.resources) && taints.every((t) => tolerates(shape.tolerations, t)));
  }

  /**
   * Could an actor with these labels (and id) change any demand's actor term? Only a label whose key
   * some term names, with a value it names (any value for Exists and the like): an actor no term can
   * see is left out of the round's label index, which every placement would otherwise update.
   */
  #matters(actorId: string | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
    if (this.#terms.size === 0) return false;
    if (actorId !== undefined && this.#hit(ACTOR_ID_LABEL, actorId)) return true;
    for (const key in labels) if (this.#hit(key, labels[key])) return true;
    return false;
  }

  #hit(key: string, value: string): boolean {
    const values = this.#terms.get(key);
    return values !== undefined && (values === 'any' || values.has(value));
  }

  /** Takes back the last planned node of the type (or the one given). */
  #unplan(t: PreparedType, id?: string): void {
    const nodeId = id ?? [...this.plannedIds].reverse().find((n) => n.startsWith(`new:${t.type.name}:`))!;
    this.state.removeNode(nodeId);
    this.plannedIds.delete(nodeId);
    this.count.set(t.type.name, this.count.get(t.type.name)! - 1);
    this.planned.set(t.type.name, this.planned.get(t.type.name)! - 1);
  }

  #noteAvailable(node: SchedNode): void {
    for (const name in node.available) {
      if ((this.maxAvailable[name] ?? 0) < node.available[name]) this.maxAvailable[name] = node.available[name];
    }
  }
}

/** A node as the filters read it, outside any ClusterState (no actors: see Round.whole for those). */
function sketch(n: LiveNode): SchedNode {
  return {
    id: n.nodeId,
    name: n.name ?? n.nodeId,
    state: n.state ?? 'ALIVE',
    labels: n.labels ?? {},
    taints: n.taints ?? [],
    total: n.total,
    available: n.available ?? n.total,
    score: 0,
    actors: new Map(),
  };
}

/** Per label key, the values the demands' actor terms ask about; 'any' for operators that read every value. */
function actorTermsOf(demands: AutoscalingInput['demands']): Map<string, Set<string> | 'any'> {
  const out = new Map<string, Set<string> | 'any'>();
  for (const d of demands) {
    if (d.kind !== 'actor') continue;
    for (const e of d.request.actorAffinity) {
      const seen = out.get(e.key);
      if (seen === 'any') continue;
      if (e.operator === 'IN' || e.operator === 'NOT_IN') {
        const set = seen ?? new Set<string>();
        for (const v of e.values) set.add(v);
        out.set(e.key, set);
      } else out.set(e.key, 'any');
    }
  }
  return out;
}

interface Shape {
  readonly resources: ResourceSet;
  readonly tolerations: Tolerations;
}

function shapesOf(demands: AutoscalingInput['demands']): Shape[] {
  const seen = new Map<string, Shape>();
  const add = (resources: ResourceSet, tolerations: Tolerations) =>
    seen.set(JSON.stringify([Object.entries(resources).sort(), Object.entries(tolerations).sort()]), { resources, tolerations });
  for (const d of demands) {
    if (d.kind === 'actor') add(d.request.resources, d.request.tolerations);
    else for (const tier of d.request.tiers) for (const b of tier) add(b.resources, d.request.tolerations);
  }
  return [...seen.values()];
}

/** Placement groups first (they need whole sets of nodes), then actors; actors that must join running peers last, so peers placed this round count. */
function ordered(demands: AutoscalingInput['demands']): AutoscalingInput['demands'] {
  const rank = (d: AutoscalingInput['demands'][number]): number =>
    d.kind === 'placement_group' ? 0 : d.request.actorAffinity.some((e) => !e.soft && (e.operator === 'IN' || e.operator === 'EXISTS')) ? 2 : 1;
  return [...demands].sort((a, b) => rank(a) - rank(b));
}

function byPrice(a: PreparedType, b: PreparedType): number {
  return (a.type.cost ?? 0) - (b.type.cost ?? 0) || a.size - b.size || (a.type.name < b.type.name ? -1 : 1);
}

/** How many copies of `need` fit in `have`. */
export function unitsIn(have: ResourceSet, need: ResourceSet): number {
  let k = Infinity;
  for (const name in need) k = Math.min(k, Math.floor((have[name] ?? 0) / need[name]));
  return k;
}

function scaled(set: ResourceSet, k: number): ResourceSet {
  const out: Record<string, number> = {};
  for (const name in set) out[name] = set[name] * k;
  return out;
}
