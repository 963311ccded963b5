import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import type { PlacementGroupInfoWire } from '../../../protocols/messages/placement-group.ts';
import type { GcsOptions } from '../../../runtime/gcs/index.ts';
import { MemoryStore } from '../../../runtime/gcs/store.ts';
import { until } from '../../helpers/until.ts';
import { Harness, type NodeSpec, type StubRaylet } from './support.ts';

/**
 * The GCS's placement groups against stub raylets on the memory bus (docs/placement-groups.md):
 * every strategy placed and refused, the two-phase commit's failure paths, rescheduling after a
 * node dies, removal. The same behaviour with real raylet processes on a nats-server is in
 * spec/integration/placement-groups.spec.ts.
 */
async function withGcs(opts: Partial<GcsOptions>, fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await Harness.start(opts);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

const U = 10_000; // units of one CPU
let seq = 0;
const pgId = (): string => `pg${++seq}`;

function create(h: Harness, options: Record<string, unknown>, extra: { pgId?: string; name?: string } = {}): Promise<PlacementGroupInfoWire> {
  return h.request('create_pg', 'create_pg', { pgId: extra.pgId ?? pgId(), namespace: 'default', ...(extra.name ? { name: extra.name } : {}), options });
}

/** The first placement_group_state event putting `id` in `state` (after event `afterSeq`, when given). */
async function reachedPg(h: Harness, id: string, state: PlacementGroupInfoWire['state'], ms?: number, afterSeq = -1): Promise<PlacementGroupInfoWire & { seq: number }> {
  const e = await h.events.wait((e) => e.type === 'placement_group_state' && e.placementGroup?.id === id && e.placementGroup.state === state && (e.seq ?? 0) > afterSeq, `${id} ${state}`, ms);
  return { ...e.placementGroup!, seq: e.seq ?? 0 };
}

const getPg = (h: Harness, id: string): Promise<PlacementGroupInfoWire> => h.request('get_pg', 'get_pg', { pgId: id });
const nodesOf = (info: PlacementGroupInfoWire): (string | undefined)[] => info.bundles.map((b) => b.nodeId);
const cpus = (n: number, each = 1) => Array.from({ length: n }, () => ({ CPU: each }));
const four = (more: (i: number) => Partial<NodeSpec> = () => ({})): NodeSpec[] => ['n1', 'n2', 'n3', 'n4'].map((nodeId, i) => ({ nodeId, cpu: 4, ...more(i) }));

async function addAll(h: Harness, specs: NodeSpec[], opts: { heartbeat?: boolean } = {}): Promise<StubRaylet[]> {
  const out: StubRaylet[] = [];
  for (const s of specs) out.push(await h.addNode(s, opts));
  return out;
}

// ---- each strategy: fits ----

const fitting: { strategy: string; bundles: Record<string, number>[]; check: (nodes: (string | undefined)[]) => void }[] = [
  { strategy: 'PACK', bundles: cpus(3), check: (n) => assert.is(new Set(n).size, 1, `PACK fits on one node: ${n}`) },
  { strategy: 'STRICT_PACK', bundles: cpus(2, 2), check: (n) => assert.is(new Set(n).size, 1) },
  { strategy: 'SPREAD', bundles: cpus(4), check: (n) => assert.is(new Set(n).size, 4, `SPREAD uses every node: ${n}`) },
  { strategy: 'STRICT_SPREAD', bundles: cpus(3, 4), check: (n) => assert.is(new Set(n).size, 3) },
];

for (const c of fitting) {
  test(`${c.strategy} that fits: CREATED, bundle resources on its nodes, one prepare and one commit per node`, () =>
    withGcs({}, async (h) => {
      const raylets = await addAll(h, four());
      const id = pgId();
      const first = await create(h, { strategy: c.strategy, bundles: c.bundles }, { pgId: id });
      assert.is(first.id, id);
      const info = await reachedPg(h, id, 'CREATED');
      assert.ok(nodesOf(info).every((n) => n !== undefined));
      c.check(nodesOf(info));
      assert.equal((await getPg(h, id)).state, 'CREATED');
      const nodes = await h.nodes();
      for (const [index, b] of info.bundles.entries()) {
        const node = nodes.find((n) => n.nodeId === b.nodeId)!;
        assert.ok((node.resources.total[`CPU_group_${index}_${id}`] ?? 0) === b.resources.CPU, `bundle ${index} resource on ${b.nodeId}`);
        assert.ok((node.resources.total[`CPU_group_${id}`] ?? 0) >= b.resources.CPU);
      }
      const used = new Set(nodesOf(info));
      for (const r of raylets) {
        const ops = r.bundleOps.got.map((o) => o.op);
        if (used.has(r.nodeId)) assert.equal(ops, ['prepare_bundle', 'commit_bundle'], `${r.nodeId}: batched per node`);
        else assert.equal(ops, []);
      }
      // what the cluster has left is the total minus the bundles
      const free = nodes.reduce((sum, n) => sum + (n.resources.available.CPU ?? 0), 0);
      assert.is(free, 16 * U - c.bundles.reduce((s, b) => s + b.CPU * U, 0));
    }),
  );
}

// ---- each strategy: does not fit ----

const unfitting: { strategy: string; bundles: Record<string, number>[]; fitsWith: NodeSpec }[] = [
  { strategy: 'PACK', bundles: cpus(1, 5), fitsWith: { nodeId: 'big', cpu: 6 } },
  { strategy: 'STRICT_PACK', bundles: cpus(2, 3), fitsWith: { nodeId: 'big', cpu: 6 } },
  { strategy: 'SPREAD', bundles: cpus(2, 5), fitsWith: { nodeId: 'big', cpu: 10 } },
  { strategy: 'STRICT_SPREAD', bundles: cpus(3, 1), fitsWith: { nodeId: 'n3', cpu: 1 } },
];

for (const c of unfitting) {
  test(`${c.strategy} that does not fit: PENDING with a schedule_failed event, nothing reserved; CREATED once a node that fits joins`, () =>
    withGcs({}, async (h) => {
      const nodes = c.strategy === 'STRICT_SPREAD' ? [{ nodeId: 'n1', cpu: 4 }, { nodeId: 'n2', cpu: 4 }] : [{ nodeId: 'n1', cpu: 4 }, { nodeId: 'n2', cpu: 4 }];
      await addAll(h, nodes);
      const id = pgId();
      const info = await create(h, { strategy: c.strategy, bundles: c.bundles }, { pgId: id });
      assert.is(info.state, 'PENDING');
      const failed = await h.events.wait((e) => e.type === 'schedule_failed' && (e.target as { id?: string })?.id === id, 'schedule_failed');
      assert.equal(failed.target, { kind: 'placement_group', id });
      assert.match(failed.message!, /^0\/2 nodes are available/);
      assert.is((await getPg(h, id)).pendingReason, failed.message);
      for (const n of await h.nodes()) assert.is(n.resources.available.CPU, n.resources.total.CPU, 'nothing reserved');
      await h.addNode(c.fitsWith);
      const created = await reachedPg(h, id, 'CREATED');
      assert.ok(nodesOf(created).includes(c.fitsWith.nodeId));
      assert.is(created.pendingReason, undefined);
    }),
  );
}

// ---- selectors, fallbacks, tolerations ----

test('bundleLabelSelector: each bundle lands on a node its own selector matches', () =>
  withGcs({}, async (h) => {
    await addAll(h, four((i) => ({ labels: { zone: ['a', 'b', 'c', 'd'][i] } })));
    const id = pgId();
    await create(h, { strategy: 'SPREAD', bundles: cpus(2), bundleLabelSelector: [{ zone: 'c' }, { zone: 'in(a,d)' }] }, { pgId: id });
    const info = await reachedPg(h, id, 'CREATED');
    assert.is(info.bundles[0].nodeId, 'n3');
    assert.ok(['n1', 'n4'].includes(info.bundles[1].nodeId!));
  }));

test('fallbackStrategy (seed 002): 2 H100s, else 4 A100s, else 8 V100s — each tier chosen in turn as nodes appear', () =>
  withGcs({}, async (h) => {
    const gpuBundles = (n: number) => Array.from({ length: n }, () => ({ GPU: 1 }));
    const options = {
      bundles: gpuBundles(2),
      bundleLabelSelector: gpuBundles(2).map(() => ({ 'orrery.io/accelerator-type': 'H100' })),
      fallbackStrategy: [
        { bundles: gpuBundles(4), bundleLabelSelector: gpuBundles(4).map(() => ({ 'orrery.io/accelerator-type': 'A100' })) },
        { bundles: gpuBundles(8), bundleLabelSelector: gpuBundles(8).map(() => ({ 'orrery.io/accelerator-type': 'V100' })) },
      ],
    };
    const gpuNode = (nodeId: string, type: string, gpu: number): NodeSpec => ({ nodeId, cpu: 4, gpu, labels: { 'orrery.io/accelerator-type': type } });
    await h.addNode(gpuNode('v', 'V100', 8));
    const a = pgId();
    assert.is((await create(h, options, { pgId: a })).tier, 2);
    assert.is((await reachedPg(h, a, 'CREATED')).tier, 2);
    await h.addNode(gpuNode('a', 'A100', 4));
    const b = pgId();
    await create(h, options, { pgId: b });
    const onA = await reachedPg(h, b, 'CREATED');
    assert.is(onA.tier, 1, JSON.stringify(onA));
    assert.equal(nodesOf(onA), ['a', 'a', 'a', 'a']);
    await h.addNode(gpuNode('h', 'H100', 2));
    const c = pgId();
    await create(h, options, { pgId: c });
    const onH = await reachedPg(h, c, 'CREATED');
    assert.is(onH.tier, 0);
    assert.equal(onH.bundles.map((x) => x.resources), [{ GPU: U }, { GPU: U }]);
  }));

test('tolerations: a group uses a tainted node only when it tolerates the taint (seed 003)', () =>
  withGcs({}, async (h) => {
    await h.addNode({ nodeId: 'gpu', cpu: 4, taints: { dedicated: 'ml' } });
    const refused = pgId();
    await create(h, { bundles: cpus(1) }, { pgId: refused });
    const failed = await h.events.wait((e) => e.type === 'schedule_failed' && (e.target as { id?: string })?.id === refused, 'schedule_failed');
    assert.match(failed.message!, /taint/);
    const ok = pgId();
    await create(h, { bundles: cpus(1), tolerations: { dedicated: { operator: 'IN', values: ['ml'] } } }, { pgId: ok });
    assert.equal(nodesOf(await reachedPg(h, ok, 'CREATED')), ['gpu']);
  }));

// ---- concurrency ----

// PACK and SPREAD groups of 1-CPU bundles fit whatever the order while any CPU is free; STRICT_SPREAD
// groups of one bundle per node fit while every node has a CPU — so every order of these 200 fills
// the cluster exactly.
test('200 groups created at once that together exactly fill the cluster: all CREATED, nothing over-committed', () =>
  withGcs({}, async (h) => {
    const raylets = await addAll(h, four(() => ({ cpu: 100 })));
    const strategies = ['PACK', 'SPREAD'];
    const ids = Array.from({ length: 200 }, () => pgId());
    await Promise.all(ids.map((id, i) => create(h, { strategy: strategies[i % 2], bundles: cpus(2) }, { pgId: id })));
    const infos = await Promise.all(ids.map((id) => reachedPg(h, id, 'CREATED', 10_000)));
    assert.is(infos.length, 200);
    for (const n of await h.nodes()) assert.is(n.resources.available.CPU, 0, `${n.nodeId} is exactly full`);
    for (const r of raylets) assert.is(r.bundleCpu, 100 * U, `${r.nodeId} holds exactly its CPU in bundles`);
    // batching: far fewer prepare requests than bundles
    const prepares = raylets.reduce((s, r) => s + r.bundleOps.got.filter((o) => o.op === 'prepare_bundle').length, 0);
    assert.ok(prepares < 400, `${prepares} prepare requests for 400 bundles`);
    // one more group does not fit anywhere
    const extra = pgId();
    assert.is((await create(h, { bundles: cpus(1) }, { pgId: extra })).state, 'PENDING');
  }));

// ---- the two-phase commit's failures ----

test('a raylet refuses a prepare: the bundles prepared elsewhere are cancelled, the round is retried and succeeds', () =>
  withGcs({}, async (h) => {
    const [n1, n2] = await addAll(h, [{ nodeId: 'n1', cpu: 1 }, { nodeId: 'n2', cpu: 1 }]);
    let refusals = 0;
    n2.refusePrepare = () => (refusals++ === 0 ? 'busy with a task' : undefined);
    const id = pgId();
    await create(h, { strategy: 'STRICT_SPREAD', bundles: cpus(2) }, { pgId: id });
    const created = await reachedPg(h, id, 'CREATED');
    assert.equal(new Set(nodesOf(created)), new Set(['n1', 'n2']));
    const n1Ops = n1.bundleOps.got.map((o) => o.op);
    assert.equal(n1Ops, ['prepare_bundle', 'cancel_bundle', 'prepare_bundle', 'commit_bundle']);
    assert.is(refusals, 2);
    assert.is(n1.bundleCpu + n2.bundleCpu, 2 * U);
  }));

test('a raylet gone silent between prepare and commit: nothing stays locked, the group ends CREATED elsewhere', () =>
  withGcs({ bundleTimeoutMs: 200, heartbeatMs: 20, nodeTimeoutMs: 400 }, async (h) => {
    const [n1, n2] = await addAll(h, [{ nodeId: 'n1', cpu: 2 }, { nodeId: 'n2', cpu: 2 }], { heartbeat: true });
    n1.silentCommit = true;
    n2.silentCommit = true;
    const id = pgId();
    await create(h, { strategy: 'STRICT_PACK', bundles: cpus(2) }, { pgId: id });
    const prepared = await reachedPg(h, id, 'PREPARED');
    const victim = prepared.bundles[0].nodeId === 'n1' ? n1 : n2;
    const other = victim === n1 ? n2 : n1;
    other.silentCommit = false;
    victim.stopHeartbeats();
    const created = await reachedPg(h, id, 'CREATED', 5000);
    assert.equal(nodesOf(created), [other.nodeId, other.nodeId]);
    const state = await getPg(h, id);
    assert.is(state.state, 'CREATED');
    // the commit that timed out was followed by a cancel to the silent raylet (it was still subscribed)
    assert.ok(victim.bundleOps.got.some((o) => o.op === 'cancel_bundle'), 'cancel sent to the silent raylet');
    assert.is(victim.bundleCpu, 0, 'nothing left locked on the silent raylet');
    assert.is(other.bundleCpu, 2 * U);
  }));

test('a cancel that goes unanswered is sent again until the raylet takes it: a removed group leaves nothing leased there', () =>
  withGcs({ bundleTimeoutMs: 100 }, async (h) => {
    const [n1] = await addAll(h, [{ nodeId: 'n1', cpu: 2 }]);
    const id = pgId();
    await create(h, { bundles: cpus(1) }, { pgId: id });
    await reachedPg(h, id, 'CREATED');
    n1.silentCancel = true;
    assert.is((await h.request('remove_pg', 'remove_pg', { pgId: id })).state, 'REMOVED', 'answered once the cancel timed out');
    assert.is(n1.bundleCpu, U, 'the raylet never heard the cancel');
    n1.silentCancel = false;
    // before, the cancel was only logged: the raylet kept the bundle leased for good while the GCS counted it free
    await until('the cancel sent again and taken', () => (n1.bundleCpu === 0 ? true : undefined));
    assert.ok(n1.silentCancels >= 1);
  }));

test('a cancel sent again never cancels a bundle the GCS has placed on that node since', () =>
  withGcs({ bundleTimeoutMs: 100 }, async (h) => {
    const [n1, n2] = await addAll(h, [
      { nodeId: 'n1', cpu: 2, labels: { slot: 'a' } },
      { nodeId: 'n2', cpu: 2, labels: { slot: 'b' } },
    ]);
    // bundle 0 can only go to n1, bundle 1 only to n2; n2 refuses the first prepare, so n1's bundle
    // is cancelled — unanswered — and the next attempt prepares it on n1 again
    let refusals = 0;
    n2.refusePrepare = () => (refusals++ === 0 ? 'busy with a task' : undefined);
    n1.silentCancel = true;
    const id = pgId();
    await create(h, { strategy: 'STRICT_SPREAD', bundles: cpus(2), bundleLabelSelector: [{ slot: 'a' }, { slot: 'b' }] }, { pgId: id });
    const created = await reachedPg(h, id, 'CREATED');
    assert.equal(nodesOf(created), ['n1', 'n2']);
    assert.is(n1.silentCancels, 1, 'the rollback cancel went unanswered');
    n1.silentCancel = false;
    // the first resend was due 250 ms after the cancel timed out: give it time to (not) happen
    await new Promise((resolve) => setTimeout(resolve, 600));
    await h.nodes();
    assert.equal(n1.bundleOps.got.map((o) => o.op), ['prepare_bundle', 'prepare_bundle', 'commit_bundle'], 'no cancel after the bundle was placed again');
    assert.is(n1.bundles.get(`${id}/0`)?.committed, true);
    assert.is(n1.bundleCpu + n2.bundleCpu, 2 * U);
  }));

// ---- node death and removal ----

test('a node holding bundles dies: RESCHEDULING, the lost bundle is placed again, its actor restarts there', () =>
  withGcs({ heartbeatMs: 20, nodeTimeoutMs: 300 }, async (h) => {
    const raylets = await addAll(h, [{ nodeId: 'n1', cpu: 2 }, { nodeId: 'n2', cpu: 2 }, { nodeId: 'n3', cpu: 2 }], { heartbeat: true });
    const id = pgId();
    await create(h, { strategy: 'STRICT_SPREAD', bundles: cpus(2) }, { pgId: id });
    const created = await reachedPg(h, id, 'CREATED');
    const strategy = { type: 'PLACEMENT_GROUP', placementGroupId: id, bundleIndex: 0 };
    await h.registerActor('in-bundle-0', { schedulingStrategy: strategy, maxRestarts: 1, numCpus: 1 });
    const alive = await h.reached('in-bundle-0', 'ALIVE');
    assert.is(alive.nodeId, created.bundles[0].nodeId);
    const victim = raylets.find((r) => r.nodeId === created.bundles[0].nodeId)!;
    victim.stopHeartbeats();
    const rescheduling = await reachedPg(h, id, 'RESCHEDULING', 3000);
    assert.is(rescheduling.bundles[0].nodeId, undefined, 'bundle 0 is lost');
    assert.is(rescheduling.bundles[1].nodeId, created.bundles[1].nodeId, 'bundle 1 survives where it was');
    const again = await reachedPg(h, id, 'CREATED', 3000, rescheduling.seq);
    const newHome = again.bundles[0].nodeId!;
    assert.not.ok([victim.nodeId, created.bundles[1].nodeId].includes(newHome), 'STRICT_SPREAD still holds');
    const back = await h.events.wait((e) => e.type === 'actor_state' && e.actor?.actorId === 'in-bundle-0' && e.actor.state === 'ALIVE' && e.actor.nodeId === newHome, 'actor back in bundle 0', 3000);
    assert.is(back.actor!.numRestarts, 1);
  }));

test('remove: the group is REMOVED, its actors die, its bundles are cancelled and every resource is free again', () =>
  withGcs({}, async (h) => {
    const raylets = await addAll(h, four());
    const id = pgId();
    await create(h, { strategy: 'SPREAD', bundles: cpus(2) }, { pgId: id, name: 'trainers' });
    await reachedPg(h, id, 'CREATED');
    await h.registerActor('worker', { schedulingStrategy: { type: 'PLACEMENT_GROUP', placementGroupId: id, bundleIndex: -1 } });
    await h.reached('worker', 'ALIVE');
    const removed = await h.request('remove_pg', 'remove_pg', { pgId: id });
    assert.is(removed.state, 'REMOVED');
    assert.is(removed.removedCause, 'removed');
    const dead = await h.reached('worker', 'DEAD');
    assert.match(dead.deathCause!, /placement group .* removed/);
    for (const n of await h.nodes()) {
      assert.is(n.resources.available.CPU, 4 * U, `${n.nodeId}: CPU free again`);
      assert.equal(Object.keys(n.resources.total).filter((k) => k.includes('_group_')), [], `${n.nodeId}: no bundle resources left`);
    }
    await h.events.wait(() => raylets.every((r) => r.bundleCpu === 0), 'raylets hold nothing').catch(() => undefined);
    for (const r of raylets) assert.is(r.bundleCpu, 0, `${r.nodeId} holds no bundle`);
    // its name is free again; removing twice answers the same
    assert.is((await h.request('remove_pg', 'remove_pg', { pgId: id })).state, 'REMOVED');
    const again = pgId();
    assert.is((await create(h, { bundles: cpus(1) }, { pgId: again, name: 'trainers' })).id, again);
  }));

test('removed groups past maxRemovedGroups are forgotten, oldest removal first: get_pg is PLACEMENT_GROUP_NOT_FOUND, the list and the store drop them', () => {
  const store = new MemoryStore();
  return withGcs({ maxRemovedGroups: 2, store }, async (h) => {
    await addAll(h, four());
    const ids = [pgId(), pgId(), pgId(), pgId()];
    for (const id of ids) {
      await create(h, { bundles: cpus(1) }, { pgId: id });
      await reachedPg(h, id, 'CREATED');
    }
    for (const id of ids.slice(0, 3)) assert.is((await h.request('remove_pg', 'remove_pg', { pgId: id })).state, 'REMOVED');
    await until(`${ids[0]} forgotten`, () => (store.groups().every((g) => g.info.id !== ids[0]) ? true : undefined));
    assert.is((await h.refusal('get_pg', 'get_pg', { pgId: ids[0] })).code, 'PLACEMENT_GROUP_NOT_FOUND');
    assert.is((await getPg(h, ids[1])).state, 'REMOVED');
    const listed = (await h.request('list_placement_groups', 'list_placement_groups', {})).items as PlacementGroupInfoWire[];
    assert.equal(listed.map((g) => `${g.id}:${g.state}`).sort(), [`${ids[1]}:REMOVED`, `${ids[2]}:REMOVED`, `${ids[3]}:CREATED`].sort());
    assert.equal(store.groups().map((g) => g.info.id).sort(), [ids[1], ids[2], ids[3]].sort());
    // the live group is never dropped, whatever the bound
    assert.is((await getPg(h, ids[3])).state, 'CREATED');
  });
});

// ---- bad input ----

const bad: { name: string; options: Record<string, unknown>; code: string; field?: RegExp }[] = [
  { name: 'zero resources in a bundle', options: { bundles: [{ CPU: 0 }] }, code: 'INVALID_OPTION', field: /bundles\[0\]/ },
  { name: 'negative resources', options: { bundles: [{ CPU: 1 }, { CPU: -1 }] }, code: 'INVALID_OPTION', field: /bundles\[1\]/ },
  { name: 'no bundles', options: { bundles: [] }, code: 'INVALID_OPTION', field: /bundles/ },
  { name: 'selectors not 1:1 with bundles', options: { bundles: cpus(2), bundleLabelSelector: [{ zone: 'a' }] }, code: 'INVALID_OPTION', field: /bundleLabelSelector/ },
  { name: 'unknown strategy', options: { bundles: cpus(1), strategy: 'SCATTER' }, code: 'INVALID_OPTION', field: /strategy/ },
  { name: 'a bad selector', options: { bundles: cpus(1), bundleLabelSelector: [{ zone: 'in(' }] }, code: 'INVALID_SELECTOR' },
];

for (const c of bad) {
  test(`create_pg with ${c.name}: a typed error, nothing reserved, no group`, () =>
    withGcs({}, async (h) => {
      const [n1] = await addAll(h, [{ nodeId: 'n1', cpu: 4 }]);
      const id = pgId();
      const err = await h.refusal('create_pg', 'create_pg', { pgId: id, namespace: 'default', options: c.options });
      assert.is(err.code, c.code);
      if (c.field) assert.match(err.message, c.field);
      const groups = await h.request('list_placement_groups', 'list_placement_groups', {});
      assert.equal(groups, { items: [] });
      assert.is((await getPg(h, id).catch((e) => e)).code, 'PLACEMENT_GROUP_NOT_FOUND');
      assert.is(n1.bundleOps.got.length, 0);
      assert.is((await h.nodes())[0].resources.available.CPU, parseResources({ CPU: 4 }).CPU);
    }),
  );
}

test('create_pg with a name already taken in the namespace: PLACEMENT_GROUP_NAME_TAKEN; same id twice answers the same group', () =>
  withGcs({}, async (h) => {
    await addAll(h, [{ nodeId: 'n1', cpu: 4 }]);
    const id = pgId();
    await create(h, { bundles: cpus(1) }, { pgId: id, name: 'x' });
    assert.is((await create(h, { bundles: cpus(1) }, { pgId: id, name: 'x' })).id, id);
    const err = await h.refusal('create_pg', 'create_pg', { pgId: pgId(), namespace: 'default', name: 'x', options: { bundles: cpus(1) } });
    assert.is(err.code, 'PLACEMENT_GROUP_NAME_TAKEN');
    assert.is((await h.request('get_pg', 'get_pg', { name: 'x' })).id, id);
  }));

// ---- a group reported CREATED is stored ----

/** A memory store that counts as persistent and, from the first CREATED record on, holds durable() until released. */
class HeldStore extends MemoryStore {
  override readonly persistent = true;
  readonly groupPuts: string[] = [];
  #held = false;
  #waiting: (() => void)[] = [];
  override putGroup(record: Parameters<MemoryStore['putGroup']>[0]): void {
    this.groupPuts.push(record.info.state);
    if (record.info.state === 'CREATED') this.#held = true;
    super.putGroup(record);
  }
  override durable(): Promise<void> {
    return this.#held ? new Promise((resolve) => this.#waiting.push(resolve)) : Promise.resolve();
  }
  release(): void {
    this.#held = false;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}

test('placement_group_state and get_pg tell of CREATED only once its record is stored; the record is written at create and at CREATED, not at PREPARED', async () => {
  const store = new HeldStore();
  await withGcs({ store }, async (h) => {
    await addAll(h, four());
    const id = pgId();
    await create(h, { strategy: 'PACK', bundles: cpus(1) }, { pgId: id });
    const states = (): string[] => h.events.got.filter((e) => e.type === 'placement_group_state' && e.placementGroup?.id === id).map((e) => e.placementGroup!.state);
    // the GCS has it CREATED (list_placement_groups does not wait for the store) …
    const listed = async (): Promise<PlacementGroupInfoWire[]> => (await h.request('list_placement_groups', 'list_placement_groups', {})).items;
    await until(`${id} CREATED in the GCS`, async () => ((await listed()).some((g) => g.id === id && g.state === 'CREATED') ? true : undefined));
    assert.equal(store.groupPuts, ['PENDING', 'CREATED']);
    // … and has told no one while that record is not stored
    const answer = getPg(h, id);
    let answered = false;
    void answer.then(() => (answered = true));
    await listed(); // a request sent after get_pg, answered
    assert.is(answered, false, 'get_pg waits for the store');
    assert.not.ok(states().includes('CREATED'), `no CREATED event yet: ${states()}`);
    store.release();
    assert.is((await reachedPg(h, id, 'CREATED')).state, 'CREATED');
    assert.is((await answer).state, 'CREATED');
    assert.equal(states(), ['PENDING', 'PREPARED', 'CREATED']);
  });
});

test.run();
