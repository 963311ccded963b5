import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterState, CRITICAL_RESOURCES } from '../../../lib/cluster/cluster-state.ts';
import type { NodeInput } from '../../../lib/cluster/sched-node.ts';
import { InvalidResourceError, NodeNotFoundError, OrreryError } from '../../../lib/errors.ts';
import { ACTOR_ID_LABEL } from '../../../lib/labels/builtin.ts';
import { NODE_SCOPE, TAINT_SCOPE, actorScope } from '../../../lib/label-index/label-index.ts';
import { seededRng } from '../../../lib/random.ts';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import type { Taint } from '../../../lib/scheduling/taints.ts';

const R = parseResources;
const taint = (key: string, value: string, effect: Taint['effect'] = 'NoSchedule'): Taint => ({ key, value, effect });

/** Runs fn, which must throw an error of `cls` with this code and these detail fields. */
function expectError(fn: () => unknown, cls: new (...a: never[]) => OrreryError, want: { code: string; detail: Record<string, unknown> }): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, cls);
    assert.instance(err, OrreryError);
    const e = err as OrreryError;
    assert.is(e.code, want.code);
    assert.equal({ ...e.detail }, want.detail);
    return;
  }
  assert.unreachable(`expected ${cls.name}`);
}

function cluster(nodes: NodeInput[], opts?: { spreadThreshold?: number }): ClusterState {
  const state = new ClusterState(opts);
  for (const n of nodes) state.addNode(n);
  return state;
}

/** The node ids the order holds, front to back. */
function orderIds(state: ClusterState): string[] {
  return Array.from({ length: state.order.size }, (_, i) => state.order.at(i).id);
}

// ---- adding and removing nodes ----

test('addNode fills defaults, copies its input and indexes labels and taints', () => {
  const state = new ClusterState();
  const labels = { zone: 'a' };
  const total = R({ CPU: 4, GPU: 1 });
  const node = state.addNode({ nodeId: 'n1', labels, taints: [taint('gpu_node', 'true')], total });
  assert.equal(
    { id: node.id, name: node.name, state: node.state, labels: node.labels, total: node.total, available: node.available, score: node.score },
    { id: 'n1', name: 'n1', state: 'ALIVE', labels: { zone: 'a' }, total, available: total, score: 0 },
  );
  assert.is(state.node('n1'), node);
  labels.zone = 'changed';
  assert.equal(node.labels, { zone: 'a' }, 'later changes to the input do not reach the node');
  assert.is.not(node.available, total, 'available is a copy, not the total object');
  assert.ok(state.index.nodeHas(NODE_SCOPE, 'n1', 'zone', ['a']));
  assert.ok(state.index.nodeHas(TAINT_SCOPE, 'n1', 'gpu_node', ['true']));
  assert.equal(state.ids, ['n1']);
  assert.equal(orderIds(state), ['n1']);
});

test('addNode keeps a given name, state and available pool, and scores it', () => {
  const state = new ClusterState();
  const node = state.addNode({ nodeId: 'n1', name: 'worker-1', state: 'DRAINING', total: R({ CPU: 4 }), available: R({ CPU: 1 }) });
  assert.is(node.name, 'worker-1');
  assert.is(node.state, 'DRAINING');
  assert.equal(node.available, R({ CPU: 1 }));
  assert.is(node.score, 0.75);
});

test('addNode keeps ids sorted whatever the order nodes arrive in', () => {
  const state = cluster(['n3', 'n1', 'n4', 'n2', 'a'].map((id) => ({ nodeId: id, total: R({ CPU: 1 }) })));
  assert.equal(state.ids, ['a', 'n1', 'n2', 'n3', 'n4']);
  assert.equal(orderIds(state), ['a', 'n1', 'n2', 'n3', 'n4']);
});

test('addNode with an id already registered throws NODE_EXISTS and changes nothing', () => {
  const state = cluster([{ nodeId: 'n1', labels: { zone: 'a' }, total: R({ CPU: 1 }) }]);
  expectError(() => state.addNode({ nodeId: 'n1', labels: { zone: 'b' }, total: R({ CPU: 8 }) }), OrreryError, {
    code: 'NODE_EXISTS',
    detail: { nodeId: 'n1' },
  });
  assert.equal(state.node('n1')!.total, R({ CPU: 1 }));
  assert.equal([...state.index.nodesByKey(NODE_SCOPE, 'zone')], ['n1']);
  assert.equal([...state.index.nodesByKeyValue(NODE_SCOPE, 'zone', ['b'])], []);
  assert.equal(state.ids, ['n1']);
  assert.is(state.order.size, 1);
});

test('removeNode clears node labels, taints and actor labels from the index', () => {
  const state = cluster([
    { nodeId: 'n1', labels: { zone: 'a' }, taints: [taint('gpu_node', 'true'), taint('pressure', 'high', 'PreferNoSchedule')], total: R({ CPU: 4 }) },
    { nodeId: 'n2', labels: { zone: 'a' }, total: R({ CPU: 4 }) },
  ]);
  state.addActor('n1', { actorId: 'a1', namespace: 'default', labels: { app: 'web' } });
  state.addActor('n1', { actorId: 'a2', namespace: 'other', labels: { app: 'web' } });
  state.addActor('n2', { actorId: 'a3', namespace: 'default', labels: { app: 'web' } });
  assert.ok(state.hasPreferNoScheduleTaints);
  state.removeNode('n1');
  assert.is(state.node('n1'), undefined);
  assert.equal([...state.index.nodesByKey(NODE_SCOPE, 'zone')], ['n2']);
  assert.equal([...state.index.nodesByKey(TAINT_SCOPE, 'gpu_node')], []);
  assert.equal([...state.index.nodesByKey(TAINT_SCOPE, 'pressure')], []);
  assert.equal([...state.index.nodesByKey(actorScope('default'), 'app')], ['n2']);
  assert.equal([...state.index.nodesByKey(actorScope('other'), 'app')], []);
  assert.equal([...state.index.nodesByKey(actorScope('default'), ACTOR_ID_LABEL)], ['n2']);
  assert.is(state.hasPreferNoScheduleTaints, false);
  assert.equal(state.ids, ['n2']);
  assert.equal(orderIds(state), ['n2']);
});

test('a removed node id can be added again', () => {
  const state = cluster([{ nodeId: 'n1', labels: { zone: 'a' }, total: R({ CPU: 1 }) }]);
  state.removeNode('n1');
  state.addNode({ nodeId: 'n1', labels: { zone: 'b' }, total: R({ CPU: 2 }) });
  assert.equal([...state.index.nodesByKeyValue(NODE_SCOPE, 'zone', ['a'])], []);
  assert.equal([...state.index.nodesByKeyValue(NODE_SCOPE, 'zone', ['b'])], ['n1']);
  assert.equal(state.ids, ['n1']);
  assert.is(state.order.size, 1);
});

// ---- unknown node ids ----

const unknownIdCalls: { name: string; call: (s: ClusterState) => unknown }[] = [
  { name: 'removeNode', call: (s) => s.removeNode('ghost') },
  { name: 'setNodeState', call: (s) => s.setNodeState('ghost', 'DEAD') },
  { name: 'setNodeLabels', call: (s) => s.setNodeLabels('ghost', { a: 'b' }) },
  { name: 'setNodeTaints', call: (s) => s.setNodeTaints('ghost', []) },
  { name: 'allocate', call: (s) => s.allocate('ghost', R({ CPU: 1 })) },
  { name: 'release', call: (s) => s.release('ghost', R({ CPU: 1 })) },
  { name: 'setTotal', call: (s) => s.setTotal('ghost', {}, {}) },
  { name: 'addActor', call: (s) => s.addActor('ghost', { actorId: 'a1', namespace: 'default' }) },
  { name: 'removeActor', call: (s) => s.removeActor('ghost', 'a1') },
];

for (const c of unknownIdCalls) {
  test(`${c.name} on an unknown node throws NodeNotFoundError`, () => {
    const state = cluster([{ nodeId: 'n1', total: R({ CPU: 1 }) }]);
    expectError(() => c.call(state), NodeNotFoundError, { code: 'NODE_NOT_FOUND', detail: { nodeId: 'ghost' } });
    assert.equal(state.ids, ['n1']);
  });
}

test('node() of an unknown id is undefined', () => {
  assert.is(new ClusterState().node('ghost'), undefined);
});

// ---- labels, taints, state ----

test('setNodeLabels reindexes: old labels leave, new ones arrive, other nodes keep theirs', () => {
  const state = cluster([
    { nodeId: 'n1', labels: { zone: 'a', rack: 'r1' }, total: R({ CPU: 1 }) },
    { nodeId: 'n2', labels: { zone: 'a' }, total: R({ CPU: 1 }) },
  ]);
  const given = { zone: 'b', gpu: 'A100' };
  state.setNodeLabels('n1', given);
  given.zone = 'changed';
  assert.equal(state.node('n1')!.labels, { zone: 'b', gpu: 'A100' });
  assert.equal([...state.index.nodesByKeyValue(NODE_SCOPE, 'zone', ['a'])], ['n2']);
  assert.equal([...state.index.nodesByKeyValue(NODE_SCOPE, 'zone', ['b'])], ['n1']);
  assert.equal([...state.index.nodesByKey(NODE_SCOPE, 'rack')], []);
  assert.equal([...state.index.nodesByKey(NODE_SCOPE, 'gpu')], ['n1']);
  assert.equal([...state.index.nodesByKeyValue(NODE_SCOPE, 'zone', ['changed'])], []);
});

test('setNodeTaints reindexes taints and the PreferNoSchedule bookkeeping', () => {
  const state = cluster([{ nodeId: 'n1', taints: [taint('gpu_node', 'true')], total: R({ CPU: 1 }) }]);
  state.setNodeTaints('n1', [taint('pressure', 'high', 'PreferNoSchedule'), taint('evict', 'now', 'NoExecute')]);
  assert.equal(state.node('n1')!.taints, [taint('pressure', 'high', 'PreferNoSchedule'), taint('evict', 'now', 'NoExecute')]);
  assert.equal([...state.index.nodesByKey(TAINT_SCOPE, 'gpu_node')], []);
  assert.ok(state.index.nodeHas(TAINT_SCOPE, 'n1', 'pressure', ['high']));
  assert.ok(state.index.nodeHas(TAINT_SCOPE, 'n1', 'evict', ['now']));
  assert.ok(state.hasPreferNoScheduleTaints);
  state.setNodeTaints('n1', []);
  assert.is(state.hasPreferNoScheduleTaints, false);
  assert.equal([...state.index.nodesByKey(TAINT_SCOPE, 'pressure')], []);
});

const preferCases: { name: string; steps: (s: ClusterState) => void; want: boolean }[] = [
  { name: 'no taints', steps: () => {}, want: false },
  { name: 'only NoSchedule and NoExecute taints', steps: (s) => s.setNodeTaints('n1', [taint('a', 'x'), taint('b', 'y', 'NoExecute')]), want: false },
  { name: 'one PreferNoSchedule taint', steps: (s) => s.setNodeTaints('n1', [taint('a', 'x', 'PreferNoSchedule')]), want: true },
  {
    name: 'two nodes with one, one cleared',
    steps: (s) => {
      s.setNodeTaints('n1', [taint('a', 'x', 'PreferNoSchedule')]);
      s.setNodeTaints('n2', [taint('a', 'x', 'PreferNoSchedule')]);
      s.setNodeTaints('n1', []);
    },
    want: true,
  },
  {
    name: 'two nodes with one, both cleared',
    steps: (s) => {
      s.setNodeTaints('n1', [taint('a', 'x', 'PreferNoSchedule')]);
      s.setNodeTaints('n2', [taint('b', 'y', 'PreferNoSchedule')]);
      s.setNodeTaints('n1', [taint('c', 'z')]);
      s.setNodeTaints('n2', []);
    },
    want: false,
  },
  {
    name: 'the same taints set twice count once',
    steps: (s) => {
      s.setNodeTaints('n1', [taint('a', 'x', 'PreferNoSchedule')]);
      s.setNodeTaints('n1', [taint('a', 'x', 'PreferNoSchedule')]);
      s.setNodeTaints('n1', []);
    },
    want: false,
  },
  {
    name: 'a node with one is removed',
    steps: (s) => {
      s.setNodeTaints('n2', [taint('a', 'x', 'PreferNoSchedule')]);
      s.removeNode('n2');
    },
    want: false,
  },
  {
    name: 'a node is added with one',
    steps: (s) => s.addNode({ nodeId: 'n3', taints: [taint('a', 'x', 'PreferNoSchedule')], total: {} }),
    want: true,
  },
];

for (const c of preferCases) {
  test(`hasPreferNoScheduleTaints: ${c.name}`, () => {
    const state = cluster([
      { nodeId: 'n1', total: R({ CPU: 1 }) },
      { nodeId: 'n2', total: R({ CPU: 1 }) },
    ]);
    c.steps(state);
    assert.is(state.hasPreferNoScheduleTaints, c.want);
  });
}

const P = (key: string): Taint => taint(key, 'x', 'PreferNoSchedule');
const maxPreferCases: { name: string; steps: (s: ClusterState) => void; want: number }[] = [
  { name: 'no taints', steps: () => {}, want: 0 },
  { name: 'one node with two', steps: (s) => s.setNodeTaints('n1', [P('a'), P('b')]), want: 2 },
  { name: 'NoSchedule and NoExecute do not count', steps: (s) => s.setNodeTaints('n1', [P('a'), taint('b', 'x', 'NoSchedule'), taint('c', 'x', 'NoExecute')]), want: 1 },
  { name: 'the largest of two nodes', steps: (s) => (s.setNodeTaints('n1', [P('a')]), s.setNodeTaints('n2', [P('a'), P('b'), P('c')])), want: 3 },
  { name: 'after the largest is cleared', steps: (s) => (s.setNodeTaints('n1', [P('a')]), s.setNodeTaints('n2', [P('a'), P('b')]), s.setNodeTaints('n2', [])), want: 1 },
  { name: 'after the largest node is removed', steps: (s) => (s.setNodeTaints('n1', [P('a')]), s.setNodeTaints('n2', [P('a'), P('b')]), s.removeNode('n2')), want: 1 },
];

for (const c of maxPreferCases) {
  test(`maxPreferNoScheduleTaints: ${c.name}`, () => {
    const state = cluster([
      { nodeId: 'n1', total: R({ CPU: 1 }) },
      { nodeId: 'n2', total: R({ CPU: 1 }) },
    ]);
    c.steps(state);
    assert.is(state.maxPreferNoScheduleTaints, c.want);
  });
}

test('topology(key): actor labels per domain, built from the actors already placed and kept up to date', () => {
  const state = cluster([
    { nodeId: 'n1', labels: { zone: 'a' }, total: R({ CPU: 1 }) },
    { nodeId: 'n2', labels: { zone: 'a' }, total: R({ CPU: 1 }) },
    { nodeId: 'n3', labels: { zone: 'b' }, total: R({ CPU: 1 }) },
    { nodeId: 'n4', total: R({ CPU: 1 }) },
  ]);
  state.addActor('n1', { actorId: 'w1', namespace: 'ns', labels: { app: 'web' } });
  state.addActor('n4', { actorId: 'w0', namespace: 'ns', labels: { app: 'web' } });
  const zones = state.topology('zone');
  const web = (zone: string) => zones.refCount(actorScope('ns'), zone, 'app', 'web');
  assert.equal([web('a'), web('b')], [1, 0], 'built from what was there; the node without a zone is in no domain');
  state.addActor('n2', { actorId: 'w2', namespace: 'ns', labels: { app: 'web' } });
  assert.is(web('a'), 2, 'reference-counted per domain');
  state.removeActor('n1', 'w1');
  assert.is(web('a'), 1);
  state.setNodeLabels('n2', { zone: 'b' });
  assert.equal([web('a'), web('b')], [0, 1], 'a relabelled node takes its actors to the new domain');
  state.setNodeLabels('n4', { zone: 'b' });
  assert.is(web('b'), 2, 'a node that gains the label brings its actors in');
  state.removeNode('n4');
  assert.is(web('b'), 1);
  assert.is(zones.nodeHas(actorScope('ns'), 'b', ACTOR_ID_LABEL, ['w2']), true, 'actor ids are aggregated too');
});

test('setNodeState changes only the state', () => {
  const state = cluster([{ nodeId: 'n1', labels: { zone: 'a' }, total: R({ CPU: 1 }) }]);
  state.setNodeState('n1', 'DEAD');
  assert.is(state.node('n1')!.state, 'DEAD');
  assert.ok(state.index.nodeHas(NODE_SCOPE, 'n1', 'zone'));
  assert.equal(state.ids, ['n1']);
});

// ---- allocate / release ----

test('allocate and release move resources between available and in use', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 4, GPU: 2, memory: 1000 }) }]);
  state.allocate('n1', R({ CPU: 1.5, GPU: 1, memory: 600 }));
  assert.equal(state.node('n1')!.available, R({ CPU: 2.5, GPU: 1, memory: 400 }));
  state.allocate('n1', R({ CPU: 2.5 }));
  assert.equal(state.node('n1')!.available, { ...R({ GPU: 1, memory: 400 }), CPU: 0 });
  state.release('n1', R({ CPU: 4, GPU: 1, memory: 600 }));
  assert.equal(state.node('n1')!.available, R({ CPU: 4, GPU: 2, memory: 1000 }));
});

const overAllocations: { name: string; total: Record<string, number>; used?: Record<string, number>; take: Record<string, number>; resource: string; value: number; held: number }[] = [
  { name: 'more CPU than the node has', total: { CPU: 2 }, take: { CPU: 3 }, resource: 'CPU', value: 3, held: 2 },
  { name: 'more than is left', total: { CPU: 4 }, used: { CPU: 3.5 }, take: { CPU: 1 }, resource: 'CPU', value: 1, held: 0.5 },
  { name: 'a resource the node lacks', total: { CPU: 4 }, take: { GPU: 1 }, resource: 'GPU', value: 1, held: 0 },
  { name: 'one byte too many', total: { memory: 100 }, take: { memory: 101 }, resource: 'memory', value: 101, held: 100 },
];

for (const c of overAllocations) {
  test(`allocate throws and changes nothing: ${c.name}`, () => {
    const state = cluster([{ nodeId: 'n1', total: R(c.total) }]);
    if (c.used) state.allocate('n1', R(c.used));
    const before = { ...state.node('n1')!.available };
    const score = state.node('n1')!.score;
    try {
      state.allocate('n1', R(c.take));
      assert.unreachable('expected an InvalidResourceError');
    } catch (err) {
      assert.instance(err, InvalidResourceError);
      const e = err as InvalidResourceError;
      assert.is(e.code, 'INVALID_RESOURCE');
      assert.equal({ resource: e.resource, value: e.value, rule: e.rule }, { resource: c.resource, value: c.value, rule: `cannot take more than the ${c.held} held` });
    }
    assert.equal(state.node('n1')!.available, before);
    assert.is(state.node('n1')!.score, score);
  });
}

const overReleases: { name: string; total: Record<string, number>; used?: Record<string, number>; give: Record<string, number> }[] = [
  { name: 'releasing on an idle node', total: { CPU: 4 }, give: { CPU: 1 } },
  { name: 'releasing more than was taken', total: { CPU: 4 }, used: { CPU: 1 }, give: { CPU: 1.0001 } },
  { name: 'releasing a resource the node never had', total: { CPU: 4 }, used: { CPU: 1 }, give: { GPU: 1 } },
];

for (const c of overReleases) {
  test(`release throws RESOURCE_OVERFLOW and changes nothing: ${c.name}`, () => {
    const state = cluster([{ nodeId: 'n1', total: R(c.total) }]);
    if (c.used) state.allocate('n1', R(c.used));
    const before = { ...state.node('n1')!.available };
    expectError(() => state.release('n1', R(c.give)), OrreryError, { code: 'RESOURCE_OVERFLOW', detail: { nodeId: 'n1' } });
    assert.equal(state.node('n1')!.available, before);
  });
}

test('setTotal replaces total and available and rescores', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 4 }) }]);
  state.setTotal('n1', R({ CPU: 4, CPU_group_pg: 2 }), R({ CPU: 1, CPU_group_pg: 2 }));
  const node = state.node('n1')!;
  assert.equal(node.total, R({ CPU: 4, CPU_group_pg: 2 }));
  assert.equal(node.available, R({ CPU: 1, CPU_group_pg: 2 }));
  assert.is(node.score, 0.75);
  assert.is(state.order.rankOf(node), 0);
});

test('setResources changes only the names given, in place: removed names leave both sets, then new values', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 4, CPU_group_a: 1, CPU_group_b: 2 }), available: R({ CPU: 1, CPU_group_a: 1, CPU_group_b: 2 }) }]);
  const node = state.node('n1')!;
  const [total, available] = [node.total, node.available];
  state.setResources('n1', { total: R({ CPU_group_c: 3 }), available: R({ CPU: 3, CPU_group_c: 3, CPU_group_b: 1 }), removed: ['CPU_group_a'] });
  assert.equal(node.total, R({ CPU: 4, CPU_group_b: 2, CPU_group_c: 3 }));
  assert.equal(node.available, R({ CPU: 3, CPU_group_b: 1, CPU_group_c: 3 }));
  assert.ok(node.total === total && node.available === available, 'the same objects, changed in place');
  assert.is(node.score, 0, 'rescored: 1 of 4 CPUs used is below the threshold');
  state.setResources('n1', { available: R({ CPU: 0.5 }) });
  assert.is(node.score, 0.875);
  assert.is(state.order.rankOf(node), 0);
  state.setResources('n1', {});
  assert.equal(node.total, R({ CPU: 4, CPU_group_b: 2, CPU_group_c: 3 }), 'no changes, nothing changed');
  state.setResources('n1', { removed: ['not_there'] });
  assert.equal(node.available, R({ CPU: 0.5, CPU_group_b: 1, CPU_group_c: 3 }), 'removing a name the node does not have is harmless');
  expectError(() => state.setResources('nope', {}), NodeNotFoundError, { code: 'NODE_NOT_FOUND', detail: { nodeId: 'nope' } });
});

test('setResources keeps the order sorted by (score, id)', () => {
  const state = cluster(['n1', 'n2', 'n3'].map((id) => ({ nodeId: id, total: R({ CPU: 10 }) })));
  state.setResources('n1', { available: R({ CPU: 1 }) });
  state.setResources('n3', { total: R({ CPU: 20 }), available: R({ CPU: 5 }) });
  assert.equal(orderIds(state), ['n2', 'n3', 'n1']);
});

test('trackResourceChanges: each change lists the names it touched, per node, until taken', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 4 }) }, { nodeId: 'n2', total: R({ CPU: 4 }) }]);
  assert.is(state.takeResourceChanges('n1'), 'all', 'without tracking, a reader must compare everything');
  state.trackResourceChanges();
  assert.is(state.takeResourceChanges('n1'), undefined, 'nothing changed since tracking began');
  state.allocate('n1', R({ CPU: 1 }));
  state.growTotal('n1', R({ CPU_group_a: 1, CPU_group_0_a: 1 }));
  state.setResources('n2', { available: R({ GPU: 1 }), removed: ['old'] });
  assert.equal([...(state.takeResourceChanges('n1') as Set<string>)].sort(), ['CPU', 'CPU_group_0_a', 'CPU_group_a']);
  assert.is(state.takeResourceChanges('n1'), undefined, 'taken: a new list starts');
  assert.equal([...(state.takeResourceChanges('n2') as Set<string>)].sort(), ['GPU', 'old']);
  state.shrinkTotal('n1', R({ CPU_group_a: 1 }));
  state.release('n1', R({ CPU: 1 }));
  assert.equal([...(state.takeResourceChanges('n1') as Set<string>)].sort(), ['CPU', 'CPU_group_a']);
  state.allocate('n2', R({ CPU: 1 }));
  state.setTotal('n2', R({ CPU: 8 }), R({ CPU: 8 }));
  state.allocate('n2', R({ CPU: 1 }));
  assert.is(state.takeResourceChanges('n2'), 'all', 'replaced whole');
  state.addNode({ nodeId: 'n3', total: R({ CPU: 1 }) });
  assert.is(state.takeResourceChanges('n3'), 'all', 'a new node is new whole');
  state.allocate('n1', R({ CPU: 1 }));
  state.removeNode('n1');
  state.addNode({ nodeId: 'n1', total: R({ CPU: 4 }) });
  assert.is(state.takeResourceChanges('n1'), 'all', 'a node that left and came back');
});

// ---- scores ----

const scoreCases: { name: string; total: Record<string, number>; used: Record<string, number>; threshold?: number; want: number }[] = [
  { name: 'idle', total: { CPU: 4 }, used: {}, want: 0 },
  { name: 'a quarter used is below the threshold', total: { CPU: 4 }, used: { CPU: 1 }, want: 0 },
  { name: 'just below the threshold', total: { CPU: 4 }, used: { CPU: 1.9999 }, want: 0 },
  { name: 'at the threshold: the utilization', total: { CPU: 4 }, used: { CPU: 2 }, want: 0.5 },
  { name: 'above the threshold: the utilization', total: { CPU: 4 }, used: { CPU: 3 }, want: 0.75 },
  { name: 'full', total: { CPU: 4 }, used: { CPU: 4 }, want: 1 },
  { name: 'the most used critical resource decides', total: { CPU: 4, GPU: 4 }, used: { CPU: 1, GPU: 3 }, want: 0.75 },
  { name: 'memory counts', total: { CPU: 4, memory: 1000 }, used: { memory: 900 }, want: 0.9 },
  { name: 'custom resources do not count', total: { CPU: 4, my_res: 1 }, used: { my_res: 1 }, want: 0 },
  { name: 'a node without critical resources', total: { my_res: 2 }, used: { my_res: 2 }, want: 0 },
  { name: 'threshold 0: utilization always', total: { CPU: 4 }, used: { CPU: 1 }, threshold: 0, want: 0.25 },
  { name: 'threshold 1: zero until full', total: { CPU: 4 }, used: { CPU: 3.9 }, threshold: 1, want: 0 },
];

for (const c of scoreCases) {
  test(`score: ${c.name}`, () => {
    const state = cluster([{ nodeId: 'n1', total: R(c.total) }], c.threshold === undefined ? undefined : { spreadThreshold: c.threshold });
    state.allocate('n1', R(c.used));
    const node = state.node('n1')!;
    assert.is(node.score, c.want);
    assert.is(state.scoreOf(node), c.want);
  });
}

test('the default spread threshold is Ray\'s 0.5 and the critical resources are CPU, GPU, memory', () => {
  assert.is(new ClusterState().spreadThreshold, 0.5);
  assert.equal([...CRITICAL_RESOURCES], ['CPU', 'GPU', 'memory']);
});

test('order is (score, id): idle nodes by id, loaded ones after them least loaded first', () => {
  const state = cluster(['n1', 'n2', 'n3', 'n4'].map((id) => ({ nodeId: id, total: R({ CPU: 10 }) })));
  state.allocate('n1', R({ CPU: 9 }));
  state.allocate('n2', R({ CPU: 6 }));
  state.allocate('n4', R({ CPU: 2 }));
  assert.equal(orderIds(state), ['n3', 'n4', 'n2', 'n1']);
  state.release('n1', R({ CPU: 9 }));
  assert.equal(orderIds(state), ['n1', 'n3', 'n4', 'n2']);
});

test('order stays sorted by (score, id) through seeded random allocate/release (checked against a fresh sort)', () => {
  const rng = seededRng(2024);
  const ids = Array.from({ length: 25 }, (_, i) => `node-${String(i).padStart(2, '0')}`);
  const state = cluster(ids.map((id, i) => ({ nodeId: id, total: R({ CPU: 1 + (i % 5), GPU: i % 3, memory: 1000 * (1 + (i % 4)) }) })));
  const held = new Map<string, Record<string, number>[]>(ids.map((id) => [id, []]));
  const shapes = [{ CPU: 0.5 }, { CPU: 1 }, { GPU: 1 }, { memory: 500 }, { CPU: 0.25, memory: 250 }].map((s) => R(s));
  for (let step = 0; step < 4000; step++) {
    const id = ids[Math.floor(rng() * ids.length)];
    const list = held.get(id)!;
    if (list.length && rng() < 0.45) {
      state.release(id, list.splice(Math.floor(rng() * list.length), 1)[0]);
    } else {
      const shape = shapes[Math.floor(rng() * shapes.length)];
      const node = state.node(id)!;
      if (Object.keys(shape).every((r) => (node.available[r] ?? 0) >= shape[r])) {
        state.allocate(id, shape);
        list.push(shape);
      }
    }
    if (step % 200 === 0 || step === 3999) {
      const fresh = [...state.nodes.values()]
        .map((n) => ({ id: n.id, score: state.scoreOf(n) }))
        .sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : 1));
      assert.equal(orderIds(state), fresh.map((f) => f.id), `step ${step}`);
      for (const f of fresh) assert.is(state.node(f.id)!.score, f.score);
      for (let i = 0; i < fresh.length; i++) assert.is(state.order.rankOf(state.node(fresh[i].id)!), i);
    }
  }
});

// ---- actors ----

test('addActor indexes the actor labels and its automatic actor-id label in its namespace', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 1 }) }]);
  state.addActor('n1', { actorId: 'a1', namespace: 'default', labels: { app: 'web' } });
  const placed = state.node('n1')!.actors.get('a1')!;
  assert.equal(placed, { actorId: 'a1', namespace: 'default', labels: { app: 'web', [ACTOR_ID_LABEL]: 'a1' } });
  assert.ok(state.index.nodeHas(actorScope('default'), 'n1', 'app', ['web']));
  assert.ok(state.index.nodeHas(actorScope('default'), 'n1', ACTOR_ID_LABEL, ['a1']));
  assert.is(state.index.nodeHas(actorScope('other'), 'n1', ACTOR_ID_LABEL), false);
  assert.is(state.index.nodeHas(NODE_SCOPE, 'n1', 'app'), false);
});

test('addActor without labels still indexes the actor id; a user actor-id label is overridden', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 1 }) }]);
  state.addActor('n1', { actorId: 'a1', namespace: 'ns' });
  state.addActor('n1', { actorId: 'a2', namespace: 'ns', labels: { [ACTOR_ID_LABEL]: 'forged' } });
  assert.equal([...state.index.nodesByKeyValue(actorScope('ns'), ACTOR_ID_LABEL, ['a1', 'a2'])], ['n1']);
  assert.equal([...state.index.nodesByKeyValue(actorScope('ns'), ACTOR_ID_LABEL, ['forged'])], []);
});

test('actors in two namespaces with the same labels are kept apart', () => {
  const state = cluster([
    { nodeId: 'n1', total: R({ CPU: 1 }) },
    { nodeId: 'n2', total: R({ CPU: 1 }) },
  ]);
  state.addActor('n1', { actorId: 'a1', namespace: 'team-a', labels: { app: 'web' } });
  state.addActor('n2', { actorId: 'a2', namespace: 'team-b', labels: { app: 'web' } });
  assert.equal([...state.index.nodesByKeyValue(actorScope('team-a'), 'app', ['web'])], ['n1']);
  assert.equal([...state.index.nodesByKeyValue(actorScope('team-b'), 'app', ['web'])], ['n2']);
});

test('two actors sharing a label on one node: the node leaves the label set only when both are gone', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 1 }) }]);
  state.addActor('n1', { actorId: 'a1', namespace: 'default', labels: { app: 'web' } });
  state.addActor('n1', { actorId: 'a2', namespace: 'default', labels: { app: 'web' } });
  state.removeActor('n1', 'a1');
  assert.ok(state.index.nodeHas(actorScope('default'), 'n1', 'app', ['web']));
  assert.is(state.index.nodeHas(actorScope('default'), 'n1', ACTOR_ID_LABEL, ['a1']), false);
  state.removeActor('n1', 'a2');
  assert.is(state.index.nodeHas(actorScope('default'), 'n1', 'app'), false);
  assert.is(state.node('n1')!.actors.size, 0);
});

test('adding the same actor twice is one actor; removing an unknown actor is harmless', () => {
  const state = cluster([{ nodeId: 'n1', total: R({ CPU: 1 }) }]);
  state.addActor('n1', { actorId: 'a1', namespace: 'default', labels: { app: 'web' } });
  state.addActor('n1', { actorId: 'a1', namespace: 'default', labels: { app: 'web' } });
  assert.is(state.index.refCount(actorScope('default'), 'n1', 'app', 'web'), 1);
  state.removeActor('n1', 'nobody');
  state.removeActor('n1', 'a1');
  state.removeActor('n1', 'a1');
  assert.is(state.index.refCount(actorScope('default'), 'n1', 'app', 'web'), 0);
  assert.is(state.node('n1')!.actors.size, 0);
});

test.run();
