/**
 * Property cases: the indexed scheduler (schedule) against the plain reference (referenceSchedule)
 * on seeded random clusters whose state keeps changing between decisions (allocate/release,
 * actors added and removed, labels, taints, node states, nodes removed and added), so the label
 * index, the (score, id) order and the id list are exercised incrementally.
 *
 * For every case: the decisions agree (status; a placed node is one the reference could have
 * chosen, in the same tier; the same failure code, reason and message; the same error code), each
 * node's hard-constraint verdicts agree, and the feasible and passing sets agree. After every
 * mutation the order is sorted by (fresh score, id) and the label index matches the nodes.
 *
 * Some steps place a placement group instead (scheduleBundles against referenceScheduleBundles):
 * neither may change the cluster, both agree on status, tier and failure code, and each placed
 * assignment is valid (live nodes that admit each bundle, room for all, STRICT_* kept).
 *
 * A mismatch names its seed; `ORRERY_PROPERTY_SEED=<seed> node --conditions=source --import tsx
 * spec/lib/scheduling/property.spec.ts` runs that one seed again.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CRITICAL_RESOURCES, DEFAULT_FILTERS, DEFAULT_POLICY, NODE_SCOPE, REFERENCE_FILTERS, TAINT_SCOPE, actorScope, addResources, attemptsFor,
  baseAttempt, candidatesFor, expressionMatches, feasible, firstUntoleratedTaint, fits, parseResources, passes, randomInt,
  referenceSchedule, referenceScheduleBundles, referenceVerdicts, schedule, scheduleBundles, seededRng, type Attempt,
  type ClusterState, type Filter, type NodeState, type PlacementGroupRequest, type Policy, type Rng, type SchedNode,
} from '../../../lib/index.ts';
import {
  REQUEST_KINDS, RandomCluster, chance, pick, randomActorResources, randomNodeLabels, randomPlacementGroup, randomRequest,
  randomTaints, type GeneratedGroup, type GeneratedRequest,
} from '../../../bench/support/random-cluster.ts';

const SIZES = [1, 2, 3, 5, 8, 13, 21, 40, 80, 140, 200];
const CLUSTERS_PER_SIZE = 12;
const DECISIONS_PER_CLUSTER = 34;
const ONLY_SEED = process.env.ORRERY_PROPERTY_SEED === undefined ? undefined : Number(process.env.ORRERY_PROPERTY_SEED);

const ids = (nodes: Iterable<SchedNode>): string[] => [...new Set([...nodes].map((n) => n.id))].sort();
const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const reasons = (filters: readonly Filter[], node: SchedNode, attempt: Attempt, state: ClusterState): string[] =>
  filters.map((f) => f.check(node, attempt, state)?.reason).filter((r): r is string => r !== undefined);

/** The indexed view of a set of nodes: the attempt's candidates when it has any, else every node. */
function indexedScope(state: ClusterState, attempt: Attempt): SchedNode[] {
  const cand = candidatesFor(state, attempt);
  if (!cand) return [...state.nodes.values()];
  return [...cand.ids()].map((id) => state.nodes.get(id)).filter((n): n is SchedNode => n !== undefined);
}

const referenceFeasible = (node: SchedNode, attempt: Attempt, state: ClusterState): boolean =>
  REFERENCE_FILTERS.every((f) => {
    const r = f.check(node, attempt, state);
    return r === undefined || (f.kind === 'resources' && r.code === 'unschedulable');
  });

/** Hard-constraint verdicts per node, feasible sets and passing sets, per tier and attempt. */
function compareFilters(state: ClusterState, gen: GeneratedRequest): string[] {
  const req = gen.request;
  const all = [...state.nodes.values()];
  const out: string[] = [];
  for (let tier = 0; tier < req.selectorTiers.length; tier++) {
    const base = baseAttempt(req, tier);
    for (const node of all) {
      const indexed = reasons(DEFAULT_FILTERS, node, base, state);
      const reference = referenceVerdicts(state, node, req, tier);
      if (!same(indexed, reference)) out.push(`tier ${tier} verdicts on ${node.id}: indexed ${JSON.stringify(indexed)} vs reference ${JSON.stringify(reference)}`);
    }
    const fi = ids(indexedScope(state, base).filter((n) => feasible(n, base, state, DEFAULT_FILTERS)));
    const fr = ids(all.filter((n) => referenceFeasible(n, base, state)));
    if (!same(fi, fr)) out.push(`tier ${tier} feasible sets: indexed ${JSON.stringify(fi)} vs reference ${JSON.stringify(fr)}`);
    attemptsFor(state, req, tier).forEach((attempt, level) => {
      const pi = ids(indexedScope(state, attempt).filter((n) => passes(n, attempt, state, DEFAULT_FILTERS)));
      const pr = ids(all.filter((n) => passes(n, attempt, state, REFERENCE_FILTERS)));
      if (!same(pi, pr)) out.push(`tier ${tier} attempt ${level} passing sets: indexed ${JSON.stringify(pi)} vs reference ${JSON.stringify(pr)}`);
    });
  }
  return out;
}

/**
 * Policies that switch the pickers' shortcuts off, so every path is checked against the reference on
 * every case: exact window scans and ordered candidate walks instead of random probes, and ordered
 * walks instead of exhaustive scans of small candidate sets.
 */
const NO_SHORTCUTS: { name: string; policy: Policy }[] = [
  { name: 'no probes', policy: { ...DEFAULT_POLICY, sampleTries: 0 } },
  { name: 'no probes, no small-set scans', policy: { ...DEFAULT_POLICY, sampleTries: 0, candidateScanLimit: 0 } },
  { name: 'no small-set scans', policy: { ...DEFAULT_POLICY, candidateScanLimit: 0 } },
];

/** Reference first (SPREAD moves the cursor only in schedule), then the indexed decision. */
function compareDecisions(state: ClusterState, gen: GeneratedRequest, rngs: { sched: Rng; ref: Rng }): { problems: string[]; status: string; placedOn?: string } {
  const ref = referenceSchedule(state, gen.request, rngs.ref);
  const want = ref.decision;
  const problems: string[] = [];
  const cursor = state.spreadCursor;
  for (const { name, policy } of NO_SHORTCUTS) {
    const alt = schedule(state, gen.request, { rng: rngs.sched, policy });
    state.spreadCursor = cursor;
    if (alt.status !== want.status) problems.push(`${name}: status ${alt.status} vs reference ${want.status}`);
    else if (alt.status === 'placed' && !ref.eligible.includes(alt.nodeId)) problems.push(`${name}: placed on ${alt.nodeId}, not among ${JSON.stringify(ref.eligible)}`);
  }
  const got = schedule(state, gen.request, { rng: rngs.sched });
  const status = got.status;
  if (got.status !== want.status) {
    problems.push(`status: schedule ${JSON.stringify(got)} vs reference ${JSON.stringify(want)}`);
  } else if (got.status === 'placed' && want.status === 'placed') {
    if (!ref.eligible.includes(got.nodeId)) problems.push(`placed on ${got.nodeId}, not among the reference's eligible ${JSON.stringify(ref.eligible)}`);
    if (got.tier !== want.tier) problems.push(`tier: schedule ${got.tier} vs reference ${want.tier}`);
    return { problems, status, placedOn: got.nodeId };
  } else if (got.status === 'unschedulable' && want.status === 'unschedulable') {
    for (const key of ['code', 'reason', 'message'] as const) {
      if (got.failure[key] !== want.failure[key]) problems.push(`failure ${key}: schedule ${JSON.stringify(got.failure[key])} vs reference ${JSON.stringify(want.failure[key])}`);
    }
  } else if (got.status === 'failed' && want.status === 'failed' && got.error.code !== want.error.code) {
    problems.push(`error code: schedule ${got.error.code} vs reference ${want.error.code}`);
  }
  return { problems, status };
}

/** A placed group is valid: one live node per bundle that admits it, room for everything, strictness kept. */
function checkAssignment(state: ClusterState, req: PlacementGroupRequest, tier: number, nodeIds: readonly string[]): string[] {
  const bundles = req.tiers[tier];
  const out: string[] = [];
  if (nodeIds.length !== bundles.length) return [`${nodeIds.length} node ids for ${bundles.length} bundles`];
  const need = new Map<string, Record<string, number>>();
  bundles.forEach((b, i) => {
    const node = state.nodes.get(nodeIds[i]);
    if (!node || node.state !== 'ALIVE') return void out.push(`bundle ${i} on ${nodeIds[i]}, which is ${node?.state ?? 'not in the cluster'}`);
    const miss = b.selector.find((e) => !expressionMatches(e, node.labels));
    if (miss) out.push(`bundle ${i} on ${node.id}, whose labels miss ${miss.key} ${miss.operator} ${miss.values.join(',')}`);
    const taint = firstUntoleratedTaint(node.taints, req.tolerations);
    if (taint) out.push(`bundle ${i} on ${node.id}, whose taint ${taint.key} it does not tolerate`);
    need.set(node.id, addResources(need.get(node.id) ?? {}, b.resources));
  });
  for (const [id, sum] of need) if (state.nodes.get(id) && !fits(state.nodes.get(id)!.available, sum)) out.push(`bundles on ${id} need ${JSON.stringify(sum)}, more than it has`);
  const distinct = new Set(nodeIds).size;
  if (req.strategy === 'STRICT_PACK' && distinct !== 1) out.push(`STRICT_PACK on ${distinct} nodes`);
  if (req.strategy === 'STRICT_SPREAD' && distinct !== nodeIds.length) out.push(`STRICT_SPREAD with ${nodeIds.length - distinct} shared node(s)`);
  return out;
}

const snapshot = (state: ClusterState): string =>
  JSON.stringify([[...state.nodes.values()].map((n) => [n.id, n.available]), Array.from({ length: state.order.size }, (_, i) => state.order.at(i).id)]);

/** Placement groups: both leave the cluster as they found it, agree on status, tier and code; both assignments valid. */
function compareGroups(state: ClusterState, gen: GeneratedGroup, rngs: { sched: Rng; ref: Rng }): { problems: string[]; status: string; placed?: { nodeIds: readonly string[]; tier: number } } {
  const problems: string[] = [];
  const before = snapshot(state);
  const want = referenceScheduleBundles(state, gen.request, rngs.ref);
  if (snapshot(state) !== before) problems.push('referenceScheduleBundles changed the cluster');
  const got = scheduleBundles(state, gen.request, { rng: rngs.sched });
  if (snapshot(state) !== before) problems.push('scheduleBundles changed the cluster');
  if (want.status === 'placed') problems.push(...checkAssignment(state, gen.request, want.tier, want.nodeIds).map((p) => `reference: ${p}`));
  if (got.status === 'placed') problems.push(...checkAssignment(state, gen.request, got.tier, got.nodeIds).map((p) => `schedule: ${p}`));
  if (got.status !== want.status) problems.push(`status: scheduleBundles ${JSON.stringify(got)} vs reference ${JSON.stringify(want)}`);
  else if (got.status === 'placed' && want.status === 'placed' && got.tier !== want.tier) problems.push(`tier: scheduleBundles ${got.tier} vs reference ${want.tier}`);
  else if (got.status === 'unschedulable' && want.status === 'unschedulable' && got.failure.code !== want.failure.code) {
    problems.push(`failure code: scheduleBundles ${got.failure.code} vs reference ${want.failure.code}`);
  }
  return { problems, status: got.status, placed: got.status === 'placed' ? got : undefined };
}

function freshScore(state: ClusterState, node: SchedNode): number {
  let util = 0;
  for (const r of CRITICAL_RESOURCES) {
    const total = node.total[r] ?? 0;
    if (total > 0) util = Math.max(util, (total - (node.available[r] ?? 0)) / total);
  }
  return util < state.spreadThreshold ? 0 : util;
}

/** The (score, id) order and the id list agree with the nodes and their fresh scores. */
function checkOrder(state: ClusterState): string[] {
  const out: string[] = [];
  if (state.order.size !== state.nodes.size) out.push(`order holds ${state.order.size} nodes, the cluster ${state.nodes.size}`);
  let prev: { score: number; id: string } | undefined;
  for (let i = 0; i < state.order.size; i++) {
    const node = state.order.at(i);
    const score = freshScore(state, node);
    if (state.nodes.get(node.id) !== node) out.push(`order[${i}] = ${node.id} is not a node of the cluster`);
    if (node.score !== score) out.push(`${node.id} filed under score ${node.score}, fresh score ${score}`);
    if (prev && !(prev.score < score || (prev.score === score && prev.id < node.id))) {
      out.push(`order not sorted at ${i}: (${prev.score}, ${prev.id}) before (${score}, ${node.id})`);
    }
    prev = { score, id: node.id };
  }
  if (!same(state.ids, [...state.nodes.keys()].sort())) out.push(`ids list ${JSON.stringify(state.ids)} differs from the nodes`);
  return out;
}

const INDEX_SCOPES = [NODE_SCOPE, TAINT_SCOPE, actorScope('default'), actorScope('research')];
const INDEX_KEYS = [
  'region', 'zone', 'instance-type', 'gpu-type', 'spot', 'cores', 'orrery.io/node-id', 'dedicated', 'maintenance', 'spot-reclaim',
  'orrery.io/rare-gpu', 'app', 'tier', 'shard', 'orrery.io/actor-id',
];

/** The label index agrees with the nodes both ways: every label counted, no stale node under a key. */
function checkIndex(state: ClusterState): string[] {
  const out: string[] = [];
  type Counts = Map<string, Map<string, Map<string, number>>>; // key → value → node → count
  const expected = new Map<string, Counts>(INDEX_SCOPES.map((s) => [s, new Map()]));
  const note = (scope: string, nodeId: string, labels: Readonly<Record<string, string>>) => {
    const byKey = expected.get(scope)!;
    for (const key in labels) {
      const byValue = byKey.get(key) ?? byKey.set(key, new Map()).get(key)!;
      const nodes = byValue.get(labels[key]) ?? byValue.set(labels[key], new Map()).get(labels[key])!;
      nodes.set(nodeId, (nodes.get(nodeId) ?? 0) + 1);
    }
  };
  for (const node of state.nodes.values()) {
    note(NODE_SCOPE, node.id, node.labels);
    note(TAINT_SCOPE, node.id, Object.fromEntries(node.taints.map((t) => [t.key, t.value])));
    for (const a of node.actors.values()) note(actorScope(a.namespace), node.id, a.labels);
  }
  for (const scope of INDEX_SCOPES) {
    const byKey = expected.get(scope)!;
    for (const key of INDEX_KEYS) {
      const withKey = new Set<string>();
      for (const [value, nodes] of byKey.get(key) ?? []) {
        for (const [nodeId, count] of nodes) {
          withKey.add(nodeId);
          const have = state.index.refCount(scope, nodeId, key, value);
          if (have !== count) out.push(`index ${scope} ${key}=${value} on ${nodeId}: count ${have}, expected ${count}`);
        }
        if (state.index.countByKeyValue(scope, key, [value]) !== nodes.size) out.push(`index ${scope} ${key}=${value}: ${state.index.countByKeyValue(scope, key, [value])} nodes, expected ${nodes.size}`);
      }
      const have = [...state.index.nodesByKey(scope, key)].sort();
      if (!same(have, [...withKey].sort())) out.push(`index ${scope} ${key} exists on ${JSON.stringify(have)}, expected ${JSON.stringify([...withKey].sort())}`);
    }
  }
  return out;
}

/** One random change to the cluster; returns what it did, for the failure log. */
function mutate(cluster: RandomCluster, rng: Rng, size: number, removed: string[]): string {
  const state = cluster.state;
  const node = cluster.randomNode();
  const op = randomInt(rng, 11);
  if (!node || op === 9) {
    if (state.nodes.size >= Math.max(2, size * 1.5)) return 'none';
    const again = removed.length && chance(rng, 0.3) ? removed.splice(randomInt(rng, removed.length), 1)[0] : undefined;
    const added = cluster.addRandomNode(pick<NodeState>(rng, ['ALIVE', 'ALIVE', 'ALIVE', 'DRAINING', 'DEAD']), again);
    return `addNode ${added.id}${again ? ' (again)' : ''}`;
  }
  switch (op) {
    case 0:
    case 1: {
      const cpus = (node.total.CPU ?? 0) / 10_000;
      const res = chance(rng, 0.3) ? parseResources({ CPU: Math.max(0.5, Math.floor(cpus / 2)) }) : randomActorResources(rng);
      if (!fits(node.available, res)) return 'none';
      cluster.commit([{ nodeId: node.id, resources: res }]);
      return `allocate ${JSON.stringify(res)} on ${node.id}`;
    }
    case 2:
      cluster.releaseOldest();
      return 'release oldest';
    case 3: {
      const res = randomActorResources(rng);
      if (!fits(node.available, res)) return 'none';
      cluster.commit([{ nodeId: node.id, resources: res }], { namespace: cluster.randomNamespace() });
      return `addActor on ${node.id}`;
    }
    case 4:
      cluster.releaseRandomActor();
      return 'removeActor';
    case 5:
      state.setNodeLabels(node.id, randomNodeLabels(rng, node.id, { cpus: (node.total.CPU ?? 0) / 10_000, gpus: (node.total.GPU ?? 0) / 10_000 }));
      return `setNodeLabels ${node.id}`;
    case 6:
      state.setNodeTaints(node.id, randomTaints(rng));
      return `setNodeTaints ${node.id}`;
    case 7: {
      const s = pick<NodeState>(rng, ['ALIVE', 'ALIVE', 'DRAINING', 'DEAD']);
      state.setNodeState(node.id, s);
      return `setNodeState ${node.id} ${s}`;
    }
    case 8:
      if (state.nodes.size < size / 2) return 'none';
      cluster.removeNode(node.id);
      removed.push(node.id);
      return `removeNode ${node.id}`;
    default:
      state.spreadCursor = chance(rng, 0.5) ? '' : node.id;
      return `spreadCursor ${state.spreadCursor}`;
  }
}

interface Outcome {
  cases: number;
  groups: number;
  groupsPlaced: number;
  placed: number;
  unschedulable: number;
  failed: number;
  problems: string[];
}

function runSeed(seed: number, size: number, out: Outcome): void {
  const rng = seededRng(seed);
  const rngs = { sched: seededRng(seed ^ 0x5eed), ref: seededRng(seed ^ 0xfeed) };
  const cluster = new RandomCluster(rng, { nodes: size, unhealthy: true, rareResources: chance(rng, 0.3) ? ['GPU'] : [] });
  const history: string[] = [];
  const removed: string[] = [];
  for (let step = 0; step < DECISIONS_PER_CLUSTER; step++) {
    const state = cluster.state;
    const problems: string[] = [];
    let what: string;
    if (chance(rng, 0.12)) {
      const group = randomPlacementGroup(rng, cluster);
      what = `placement group ${JSON.stringify(group.options)}`;
      const decided = compareGroups(state, group, rngs);
      problems.push(...decided.problems);
      out.groups++;
      if (decided.placed) out.groupsPlaced++;
      if (decided.placed && problems.length === 0) {
        const bundles = group.request.tiers[decided.placed.tier];
        cluster.commit(decided.placed.nodeIds.map((nodeId, i) => ({ nodeId, resources: bundles[i].resources })));
      }
    } else {
      const gen = randomRequest(rng, cluster, pick(rng, REQUEST_KINDS), { oversize: 0.05 });
      what = `${gen.kind} request in namespace ${gen.namespace}, options ${JSON.stringify(gen.options)}`;
      problems.push(...compareFilters(state, gen));
      const decided = compareDecisions(state, gen, rngs);
      problems.push(...decided.problems);
      out.cases++;
      if (decided.status === 'placed' || decided.status === 'unschedulable' || decided.status === 'failed') out[decided.status]++;
      if (decided.placedOn) {
        cluster.commit([{ nodeId: decided.placedOn, resources: gen.request.resources }], gen.actor && { namespace: gen.namespace, ...gen.actor });
      }
    }
    for (let m = randomInt(rng, 4); m > 0; m--) history.push(mutate(cluster, rng, size, removed));
    problems.push(...checkOrder(state));
    if (size <= 21 || step % 5 === 4 || step === DECISIONS_PER_CLUSTER - 1) problems.push(...checkIndex(state));
    if (problems.length) {
      out.problems.push(
        [
          `seed ${seed} (cluster of ${size} nodes, now ${state.nodes.size}), step ${step}:`,
          `  ${what}`,
          `  recent mutations: ${history.slice(-6).join('; ') || 'none'}`,
          ...problems.slice(0, 4).map((p) => `  ${p}`),
          `  reproduce: ORRERY_PROPERTY_SEED=${seed} node --conditions=source --import tsx spec/lib/scheduling/property.spec.ts`,
        ].join('\n'),
      );
      return;
    }
  }
}

const totals: Outcome = { cases: 0, groups: 0, groupsPlaced: 0, placed: 0, unschedulable: 0, failed: 0, problems: [] };
const started = Date.now();

for (const size of SIZES) {
  const seeds = Array.from({ length: CLUSTERS_PER_SIZE }, (_, i) => size * 1000 + i).filter((s) => ONLY_SEED === undefined || s === ONLY_SEED);
  if (seeds.length === 0) continue;
  test(`schedule agrees with the reference on ${seeds.length} random clusters of ${size} node(s)`, () => {
    const out: Outcome = { cases: 0, groups: 0, groupsPlaced: 0, placed: 0, unschedulable: 0, failed: 0, problems: [] };
    for (const seed of seeds) runSeed(seed, size, out);
    for (const k of ['cases', 'groups', 'groupsPlaced', 'placed', 'unschedulable', 'failed'] as const) totals[k] += out[k];
    totals.problems.push(...out.problems);
    if (out.problems.length) assert.unreachable(`${out.problems.length} seed(s) disagree:\n${out.problems.slice(0, 3).join('\n')}`);
  });
}

test('enough cases ran, and every outcome occurred', () => {
  console.log(
    `property cases: ${totals.cases} requests (${totals.placed} placed, ${totals.unschedulable} unschedulable, ${totals.failed} failed) and ${totals.groups} placement groups (${totals.groupsPlaced} placed) in ${Date.now() - started} ms`,
  );
  if (ONLY_SEED !== undefined) return;
  assert.ok(totals.cases >= 2000, `only ${totals.cases} cases`);
  assert.ok(totals.placed > 0 && totals.unschedulable > 0, 'both placed and unschedulable decisions occur');
});

test.run();
