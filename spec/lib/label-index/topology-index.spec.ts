// The per-domain aggregation of actor labels behind topologyKey (Kubernetes' InterPodAffinity looks
// at the pods of every node sharing the node's topology label value).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PlacedActor, SchedNode } from '../../../lib/cluster/sched-node.ts';
import { actorScope } from '../../../lib/label-index/label-index.ts';
import { TopologyIndex } from '../../../lib/label-index/topology-index.ts';

const actor = (actorId: string, labels: Record<string, string>, namespace = 'ns'): PlacedActor => ({ actorId, namespace, labels: { ...labels } });
const node = (id: string, labels: Record<string, string>, actors: PlacedActor[] = []): SchedNode =>
  ({ id, labels, actors: new Map(actors.map((a) => [a.actorId, a])) }) as unknown as SchedNode;

const cases: { name: string; nodes: SchedNode[]; key: string; domain: string; label: [string, string]; namespace?: string; want: boolean }[] = [
  { name: 'an actor on a node of the domain', nodes: [node('n1', { zone: 'a' }, [actor('x', { app: 'web' })])], key: 'zone', domain: 'a', label: ['app', 'web'], want: true },
  { name: 'another domain', nodes: [node('n1', { zone: 'a' }, [actor('x', { app: 'web' })])], key: 'zone', domain: 'b', label: ['app', 'web'], want: false },
  { name: 'a node without the key is in no domain', nodes: [node('n1', {}, [actor('x', { app: 'web' })])], key: 'zone', domain: '', label: ['app', 'web'], want: false },
  { name: 'another namespace', nodes: [node('n1', { zone: 'a' }, [actor('x', { app: 'web' }, 'other')])], key: 'zone', domain: 'a', label: ['app', 'web'], want: false },
  { name: 'another topology key', nodes: [node('n1', { zone: 'a', region: 'r' }, [actor('x', { app: 'web' })])], key: 'region', domain: 'r', label: ['app', 'web'], want: true },
];

for (const c of cases) {
  test(`track: ${c.name}`, () => {
    const index = new TopologyIndex().track(c.key, c.nodes);
    assert.is(index.nodeHas(actorScope(c.namespace ?? 'ns'), c.domain, c.label[0], [c.label[1]]), c.want);
  });
}

test('actor and node updates reach only tracked keys, reference-counted per domain', () => {
  const topo = new TopologyIndex();
  const n1 = node('n1', { zone: 'a', rack: 'r1' });
  const zones = topo.track('zone', [n1]);
  const web = actor('w', { app: 'web' });
  n1.actors.set('w', web);
  topo.actor(n1, web, 1);
  assert.is(zones.refCount(actorScope('ns'), 'a', 'app', 'web'), 1);
  assert.is(topo.has('rack'), false, 'rack was never asked for');
  topo.node(n1, -1);
  assert.is(zones.refCount(actorScope('ns'), 'a', 'app', 'web'), 0);
});

test.run();
