// Seed 003: taints and tolerations — GPU-node isolation, node isolation by dynamic taints,
// PreferNoSchedule, and automatic rare-resource isolation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DoesNotExist, Exists, In, NotIn, parseResources, parseTaints, rareResourceTaints, type Condition } from '../../../lib/index.ts';
import { cluster, decide, failureOf, landings, placedOn } from '../../support/cluster.ts';

const gpuCluster = () => cluster([{ id: 'gpu1', gpu: 1, taints: { gpu_node: 'true' } }, { id: 'cpu1' }]);

test('a plain actor never lands on the tainted GPU node', () => {
  assert.equal(landings(gpuCluster(), { numCpus: 1 }), ['cpu1']);
});

test('with the CPU node full, the plain actor waits and the message names the taint', () => {
  const s = gpuCluster();
  s.allocate('cpu1', { CPU: 40_000 });
  const f = failureOf(decide(s, { numCpus: 1 }));
  assert.is(f.message, '0/2 nodes are available: 1 node(s) had insufficient CPU, 1 node(s) had untolerated taint {gpu_node: true}.');
  assert.is(f.reason, 'resources');
  assert.is(f.code, 'unschedulable');
});

const tolerationCases: { name: string; taints: Record<string, string>; tol: Record<string, Condition>; want: boolean }[] = [
  { name: 'Exists tolerates any value', taints: { gpu_node: 'true' }, tol: { gpu_node: Exists() }, want: true },
  { name: 'In with the value tolerates', taints: { gpu_type: 'A100' }, tol: { gpu_type: In('A100') }, want: true },
  { name: 'In with another value does not', taints: { gpu_type: 'A100' }, tol: { gpu_type: In('V100') }, want: false },
  { name: 'NotIn excluding the value does not', taints: { gpu_type: 'A100' }, tol: { gpu_type: NotIn('A100') }, want: false },
  { name: 'a toleration for another key does not', taints: { gpu_node: 'true' }, tol: { other: Exists() }, want: false },
  { name: 'DoesNotExist never tolerates a present taint', taints: { gpu_node: 'true' }, tol: { gpu_node: DoesNotExist() }, want: false },
  { name: 'every taint needs a toleration', taints: { gpu_type: 'A100', 'memory-pressure': 'high' }, tol: { gpu_type: In('A100') }, want: false },
  { name: 'two tolerations cover two taints', taints: { gpu_type: 'A100', 'memory-pressure': 'high' }, tol: { gpu_type: In('A100'), 'memory-pressure': Exists() }, want: true },
];
for (const c of tolerationCases) {
  test(`toleration: ${c.name}`, () => {
    const s = cluster([{ id: 't', taints: c.taints }]);
    assert.is(decide(s, { numCpus: 1, tolerations: c.tol }).status === 'placed', c.want);
  });
}

test('node isolation: a dynamic taint stops new placements; removing it restores them', () => {
  const s = cluster([{ id: 'n1' }]);
  s.setNodeTaints('n1', parseTaints({ 'memory-pressure': 'high' }));
  const f = failureOf(decide(s, {}));
  assert.is(f.message, '0/1 nodes are available: 1 node(s) had untolerated taint {memory-pressure: high}.');
  assert.is(f.reason, 'constraints');
  assert.is(f.code, 'infeasible');
  s.setNodeTaints('n1', []);
  assert.is(placedOn(decide(s, {})), 'n1');
});

test('PreferNoSchedule is avoided while another node will do, and used when none will', () => {
  const s = cluster([{ id: 'a', taints: { spot: 'true:PreferNoSchedule' } }, { id: 'b' }]);
  assert.equal(landings(s, {}), ['b']);
  s.allocate('b', { CPU: 40_000 });
  assert.is(placedOn(decide(s, {})), 'a');
  assert.is(placedOn(decide(s, { tolerations: { spot: Exists() } })), 'a');
});

test('NoExecute keeps new work off like NoSchedule', () => {
  const s = cluster([{ id: 'a', taints: { maint: 'now:NoExecute' } }]);
  assert.is(failureOf(decide(s, {})).message, '0/1 nodes are available: 1 node(s) had untolerated taint {maint: now}.');
});

test('rare resources: GPU nodes get the taint; GPU requests tolerate it automatically, CPU ones do not', () => {
  const total = parseResources({ CPU: 4, GPU: 1 });
  assert.equal(rareResourceTaints(total, ['GPU']), [{ key: 'orrery.io/rare-gpu', value: 'true', effect: 'NoSchedule' }]);
  assert.equal(rareResourceTaints(parseResources({ CPU: 4 }), ['GPU']), []);
  const s = cluster([{ id: 'g', gpu: 1, taints: { 'orrery.io/rare-gpu': 'true' } }, { id: 'c' }]);
  const rare = { rareResources: ['GPU'] };
  assert.is(placedOn(decide(s, { numGpus: 1 }, 1, rare)), 'g');
  assert.equal(landings(s, { numCpus: 1 }), ['c']);
  s.allocate('c', { CPU: 40_000 });
  assert.is(failureOf(decide(s, { numCpus: 1 }, 1, rare)).message, '0/2 nodes are available: 1 node(s) had insufficient CPU, 1 node(s) had untolerated taint {orrery.io/rare-gpu: true}.');
});

test('rare custom resources work the same way', () => {
  const s = cluster([{ id: 'r', resources: { my_rare: 1 }, taints: { 'orrery.io/rare-my_rare': 'true' } }, { id: 'c' }]);
  assert.is(placedOn(decide(s, { resources: { my_rare: 1 } }, 1, { rareResources: ['GPU', 'my_rare'] })), 'r');
});

test.run();
