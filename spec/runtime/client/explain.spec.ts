// cluster.explain / explainPlacementGroup: the GCS's dry run answers what creating the actor (or the
// group) then does, creates nothing, and checks options as creation does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidOptionError, NodeNotFoundError, labelIn, nodeAffinity, nodeIdAffinity, actorAffinity, antiAffinity } from '../../../lib/index.ts';
import { startLocalCluster, type LocalCluster } from '../../../runtime/index.ts';
import { CounterActor } from '../../fixtures/client/actors.ts';

let local: LocalCluster;
test.before(async () => {
  local = await startLocalCluster({
    transport: 'memory',
    nodes: [
      { name: 'm1', resources: { CPU: 2 }, labels: { region: 'us' } },
      { name: 'm2', resources: { CPU: 4 }, labels: { region: 'eu' } },
      { name: 'm3', resources: { CPU: 4 }, labels: { region: 'eu', disk: 'ssd' } },
    ],
  });
});
test.after(async () => {
  await local?.stop();
});

const nodeOf = async (name: string) => (await local.cluster.nodes()).find((n) => n.name === name)!.nodeId;

test('explain names the node creation then uses, and creates nothing', async () => {
  const m3 = await nodeOf('m3');
  const options = { numCpus: 1, labelSelector: { disk: 'ssd' } };
  const before = JSON.stringify((await local.cluster.nodes()).map((n) => [n.nodeId, n.resources]));
  const dry = await local.cluster.explain(options);
  assert.is(dry.decision, 'placed');
  assert.is(dry.nodeId, m3);
  assert.is(dry.tier, 0);
  assert.equal(dry.nodes.filter((n) => n.fits).map((n) => n.nodeId), [m3]);
  assert.equal(await local.cluster.actors(), [], 'no actor was created');
  assert.is(JSON.stringify((await local.cluster.nodes()).map((n) => [n.nodeId, n.resources])), before, 'nothing was reserved');
  const handle = await local.cluster.actor(CounterActor).options(options).remote();
  await handle.ready();
  assert.is((await handle.info()).nodeId, dry.nodeId);
  await handle.kill();
});

test('a fallback tier, and the soft terms that held', async () => {
  const dry = await local.cluster.explain({ labelSelector: { region: 'ap' }, fallbackStrategy: [{ labelSelector: { region: 'us' } }], schedulingStrategy: nodeAffinity(labelIn('disk', ['ssd'], true)) });
  assert.is(dry.decision, 'placed');
  assert.is(dry.nodeId, await nodeOf('m1'));
  assert.is(dry.tier, 1, 'the first fallback decided');
  assert.equal(dry.softTerms, [{ term: 'node disk in (ssd)', weight: 1, held: false }]);
});

test('an unplaceable request gets the reason the pending actor then carries', async () => {
  const options = { numCpus: 3, labelSelector: { region: 'us' } };
  const dry = await local.cluster.explain(options);
  assert.is(dry.decision, 'unschedulable');
  assert.is(dry.failure!.message, "0/3 nodes are available: 2 node(s) didn't match label selector region in (us), 1 node(s) had less total CPU than requested.");
  assert.equal(dry.nodes.map((n) => n.fits), [false, false, false]);
  const handle = await local.cluster.actor(CounterActor).options(options).remote();
  const info = await handle.info();
  assert.is(info.state, 'PENDING');
  assert.is(info.pendingReason, dry.failure!.message);
  await handle.kill();
});

test('anti-affinity to a running actor keeps it off that node, as creation would', async () => {
  const peer = await local.cluster.actor(CounterActor).options({ labelSelector: { disk: 'ssd' } }).remote();
  await peer.ready();
  const dry = await local.cluster.explain({ labelSelector: { region: 'eu' }, schedulingStrategy: actorAffinity(antiAffinity(peer)) });
  assert.is(dry.nodeId, await nodeOf('m2'));
  assert.ok(dry.nodes.find((n) => n.nodeId !== dry.nodeId && n.reasons.some((r) => r.includes('anti-affinity'))), JSON.stringify(dry.nodes));
  await peer.kill();
});

test('what creation refuses, explain refuses the same way', async () => {
  const bad = await local.cluster.explain({ numCPUs: 2 } as never).catch((e: unknown) => e);
  assert.instance(bad, InvalidOptionError);
  assert.match((bad as Error).message, /numCPUs/);
  const unknownNode = await local.cluster.explain({ schedulingStrategy: nodeIdAffinity('no-such-node') });
  assert.is(unknownNode.decision, 'failed');
  assert.is(unknownNode.error!.code, 'NODE_NOT_FOUND');
  const created = await local.cluster.actor(CounterActor).options({ schedulingStrategy: nodeIdAffinity('no-such-node') }).remote().catch((e: unknown) => e);
  assert.instance(created, NodeNotFoundError);
});

test('a placement group: each bundle\'s node, or why not; nothing reserved', async () => {
  const spread = await local.cluster.explainPlacementGroup({ bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' });
  assert.is(spread.decision, 'placed');
  assert.is(new Set(spread.bundles!.map((b) => b.nodeId)).size, 3, 'three different nodes');
  assert.equal(await local.cluster.placementGroups(), []);
  const four = await local.cluster.explainPlacementGroup({ bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' });
  assert.is(four.decision, 'unschedulable');
  assert.match(four.failure!.message, /^0\/3 nodes are available/);
  const pg = await local.cluster.placementGroup({ bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' });
  const info = (await local.cluster.placementGroups())[0];
  assert.is(info.state, 'PENDING');
  await pg.remove();
});

test.run();
