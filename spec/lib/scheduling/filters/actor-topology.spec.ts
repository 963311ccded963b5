// Actor affinity over topology domains, with cases from Kubernetes' InterPodAffinity plugin
// (topologyKey): affinity needs a matching peer somewhere in the node's domain, anti-affinity needs
// none anywhere in it; a node without the topology label fails affinity and passes anti-affinity.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  actorAffinity, antiAffinity, affinity, labelExists, labelIn, labelNotIn, labelDoesNotExist, labelGt, withTopologyKey, type LabelMatchExpression,
} from '../../../../lib/index.ts';
import { baseAttempt } from '../../../../lib/scheduling/attempts.ts';
import { actorAffinity as actorAffinityFilter } from '../../../../lib/scheduling/filters/actor-affinity.ts';
import { compileRequest } from '../../../../lib/scheduling/request.ts';
import { plainActorAffinity } from '../../../../lib/scheduling/reference.ts';
import { cluster, decide, failureOf, placeActor } from '../../../support/cluster.ts';

/** zone a: a1, a2; zone b: b1; n0 has no zone. A web actor runs on a1, a db actor (shard 3) on b1. */
function zones() {
  const state = cluster([
    { id: 'a1', labels: { zone: 'a' } },
    { id: 'a2', labels: { zone: 'a' } },
    { id: 'b1', labels: { zone: 'b' } },
    { id: 'n0' },
  ]);
  placeActor(state, 'a1', 'web-1', { labels: { app: 'web' } });
  placeActor(state, 'b1', 'db-1', { labels: { app: 'db', shard: '3' } });
  return state;
}

const z = (e: LabelMatchExpression) => withTopologyKey(e, 'zone');

const cases: { name: string; expr: LabelMatchExpression; node: string; want: boolean }[] = [
  { name: 'affinity: the peer\'s own node', expr: z(labelIn('app', ['web'])), node: 'a1', want: true },
  { name: 'affinity: another node of the peer\'s zone', expr: z(labelIn('app', ['web'])), node: 'a2', want: true },
  { name: 'affinity: a node of another zone', expr: z(labelIn('app', ['web'])), node: 'b1', want: false },
  { name: 'affinity: a node without the topology label', expr: z(labelIn('app', ['web'])), node: 'n0', want: false },
  { name: 'affinity: EXISTS over the zone', expr: z(labelExists('shard')), node: 'b1', want: true },
  { name: 'affinity: GT over the zone', expr: z(labelGt('shard', 2)), node: 'b1', want: true },
  { name: 'affinity: GT not met', expr: z(labelGt('shard', 5)), node: 'b1', want: false },
  { name: 'affinity to an actor id over the zone', expr: z(affinity('web-1')), node: 'a2', want: true },
  { name: 'anti-affinity: the peer\'s zone is refused on every node', expr: z(labelNotIn('app', ['web'])), node: 'a2', want: false },
  { name: 'anti-affinity: another zone is fine', expr: z(labelNotIn('app', ['web'])), node: 'b1', want: true },
  { name: 'anti-affinity: no topology label, no domain, no peer', expr: z(labelNotIn('app', ['web'])), node: 'n0', want: true },
  { name: 'anti-affinity: DOES_NOT_EXIST over the zone', expr: z(labelDoesNotExist('shard')), node: 'b1', want: false },
  { name: 'anti-affinity to an actor id over the zone', expr: z(antiAffinity('db-1')), node: 'b1', want: false },
  { name: 'another namespace does not count', expr: { ...z(labelIn('app', ['web'])), namespace: 'other' }, node: 'a2', want: false },
];

for (const c of cases) {
  test(`topologyKey: ${c.name}`, () => {
    const state = zones();
    const attempt = baseAttempt(compileRequest({ schedulingStrategy: actorAffinity(c.expr) }, { namespace: 'default' }), 0);
    const node = state.nodes.get(c.node)!;
    assert.is(actorAffinityFilter.check(node, attempt, state) === undefined, c.want, 'indexed');
    assert.is(plainActorAffinity.check(node, attempt, state) === undefined, c.want, 'reference');
  });
}

test('the domain aggregation follows actors leaving and nodes changing zone', () => {
  const state = zones();
  const attempt = baseAttempt(compileRequest({ schedulingStrategy: actorAffinity(z(labelIn('app', ['web']))) }, { namespace: 'default' }), 0);
  const ok = (id: string) => actorAffinityFilter.check(state.nodes.get(id)!, attempt, state) === undefined;
  assert.ok(ok('a2'));
  state.setNodeLabels('a1', { ...state.nodes.get('a1')!.labels, zone: 'b' }); // web-1's node moves to zone b
  assert.is(ok('a2'), false);
  assert.ok(ok('b1'));
  placeActor(state, 'a2', 'web-2', { labels: { app: 'web' } });
  assert.ok(ok('a2'));
  state.removeActor('a2', 'web-2');
  assert.is(ok('a2'), false);
  state.removeNode('a1');
  assert.is(ok('b1'), false, 'the removed node took its actors out of the domain');
});

test('the explanation names the topology', () => {
  const f = failureOf(decide(zones(), { schedulingStrategy: actorAffinity(z(labelIn('app', ['cache']))) }));
  assert.is(f.message, "0/4 nodes are available: 4 node(s) didn't match actor affinity app in (cache) in the same zone.");
  assert.is(f.code, 'unschedulable', 'a peer may arrive');
});

test.run();
