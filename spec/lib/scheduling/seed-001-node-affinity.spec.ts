// Seed 001: node labels and label-based node affinity — the five examples and the four
// "cannot be satisfied" cases.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { labelDoesNotExist, labelExists, labelIn, labelNotIn, nodeAffinity, nodeIdAffinity } from '../../../lib/index.ts';
import { cluster, decide, failureOf, landings, placedOn } from '../../support/cluster.ts';

const fleet = () =>
  cluster([
    { id: 'n1', cpu: 8, labels: { instance: 'm6in.2xlarge', region: 'china', zone: 'china-east-1' } },
    { id: 'n2', cpu: 2, labels: { instance: 'm6in.large', region: 'china', zone: 'china-north-1' } },
    { id: 'n3', cpu: 8, gpu: 1, labels: { instance: 'p3.2xlarge', region: 'us', gpu_type: 'V100' }, resources: { custom_resource: 1 } },
    { id: 'n4', cpu: 8, gpu: 2, labels: { instance: 'p4d', region: 'us', gpu_type: 'A100' }, resources: { custom_resource: 2 } },
  ]);

const examples = [
  { name: '1. affinity to the nodes of an instance type', opts: { schedulingStrategy: nodeAffinity(labelIn('instance', ['m6in.large'])) }, want: ['n2'] },
  { name: '2. anti-affinity to two node ids', opts: { schedulingStrategy: nodeAffinity(labelNotIn('orrery.io/node-id', ['n1', 'n3'])) }, want: ['n2', 'n4'] },
  { name: '3. anti-affinity to nodes that have GPUs', opts: { schedulingStrategy: nodeAffinity(labelDoesNotExist('gpu_type')) }, want: ['n1', 'n2'] },
  {
    name: '4. must be in china, preferably china-east-1',
    opts: { schedulingStrategy: nodeAffinity([labelIn('region', ['china']), labelIn('zone', ['china-east-1'], true)]) },
    want: ['n1'],
  },
  {
    name: '5. with GPUs and custom resources: must have a GPU type, preferably A100/P100',
    opts: { numGpus: 1, resources: { custom_resource: 1 }, schedulingStrategy: nodeAffinity([labelExists('gpu_type'), labelIn('gpu_type', ['A100', 'P100'], true)]) },
    want: ['n4'],
  },
];
for (const ex of examples) {
  test(`example ${ex.name}`, () => {
    const got = landings(fleet(), ex.opts, 60);
    assert.ok(got.length > 0, 'never placed');
    for (const id of got) assert.ok(ex.want.includes(id), `landed on ${id}, allowed ${ex.want}`);
  });
}

test('example 2 reaches every allowed node once the packed one fills', () => {
  const s = fleet();
  const opts = { schedulingStrategy: nodeAffinity(labelNotIn('orrery.io/node-id', ['n1', 'n3'])) };
  assert.is(placedOn(decide(s, opts)), 'n2');
  s.allocate('n2', { CPU: 20_000 });
  assert.is(placedOn(decide(s, opts)), 'n4');
});

test('example 4: the soft zone term gives way when its node is full, the hard region term never does', () => {
  const s = fleet();
  const opts = { schedulingStrategy: nodeAffinity([labelIn('region', ['china']), labelIn('zone', ['china-east-1'], true)]) };
  s.allocate('n1', { CPU: 80_000 });
  assert.is(placedOn(decide(s, opts)), 'n2');
  s.allocate('n2', { CPU: 20_000 });
  const f = failureOf(decide(s, opts));
  assert.is(f.reason, 'resources');
  assert.is(f.message, "0/4 nodes are available: 2 node(s) didn't match node affinity region in (china), 2 node(s) had insufficient CPU.");
});

test('example 5: without an A100 left, any GPU node with the custom resource will do', () => {
  const s = fleet();
  s.allocate('n4', { GPU: 20_000 });
  assert.is(placedOn(decide(s, { numGpus: 1, resources: { custom_resource: 1 }, schedulingStrategy: nodeAffinity([labelExists('gpu_type'), labelIn('gpu_type', ['A100', 'P100'], true)]) })), 'n3');
});

test('cannot be satisfied 1: a hard node-id affinity to a missing node is an error, not a pending state', () => {
  const d = decide(fleet(), { schedulingStrategy: nodeIdAffinity('n9') });
  assert.is(d.status, 'failed');
  if (d.status === 'failed') {
    assert.is(d.error.code, 'NODE_NOT_FOUND');
    assert.equal(d.error.detail, { nodeId: 'n9' });
  }
});

test('cannot be satisfied 2: resources enough, labels not → constraints (infeasible as the cluster stands)', () => {
  const f = failureOf(decide(fleet(), { schedulingStrategy: nodeAffinity(labelIn('instance', ['c7g'])) }));
  assert.is(f.reason, 'constraints');
  assert.is(f.code, 'infeasible');
  assert.is(f.message, "0/4 nodes are available: 4 node(s) didn't match node affinity instance in (c7g).");
});

test('cannot be satisfied 3: labels match, resources not → resources, may fit later when busy', () => {
  const s = fleet();
  s.allocate('n2', { CPU: 20_000 });
  const f = failureOf(decide(s, { numCpus: 2, schedulingStrategy: nodeAffinity(labelIn('instance', ['m6in.large'])) }));
  assert.is(f.reason, 'resources');
  assert.is(f.code, 'unschedulable');
  assert.is(f.message, "0/4 nodes are available: 3 node(s) didn't match node affinity instance in (m6in.large), 1 node(s) had insufficient CPU.");
});

test('cannot be satisfied 4: neither → constraints_and_resources', () => {
  const f = failureOf(decide(fleet(), { numCpus: 16, schedulingStrategy: nodeAffinity(labelIn('instance', ['c7g'])) }));
  assert.is(f.reason, 'constraints_and_resources');
  assert.is(f.code, 'infeasible');
  assert.is(f.message, "0/4 nodes are available: 4 node(s) didn't match node affinity instance in (c7g), 4 node(s) had less total CPU than requested (a node is counted under each reason it fails).");
});

test('node_ip and node_name style built-in labels select nodes like any other', () => {
  const s = cluster([
    { id: 'a', labels: { 'orrery.io/node-ip': '10.0.0.1' } },
    { id: 'b', labels: { 'orrery.io/node-ip': '10.0.0.2' } },
  ]);
  assert.is(placedOn(decide(s, { schedulingStrategy: nodeAffinity(labelIn('orrery.io/node-ip', ['10.0.0.2'])) })), 'b');
});

test.run();
