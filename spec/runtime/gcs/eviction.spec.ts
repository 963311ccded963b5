import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import { ACTOR_ID_LABEL } from '../../../lib/labels/builtin.ts';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import { compileRequest, type PlacementOptions } from '../../../lib/scheduling/request.ts';
import { ANY_TAINT, parseTaints } from '../../../lib/scheduling/taints.ts';
import { tolerate } from '../../../lib/scheduling/tolerations.ts';
import { anyOf } from '../../../lib/selectors/terms.ts';
import { actorAffinity, affinity, antiAffinity, Exists, labelIn, nodeAffinity } from '../../../lib/selectors/builders.ts';
import type { EvictionReason } from '../../../runtime/gcs/events.ts';
import { EvictionGuard, type RunningActor } from '../../../runtime/gcs/eviction.ts';

// The eviction guard on a ClusterState of its own: which running actors leave a node when it
// changes, and why. Table-driven: each case places actors, changes the node, and names the evicted.

interface Placed {
  id: string;
  node: string;
  options?: PlacementOptions;
  required?: boolean;
  labels?: Record<string, string>;
}

interface Case {
  name: string;
  actors: Placed[];
  change: (state: ClusterState) => string;
  evicted: [string, EvictionReason, RegExp][];
}

const cases: Case[] = [
  {
    name: 'a NoExecute taint evicts every actor that does not tolerate it, required or not',
    actors: [{ id: 'plain', node: 'n1' }, { id: 'tolerant', node: 'n1', options: { tolerations: { k: Exists() } } }, { id: 'elsewhere', node: 'n2' }],
    change: (s) => (s.setNodeTaints('n1', parseTaints({ k: 'v:NoExecute' })), 'n1'),
    evicted: [['plain', 'no_execute_taint', /^evicted by taint \{k: v\} \(NoExecute\) on node n1$/]],
  },
  {
    // Kubernetes: a toleration with effect NoSchedule does not tolerate a NoExecute taint of the same key
    name: 'a NoExecute taint evicts an actor that tolerates the key only for NoSchedule; no effect or the wildcard keeps it',
    actors: [
      { id: 'noschedule-only', node: 'n1', options: { tolerations: { k: tolerate(Exists(), 'NoSchedule') } } },
      { id: 'noexecute', node: 'n1', options: { tolerations: { k: tolerate(Exists(), 'NoExecute') } } },
      { id: 'wildcard', node: 'n1', options: { tolerations: { [ANY_TAINT]: Exists() } } },
      { id: 'wildcard-noschedule', node: 'n1', options: { tolerations: { [ANY_TAINT]: tolerate(Exists(), 'NoSchedule') } } },
    ],
    change: (s) => (s.setNodeTaints('n1', parseTaints({ k: 'v:NoExecute' })), 'n1'),
    evicted: [
      ['noschedule-only', 'no_execute_taint', /^evicted by taint \{k: v\} \(NoExecute\) on node n1$/],
      ['wildcard-noschedule', 'no_execute_taint', /NoExecute/],
    ],
  },
  {
    name: 'a required anyOf node affinity that stops matching evicts',
    actors: [{ id: 'or', node: 'n1', required: true, options: { schedulingStrategy: nodeAffinity(anyOf([labelIn('zone', ['a'])], [labelIn('zone', ['b'])])) } }],
    change: (s) => (s.setNodeLabels('n1', { zone: 'c' }), 'n1'),
    evicted: [['or', 'affinity_lost', /node affinity \(zone in \(a\)\) or \(zone in \(b\)\) no longer matches node n1/]],
  },
  {
    name: 'NoSchedule and PreferNoSchedule taints evict nobody',
    actors: [{ id: 'plain', node: 'n1', required: true }],
    change: (s) => (s.setNodeTaints('n1', parseTaints({ a: 'x', b: 'y:PreferNoSchedule' })), 'n1'),
    evicted: [],
  },
  {
    name: 'a required label selector that stops matching evicts; the same without required stays',
    actors: [{ id: 'strict', node: 'n1', required: true, options: { labelSelector: { zone: 'a' } } }, { id: 'lax', node: 'n1', options: { labelSelector: { zone: 'a' } } }],
    change: (s) => (s.setNodeLabels('n1', { zone: 'b' }), 'n1'),
    evicted: [['strict', 'affinity_lost', /label selector zone in \(a\) no longer matches node n1/]],
  },
  {
    name: 'a fallback tier that still matches keeps the actor',
    actors: [{ id: 'fb', node: 'n1', required: true, options: { labelSelector: { zone: 'a' }, fallbackStrategy: [{ labelSelector: { zone: 'in(a,b)' } }] } }],
    change: (s) => (s.setNodeLabels('n1', { zone: 'b' }), 'n1'),
    evicted: [],
  },
  {
    name: 'required node affinity that stops matching evicts',
    actors: [{ id: 'na', node: 'n1', required: true, options: { schedulingStrategy: nodeAffinity(labelIn('zone', ['a'])) } }],
    change: (s) => (s.setNodeLabels('n1', {}), 'n1'),
    evicted: [['na', 'affinity_lost', /node affinity zone in \(a\)/]],
  },
  {
    name: 'required affinity to a peer that left evicts',
    actors: [{ id: 'peer', node: 'n1' }, { id: 'follower', node: 'n1', required: true, options: { schedulingStrategy: actorAffinity(affinity('peer')) } }],
    change: (s) => (s.removeActor('n1', 'peer'), 'n1'),
    evicted: [['follower', 'affinity_lost', /actor affinity orrery\.io\/actor-id in \(peer\) no longer holds on node n1/]],
  },
  {
    name: 'required anti-affinity broken by an arrival evicts; the actor\'s own labels never count',
    actors: [{ id: 'loner', node: 'n1', required: true, labels: { app: 'db' }, options: { schedulingStrategy: actorAffinity({ key: 'app', operator: 'NOT_IN', values: ['db'], soft: false }) } }],
    change: (s) => (s.addActor('n1', { actorId: 'intruder', namespace: 'default', labels: { app: 'db', [ACTOR_ID_LABEL]: 'intruder' } }), 'n1'),
    evicted: [['loner', 'affinity_lost', /actor anti-affinity app notin \(db\) no longer holds on node n1/]],
  },
  {
    name: 'an anti-affine actor in another namespace is no conflict',
    actors: [{ id: 'loner', node: 'n1', required: true, options: { schedulingStrategy: actorAffinity(antiAffinity('x')) } }],
    change: (s) => (s.addActor('n1', { actorId: 'x', namespace: 'other', labels: { [ACTOR_ID_LABEL]: 'x' } }), 'n1'),
    evicted: [],
  },
];

for (const c of cases) {
  test(c.name, async () => {
    const state = new ClusterState();
    for (const id of ['n1', 'n2']) state.addNode({ nodeId: id, labels: { zone: 'a' }, total: parseResources({ CPU: 4 }) });
    const running = new Map<string, RunningActor>();
    const evicted: [string, EvictionReason, string][] = [];
    const guard = new EvictionGuard({
      state,
      running: (id) => running.get(id),
      evict: (id, reason, cause) => evicted.push([id, reason, cause]),
      whenSettled: (fn) => fn(),
    });
    for (const a of c.actors) {
      running.set(a.id, { request: compileRequest(a.options ?? {}, { namespace: 'default' }), namespace: 'default', required: a.required ?? false });
      if (a.required) guard.requiredActors(1);
      state.addActor(a.node, { actorId: a.id, namespace: 'default', labels: { ...a.labels, [ACTOR_ID_LABEL]: a.id } });
    }
    guard.mark(c.change(state));
    await new Promise((r) => setImmediate(r));
    assert.equal(evicted.map(([id, reason]) => [id, reason]), c.evicted.map(([id, reason]) => [id, reason]));
    c.evicted.forEach(([, , cause], i) => assert.match(evicted[i][2], cause));
    assert.equal(guard.counts.no_execute_taint + guard.counts.affinity_lost, c.evicted.length);
  });
}

test('nothing to check costs nothing: no required actors and no NoExecute taint schedule no check', async () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', total: parseResources({ CPU: 1 }) });
  state.addActor('n1', { actorId: 'a', namespace: 'default', labels: {} });
  let asked = 0;
  const guard = new EvictionGuard({ state, running: () => (asked++, undefined), evict: () => undefined, whenSettled: (fn) => fn() });
  guard.mark('n1');
  guard.mark('gone');
  await new Promise((r) => setImmediate(r));
  assert.is(asked, 0);
  guard.requiredActors(1);
  guard.mark('n1');
  await new Promise((r) => setImmediate(r));
  assert.is(asked, 1, 'with a required actor in the cluster the node is checked');
});

test.run();
