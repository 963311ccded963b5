// The hybrid and spread policies, node-id affinity (Ray's semantics), node status, and the
// explanation edge cases.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterState, compileRequest, nodeIdAffinity, nodeLabelStrategy, In, Exists, schedule, seededRng, parseResources } from '../../../lib/index.ts';
import { addNode, cluster, decide, failureOf, placedOn } from '../../support/cluster.ts';

/** Places n one-CPU tasks, committing each, and returns where they went. */
function placeMany(s: ClusterState, n: number, opts = {}): string[] {
  const rng = seededRng(7);
  const req = compileRequest(opts, { namespace: 'default' });
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const d = schedule(s, req, { rng });
    out.push(placedOn(d));
    s.allocate(placedOn(d), req.resources);
  }
  return out;
}

test('hybrid packs onto the lowest node ids until the spread threshold, then spreads', () => {
  // 5 nodes → window of 1; each node packs to 2/4 CPUs (utilization 0.5), then the order is by load
  const s = cluster(['n1', 'n2', 'n3', 'n4', 'n5'].map((id) => ({ id, cpu: 4 })));
  assert.equal(placeMany(s, 10), ['n1', 'n1', 'n2', 'n2', 'n3', 'n3', 'n4', 'n4', 'n5', 'n5']);
  // every node is now at 0.5: the least loaded (ties by id) takes the next ones
  assert.equal(placeMany(s, 5), ['n1', 'n2', 'n3', 'n4', 'n5']);
});

test('hybrid picks randomly within the best window of 20% of the nodes', () => {
  const s = cluster(Array.from({ length: 10 }, (_, i) => ({ id: `n${i}`, cpu: 100 })));
  const seen = new Set<string>();
  for (let seed = 1; seed <= 50; seed++) seen.add(placedOn(decide(s, {}, seed)));
  assert.equal([...seen].sort(), ['n0', 'n1']);
});

test('SPREAD goes round robin in node-id order and skips nodes that cannot take the request', () => {
  const s = cluster([{ id: 'a' }, { id: 'b', labels: { busy: 'yes' } }, { id: 'c' }]);
  s.allocate('b', { CPU: 40_000 });
  const req = compileRequest({ schedulingStrategy: 'SPREAD' }, { namespace: 'default' });
  const rng = seededRng(1);
  const got = Array.from({ length: 4 }, () => placedOn(schedule(s, req, { rng })));
  assert.equal(got, ['a', 'c', 'a', 'c']);
});

test('SPREAD with a selective constraint round-robins over the matching nodes', () => {
  const s = cluster([{ id: 'a', labels: { z: '1' } }, { id: 'b' }, { id: 'c', labels: { z: '1' } }]);
  const req = compileRequest({ schedulingStrategy: 'SPREAD', labelSelector: { z: '1' } }, { namespace: 'default' });
  const rng = seededRng(1);
  assert.equal(Array.from({ length: 3 }, () => placedOn(schedule(s, req, { rng }))), ['a', 'c', 'a']);
});

const pinned = () => cluster([{ id: 'n1', cpu: 2 }, { id: 'n2', cpu: 2 }]);
const nodeIdCases = [
  { name: 'hard, node free → that node', busy: false, opts: {}, want: 'placed:n1' },
  { name: 'hard, node busy → waits', busy: true, opts: {}, want: 'unschedulable' },
  { name: 'hard, node busy, failOnUnavailable → NODE_UNAVAILABLE', busy: true, opts: { failOnUnavailable: true }, want: 'failed:NODE_UNAVAILABLE' },
  { name: 'soft, node free → that node', busy: false, opts: { soft: true }, want: 'placed:n1' },
  { name: 'soft, node busy → waits for it', busy: true, opts: { soft: true }, want: 'unschedulable' },
  { name: 'soft, node busy, spillOnUnavailable → elsewhere', busy: true, opts: { soft: true, spillOnUnavailable: true }, want: 'placed:n2' },
];
for (const c of nodeIdCases) {
  test(`nodeIdAffinity ${c.name}`, () => {
    const s = pinned();
    if (c.busy) s.allocate('n1', { CPU: 20_000 });
    const d = decide(s, { schedulingStrategy: nodeIdAffinity('n1', c.opts) });
    const got = d.status === 'placed' ? `placed:${d.nodeId}` : d.status === 'failed' ? `failed:${d.error.code}` : d.status;
    assert.is(got, c.want);
  });
}

test('nodeIdAffinity: a busy pinned node explains itself and the others as not requested', () => {
  const s = pinned();
  s.allocate('n1', { CPU: 20_000 });
  const f = failureOf(decide(s, { schedulingStrategy: nodeIdAffinity('n1') }));
  assert.is(f.message, "0/2 nodes are available: 1 node(s) didn't match the requested node id, 1 node(s) had insufficient CPU.");
  assert.is(f.code, 'unschedulable');
});

test('nodeIdAffinity: soft to a node that can never take it (too small) goes elsewhere', () => {
  const s = cluster([{ id: 'small', cpu: 2 }, { id: 'big', cpu: 8 }]);
  assert.is(placedOn(decide(s, { numCpus: 4, schedulingStrategy: nodeIdAffinity('small', { soft: true }) })), 'big');
  const hard = decide(s, { numCpus: 4, schedulingStrategy: nodeIdAffinity('small') });
  assert.is(failureOf(hard).code, 'infeasible');
});

test('nodeIdAffinity: soft to a dead node falls back, hard to a dead node fails', () => {
  const s = pinned();
  s.setNodeState('n1', 'DEAD');
  assert.is(placedOn(decide(s, { schedulingStrategy: nodeIdAffinity('n1', { soft: true }) })), 'n2');
  const d = decide(s, { schedulingStrategy: nodeIdAffinity('n1') });
  assert.is(d.status === 'failed' && d.error.code, 'NODE_NOT_FOUND');
});

test('draining and dead nodes take nothing; dead ones are not counted in explanations', () => {
  const s = cluster([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
  s.setNodeState('a', 'DRAINING');
  s.setNodeState('b', 'DEAD');
  assert.is(placedOn(decide(s, {})), 'c');
  s.allocate('c', { CPU: 40_000 });
  assert.is(failureOf(decide(s, {})).message, '0/2 nodes are available: 1 node(s) had insufficient CPU, 1 node(s) were draining.');
});

test('an empty cluster explains itself', () => {
  const f = failureOf(decide(new ClusterState(), {}));
  assert.is(f.message, '0/0 nodes are available: the cluster has no nodes.');
  assert.is(f.code, 'infeasible');
});

test('nodeLabelStrategy: hard conditions filter, soft ones prefer', () => {
  const s = cluster([
    { id: 'a', labels: { 'orrery.io/availability-zone': 'us-central2-a', accel: 'T4' } },
    { id: 'b', labels: { 'orrery.io/availability-zone': 'us-central2-b', accel: 'A100' } },
    { id: 'c', labels: { 'orrery.io/availability-zone': 'us-central2-b' } },
  ]);
  const strat = nodeLabelStrategy({ hard: { 'orrery.io/availability-zone': In('us-central2-b') }, soft: { accel: In('A100') } });
  assert.is(placedOn(decide(s, { schedulingStrategy: strat })), 'b');
  s.allocate('b', { CPU: 40_000 });
  assert.is(placedOn(decide(s, { schedulingStrategy: strat })), 'c');
  assert.is(placedOn(decide(s, { schedulingStrategy: nodeLabelStrategy({ hard: { accel: Exists() } }) })), 'a');
});

test('custom resources: feasible versus available', () => {
  const s = cluster([{ id: 'a', resources: { my_res: 2 } }, { id: 'b' }]);
  assert.is(placedOn(decide(s, { resources: { my_res: 2 } })), 'a');
  s.allocate('a', parseResources({ my_res: 1 }));
  const busy = failureOf(decide(s, { resources: { my_res: 2 } }));
  assert.is(busy.code, 'unschedulable');
  assert.is(busy.message, '0/2 nodes are available: 1 node(s) had insufficient my_res, 1 node(s) had less total my_res than requested.');
  const never = failureOf(decide(s, { resources: { my_res: 3 } }));
  assert.is(never.code, 'infeasible');
});

test('a node added later is found by the next decision', () => {
  const s = cluster([]);
  assert.is(decide(s, { labelSelector: { gpu: 'h100' } }).status, 'unschedulable');
  addNode(s, { id: 'h', labels: { gpu: 'h100' } });
  assert.is(placedOn(decide(s, { labelSelector: { gpu: 'h100' } })), 'h');
});

test.run();
