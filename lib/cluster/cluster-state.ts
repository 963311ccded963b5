import { NodeNotFoundError, OrreryError } from '../errors.ts';
import { ACTOR_ID_LABEL } from '../labels/builtin.ts';
import { LabelIndex, NODE_SCOPE, TAINT_SCOPE, actorScope } from '../label-index/label-index.ts';
import { TopologyIndex } from '../label-index/topology-index.ts';
import { fits, subtractResources, type ResourceSet } from '../resources/resource-set.ts';
import type { Taint } from '../scheduling/taints.ts';
import { NodeOrder } from './node-order.ts';
import { addLabelCount, countActorLabels, labelCount, labelCounts, type ActorLabelCounts, type ActorLabelRecord } from './actor-label-counts.ts';
import type { NodeInput, NodeState, PlacedActor, ResourceChanges, SchedNode } from './sched-node.ts';
import { ActorLabelChanges, ChangedResourceNames } from './tracked-changes.ts';

export interface ClusterStateOptions {
  /** Utilization below which a node scores 0, so placements pack onto it (Ray: 0.5). */
  readonly spreadThreshold?: number;
}

/** The resources whose utilization decides a node's score. */
export const CRITICAL_RESOURCES = ['CPU', 'GPU', 'memory'] as const;

/**
 * The scheduler's mutable picture of the cluster: nodes, the label index (node labels, taints,
 * actor labels), the hybrid ordering and the spread cursor. Every change goes through a method
 * here, so the derived structures can never disagree with the nodes.
 */
export class ClusterState {
  readonly nodes = new Map<string, SchedNode>();
  readonly index = new LabelIndex();
  readonly order = new NodeOrder<SchedNode>();
  readonly spreadThreshold: number;
  /** For each node label key=value, its nodes in the same (score, id) order. */
  readonly #labelOrders = new Map<string, NodeOrder<SchedNode>>();
  /** The label orders each node is in, so a rescore moves it without building keys. */
  readonly #ordersOf = new WeakMap<SchedNode, NodeOrder<SchedNode>[]>();
  /** Node ids in sorted order, for SPREAD's round robin. */
  readonly ids: string[] = [];
  /** The node id the last SPREAD decision chose; the next one starts after it. */
  spreadCursor = '';
  #preferTaints = 0;
  /** preferCounts[c]: how many nodes carry c PreferNoSchedule taints (c ≥ 1). */
  readonly #preferCounts: number[] = [];
  readonly #topology = new TopologyIndex();
  /** Per node, the resource names changed since `takeResourceChanges` ('all': the sets were replaced); only while tracking. */
  #resourceChanges: ChangedResourceNames | undefined;
  /** Per node, the actor-label count changes since `takeActorLabelChanges`; only while tracking. */
  #labelChanges: ActorLabelChanges | undefined;

  constructor(opts: ClusterStateOptions = {}) {
    this.spreadThreshold = opts.spreadThreshold ?? 0.5;
  }

  /** Are there nodes with PreferNoSchedule taints? (When not, that preference tier is skipped.) */
  get hasPreferNoScheduleTaints(): boolean {
    return this.#preferTaints > 0;
  }

  /** The most PreferNoSchedule taints any one node carries (0 when none). */
  get maxPreferNoScheduleTaints(): number {
    for (let c = this.#preferCounts.length - 1; c > 0; c--) if (this.#preferCounts[c] > 0) return c;
    return 0;
  }

  /**
   * Actor labels per domain of the node label `topologyKey` (see TopologyIndex): tracked from the
   * first call, O(actors) then, and kept up to date from then on.
   */
  topology(topologyKey: string): LabelIndex {
    return this.#topology.track(topologyKey, this.nodes.values());
  }

  node(id: string): SchedNode | undefined {
    return this.nodes.get(id);
  }

  addNode(input: NodeInput): SchedNode {
    if (this.nodes.has(input.nodeId)) {
      throw new OrreryError('NODE_EXISTS', `node ${JSON.stringify(input.nodeId)} is already registered`, { detail: { nodeId: input.nodeId } });
    }
    const node: SchedNode = {
      id: input.nodeId,
      name: input.name ?? input.nodeId,
      state: input.state ?? 'ALIVE',
      labels: { ...input.labels },
      taints: [...(input.taints ?? [])],
      total: { ...input.total },
      available: { ...(input.available ?? input.total) },
      score: 0,
      actors: new Map(),
    };
    node.score = this.scoreOf(node);
    this.nodes.set(node.id, node);
    this.#resourceChanges?.set(node.id, 'all');
    this.#labelChanges?.delete(node.id);
    this.index.add(NODE_SCOPE, node.id, node.labels);
    this.#indexTaints(node, 1);
    this.order.insert(node);
    this.#orderLabels(node, 1);
    this.ids.splice(lowerBound(this.ids, node.id), 0, node.id);
    return node;
  }

  removeNode(id: string): void {
    const node = this.#get(id);
    this.index.remove(NODE_SCOPE, id, node.labels);
    this.#indexTaints(node, -1);
    for (const actor of node.actors.values()) this.index.remove(actorScope(actor.namespace), id, actor.labels);
    for (const [namespace, key, value, n] of labelCounts(node.actorLabels ?? new Map())) this.index.adjust(actorScope(namespace), id, key, value, -n);
    this.#topology.node(node, -1);
    this.order.remove(node);
    this.#orderLabels(node, -1);
    this.ids.splice(lowerBound(this.ids, id), 1);
    this.nodes.delete(id);
    this.#resourceChanges?.delete(id);
    this.#labelChanges?.delete(id);
  }

  setNodeState(id: string, state: NodeState): void {
    this.#get(id).state = state;
  }

  setNodeLabels(id: string, labels: Readonly<Record<string, string>>): void {
    const node = this.#get(id);
    this.index.remove(NODE_SCOPE, id, node.labels);
    this.#orderLabels(node, -1);
    this.#topology.node(node, -1);
    node.labels = { ...labels };
    this.index.add(NODE_SCOPE, id, node.labels);
    this.#orderLabels(node, 1);
    this.#topology.node(node, 1);
  }

  setNodeTaints(id: string, taints: readonly Taint[]): void {
    const node = this.#get(id);
    this.#indexTaints(node, -1);
    node.taints = [...taints];
    this.#indexTaints(node, 1);
  }

  /*
   * allocate, release, growTotal and shrinkTotal change the node's resource sets in place, in time
   * proportional to the resources named, not to the node's: a node holding the bundles of a thousand
   * placement groups has thousands of resource names, and copying them on every placement made
   * group creation quadratic (bench:pg). Readers that keep a node's sets copy them (views, infos).
   */

  /** Takes resources from the node's available pool; throws when they are not there. */
  allocate(id: string, resources: ResourceSet): void {
    const node = this.#get(id);
    if (!fits(node.available, resources)) subtractResources(node.available, resources); // throws the precise error
    const available = node.available as Record<string, number>;
    for (const name in resources) available[name] = (available[name] ?? 0) - resources[name];
    this.#resourceChanges?.note(id, resources);
    this.#rescore(node);
  }

  /** Returns resources to the node's pool; throws when that would exceed its total. */
  release(id: string, resources: ResourceSet): void {
    const node = this.#get(id);
    for (const name in resources) {
      if ((node.available[name] ?? 0) + resources[name] > (node.total[name] ?? 0)) {
        throw new OrreryError('RESOURCE_OVERFLOW', `releasing more than node ${JSON.stringify(id)} holds`, { detail: { nodeId: id } });
      }
    }
    const available = node.available as Record<string, number>;
    for (const name in resources) available[name] = (available[name] ?? 0) + resources[name];
    this.#resourceChanges?.note(id, resources);
    this.#rescore(node);
  }

  /** Adds resources to the node's total and available pool (a committed placement-group bundle). */
  growTotal(id: string, extra: ResourceSet): void {
    const node = this.#get(id);
    const total = node.total as Record<string, number>;
    const available = node.available as Record<string, number>;
    for (const name in extra) {
      total[name] = (total[name] ?? 0) + extra[name];
      available[name] = (available[name] ?? 0) + extra[name];
    }
    this.#resourceChanges?.note(id, extra);
    this.#rescore(node);
  }

  /**
   * Takes resources out of the node's total (a bundle given back); what is available shrinks with it,
   * never below zero, and a name whose total reaches zero is gone from both.
   */
  shrinkTotal(id: string, extra: ResourceSet): void {
    const node = this.#get(id);
    const total = node.total as Record<string, number>;
    const available = node.available as Record<string, number>;
    for (const name in extra) {
      const left = (total[name] ?? 0) - extra[name];
      if (left > 0) {
        total[name] = left;
        available[name] = Math.max(0, (available[name] ?? 0) - extra[name]);
      } else {
        delete total[name];
        delete available[name];
      }
    }
    this.#resourceChanges?.note(id, extra);
    this.#rescore(node);
  }

  /**
   * Changes only the names given, in place: `removed` names leave both sets, then each name of
   * `total` and of `available` takes its new value. Time follows the names given, not the node's (a
   * cluster view delta or a load report touching a few of a node's thousands of bundle resources).
   */
  setResources(id: string, changes: ResourceChanges): void {
    const node = this.#get(id);
    const total = node.total as Record<string, number>;
    const available = node.available as Record<string, number>;
    for (const name of changes.removed ?? []) {
      delete total[name];
      delete available[name];
    }
    for (const name in changes.total) total[name] = changes.total[name];
    for (const name in changes.available) available[name] = changes.available[name];
    const changed = this.#resourceChanges?.namesOf(id);
    if (changed) {
      for (const name of changes.removed ?? []) changed.add(name);
      for (const name in changes.total) changed.add(name);
      for (const name in changes.available) changed.add(name);
    }
    this.#rescore(node);
  }

  /** Changes a node's total (e.g. when placement-group bundles add bundle resources). */
  setTotal(id: string, total: ResourceSet, available: ResourceSet): void {
    const node = this.#get(id);
    node.total = { ...total };
    node.available = { ...available };
    this.#resourceChanges?.set(id, 'all');
    this.#rescore(node);
  }

  /** Records an actor on a node and indexes its labels (plus its actor-id label). */
  addActor(nodeId: string, actor: { actorId: string; namespace: string; labels?: Readonly<Record<string, string>> }): void {
    const node = this.#get(nodeId);
    if (node.actors.has(actor.actorId)) return;
    const placed: PlacedActor = {
      actorId: actor.actorId,
      namespace: actor.namespace,
      labels: { ...actor.labels, [ACTOR_ID_LABEL]: actor.actorId },
    };
    node.actors.set(actor.actorId, placed);
    this.index.add(actorScope(actor.namespace), nodeId, placed.labels);
    this.#topology.actor(node, placed, 1);
    this.#labelChanges?.note(nodeId, placed, 1);
  }

  removeActor(nodeId: string, actorId: string): void {
    const node = this.#get(nodeId);
    const placed = node.actors.get(actorId);
    if (!placed) return;
    node.actors.delete(actorId);
    this.index.remove(actorScope(placed.namespace), nodeId, placed.labels);
    this.#topology.actor(node, placed, -1);
    this.#labelChanges?.note(nodeId, placed, -1);
  }

  /**
   * Moves the node's actor-label counts (those it holds without actors: a raylet's view) by signed
   * `changes`, namespace → key → value → change. All or nothing: false, with nothing changed, when
   * a count would go below zero (the changes do not fit what this state holds).
   */
  changeActorLabels(nodeId: string, changes: ActorLabelRecord): boolean {
    const node = this.#get(nodeId);
    for (const [namespace, key, value, by] of labelCounts(changes)) {
      if (labelCount(node.actorLabels, namespace, key, value) + by < 0) return false;
    }
    const counts = (node.actorLabels ??= new Map());
    for (const entry of labelCounts(changes)) {
      const [namespace, key, value, by] = entry;
      addLabelCount(counts, entry);
      this.index.adjust(actorScope(namespace), nodeId, key, value, by);
      this.#topology.count(node, entry);
    }
    return true;
  }

  /** Replaces the node's actor-label counts whole (a snapshot; a node's first delta). */
  setActorLabels(nodeId: string, whole: ActorLabelRecord): void {
    const node = this.#get(nodeId);
    for (const [namespace, key, value, n] of labelCounts(node.actorLabels ?? new Map())) {
      this.index.adjust(actorScope(namespace), nodeId, key, value, -n);
      this.#topology.count(node, [namespace, key, value, -n]);
    }
    node.actorLabels = new Map();
    this.changeActorLabels(nodeId, whole);
  }

  /** Every actor-label count of the node: its placed actors' labels and the counts it holds without actors. */
  actorLabelCounts(nodeId: string): ActorLabelCounts {
    const node = this.#get(nodeId);
    const counts = countActorLabels(node.actors.values());
    for (const entry of labelCounts(node.actorLabels ?? new Map())) addLabelCount(counts, entry);
    return counts;
  }

  /**
   * From now on, remembers per node how its actor-label counts changed (placements and removals),
   * so the GCS's view broadcaster sends a period's changes as counts (`takeActorLabelChanges`).
   */
  trackActorLabelChanges(): void {
    this.#labelChanges ??= new ActorLabelChanges();
  }

  /** The node's actor-label count changes since the last call (zeros included), and starts anew; undefined when none. */
  takeActorLabelChanges(id: string): ActorLabelCounts | undefined {
    const changed = this.#labelChanges?.get(id);
    this.#labelChanges?.delete(id);
    return changed;
  }

  /**
   * From now on, remembers per node which resource names change (in total or available), so a
   * reader that keeps its own copy of the sets — the GCS's view broadcaster — can bring it up to date
   * by those names instead of comparing every name (`takeResourceChanges`).
   */
  trackResourceChanges(): void {
    this.#resourceChanges ??= new ChangedResourceNames();
  }

  /**
   * The resource names of node `id` that changed since the last call for it (or since tracking
   * began), and starts a new list: 'all' when its sets were replaced whole (added, `setTotal`) or
   * tracking is off, undefined when none changed. A name may be listed and still hold its old value.
   */
  takeResourceChanges(id: string): ReadonlySet<string> | 'all' | undefined {
    if (!this.#resourceChanges) return 'all';
    const changed = this.#resourceChanges.get(id);
    this.#resourceChanges.delete(id);
    return changed;
  }

  /** Critical utilization (max over CPU, GPU, memory of used/total), or 0 below the threshold. */
  scoreOf(node: Pick<SchedNode, 'total' | 'available'>): number {
    let util = 0;
    for (const r of CRITICAL_RESOURCES) {
      const total = node.total[r] ?? 0;
      if (total > 0) util = Math.max(util, (total - (node.available[r] ?? 0)) / total);
    }
    return util < this.spreadThreshold ? 0 : util;
  }

  /** The nodes labelled key=value in (score, id) order, or undefined when there are none. */
  labelOrder(key: string, value: string): NodeOrder<SchedNode> | undefined {
    return this.#labelOrders.get(key + '\0' + value);
  }

  #rescore(node: SchedNode): void {
    const next = this.scoreOf(node);
    if (next === node.score) return;
    const orders = this.#ordersOf.get(node) ?? [];
    this.order.remove(node);
    for (const o of orders) o.remove(node);
    node.score = next;
    this.order.insert(node);
    for (const o of orders) o.insert(node);
  }

  #orderLabels(node: SchedNode, sign: 1 | -1): void {
    const mine: NodeOrder<SchedNode>[] = [];
    for (const key in node.labels) {
      const k = key + '\0' + node.labels[key];
      let order = this.#labelOrders.get(k);
      if (sign > 0) {
        if (!order) this.#labelOrders.set(k, (order = new NodeOrder()));
        order.insert(node);
        mine.push(order);
      } else if (order) {
        order.remove(node);
        if (order.size === 0) this.#labelOrders.delete(k);
      }
    }
    this.#ordersOf.set(node, mine);
  }

  #indexTaints(node: SchedNode, sign: 1 | -1): void {
    const record: Record<string, string> = {};
    let prefer = 0;
    for (const t of node.taints) {
      record[t.key] = t.value;
      if (t.effect === 'PreferNoSchedule') prefer++;
    }
    this.#preferTaints += sign * prefer;
    if (prefer > 0) this.#preferCounts[prefer] = (this.#preferCounts[prefer] ?? 0) + sign;
    if (sign > 0) this.index.add(TAINT_SCOPE, node.id, record);
    else this.index.remove(TAINT_SCOPE, node.id, record);
  }

  #get(id: string): SchedNode {
    const node = this.nodes.get(id);
    if (!node) throw new NodeNotFoundError(id);
    return node;
  }
}

function lowerBound(sorted: readonly string[], id: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
