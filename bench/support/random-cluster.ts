/**
 * Seeded random clusters and scheduling requests, shared by the scheduling property spec
 * (spec/lib/scheduling/property.spec.ts) and the scheduler bench (bench/scheduler.ts). Everything
 * is drawn from the Rng passed in, so a seed reproduces a cluster, its history and its requests.
 *
 * A node: 8–64 CPUs, 2–8 GiB of memory per CPU, GPUs on some; labels region (4), zone (3 per
 * region), instance-type (6), cores (its CPU count, for GT/LT), gpu-type on GPU nodes, spot on
 * some, and the built-in orrery.io/node-id. A share of nodes carry taints (NoSchedule, NoExecute,
 * PreferNoSchedule). Actors are placed with labels app (20 values), tier and shard, mostly in
 * namespace "default", some in "research"; their resources are allocated.
 */
import {
  ClusterState, DoesNotExist, Exists, Gt, In, Lt, NODE_ID_LABEL, NotIn, actorAffinity, affinity, antiAffinity,
  compilePlacementGroup, compileRequest, labelDoesNotExist, labelExists, labelGt, labelIn, labelLt, labelNotIn, nodeAffinity,
  nodeIdAffinity, nodeLabelStrategy, parseResources, parseTaints, randomInt, rareResourceTaints, validateExpression,
  ANY_TAINT, anyOf, preferred, tolerate, withTopologyKey, type Toleration,
  type Condition, type LabelMatchExpression, type NodeState, type PlacementGroupOptions, type PlacementGroupRequest,
  type PlacementOptions, type ResourceSet, type Rng,
  type SchedNode, type SchedulingRequest,
} from '../../lib/index.ts';

export const REGIONS = ['us-east', 'us-west', 'eu-west', 'ap-south'];
export const INSTANCE_TYPES = ['m5.2xlarge', 'm5.8xlarge', 'c5.4xlarge', 'c5.12xlarge', 'r5.4xlarge', 'g5.12xlarge'];
export const GPU_TYPES = ['A100', 'H100', 'L4', 'T4'];
export const APPS = Array.from({ length: 20 }, (_, i) => `app-${String(i).padStart(2, '0')}`);
export const TIERS = ['frontend', 'backend', 'batch'];
export const CPU_SIZES = [8, 16, 32, 48, 64];
const GiB = 2 ** 30;
const TAINT_SETS: Record<string, string>[] = [
  { dedicated: 'ml' },
  { dedicated: 'infra' },
  { 'spot-reclaim': 'soon:NoExecute' },
  { maintenance: 'true:PreferNoSchedule' },
  { dedicated: 'ml', maintenance: 'true:PreferNoSchedule' },
  // several PreferNoSchedule taints, ranked by how many are untolerated; NoSchedule and NoExecute on one key family
  { maintenance: 'true:PreferNoSchedule', pressure: 'high:PreferNoSchedule' },
  { dedicated: 'ml:NoExecute', pressure: 'high:PreferNoSchedule' },
];

export const pick = <T>(rng: Rng, list: readonly T[]): T => list[randomInt(rng, list.length)];
export const chance = (rng: Rng, p: number): boolean => rng() < p;
export const zonesOf = (region: string): string[] => ['a', 'b', 'c'].map((z) => `${region}-${z}`);

export interface ClusterShape {
  readonly nodes: number;
  /** Share of nodes with taints; default a random value in [0.1, 0.3]. */
  readonly taintedFraction?: number;
  /** Share of nodes with GPUs; default 0.15. */
  readonly gpuFraction?: number;
  /** Share of the cluster's CPU the initial actors take; default 0.45. */
  readonly load?: number;
  /** Spec mode: some nodes DRAINING (~10%) or DEAD (~5%). */
  readonly unhealthy?: boolean;
  /** Rare resources (e.g. ['GPU']): their nodes get the rare-resource taint. */
  readonly rareResources?: readonly string[];
}

export interface Allocation {
  readonly nodeId: string;
  readonly resources: ResourceSet;
}

/** Something committed to the cluster: resources on one or more nodes, and maybe an actor. */
export interface Placement {
  readonly allocations: readonly Allocation[];
  /** The node objects the allocations went to: a node removed and added again is a new one. */
  readonly nodes: readonly SchedNode[];
  readonly actor?: { readonly nodeId: string; readonly actorId: string; readonly namespace: string };
  released: boolean;
}

export interface LiveActor {
  readonly actorId: string;
  readonly namespace: string;
  readonly nodeId: string;
}

/**
 * A ClusterState plus the book-keeping a steady-state workload needs: a FIFO of live placements to
 * release, the live actors (for affinity targets), and CPU utilization.
 */
export class RandomCluster {
  readonly state = new ClusterState();
  readonly taintedFraction: number;
  readonly #fifo: Placement[] = [];
  #head = 0;
  readonly #actors: LiveActor[] = [];
  readonly #actorAt = new Map<string, { index: number; placement: Placement }>();
  #seq = 0;
  #totalCpu = 0;
  #usedCpu = 0;

  constructor(readonly rng: Rng, readonly shape: ClusterShape) {
    this.taintedFraction = shape.taintedFraction ?? 0.1 + 0.2 * rng();
    for (let i = 0; i < shape.nodes; i++) this.addRandomNode();
    const load = shape.load ?? 0.45;
    for (let tries = 0; this.utilization < load && tries < shape.nodes * 200; tries++) {
      const node = this.randomNode();
      if (node) this.commit([{ nodeId: node.id, resources: randomActorResources(rng) }], { namespace: this.randomNamespace() });
    }
    if (shape.unhealthy) {
      for (const node of [...this.state.nodes.values()]) {
        const r = rng();
        if (r < 0.05) this.state.setNodeState(node.id, 'DEAD');
        else if (r < 0.15) this.state.setNodeState(node.id, 'DRAINING');
      }
    }
  }

  /** Used CPU ÷ total CPU over the nodes in the cluster. */
  get utilization(): number {
    return this.#totalCpu === 0 ? 1 : this.#usedCpu / this.#totalCpu;
  }

  get liveActors(): readonly LiveActor[] {
    return this.#actors;
  }

  get livePlacements(): number {
    return this.#fifo.length - this.#head;
  }

  nextId(prefix: string): string {
    return `${prefix}-${(this.#seq++).toString(36).padStart(4, '0')}`;
  }

  randomNamespace(): string {
    return chance(this.rng, 0.15) ? 'research' : 'default';
  }

  randomNode(): SchedNode | undefined {
    const ids = this.state.ids;
    return ids.length ? this.state.nodes.get(pick(this.rng, ids)) : undefined;
  }

  randomActor(): LiveActor | undefined {
    return this.#actors.length ? pick(this.rng, this.#actors) : undefined;
  }

  /** Adds a random node, under `id` when given (a node that comes back), else a fresh random id. */
  addRandomNode(nodeState: NodeState = 'ALIVE', id?: string): SchedNode {
    const rng = this.rng;
    while (id === undefined || this.state.nodes.has(id)) id = `node-${randomInt(rng, 2 ** 32).toString(16).padStart(8, '0')}`;
    const cpus = pick(rng, CPU_SIZES);
    const gpus = chance(rng, this.shape.gpuFraction ?? 0.15) ? pick(rng, [1, 2, 4, 8]) : 0;
    const total = parseResources({ CPU: cpus, memory: cpus * pick(rng, [2, 4, 8]) * GiB, ...(gpus ? { GPU: gpus } : {}) });
    const taints = chance(rng, this.taintedFraction) ? parseTaints(pick(rng, TAINT_SETS)) : [];
    taints.push(...rareResourceTaints(total, this.shape.rareResources ?? []));
    this.#totalCpu += total.CPU;
    return this.state.addNode({ nodeId: id, state: nodeState, labels: randomNodeLabels(rng, id, { cpus, gpus }), taints, total });
  }

  removeNode(id: string): void {
    const node = this.state.nodes.get(id)!;
    this.#totalCpu -= node.total.CPU ?? 0;
    this.#usedCpu -= (node.total.CPU ?? 0) - (node.available.CPU ?? 0);
    for (const actorId of node.actors.keys()) this.#forgetActor(actorId);
    this.state.removeNode(id);
  }

  /** Allocates every allocation (and records the actor); false, changing nothing, if one does not fit. */
  commit(allocations: readonly Allocation[], actor?: { namespace: string; labels?: Record<string, string>; actorId?: string }): Placement | undefined {
    const done: Allocation[] = [];
    for (const a of allocations) {
      try {
        this.state.allocate(a.nodeId, a.resources);
      } catch {
        for (const d of done) this.state.release(d.nodeId, d.resources);
        return undefined;
      }
      done.push(a);
    }
    for (const a of allocations) this.#usedCpu += a.resources.CPU ?? 0;
    let placed: Placement['actor'];
    if (actor) {
      const nodeId = allocations[0].nodeId;
      const actorId = actor.actorId ?? this.nextId('actor');
      this.state.addActor(nodeId, { actorId, namespace: actor.namespace, labels: actor.labels ?? randomActorLabels(this.rng) });
      placed = { nodeId, actorId, namespace: actor.namespace };
    }
    const nodes = allocations.map((a) => this.state.nodes.get(a.nodeId)!);
    const placement: Placement = { allocations, nodes, actor: placed, released: false };
    this.#fifo.push(placement);
    if (placed) {
      this.#actorAt.set(placed.actorId, { index: this.#actors.length, placement });
      this.#actors.push({ actorId: placed.actorId, namespace: placed.namespace, nodeId: placed.nodeId });
    }
    return placement;
  }

  /** Frees a placement's resources and removes its actor (skipping nodes that are gone). */
  release(p: Placement): void {
    if (p.released) return;
    p.released = true;
    const present = (i: number) => this.state.nodes.get(p.allocations[i].nodeId) === p.nodes[i];
    p.allocations.forEach((a, i) => {
      if (!present(i)) return;
      this.state.release(a.nodeId, a.resources);
      this.#usedCpu -= a.resources.CPU ?? 0;
    });
    if (p.actor && present(0)) {
      this.state.removeActor(p.actor.nodeId, p.actor.actorId);
      this.#forgetActor(p.actor.actorId);
    }
  }

  releaseOldest(): boolean {
    while (this.#head < this.#fifo.length) {
      const p = this.#fifo[this.#head++];
      if (this.#head > 4096 && this.#head * 2 > this.#fifo.length) {
        this.#fifo.splice(0, this.#head);
        this.#head = 0;
      }
      if (!p.released) {
        this.release(p);
        return true;
      }
    }
    return false;
  }

  /** Releases a random live actor's placement (its resources and the actor). */
  releaseRandomActor(): void {
    const actor = this.randomActor();
    if (actor) this.release(this.#actorAt.get(actor.actorId)!.placement);
  }

  /** Releases the oldest placements until CPU utilization is at most `target`. */
  settle(target: number): void {
    while (this.utilization > target && this.releaseOldest());
  }

  #forgetActor(actorId: string): void {
    const at = this.#actorAt.get(actorId);
    if (!at) return;
    const last = this.#actors.pop()!;
    if (at.index < this.#actors.length) {
      this.#actors[at.index] = last;
      this.#actorAt.get(last.actorId)!.index = at.index;
    }
    this.#actorAt.delete(actorId);
  }
}

export function randomNodeLabels(rng: Rng, id: string, facts: { cpus: number; gpus: number }): Record<string, string> {
  const region = pick(rng, REGIONS);
  return {
    [NODE_ID_LABEL]: id,
    region,
    zone: pick(rng, zonesOf(region)),
    'instance-type': pick(rng, INSTANCE_TYPES),
    cores: String(facts.cpus),
    ...(facts.gpus ? { 'gpu-type': pick(rng, GPU_TYPES) } : {}),
    ...(chance(rng, 0.3) ? { spot: 'true' } : {}),
  };
}

export function randomActorLabels(rng: Rng): Record<string, string> {
  return { app: pick(rng, APPS), tier: pick(rng, TIERS), ...(chance(rng, 0.7) ? { shard: String(randomInt(rng, 10)) } : {}) };
}

export function randomActorResources(rng: Rng): ResourceSet {
  return parseResources({ CPU: pick(rng, [0.5, 1, 1, 2, 4]), ...(chance(rng, 0.5) ? { memory: pick(rng, [1, 2, 4]) * GiB } : {}) });
}

export function randomTaints(rng: Rng): ReturnType<typeof parseTaints> {
  return chance(rng, 0.4) ? [] : parseTaints(pick(rng, TAINT_SETS));
}

/** Placement options' resources: mostly small; with `oversize`, sometimes more than any node has. */
export function randomResourceOptions(rng: Rng, oversize = 0): Pick<PlacementOptions, 'numCpus' | 'numGpus' | 'memory'> {
  if (chance(rng, oversize)) return chance(rng, 0.5) ? { numCpus: 96 } : { numCpus: 1, memory: 2048 * GiB };
  return {
    numCpus: pick(rng, [0.5, 1, 1, 2, 4, 8]),
    ...(chance(rng, 0.4) ? { memory: pick(rng, [1, 2, 4, 8]) * GiB } : {}),
    ...(chance(rng, 0.05) ? { numGpus: pick(rng, [1, 2]) } : {}),
  };
}

// ---- request generators ----------------------------------------------------------------------

export const REQUEST_KINDS = [
  'plain', 'labelSelector', 'nodeAffinity', 'nodeLabel', 'actorAffinity', 'actorLabels', 'tolerations', 'nodeId', 'spread', 'combo',
  'anyOf', 'weighted', 'topology', 'effects',
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface GeneratedRequest {
  readonly kind: RequestKind;
  readonly namespace: string;
  /** The API-style options the request was compiled from (JSON-printable, to reproduce it). */
  readonly options: PlacementOptions;
  /** For actor requests: the actor to record when it is placed. */
  readonly actor?: { readonly actorId: string; readonly labels: Record<string, string> };
  readonly request: SchedulingRequest;
}

/** A label value that exists in generated clusters for `key` (sometimes one that does not). */
function labelValue(rng: Rng, cluster: RandomCluster, key: string): string {
  if (chance(rng, 0.05)) return 'absent-value';
  switch (key) {
    case 'region': return pick(rng, REGIONS);
    case 'zone': return pick(rng, zonesOf(pick(rng, REGIONS)));
    case 'instance-type': return pick(rng, INSTANCE_TYPES);
    case 'gpu-type': return pick(rng, GPU_TYPES);
    case 'cores': return String(pick(rng, CPU_SIZES));
    case NODE_ID_LABEL: return cluster.randomNode()?.id ?? 'node-none';
    default: return 'true';
  }
}

const NODE_KEYS = ['region', 'zone', 'instance-type', 'gpu-type', 'spot', 'cores', NODE_ID_LABEL];
const values = (rng: Rng, cluster: RandomCluster, key: string): string[] =>
  Array.from({ length: 1 + randomInt(rng, 3) }, () => labelValue(rng, cluster, key));

/** A labelSelector record of 1–2 keys, using all six operators in selector syntax. */
export function randomSelector(rng: Rng, cluster: RandomCluster): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 1 + randomInt(rng, 2); i > 0; i--) {
    const op = pick(rng, ['eq', 'not', 'in', '!in', 'exists', '!exists', 'gt', 'lt'] as const);
    const key = op === 'gt' || op === 'lt' ? 'cores' : pick(rng, NODE_KEYS);
    const vs = [...new Set(values(rng, cluster, key))];
    out[key] = {
      eq: vs[0], not: `!${vs[0]}`, in: `in(${vs.join(',')})`, '!in': `!in(${vs.join(',')})`,
      exists: 'exists()', '!exists': '!exists()', gt: `gt(${pick(rng, CPU_SIZES)})`, lt: `lt(${pick(rng, CPU_SIZES) + 1})`,
    }[op]!;
  }
  return out;
}

function randomCondition(rng: Rng, cluster: RandomCluster, key: string): Condition {
  switch (randomInt(rng, 6)) {
    case 0: return In(...values(rng, cluster, key));
    case 1: return NotIn(...values(rng, cluster, key));
    case 2: return Exists();
    case 3: return DoesNotExist();
    case 4: return Gt(pick(rng, [8, 16, 32]));
    default: return Lt(pick(rng, [16, 33, 64]));
  }
}

function randomNodeExpression(rng: Rng, cluster: RandomCluster, soft: boolean): LabelMatchExpression {
  const key = pick(rng, NODE_KEYS);
  switch (randomInt(rng, 6)) {
    case 0: return labelIn(key, values(rng, cluster, key), soft);
    case 1: return labelNotIn(key, values(rng, cluster, key), soft);
    case 2: return labelExists(key, soft);
    case 3: return labelDoesNotExist(key, soft);
    case 4: return labelGt('cores', pick(rng, [8, 16, 32]), soft);
    default: return labelLt('cores', pick(rng, [16, 33, 64]), soft);
  }
}

/** Affinity to live actor ids (sometimes unknown ones, sometimes through a namespaced handle). */
function randomActorIdExpression(rng: Rng, cluster: RandomCluster, soft: boolean): LabelMatchExpression {
  const targets = Array.from({ length: 1 + randomInt(rng, 3) }, () => cluster.randomActor());
  const ns = chance(rng, 0.3) ? 'research' : undefined;
  const refs = targets.map((a) => {
    const actorId = a && !chance(rng, 0.1) ? a.actorId : 'actor-unknown';
    return ns ? { actorId, namespace: ns } : actorId;
  });
  return chance(rng, 0.5) ? affinity(refs, soft) : antiAffinity(refs, soft);
}

function randomActorLabelExpression(rng: Rng, soft: boolean): LabelMatchExpression {
  const namespace = chance(rng, 0.2) ? 'research' : undefined;
  const apps = Array.from({ length: 1 + randomInt(rng, 3) }, () => pick(rng, APPS));
  const [key, operator, vs] = pick<[string, string, string[]]>(rng, [
    ['app', 'IN', apps], ['app', 'NOT_IN', apps], ['tier', 'EXISTS', []], ['shard', 'DOES_NOT_EXIST', []],
    ['tier', 'IN', [pick(rng, TIERS)]], ['shard', 'GT', [String(randomInt(rng, 9))]], ['shard', 'LT', [String(1 + randomInt(rng, 9))]],
  ]);
  return validateExpression({ key, operator, values: vs, soft, namespace });
}

/** Tolerations with effects and the wildcard (Kubernetes' forms). */
function randomEffectTolerations(rng: Rng): Record<string, Toleration> {
  const effect = () => pick(rng, [undefined, 'NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const);
  return pick<Record<string, Toleration>>(rng, [
    { dedicated: tolerate(Exists(), effect()) }, { [ANY_TAINT]: tolerate(Exists(), effect()) }, { maintenance: tolerate(Exists(), 'PreferNoSchedule') },
    { pressure: tolerate(In('high'), effect()), dedicated: tolerate(In('ml'), 'NoExecute') }, { [ANY_TAINT]: Exists() },
  ]);
}

/** An OR group of 1-3 terms of 1-2 node expressions. */
function randomAnyOf(rng: Rng, cluster: RandomCluster) {
  const term = () => Array.from({ length: 1 + randomInt(rng, 2) }, () => randomNodeExpression(rng, cluster, false));
  return anyOf(...Array.from({ length: 1 + randomInt(rng, 3) }, term));
}

/** An actor-label expression over a topology domain (zone, region, or a key some nodes lack). */
function randomTopologyExpression(rng: Rng, cluster: RandomCluster, soft: boolean): LabelMatchExpression {
  const expr = chance(rng, 0.5) ? randomActorLabelExpression(rng, soft) : randomActorIdExpression(rng, cluster, soft);
  return withTopologyKey(expr, pick(rng, ['zone', 'zone', 'region', 'gpu-type']));
}

function randomTolerations(rng: Rng): Record<string, Condition> {
  return pick<Record<string, Condition>>(rng, [
    { dedicated: Exists() }, { dedicated: In('ml') }, { maintenance: Exists() }, { 'spot-reclaim': Exists() },
    { dedicated: In('ml', 'infra'), maintenance: Exists(), 'spot-reclaim': In('soon') },
  ]);
}

function strategyOptions(rng: Rng, cluster: RandomCluster, kind: RequestKind): Partial<PlacementOptions> {
  const soft = () => chance(rng, 0.4);
  const list = <T>(make: () => T): T[] => Array.from({ length: 1 + randomInt(rng, 3) }, make);
  switch (kind) {
    case 'labelSelector': {
      const fallback = chance(rng, 0.5) ? list(() => ({ labelSelector: randomSelector(rng, cluster) })).slice(0, 2) : undefined;
      return { labelSelector: randomSelector(rng, cluster), ...(fallback ? { fallbackStrategy: fallback } : {}) };
    }
    case 'nodeAffinity':
      return { schedulingStrategy: nodeAffinity(list(() => randomNodeExpression(rng, cluster, soft()))) };
    case 'nodeLabel': {
      const cond = () => Object.fromEntries(list(() => pick(rng, NODE_KEYS)).map((k) => [k, randomCondition(rng, cluster, k)]));
      const hard = chance(rng, 0.7) ? cond() : {};
      return { schedulingStrategy: nodeLabelStrategy({ hard, soft: Object.keys(hard).length && chance(rng, 0.5) ? {} : cond() }) };
    }
    case 'actorAffinity':
      return { schedulingStrategy: actorAffinity(list(() => randomActorIdExpression(rng, cluster, soft())).slice(0, 2)) };
    case 'actorLabels':
      return { schedulingStrategy: actorAffinity(list(() => randomActorLabelExpression(rng, soft())).slice(0, 2)) };
    case 'tolerations':
      return { tolerations: randomTolerations(rng) };
    case 'nodeId': {
      const id = chance(rng, 0.85) ? cluster.randomNode()?.id ?? 'node-none' : 'node-unknown';
      const isSoft = soft();
      const flag = chance(rng, 0.5);
      return { schedulingStrategy: nodeIdAffinity(id, isSoft ? { soft: true, spillOnUnavailable: flag } : { failOnUnavailable: flag }) };
    }
    case 'spread':
      return { schedulingStrategy: 'SPREAD', ...(chance(rng, 0.3) ? { labelSelector: randomSelector(rng, cluster) } : {}) };
    case 'anyOf': {
      const terms = list(() => (chance(rng, 0.5) ? randomAnyOf(rng, cluster) : randomNodeExpression(rng, cluster, false))).slice(0, 2);
      return { schedulingStrategy: nodeAffinity(chance(rng, 0.4) ? [...terms, preferred(randomAnyOf(rng, cluster), 1 + randomInt(rng, 100))] : terms) };
    }
    case 'weighted': {
      const weight = () => pick(rng, [1, 1, 10, 50, 80, 100]);
      const terms = list(() => (chance(rng, 0.25) ? preferred(randomAnyOf(rng, cluster), weight()) : preferred(randomNodeExpression(rng, cluster, true), weight())));
      return chance(rng, 0.3)
        ? { schedulingStrategy: actorAffinity(list(() => preferred(randomActorLabelExpression(rng, true), weight())).slice(0, 2)) }
        : { schedulingStrategy: nodeAffinity([...terms, ...(chance(rng, 0.3) ? [randomNodeExpression(rng, cluster, false)] : [])]) };
    }
    case 'topology':
      return { schedulingStrategy: actorAffinity(list(() => randomTopologyExpression(rng, cluster, soft())).slice(0, 2)) };
    case 'effects':
      return { tolerations: randomEffectTolerations(rng), ...(chance(rng, 0.3) ? { labelSelector: { zone: [`in(${values(rng, cluster, 'zone').join(',')})`, `!${labelValue(rng, cluster, 'zone')}`] } } : {}) };
    case 'combo': {
      const parts: Partial<PlacementOptions>[] = [
        strategyOptions(rng, cluster, 'labelSelector'),
        chance(rng, 0.5) ? strategyOptions(rng, cluster, 'tolerations') : {},
        strategyOptions(rng, cluster, pick(rng, ['nodeAffinity', 'nodeLabel', 'actorAffinity', 'actorLabels', 'nodeId', 'spread', 'plain', 'anyOf', 'weighted', 'topology'] as const)),
      ];
      return Object.assign({}, ...parts);
    }
    default:
      return {};
  }
}

/** One random request of a kind; ~60% are actors (placing them records the actor). */
export function randomRequest(rng: Rng, cluster: RandomCluster, kind: RequestKind, opts: { oversize?: number } = {}): GeneratedRequest {
  const namespace = cluster.randomNamespace();
  const options: PlacementOptions = { ...randomResourceOptions(rng, opts.oversize), ...strategyOptions(rng, cluster, kind) };
  const actor = chance(rng, 0.6) ? { actorId: cluster.nextId('actor'), labels: randomActorLabels(rng) } : undefined;
  const target = actor ? { kind: 'actor' as const, id: actor.actorId } : { kind: 'task' as const, id: cluster.nextId('task') };
  const request = compileRequest(options, { namespace, target, rareResources: cluster.shape.rareResources });
  return { kind, namespace, options, actor, request };
}

export interface GeneratedGroup {
  readonly options: PlacementGroupOptions;
  readonly request: PlacementGroupRequest;
}

/** A placement group of 1–4 bundles, any strategy, sometimes with bundle selectors, a fallback, tolerations. */
export function randomPlacementGroup(rng: Rng, cluster: RandomCluster): GeneratedGroup {
  const bundles = (n: number) =>
    Array.from({ length: n }, () => ({
      CPU: pick(rng, [0.5, 1, 2, 4, 8, 16]),
      ...(chance(rng, 0.3) ? { memory: pick(rng, [1, 4, 16]) * GiB } : {}),
      ...(chance(rng, 0.05) ? { GPU: 1 } : {}),
    }));
  const selectors = (n: number) => (chance(rng, 0.4) ? Array.from({ length: n }, () => (chance(rng, 0.5) ? randomSelector(rng, cluster) : {})) : undefined);
  const tier = () => {
    const b = bundles(1 + randomInt(rng, 4));
    const sel = selectors(b.length);
    return { bundles: b, ...(sel ? { bundleLabelSelector: sel } : {}) };
  };
  const options: PlacementGroupOptions = {
    ...tier(),
    strategy: pick(rng, ['PACK', 'SPREAD', 'STRICT_PACK', 'STRICT_SPREAD'] as const),
    ...(chance(rng, 0.3) ? { fallbackStrategy: [tier()] } : {}),
    ...(chance(rng, 0.3) ? { tolerations: randomTolerations(rng) } : {}),
  };
  return { options, request: compilePlacementGroup(options, { id: cluster.nextId('pg'), rareResources: cluster.shape.rareResources }) };
}
