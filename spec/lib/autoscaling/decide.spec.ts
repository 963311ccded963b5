// The autoscaler's decision (lib/autoscaling): the launch rules of the seeds' "AutoScaler adaptation"
// sections, decided by the real scheduler against hypothetical nodes of each type.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  Exists,
  NODE_GROUP_LABEL,
  NODE_ID_LABEL,
  actorAffinity,
  affinity,
  compilePlacementGroup,
  compileRequest,
  decide,
  labelIn,
  labelNotIn,
  nodeAffinity,
  nodeIdAffinity,
  parseResources,
  parseTaints,
  type ActorDemand,
  type AutoscalingInput,
  type GroupDemand,
  type LiveNode,
  type NodeType,
  type PlacementGroupOptions,
  type PlacementOptions,
} from '../../../lib/index.ts';

function type(name: string, o: { cpu?: number; gpu?: number; labels?: Record<string, string>; taints?: Record<string, string>; min?: number; max?: number; cost?: number } = {}): NodeType {
  return {
    name,
    resources: parseResources({ CPU: o.cpu ?? 4, ...(o.gpu ? { GPU: o.gpu } : {}) }),
    labels: o.labels ?? {},
    taints: parseTaints(o.taints ?? {}),
    minWorkers: o.min ?? 0,
    maxWorkers: o.max ?? 10,
    ...(o.cost !== undefined ? { cost: o.cost } : {}),
  };
}

function live(id: string, o: { cpu?: number; used?: number; labels?: Record<string, string>; taints?: Record<string, string>; group?: string; actors?: { id: string; labels?: Record<string, string> }[] } = {}): LiveNode {
  const total = parseResources({ CPU: o.cpu ?? 4 });
  return {
    nodeId: id,
    labels: { ...o.labels, [NODE_ID_LABEL]: id, ...(o.group ? { [NODE_GROUP_LABEL]: o.group } : {}) },
    taints: parseTaints(o.taints ?? {}),
    total,
    available: parseResources({ CPU: (o.cpu ?? 4) - (o.used ?? 0) }),
    actors: (o.actors ?? []).map((a) => ({ actorId: a.id, namespace: 'default', labels: a.labels })),
  };
}

function actors(key: string, options: PlacementOptions, count = 1, labels?: Record<string, string>): ActorDemand {
  return { kind: 'actor', key, request: compileRequest(options, { namespace: 'default' }), count, labels };
}

function groups(key: string, options: PlacementGroupOptions, count = 1): GroupDemand {
  return { kind: 'placement_group', key, request: compilePlacementGroup(options), count };
}

function run(input: Partial<AutoscalingInput> & Pick<AutoscalingInput, 'nodeTypes' | 'demands'>) {
  const d = decide({ nodes: [], ...input });
  return { ...d, one: d.demands[0] };
}

// ---- seed 000, "AutoScaler adaptation" 2.1–2.3 ----

test('seed 000 §2.1: affinity to a running actor whose node is full launches nothing and says why', () => {
  const r = run({
    nodeTypes: [type('cpu')],
    nodes: [live('n1', { used: 4, actors: [{ id: 'db' }] })],
    demands: [actors('near-db', { numCpus: 1, schedulingStrategy: actorAffinity(affinity('db')) })],
  });
  assert.equal(r.launch, {});
  assert.is(r.one.status, 'waiting');
  assert.match(r.one.reason!, /only nodes already in the cluster can take it/);
  assert.match(r.one.reason!, /actor affinity/);
});

test('seed 000 §2.2: five actors anti-affine to each other launch nodes until they are spread', () => {
  const r = run({
    nodeTypes: [type('cpu')],
    nodes: [live('n1')],
    demands: [actors('web', { numCpus: 1, schedulingStrategy: actorAffinity(labelNotIn('app', ['web'])) }, 5, { app: 'web' })],
  });
  assert.equal(r.launch, { cpu: 4 });
  assert.is(r.one.onExisting, 1);
  assert.is(r.one.onNew, 4);
  assert.is(r.one.status, 'placed');
});

test('seed 000 §2.2: anti-affine actors beyond maxWorkers wait, and the reason names the type at its limit', () => {
  const r = run({
    nodeTypes: [type('cpu', { max: 2 })],
    demands: [actors('web', { numCpus: 1, schedulingStrategy: actorAffinity(labelNotIn('app', ['web'])) }, 5, { app: 'web' })],
  });
  assert.equal(r.launch, { cpu: 2 });
  assert.is(r.one.waiting, 3);
  assert.is(r.one.atMax, true);
  assert.match(r.one.reason!, /cpu could take it but is at maxWorkers/);
});

test('seed 000 §2.3: soft affinity to an actor on a full node launches a node with the resources', () => {
  const r = run({
    nodeTypes: [type('cpu')],
    nodes: [live('n1', { used: 4, actors: [{ id: 'db' }] })],
    demands: [actors('near-db', { numCpus: 1, schedulingStrategy: actorAffinity(affinity('db', true)) })],
  });
  assert.equal(r.launch, { cpu: 1 });
  assert.is(r.one.onNew, 1);
});

test('seed 000: an actor whose peer is pending in the same round joins it on a new node', () => {
  const r = run({
    nodeTypes: [type('cpu')],
    demands: [
      actors('follower', { numCpus: 1, schedulingStrategy: actorAffinity(labelIn('role', ['leader'])) }),
      actors('leader', { numCpus: 1 }, 1, { role: 'leader' }),
    ],
  });
  assert.equal(r.launch, { cpu: 1 });
  assert.equal(r.demands.map((d) => d.status), ['placed', 'placed']);
});

// ---- seed 001, "AutoScaler adaptation" 1 and 5 ----

test('seed 001 §5: node affinity to a type label launches that type and no other', () => {
  const r = run({
    nodeTypes: [type('4c8g', { labels: { instance: '4C8G' } }), type('8c16g', { cpu: 8, labels: { instance: '8C16G' } })],
    demands: [actors('a', { numCpus: 1, schedulingStrategy: nodeAffinity(labelIn('instance', ['8C16G'])) }, 3)],
  });
  assert.equal(r.launch, { '8c16g': 1 });
});

test('seed 001 §5: a selector on a unique label (a node IP) launches nothing', () => {
  const r = run({
    nodeTypes: [type('cpu')],
    nodes: [live('n1', { used: 4, labels: { 'orrery.io/node-ip': '10.0.0.7' } })],
    demands: [actors('pinned', { numCpus: 1, labelSelector: { 'orrery.io/node-ip': '10.0.0.7' } })],
  });
  assert.equal(r.launch, {});
  assert.is(r.one.status, 'waiting');
  assert.match(r.one.reason!, /no node type can take it/);
});

test('seed 001 §5: the same selector with no such node is infeasible, with the scheduler\'s reason', () => {
  const r = run({
    nodeTypes: [type('cpu')],
    demands: [actors('pinned', { numCpus: 1, labelSelector: { 'orrery.io/node-ip': '10.0.0.7' } })],
  });
  assert.equal(r.launch, {});
  assert.is(r.one.status, 'infeasible');
  assert.match(r.one.reason!, /^no node type can take it: 0\/1 node types fit: 1 type\(s\) didn't match/);
});

test('seed 001 §5: a soft node affinity launches the matching type when one exists', () => {
  const r = run({
    nodeTypes: [type('small', { cpu: 2 }), type('zoned', { cpu: 8, labels: { zone: 'usa-1' } })],
    demands: [actors('a', { numCpus: 1, schedulingStrategy: nodeAffinity(labelIn('zone', ['usa-1'], true)) })],
  });
  assert.equal(r.launch, { zoned: 1 });
});

test('seed 001 §5: a soft node affinity no type meets launches any type with the resources', () => {
  const r = run({
    nodeTypes: [type('small', { cpu: 2 }), type('big', { cpu: 8 })],
    demands: [actors('a', { numCpus: 1, schedulingStrategy: nodeAffinity(labelIn('zone', ['mars'], true)) })],
  });
  assert.equal(r.launch, { small: 1 });
});

test('seed 001 §2: demands differing only in node affinity are decided apart', () => {
  const r = run({
    nodeTypes: [type('gpu', { gpu: 1, labels: { has_gpu: 'true' } }), type('cpu', { labels: { has_gpu: 'false' } })],
    demands: [
      actors('exists', { numCpus: 1, schedulingStrategy: nodeAffinity(labelIn('has_gpu', ['true'])) }),
      actors('false', { numCpus: 1, schedulingStrategy: nodeAffinity(labelIn('has_gpu', ['false'])) }, 2),
    ],
  });
  assert.equal(r.launch, { cpu: 1, gpu: 1 });
});

test('hard node-id affinity launches nothing: the pinned node is the only answer', () => {
  const r = run({
    nodeTypes: [type('cpu')],
    nodes: [live('n1', { used: 4 })],
    demands: [actors('a', { numCpus: 1, schedulingStrategy: nodeIdAffinity('n1') })],
  });
  assert.equal(r.launch, {});
  assert.match(r.one.reason!, /pinned to node n1/);
});

test('soft node-id affinity to a busy node waits for it unless spillOnUnavailable', () => {
  const base = { nodeTypes: [type('cpu')], nodes: [live('n1', { used: 4 })] };
  const waits = run({ ...base, demands: [actors('a', { numCpus: 1, schedulingStrategy: nodeIdAffinity('n1', { soft: true }) })] });
  assert.equal(waits.launch, {});
  assert.match(waits.one.reason!, /waits for node n1/);
  const spills = run({ ...base, demands: [actors('a', { numCpus: 1, schedulingStrategy: nodeIdAffinity('n1', { soft: true, spillOnUnavailable: true }) })] });
  assert.equal(spills.launch, { cpu: 1 });
});

// ---- seed 002: fallbacks and bundle selectors ----

test('seed 002: a fallback type is launched only when no node of the preferred selector can exist', () => {
  const types = [type('h100', { gpu: 2, labels: { 'orrery.io/accelerator-type': 'H100' }, max: 0 }), type('a100', { gpu: 4, labels: { 'orrery.io/accelerator-type': 'A100' } })];
  const options: PlacementOptions = { numGpus: 1, labelSelector: { 'orrery.io/accelerator-type': 'H100' }, fallbackStrategy: [{ labelSelector: { 'orrery.io/accelerator-type': 'A100' } }] };
  assert.equal(run({ nodeTypes: types, demands: [actors('g', options)] }).launch, { a100: 1 });
  // an H100 node exists but is busy: the scheduler waits for it rather than fall back
  const busy = live('h1', { labels: { 'orrery.io/accelerator-type': 'H100' } });
  const withBusy = run({ nodeTypes: types, nodes: [{ ...busy, total: parseResources({ CPU: 4, GPU: 2 }), available: parseResources({ CPU: 4 }) }], demands: [actors('g', options)] });
  assert.equal(withBusy.launch, {});
  assert.is(withBusy.one.status, 'waiting');
  // with room for H100s, the preferred type wins
  const preferred = run({ nodeTypes: [{ ...types[0], maxWorkers: 1 }, types[1]], demands: [actors('g', options)] });
  assert.equal(preferred.launch, { h100: 1 });
});

test('seed 002: per-bundle selectors launch a node of each type the bundles name', () => {
  const r = run({
    nodeTypes: [type('cpu', { labels: { kind: 'cpu' } }), type('gpu', { gpu: 1, labels: { kind: 'gpu' } })],
    demands: [groups('pg', { bundles: [{ CPU: 1 }, { GPU: 1 }], strategy: 'SPREAD', bundleLabelSelector: [{ kind: 'cpu' }, { kind: 'gpu' }] })],
  });
  assert.equal(r.launch, { cpu: 1, gpu: 1 });
  assert.is(r.one.status, 'placed');
});

// ---- placement groups ----

test('a STRICT_SPREAD group of n bundles launches n nodes', () => {
  const r = run({ nodeTypes: [type('cpu')], demands: [groups('pg', { bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' })] });
  assert.equal(r.launch, { cpu: 3 });
});

test('a STRICT_SPREAD group uses the live nodes first and launches the rest', () => {
  const r = run({ nodeTypes: [type('cpu')], nodes: [live('n1')], demands: [groups('pg', { bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' })] });
  assert.equal(r.launch, { cpu: 2 });
});

test('a PACK group that fits one node launches one; one that does not launches the fewest', () => {
  const one = run({ nodeTypes: [type('cpu')], demands: [groups('pg', { bundles: [{ CPU: 2 }, { CPU: 2 }], strategy: 'PACK' })] });
  assert.equal(one.launch, { cpu: 1 });
  const two = run({ nodeTypes: [type('cpu')], demands: [groups('pg', { bundles: [{ CPU: 2 }, { CPU: 2 }, { CPU: 2 }], strategy: 'PACK' })] });
  assert.equal(two.launch, { cpu: 2 });
});

test('a STRICT_PACK group larger than every type is infeasible, launching nothing', () => {
  const r = run({ nodeTypes: [type('cpu')], demands: [groups('pg', { bundles: [{ CPU: 3 }, { CPU: 3 }], strategy: 'STRICT_PACK' })] });
  assert.equal(r.launch, {});
  assert.is(r.one.status, 'infeasible');
  assert.match(r.one.reason!, /no combination of node types can take it/);
});

test('a STRICT_SPREAD group wider than maxWorkers waits at maxWorkers', () => {
  const r = run({ nodeTypes: [type('cpu', { max: 2 })], demands: [groups('pg', { bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' })] });
  assert.equal(r.launch, {});
  assert.is(r.one.status, 'waiting');
});

// ---- seed 003, "AutoScaler adaptation" 5.4 and §6 ----

const gpuTypes = () => [type('cpu', { labels: { type: 'cpu' } }), type('gpu', { gpu: 1, labels: { type: 'gpu' }, taints: { gpu_node: 'true' } })];

test('seed 003 §5.4: a plain actor never launches a type whose taints it does not tolerate', () => {
  const r = run({ nodeTypes: [type('gpu', { cpu: 16, gpu: 1, taints: { gpu_node: 'true' } })], demands: [actors('plain', { numCpus: 1 })] });
  assert.equal(r.launch, {});
  assert.is(r.one.status, 'infeasible');
  assert.match(r.one.reason!, /^no node type can take it: 0\/1 node types fit: 1 type\(s\) had untolerated taint \{gpu_node: true\}$/);
});

test('seed 003 §5.4: a PreferNoSchedule taint the demand does not tolerate also keeps the type out', () => {
  const r = run({ nodeTypes: [type('spot', { taints: { spot: 'true:PreferNoSchedule' } }), type('cpu', { cpu: 8 })], demands: [actors('plain', { numCpus: 1 })] });
  assert.equal(r.launch, { cpu: 1 });
});

test('seed 003 §5.4: with the CPU type at maxWorkers, a plain actor waits rather than take the GPU type', () => {
  const types = gpuTypes();
  const r = run({ nodeTypes: [{ ...types[0], maxWorkers: 1 }, types[1]], nodes: [live('c1', { used: 4, group: 'cpu', labels: { type: 'cpu' } })], demands: [actors('plain', { numCpus: 1 })] });
  assert.equal(r.launch, {});
  assert.is(r.one.atMax, true);
});

test('seed 003 §5.4: a selector on the GPU type with a toleration launches exactly one GPU node', () => {
  const r = run({ nodeTypes: gpuTypes(), demands: [actors('trainer', { numGpus: 1, labelSelector: { type: 'gpu' }, tolerations: { gpu_node: Exists() } })] });
  assert.equal(r.launch, { gpu: 1 });
});

test('seed 003 §5.2: demands differing only in tolerations are decided apart', () => {
  const r = run({
    nodeTypes: [type('cpu', { max: 0 }), type('gpu', { gpu: 1, taints: { gpu_node: 'true' } })],
    demands: [actors('tolerant', { numCpus: 1, tolerations: { gpu_node: Exists() } }), actors('plain', { numCpus: 1 }, 2)],
  });
  assert.equal(r.launch, { gpu: 1 });
  assert.equal(r.demands.map((d) => d.status), ['placed', 'waiting']);
});

test('seed 003 §6: a dynamic taint on a live node of a type launches another node of that type', () => {
  const r = run({
    nodeTypes: [type('a', { labels: { type: 'a' } })],
    nodes: [live('a1', { group: 'a', labels: { type: 'a' }, taints: { reserved: 'job-7' } })],
    demands: [actors('plain', { numCpus: 1, labelSelector: { type: 'a' } })],
  });
  assert.equal(r.launch, { a: 1 });
});

test('seed 003 follow-on: a type holding a rare resource carries its taint, so plain work never launches it', () => {
  const types = [type('gpu', { cpu: 8, gpu: 1 }), type('cpu', { cpu: 2 })];
  const plain = decide({ nodeTypes: types, nodes: [], demands: [actors('plain', { numCpus: 4 })], rareResources: ['GPU'] });
  assert.equal(plain.launch, {});
  const gpuReq = compileRequest({ numCpus: 1, numGpus: 1 }, { namespace: 'default', rareResources: ['GPU'] });
  const gpu = decide({ nodeTypes: types, nodes: [], demands: [{ kind: 'actor', key: 'g', request: gpuReq, count: 1 }], rareResources: ['GPU'] });
  assert.equal(gpu.launch, { gpu: 1 });
});

// ---- bin-packing, limits, minWorkers ----

test('minWorkers are launched first and used by the demands', () => {
  const r = run({ nodeTypes: [type('cpu', { min: 2 })], demands: [actors('a', { numCpus: 1 }, 6)] });
  assert.equal(r.forMinWorkers, { cpu: 2 });
  assert.equal(r.launch, { cpu: 2 });
  assert.is(r.one.onNew, 6);
});

test('live nodes of a type count toward its minWorkers and maxWorkers; launches in flight too', () => {
  const r = run({
    nodeTypes: [type('cpu', { min: 2, max: 3 })],
    nodes: [live('c1', { used: 4, group: 'cpu' })],
    launching: { cpu: 1 },
    demands: [actors('a', { numCpus: 4 }, 3)],
  });
  assert.equal(r.forMinWorkers, {});
  assert.equal(r.launch, { cpu: 1 });
  assert.is(r.one.onExisting, 1);
  assert.is(r.one.onNew, 1);
  assert.is(r.one.waiting, 1);
});

test('demands share the nodes the round launches', () => {
  const r = run({ nodeTypes: [type('cpu')], demands: [actors('a', { numCpus: 2 }), actors('b', { numCpus: 2 })] });
  assert.equal(r.launch, { cpu: 1 });
});

test('the fewest nodes win without costs; the cheapest set wins with them', () => {
  const demand = [actors('a', { numCpus: 1 }, 8)];
  assert.equal(run({ nodeTypes: [type('small', { cpu: 2 }), type('big', { cpu: 8 })], demands: demand }).launch, { big: 1 });
  assert.equal(run({ nodeTypes: [type('small', { cpu: 2, cost: 1 }), type('big', { cpu: 8, cost: 5 })], demands: demand }).launch, { small: 4 });
});

test('work that fits on the live nodes launches nothing', () => {
  const r = run({ nodeTypes: [type('cpu')], nodes: [live('n1'), live('n2')], demands: [actors('a', { numCpus: 1 }, 8)] });
  assert.equal(r.launch, {});
  assert.is(r.one.onExisting, 8);
});

test('a DRAINING live node takes nothing, so the demand launches', () => {
  const r = run({ nodeTypes: [type('cpu')], nodes: [{ ...live('n1'), state: 'DRAINING' }], demands: [actors('a', { numCpus: 1 })] });
  assert.equal(r.launch, { cpu: 1 });
});

test('the decision is reproducible for a seed', () => {
  const input: AutoscalingInput = {
    nodeTypes: [type('cpu'), type('big', { cpu: 16 })],
    nodes: [live('n1', { used: 2 })],
    demands: [actors('a', { numCpus: 1, schedulingStrategy: 'SPREAD' }, 20), groups('pg', { bundles: [{ CPU: 2 }, { CPU: 2 }], strategy: 'SPREAD' }, 3)],
    seed: 7,
  };
  assert.equal(decide(input), decide(input));
});

test('a node type with In on a value it lacks is never launched for a hard selector', () => {
  const r = run({ nodeTypes: [type('cpu', { labels: { zone: 'a' } })], demands: [actors('a', { numCpus: 1, labelSelector: { zone: 'b' } })] });
  assert.equal(r.launch, {});
  assert.is(r.one.status, 'infeasible');
});

test.run();
