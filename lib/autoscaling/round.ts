import { ClusterState } from '../cluster/cluster-state.ts';
import type { SchedNode } from '../cluster/sched-node.ts';
import { ACTOR_ID_LABEL, NODE_GROUP_LABEL, NODE_ID_LABEL, NODE_NAME_LABEL } from '../labels/builtin.ts';
import { seededRng, type Rng } from '../random.ts';
import { fits, type ResourceSet } from '../resources/resource-set.ts';
import { attemptLevels, baseAttempt } from '../scheduling/attempts.ts';
import type { Rejection } from '../scheduling/filters/filter.ts';
import { resourcesFit } from '../scheduling/filters/resources.ts';
import { DEFAULT_POLICY, feasible, passes, type Policy } from '../scheduling/policy.ts';
import type { SchedulingRequest } from '../scheduling/request.types.ts';
import { anyFeasible } from '../scheduling/schedule.ts';
import { rareResourceTaints, tolerates, type Taint, type Tolerations } from '../scheduling/taints.ts';
import type { AutoscalingInput, LiveNode, NodeType } from './types.ts';

export const POLICY = DEFAULT_POLICY;

/**
 * The scheduler's filters for trying nodes, with the resource check first and without building its
 * explanation: most nodes a round tries are full, and passes() needs only the verdict. Feasibility
 * and explanations keep the scheduler's own policy.
 */
export const TRY: Policy = {
  ...DEFAULT_POLICY,
  filters: [
    { name: 'fits', kind: 'resources', check: (node, attempt) => (fits(node.available, attempt.req.resources) ? undefined : BUSY) },
    ...DEFAULT_POLICY.filters.filter((f) => f !== resourcesFit),
  ],
};


export interface PreparedType {
  readonly type: NodeType;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly size: number;
}

const BUSY: Rejection = { code: 'unschedulable', reason: 'had too few resources available' };

export type Stop = { status: 'waiting' | 'infeasible'; reason: string; atMax?: boolean };

export interface Candidate {
  readonly t: PreparedType;
  readonly tier: number;
  readonly level: number;
  /** Units of the demand one node of the type holds (Infinity for a demand that asks for nothing). */
  readonly fit: number;
}

/**
 * The state of one decision round (decide.ts): the scheduler's ClusterState with the live nodes that
 * have room, the launches in flight and the nodes the round plans; counts per type; and what the
 * placement of actors (actors.ts) and placement groups (groups.ts) share — trying nodes of a type,
 * planning and unplanning launches, and judging full nodes. Internal to lib/autoscaling.
 */
export class Round {
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
  seq = 0;
  units = 0;
  ideal: ClusterState | undefined;
  #whole: ClusterState | undefined;
  /** Nodes out of the round's state (nothing fits on them now), for feasibility questions. */
  readonly closed: SchedNode[] = [];
  /** Live nodes nothing fits on that hold actors some demand's term can see: `whole` holds them. */
  readonly withActors: LiveNode[] = [];
  readonly probes = new Map<PreparedType, { state: ClusterState; node: SchedNode }>();
  /** Per label key, the values some demand's actor term asks about ('any': every value matters). */
  readonly terms: ReadonlyMap<string, ReadonlySet<string> | 'any'>;

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
    this.terms = actorTermsOf(input.demands);
    for (const t of this.types) this.count.set(t.type.name, 0);
    for (const n of input.nodes) {
      if (n.state === 'DEAD') continue;
      const group = n.labels?.[NODE_GROUP_LABEL];
      if (group !== undefined && this.count.has(group)) this.count.set(group, this.count.get(group)! + 1);
      // a node no demand fits on (full, or draining) only matters to explanations: see `whole`
      if (n.state === 'DRAINING' || !this.roomFor(n.available ?? n.total, n.taints ?? [])) {
        if ((n.actors ?? []).some((a) => this.matters(a.actorId, a.labels))) this.withActors.push(n);
        else this.closed.push(sketch(n));
        continue;
      }
      const node = this.state.addNode(n);
      this.noteAvailable(node);
      for (const a of n.actors ?? []) if (this.matters(a.actorId, a.labels)) this.state.addActor(node.id, a);
    }
    for (const t of this.types) {
      const inFlight = input.launching?.[t.type.name] ?? 0;
      for (let i = 0; i < inFlight; i++) this.addNodeOf(t, 'launching');
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
      for (const n of this.withActors) {
        this.#whole.addNode(n);
        for (const a of n.actors ?? []) if (this.matters(a.actorId, a.labels)) this.#whole.addActor(n.nodeId, a);
      }
    }
    return this.#whole;
  }

  /** Could a node of the cluster, or one planned, take the tier once it has room? */
  anyFeasible(req: SchedulingRequest, tier: number): boolean {
    if (anyFeasible(this.state, req, tier, POLICY)) return true;
    // only actor terms read more than the node itself: closed nodes holding actors some term can see
    // are judged in a state of their own (with those actors), the others as they are
    if (req.actorAffinity.length > 0 && this.withActors.length > 0 && anyFeasible(this.whole, req, tier, POLICY)) return true;
    const attempt = baseAttempt(req, tier);
    return this.closed.some((node) => feasible(node, attempt, this.state, POLICY.filters));
  }

  /** A live or planned node out of the round's state, by id. */
  closedNode(id: string): SchedNode | undefined {
    if (this.withActors.some((n) => n.nodeId === id)) return this.whole.nodes.get(id);
    return this.closed.find((n) => n.id === id);
  }

  /** Takes a node out of the round's state once no demand's shape fits on it any more. */
  closeIfFull(node: SchedNode): void {
    if (this.roomFor(node.available, node.taints)) return;
    this.state.removeNode(node.id);
    this.closed.push(node);
  }

  // ---- actors ----

  // ---- placement groups ----

  // ---- nodes ----

  tolerated(t: PreparedType, tolerations: Tolerations): boolean {
    return t.taints.every((taint) => tolerates(tolerations, taint));
  }

  /** The first (tier, level) at which the node passes, tiers up to `lastTier`. */
  passesUpTo(node: SchedNode, req: SchedulingRequest, lastTier: number): number | undefined {
    for (let tier = 0; tier <= lastTier; tier++) {
      for (const attempt of attemptLevels(this.state, req, tier)) if (passes(node, attempt, this.state, TRY.filters)) return tier;
    }
    return undefined;
  }

  /** The first (tier, level) at which the node passes; levels are the round's, so they compare across types. */
  firstPass(node: SchedNode, req: SchedulingRequest, state: ClusterState): { tier: number; level: number } | undefined {
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
  probe(t: PreparedType): { state: ClusterState; node: SchedNode } {
    let probe = this.probes.get(t);
    if (!probe) {
      const state = new ClusterState();
      const id = `probe:${t.type.name}`;
      const node = state.addNode({ nodeId: id, name: id, labels: { ...t.labels, [NODE_ID_LABEL]: id, [NODE_NAME_LABEL]: id }, taints: t.taints, total: t.type.resources });
      this.probes.set(t, (probe = { state, node }));
    }
    return probe;
  }

  addNodeOf(t: PreparedType, prefix: string): SchedNode {
    const id = `${prefix}:${t.type.name}:${++this.seq}`;
    const node = this.state.addNode({ nodeId: id, name: id, labels: { ...t.labels, [NODE_ID_LABEL]: id, [NODE_NAME_LABEL]: id }, taints: t.taints, total: t.type.resources });
    this.noteAvailable(node);
    return node;
  }

  /** Adds a node this round launches. */
  plan(t: PreparedType): SchedNode {
    const node = this.addNodeOf(t, 'new');
    this.plannedIds.add(node.id);
    this.count.set(t.type.name, this.count.get(t.type.name)! + 1);
    this.planned.set(t.type.name, (this.planned.get(t.type.name) ?? 0) + 1);
    return node;
  }

  /** Launches `n` nodes of the type that are full from the start: counted, never added to the state. */
  planUnseen(t: PreparedType, n: number): void {
    this.count.set(t.type.name, this.count.get(t.type.name)! + n);
    this.planned.set(t.type.name, (this.planned.get(t.type.name) ?? 0) + n);
  }

  /** Does a node of the type holding `fit` units of `need` have room left for any demand's shape? */
  roomLeft(t: PreparedType, need: ResourceSet, fit: number): boolean {
    const left: Record<string, number> = { ...t.type.resources };
    for (const name in need) left[name] = (left[name] ?? 0) - need[name] * fit;
    return this.roomFor(left, t.taints);
  }

  /**
   * Could some demand's shape still go on a node with these free resources and taints? A shape counts
   * only where its tolerations cover the node's taints: the CPUs a GPU node has left over are no room
   * for work that does not tolerate its taint.
   */
  roomFor(available: ResourceSet, taints: readonly Taint[]): boolean {
    return this.shapes.some((shape) => fits(available, shape.resources) && taints.every((t) => tolerates(shape.tolerations, t)));
  }

  /**
   * Could an actor with these labels (and id) change any demand's actor term? Only a label whose key
   * some term names, with a value it names (any value for Exists and the like): an actor no term can
   * see is left out of the round's label index, which every placement would otherwise update.
   */
  matters(actorId: string | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
    if (this.terms.size === 0) return false;
    if (actorId !== undefined && this.hit(ACTOR_ID_LABEL, actorId)) return true;
    for (const key in labels) if (this.hit(key, labels[key])) return true;
    return false;
  }

  hit(key: string, value: string): boolean {
    const values = this.terms.get(key);
    return values !== undefined && (values === 'any' || values.has(value));
  }

  /** Takes back the last planned node of the type (or the one given). */
  unplan(t: PreparedType, id?: string): void {
    const nodeId = id ?? [...this.plannedIds].reverse().find((n) => n.startsWith(`new:${t.type.name}:`))!;
    this.state.removeNode(nodeId);
    this.plannedIds.delete(nodeId);
    this.count.set(t.type.name, this.count.get(t.type.name)! - 1);
    this.planned.set(t.type.name, this.planned.get(t.type.name)! - 1);
  }

  noteAvailable(node: SchedNode): void {
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

export function byPrice(a: PreparedType, b: PreparedType): number {
  return (a.type.cost ?? 0) - (b.type.cost ?? 0) || a.size - b.size || (a.type.name < b.type.name ? -1 : 1);
}

/** How many copies of `need` fit in `have`. */
export function unitsIn(have: ResourceSet, need: ResourceSet): number {
  let k = Infinity;
  for (const name in need) k = Math.min(k, Math.floor((have[name] ?? 0) / need[name]));
  return k;
}

export function scaled(set: ResourceSet, k: number): ResourceSet {
  const out: Record<string, number> = {};
  for (const name in set) out[name] = set[name] * k;
  return out;
}
