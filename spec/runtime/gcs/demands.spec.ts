// resource_demands (issue 16, part 2): pending work grouped by everything that changes where it can
// go, infeasible told apart from waiting, and the live nodes as the GCS's scheduler holds them — in
// the forms the autoscaler compiles again with lib's compileRequest / compilePlacementGroup.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import { compilePlacementGroup } from '../../../lib/scheduling/bundles/request.ts';
import { compileRequest, type PlacementOptions } from '../../../lib/scheduling/request.ts';
import { check } from '../../../protocols/validate.ts';
import { demandKey, resourceDemandsReply, type ResourceDemandsReply } from '../../../protocols/messages/autoscaling.ts';
import { Harness } from './support.ts';

const demands = async (h: Harness, limit?: number): Promise<ResourceDemandsReply> =>
  // checked with the validator the client uses: what the GCS answers must be valid
  check(resourceDemandsReply, await h.request('resource_demands', 'resource_demands', limit === undefined ? {} : { limit }));

const exists = { operator: 'EXISTS', values: [] };
/** More CPU than any node has in all: infeasible whatever else the options say. */
const HUGE = 64;

/**
 * Seeds 001 and 003, "AutoScaler adaptation": a demand is everything that changes where it can go,
 * so a different strategy (001: "for each additional scheduling strategy AutoScaler needs to be
 * adapted") or toleration (003) is a different demand; the same options written in another key
 * order are the same one.
 */
const grouping: { name: string; a: Record<string, unknown>; b: Record<string, unknown>; same: boolean; namespaces?: [string, string] }[] = [
  { name: 'the same options in another key order', a: { numCpus: HUGE, labelSelector: { type: 'cpu', zone: 'a' } }, b: { labelSelector: { zone: 'a', type: 'cpu' }, numCpus: HUGE }, same: true },
  { name: 'a toleration (seed 003)', a: { numCpus: HUGE }, b: { numCpus: HUGE, tolerations: { gpu_node: exists } }, same: false },
  { name: 'another toleration value (seed 003)', a: { numCpus: HUGE, tolerations: { gpu_node: exists } }, b: { numCpus: HUGE, tolerations: { gpu_node: { operator: 'IN', values: ['true'] } } }, same: false },
  { name: 'a scheduling strategy (seed 001)', a: { numCpus: HUGE }, b: { numCpus: HUGE, schedulingStrategy: 'SPREAD' }, same: false },
  { name: 'a label selector (seed 001)', a: { numCpus: HUGE, labelSelector: { type: 'cpu' } }, b: { numCpus: HUGE, labelSelector: { type: 'gpu' } }, same: false },
  { name: 'a fallback (seed 001)', a: { numCpus: HUGE, labelSelector: { type: 'cpu' } }, b: { numCpus: HUGE, labelSelector: { type: 'cpu' }, fallbackStrategy: [{ labelSelector: { type: 'gpu' } }] }, same: false },
  { name: 'the resource shape', a: { numCpus: HUGE }, b: { numCpus: HUGE, memory: 1024 }, same: false },
  { name: "the actors' own labels (what affinity matches)", a: { numCpus: HUGE, labels: { app: 'a' } }, b: { numCpus: HUGE, labels: { app: 'b' } }, same: false },
  { name: 'options that do not place (maxRestarts, name-free options)', a: { numCpus: HUGE, maxRestarts: 1 }, b: { numCpus: HUGE, maxRestarts: 3, maxConcurrency: 4 }, same: true },
  { name: 'the namespace', a: { numCpus: HUGE }, b: { numCpus: HUGE }, same: false, namespaces: ['ns-x', 'ns-y'] },
];

const twoNodes = async (): Promise<Harness> => {
  const h = await Harness.start();
  await h.addNode({ nodeId: 'n1', cpu: 2, labels: { type: 'cpu' } });
  await h.addNode({ nodeId: 'n2', cpu: 2, gpu: 1, labels: { type: 'gpu' }, taints: { gpu_node: 'true' } });
  return h;
};

test('grouping: equal options are one demand with a count; a different toleration, strategy, selector, fallback, shape, label or namespace is another', async () => {
  const h = await twoNodes();
  try {
    for (const [i, c] of grouping.entries()) {
      const [nsA, nsB] = c.namespaces ?? [`case-${i}`, `case-${i}`];
      await h.registerActor(`g${i}a1`, c.a, { namespace: nsA });
      await h.registerActor(`g${i}a2`, c.a, { namespace: nsA });
      await h.registerActor(`g${i}b1`, c.b, { namespace: nsB });
    }
    const reply = await demands(h);
    for (const [i, c] of grouping.entries()) {
      const mine = reply.actors.filter((g) => g.actorIds.some((id) => id.startsWith(`g${i}`)));
      const counts = mine.map((g) => g.count).sort();
      assert.equal(counts, c.same ? [3] : [1, 2], `${c.name}: ${c.same ? 'one group' : 'two groups'}`);
    }
    assert.is(reply.truncated, false);
  } finally {
    await h.close();
  }
});

test('a group carries the options as the driver sent them (user quantities), the default CPUs and the labels: compileRequest gives the GCS request again', async () => {
  const h = await twoNodes();
  try {
    const options = { numCpus: 0.5, memory: 2 ** 40, labelSelector: { type: 'gpu' }, tolerations: { gpu_node: exists }, labels: { app: 'web' }, maxRestarts: 2 };
    for (const id of ['w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7']) await h.registerActor(id, options);
    const [group] = (await demands(h)).actors;
    assert.equal(group.placement, { numCpus: 0.5, memory: 2 ** 40, labelSelector: { type: 'gpu' }, tolerations: { gpu_node: exists } });
    assert.equal(group.labels, { app: 'web' }, 'without orrery.io/actor-id');
    assert.is(group.namespace, 'default');
    assert.is(group.defaultCpus, 1);
    assert.is(group.count, 7);
    assert.equal(group.actorIds, ['w1', 'w2', 'w3', 'w4', 'w5'], 'five samples, oldest first');
    assert.match(group.reason!, /^0\/2 nodes are available/);
    const request = compileRequest(group.placement, { namespace: group.namespace, defaultCpus: group.defaultCpus, rareResources: [] });
    assert.equal(request.resources, parseResources({ CPU: 0.5, memory: 2 ** 40 }));
    assert.is(request.tolerations.gpu_node?.operator, 'EXISTS');
    // the key the autoscaler can compute for itself
    assert.is(demandKey(group.namespace, group.placement, group.labels, group.defaultCpus), demandKey('default', { tolerations: { gpu_node: exists }, labelSelector: { type: 'gpu' }, memory: 2 ** 40, numCpus: 0.5 }, { app: 'web' }, 1));
  } finally {
    await h.close();
  }
});

test('infeasible (no node could ever take it) is told apart from waiting for resources, in one group', async () => {
  const h = await twoNodes();
  try {
    // fills n1's CPUs: the next cpu actor waits for them
    await h.registerActor('holder', { numCpus: 2, labelSelector: { type: 'cpu' } });
    await h.reached('holder', 'ALIVE');
    await h.registerActor('waits', { numCpus: 2, labelSelector: { type: 'cpu' } });
    await h.registerActor('never1', { numGpus: 4 });
    await h.registerActor('never2', { numGpus: 4 });
    const reply = await demands(h);
    const byId = (id: string) => reply.actors.find((g) => g.actorIds.includes(id))!;
    assert.equal({ count: byId('waits').count, infeasible: byId('waits').infeasible }, { count: 1, infeasible: 0 });
    assert.match(byId('waits').reason!, /insufficient CPU/);
    assert.equal({ count: byId('never1').count, infeasible: byId('never1').infeasible }, { count: 2, infeasible: 2 });
    assert.match(byId('never1').reason!, /less total GPU than requested/);
  } finally {
    await h.close();
  }
});

test('nodes: every live node with its labels, taints, units, actors grouped by namespace and labels, and bundles', async () => {
  const h = await twoNodes();
  try {
    for (const id of ['web1', 'web2']) await h.registerActor(id, { numCpus: 0.5, labels: { app: 'web' }, labelSelector: { type: 'cpu' } });
    await h.registerActor('db', { numCpus: 0.5, labelSelector: { type: 'cpu' } });
    for (const id of ['web1', 'web2', 'db']) await h.reached(id, 'ALIVE');
    const pg = await h.request('create_pg', 'create_pg', { pgId: 'pg1', namespace: 'default', options: { bundles: [{ CPU: 0.5 }, { CPU: 0.5 }], strategy: 'STRICT_SPREAD', tolerations: { gpu_node: exists } } });
    assert.ok(['PENDING', 'CREATED'].includes(pg.state));
    await h.events.wait((e) => e.type === 'placement_group_state' && e.placementGroup?.id === 'pg1' && e.placementGroup.state === 'CREATED', 'pg1 CREATED');
    const reply = await demands(h);
    assert.equal(reply.nodes.map((n) => n.nodeId), ['n1', 'n2']);
    const [n1, n2] = reply.nodes;
    assert.is(n1.state, 'ALIVE');
    assert.equal(n1.labels, { 'orrery.io/node-id': 'n1', type: 'cpu' });
    assert.equal(n2.taints, { gpu_node: 'true' });
    assert.is(n1.total.CPU, 20_000, 'units, as NodeInfoWire');
    assert.equal(n1.actors.map((g) => ({ ...g, actorIds: [...g.actorIds].sort() })).sort((a, b) => a.actorIds.length - b.actorIds.length), [
      { namespace: 'default', labels: {}, actorIds: ['db'] },
      { namespace: 'default', labels: { app: 'web' }, actorIds: ['web1', 'web2'] },
    ]);
    assert.equal([n1.bundles, n2.bundles], [1, 1], 'one bundle each (STRICT_SPREAD)');
    assert.equal(reply.placementGroups, [], 'a created group waits for nothing');
  } finally {
    await h.close();
  }
});

test('placement groups: pending ones grouped by options (name left out, strategy filled in), infeasible counted; compilePlacementGroup takes them', async () => {
  const h = await twoNodes();
  try {
    const big = { bundles: [{ CPU: 8 }], strategy: 'PACK' };
    await h.request('create_pg', 'create_pg', { pgId: 'big1', namespace: 'default', name: 'one', options: { ...big, name: 'one' } });
    await h.request('create_pg', 'create_pg', { pgId: 'big2', namespace: 'default', options: { bundles: [{ CPU: 8 }] } });
    await h.request('create_pg', 'create_pg', { pgId: 'spread', namespace: 'default', options: { bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' } });
    const reply = await demands(h);
    const byId = (id: string) => reply.placementGroups.find((g) => g.ids.includes(id))!;
    assert.equal(byId('big1').ids, ['big1', 'big2'], 'the name and a default strategy change nothing');
    assert.equal(byId('big1').options, { bundles: [{ CPU: 8 }], strategy: 'PACK' });
    assert.equal([byId('big1').count, byId('big1').infeasible], [2, 2]);
    assert.equal(byId('spread').options.strategy, 'STRICT_SPREAD', 'a different strategy, a different demand');
    assert.equal([byId('spread').count, byId('spread').infeasible], [1, 1], 'three bundles spread over two nodes never fit');
    assert.ok(byId('spread').reason);
    const compiled = compilePlacementGroup(byId('spread').options as never, { rareResources: reply.rareResources });
    assert.is(compiled.strategy, 'STRICT_SPREAD');
    assert.is(compiled.tiers[0].length, 3);
  } finally {
    await h.close();
  }
});

test('a RESCHEDULING group is a demand for the bundles it must place again: that tier\'s bundles and selectors, its strategy and tolerations', async () => {
  const h = await Harness.start({ heartbeatMs: 20, nodeTimeoutMs: 300 });
  try {
    const n1 = await h.addNode({ nodeId: 'n1', cpu: 2, labels: { disk: 'ssd' } }, { heartbeat: true });
    await h.addNode({ nodeId: 'n2', cpu: 2, labels: { disk: 'ssd' } }, { heartbeat: true });
    const options = { bundles: [{ CPU: 1 }, { CPU: 2 }], strategy: 'STRICT_SPREAD', bundleLabelSelector: [{ disk: 'ssd' }, { disk: 'in(ssd,nvme)' }], tolerations: { spot: exists } };
    await h.request('create_pg', 'create_pg', { pgId: 'pair', namespace: 'default', options });
    const created = await h.events.wait((e) => e.type === 'placement_group_state' && e.placementGroup?.state === 'CREATED', 'pair CREATED');
    const lost = created.placementGroup!.bundles.find((b) => b.nodeId === 'n1')!.index;
    n1.stopHeartbeats();
    await h.events.wait((e) => e.type === 'placement_group_state' && e.placementGroup?.state === 'RESCHEDULING', 'pair RESCHEDULING', 3000);
    const [group] = (await demands(h)).placementGroups;
    assert.equal(group.ids, ['pair']);
    assert.equal(group.options, { bundles: [options.bundles[lost]], strategy: 'STRICT_SPREAD', bundleLabelSelector: [options.bundleLabelSelector[lost]], tolerations: { spot: exists } });
    assert.is(group.count, 1);
  } finally {
    await h.close();
  }
});

test('a reply past the message size keeps five actor ids per node group, counts the rest, and is truncated', async () => {
  const h = await Harness.start({ maxMessageBytes: 4096 });
  try {
    await h.addNode({ nodeId: 'n1', cpu: 100 });
    const ids = Array.from({ length: 400 }, (_, i) => `actor${String(i).padStart(3, '0')}`);
    for (const id of ids) await h.registerActor(id, { numCpus: 0.1 });
    await h.reached(ids.at(-1)!, 'ALIVE');
    const reply = await demands(h);
    const [group] = reply.nodes[0].actors;
    assert.is(group.actorIds.length, 5);
    assert.is(group.actorIdsOmitted, 395);
    assert.is(reply.truncated, true);
  } finally {
    await h.close();
  }
});

test('limit bounds each list and says the reply is truncated; rareResources are the GCS\'s', async () => {
  const h = await Harness.start({ rareResources: ['GPU'] });
  try {
    await h.addNode({ nodeId: 'n1', cpu: 1 });
    for (let i = 0; i < 3; i++) await h.registerActor(`a${i}`, { numCpus: HUGE + i });
    const all = await demands(h);
    assert.is(all.actors.length, 3);
    assert.is(all.truncated, false);
    assert.equal(all.rareResources, ['GPU']);
    const two = await demands(h, 2);
    assert.equal(two.actors.map((g) => g.actorIds[0]), ['a0', 'a1'], 'the oldest waiting first');
    assert.is(two.truncated, true);
  } finally {
    await h.close();
  }
});

test('an actor placed since is no longer a demand; a placement that comes back to the queue is one again', async () => {
  const h = await Harness.start();
  try {
    await h.registerActor('late', { numCpus: 1, labelSelector: { type: 'cpu' } } satisfies PlacementOptions & { labels?: unknown });
    assert.is((await demands(h)).actors.length, 1);
    await h.addNode({ nodeId: 'n1', cpu: 2, labels: { type: 'cpu' } });
    await h.reached('late', 'ALIVE');
    assert.equal((await demands(h)).actors, []);
  } finally {
    await h.close();
  }
});

test.run();
