// Seed 000: actor affinity and anti-affinity through actor labels — the four API examples, the
// label-based follow-on, the three failure cases, the pending-then-placed example and failover.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { actorAffinity, affinity, antiAffinity, labelIn, labelExists } from '../../../lib/index.ts';
import { cluster, decide, failureOf, landings, placeActor, placedOn } from '../../support/cluster.ts';

const fourNodes = () => {
  const s = cluster([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }, { id: 'n4' }]);
  placeActor(s, 'n2', 'a0', { cpu: 1 });
  placeActor(s, 'n3', 'a1', { cpu: 1 });
  return s;
};

const examples = [
  { name: 'example 1: affinity to actor_0 lands on its node', strategy: () => actorAffinity(affinity('a0')), want: ['n2'] },
  { name: 'example 2: affinity to actor_0 or actor_1', strategy: () => actorAffinity(affinity(['a0', 'a1'])), want: ['n2', 'n3'] },
  { name: 'example 3: anti-affinity to actor_0 avoids its node', strategy: () => actorAffinity(antiAffinity('a0')), want: ['n1', 'n3', 'n4'] },
  { name: 'example 4: anti-affinity to actor_0 and actor_1', strategy: () => actorAffinity([antiAffinity('a0'), antiAffinity('a1')]), want: ['n1', 'n4'] },
];
for (const ex of examples) {
  test(ex.name, () => {
    const s = fourNodes();
    // SPREAD-free hybrid picks randomly inside the best window; over many seeds every allowed
    // node shows up at least as a possibility and no forbidden one ever does.
    const got = landings(s, { schedulingStrategy: ex.strategy() }, 60);
    for (const id of got) assert.ok(ex.want.includes(id), `landed on forbidden ${id}`);
    assert.ok(got.length > 0);
  });
}

test('failure 1: resources fit but affinity cannot be satisfied → constraints, may fit later', () => {
  const s = cluster([{ id: 'n1' }, { id: 'n2' }]);
  const f = failureOf(decide(s, { schedulingStrategy: actorAffinity(affinity('a9')) }));
  assert.is(f.reason, 'constraints');
  assert.is(f.code, 'unschedulable');
  assert.is(f.message, '0/2 nodes are available: 2 node(s) didn\'t match actor affinity orrery.io/actor-id in (a9).');
});

test('failure 2: affinity satisfiable but its node lacks resources → resources', () => {
  const s = cluster([{ id: 'n1', cpu: 2 }, { id: 'n2', cpu: 8 }]);
  placeActor(s, 'n1', 'a0', { cpu: 2 });
  const f = failureOf(decide(s, { numCpus: 1, schedulingStrategy: actorAffinity(affinity('a0')) }));
  assert.is(f.reason, 'resources');
  assert.is(f.code, 'unschedulable');
  assert.is(f.message, "0/2 nodes are available: 1 node(s) didn't match actor affinity orrery.io/actor-id in (a0), 1 node(s) had insufficient CPU.");
  assert.equal(f.nodes, [
    { nodeId: 'n1', reasons: ['had insufficient CPU'] },
    { nodeId: 'n2', reasons: ["didn't match actor affinity orrery.io/actor-id in (a0)"] },
  ]);
});

test('failure 3: neither affinity nor resources → constraints_and_resources', () => {
  const s = cluster([{ id: 'n1', cpu: 1 }, { id: 'n2', cpu: 1 }]);
  placeActor(s, 'n1', 'a0');
  placeActor(s, 'n2', 'a1');
  const f = failureOf(decide(s, { numCpus: 2, schedulingStrategy: actorAffinity([antiAffinity('a0'), antiAffinity('a1')]) }));
  assert.is(f.reason, 'constraints_and_resources');
  assert.is(
    f.message,
    "0/2 nodes are available: 1 node(s) didn't match actor anti-affinity orrery.io/actor-id notin (a0), " +
      "1 node(s) didn't match actor anti-affinity orrery.io/actor-id notin (a1), 2 node(s) had less total CPU than requested" +
      ' (a node is counted under each reason it fails).',
  );
  assert.is(f.code, 'infeasible');
});

test('example: affinity to an actor not placed yet waits, then lands with it once it is placed', () => {
  const s = cluster([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }]);
  const opts = { schedulingStrategy: actorAffinity(affinity('a0')) };
  assert.is(decide(s, opts).status, 'unschedulable');
  placeActor(s, 'n3', 'a0');
  assert.is(placedOn(decide(s, opts)), 'n3');
});

test('soft affinity prefers the peer and falls back when the peer node is full', () => {
  const s = cluster([{ id: 'n1', cpu: 1 }, { id: 'n2', cpu: 4 }]);
  placeActor(s, 'n2', 'a0', { cpu: 1 });
  assert.is(placedOn(decide(s, { schedulingStrategy: actorAffinity(affinity('a0', true)) })), 'n2');
  s.allocate('n2', { CPU: 30_000 });
  assert.is(placedOn(decide(s, { schedulingStrategy: actorAffinity(affinity('a0', true)) })), 'n1');
});

test('follow-on: affinity through user actor labels (label_in / label_exists)', () => {
  const s = cluster([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }]);
  placeActor(s, 'n2', 'web', { labels: { location: 'dc_1' } });
  placeActor(s, 'n3', 'db', { labels: { location: 'dc_2' } });
  assert.equal(landings(s, { schedulingStrategy: actorAffinity(labelIn('location', ['dc_1'])) }), ['n2']);
  const either = { schedulingStrategy: actorAffinity([labelIn('location', ['dc_1', 'dc_2']), labelExists('location')]) };
  // both nodes are idle, so packing takes the lower id; with n2 full the other dc_* node is used
  assert.equal(landings(s, either), ['n2']);
  s.allocate('n2', { CPU: 40_000 });
  assert.equal(landings(s, either), ['n3']);
});

test('actor labels are namespaced: an actor in another namespace does not attract', () => {
  const s = cluster([{ id: 'n1' }, { id: 'n2' }]);
  placeActor(s, 'n2', 'other', { labels: { app: 'x' }, namespace: 'team-b' });
  const d = decide(s, { schedulingStrategy: actorAffinity(labelIn('app', ['x'])) }, 1, { namespace: 'team-a' });
  assert.is(d.status, 'unschedulable');
  assert.is(placedOn(decide(s, { schedulingStrategy: actorAffinity(labelIn('app', ['x'])) }, 1, { namespace: 'team-b' })), 'n2');
  // a handle carries its namespace, so affinity(handle) reaches across namespaces
  assert.is(placedOn(decide(s, { schedulingStrategy: actorAffinity(affinity({ actorId: 'other', namespace: 'team-b' })) }, 1, { namespace: 'team-a' })), 'n2');
});

test('two actors with the same label on a node: the node stays attractive until both leave', () => {
  const s = cluster([{ id: 'n1' }, { id: 'n2' }]);
  placeActor(s, 'n2', 'w1', { labels: { app: 'web' } });
  placeActor(s, 'n2', 'w2', { labels: { app: 'web' } });
  const opts = { schedulingStrategy: actorAffinity(labelIn('app', ['web'])) };
  s.removeActor('n2', 'w1');
  assert.is(placedOn(decide(s, opts)), 'n2');
  s.removeActor('n2', 'w2');
  assert.is(decide(s, opts).status, 'unschedulable');
});

test('failover: B stays when A moves; B re-placed later follows A to its new node', () => {
  const s = cluster([{ id: 'n1' }, { id: 'n2' }]);
  placeActor(s, 'n1', 'A');
  const bOpts = { schedulingStrategy: actorAffinity(affinity('A')) };
  assert.is(placedOn(decide(s, bOpts)), 'n1');
  placeActor(s, 'n1', 'B');
  // A's process dies and A restarts on n2: its labels leave n1 and appear on n2; B is untouched.
  s.removeActor('n1', 'A');
  placeActor(s, 'n2', 'A');
  assert.ok(s.node('n1')!.actors.has('B'));
  // then B dies: re-evaluated against the cluster as it is now, B goes to n2 with A.
  s.removeActor('n1', 'B');
  assert.is(placedOn(decide(s, bOpts)), 'n2');
});

test.run();
