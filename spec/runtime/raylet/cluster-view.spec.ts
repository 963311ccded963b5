// The raylet's copy of the cluster view: deltas applied in order, a gap answered with a snapshot
// (deltas arriving meanwhile held and replayed), this node's own accounting, other raylets' load
// reports and spill reservations.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ACTOR_ID_LABEL, actorScope, NODE_SCOPE } from '../../../lib/index.ts';
import type { NodeView, ViewDelta } from '../../../protocols/messages/view.ts';
import { RayletView } from '../../../runtime/raylet/cluster-view.ts';
import { Leases, withoutBundles } from '../../../runtime/raylet/leases.ts';
import { until } from '../../helpers/until.ts';

const CPU = 10_000;

function node(nodeId: string, over: Partial<NodeView> = {}): NodeView {
  return { nodeId, name: nodeId, state: 'ALIVE', labels: {}, taints: {}, resources: { total: { CPU: 4 * CPU }, available: { CPU: 4 * CPU } }, ...over };
}

function delta(version: number, previous: number, upserts: NodeView[] = [], removals: string[] = []): ViewDelta {
  return { version, previous, upserts, removals };
}

interface Harness {
  view: RayletView;
  snapshots: number;
  changes: number;
  nodes: { added: string[]; removed: string[] }[];
  /** Answers the pending snapshot request. */
  answer(snapshot: ViewDelta): Promise<void>;
  fail(err: Error): Promise<void>;
}

function harness(opts: { reservationMs?: number; now?: () => number } = {}): Harness {
  const pending: { resolve(d: ViewDelta): void; reject(e: Error): void }[] = [];
  const h: Harness = {
    snapshots: 0,
    changes: 0,
    nodes: [],
    view: undefined as unknown as RayletView,
    answer: async (snapshot) => {
      pending.shift()!.resolve(snapshot);
      await new Promise((r) => setImmediate(r));
    },
    fail: async (err) => {
      pending.shift()!.reject(err);
      await new Promise((r) => setImmediate(r));
    },
  };
  h.view = new RayletView({
    local: { nodeId: 'me', name: 'me', labels: { zone: 'a' }, taints: {}, total: { CPU: 4 * CPU } },
    requestSnapshot: () => {
      h.snapshots++;
      return new Promise((resolve, reject) => pending.push({ resolve, reject }));
    },
    onChange: () => h.changes++,
    onNodes: (change) => h.nodes.push(change),
    log: () => {},
    retryMs: 5,
    ...opts,
  });
  return h;
}

const ids = (v: RayletView) => [...v.state.nodes.keys()].sort();
const available = (v: RayletView, id: string) => v.state.node(id)?.available.CPU;

test('this node is in the view before the GCS describes it, with its own labels', () => {
  const { view } = harness();
  assert.equal(ids(view), ['me']);
  assert.equal(view.state.node('me')?.labels, { zone: 'a' });
  assert.equal(view.stats(), { version: 0, nodes: 1, deltas: 0, gaps: 0, snapshots: 0, loads: 0 });
});

test('deltas apply in order: upserts, removals, label and taint changes, state', () => {
  const h = harness();
  h.view.receive(delta(1, 0, [node('n1', { labels: { region: 'eu' } }), node('n2')]));
  assert.equal(ids(h.view), ['me', 'n1', 'n2']);
  assert.equal(h.nodes, [{ added: ['n1', 'n2'], removed: [] }]);
  h.view.receive(delta(2, 1, [node('n1', { labels: { region: 'us' }, taints: { gpu: 'true:NoSchedule' }, state: 'DRAINING' })], ['n2']));
  assert.equal(ids(h.view), ['me', 'n1']);
  const n1 = h.view.state.node('n1')!;
  assert.equal(n1.labels, { region: 'us' });
  assert.equal(n1.taints, [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }]);
  assert.is(n1.state, 'DRAINING');
  assert.is(h.view.state.index.nodeHas(NODE_SCOPE, 'n1', 'region', ['eu']), false, 'the old label left the index');
  assert.equal(h.nodes[1], { added: [], removed: ['n2'] });
  assert.is(h.view.stats().version, 2);
  assert.is(h.changes, 2);
  assert.is(h.snapshots, 0);
});

test("a node upsert carries its actor-label counts into the actor index; changes move them", () => {
  const h = harness();
  h.view.receive(delta(1, 0, [node('n1', { actorLabels: { default: { app: { web: 1 }, [ACTOR_ID_LABEL]: { a1: 1 } } } })]));
  assert.is(h.view.state.index.nodeHas(actorScope('default'), 'n1', ACTOR_ID_LABEL, ['a1']), true);
  assert.is(h.view.state.node('n1')!.actors.size, 0, 'counts, not actors');
  h.view.receive({ ...delta(2, 1), actorLabelsChanged: [{ nodeId: 'n1', changes: { default: { app: { web: -1 }, [ACTOR_ID_LABEL]: { a1: -1 } } } }] });
  assert.is(h.view.state.index.nodeHas(actorScope('default'), 'n1', ACTOR_ID_LABEL, ['a1']), false);
  assert.is(h.view.state.index.nodeHas(actorScope('default'), 'n1', 'app'), false);
});

test('a gap asks for a snapshot; deltas that arrive meanwhile are held, then the newer ones replay', async () => {
  const h = harness();
  h.view.receive(delta(1, 0, [node('n1')]));
  h.view.receive(delta(5, 4, [node('n4')]));
  assert.is(h.snapshots, 1);
  assert.is(h.view.stats().gaps, 1);
  h.view.receive(delta(6, 5, [node('n5')]));
  h.view.receive(delta(7, 6, [node('n6')]));
  assert.equal(ids(h.view), ['me', 'n1'], 'nothing applied while the snapshot is on its way');
  // the snapshot is at version 6: it holds n1, n4 and n5 but not n6; version 7 replays on top
  await h.answer({ version: 6, previous: 0, upserts: [node('n1'), node('n4'), node('n5')], removals: [] });
  assert.equal(ids(h.view), ['me', 'n1', 'n4', 'n5', 'n6']);
  assert.is(h.view.stats().version, 7);
  assert.is(h.view.stats().snapshots, 1);
});

test('a snapshot replaces the view: nodes it does not list go, this node stays', async () => {
  const h = harness();
  h.view.receive(delta(1, 0, [node('n1'), node('n2'), node('me', { labels: { zone: 'b' } })]));
  // a GCS that restarted counts from 0 again: its first delta is a gap for this view
  h.view.receive(delta(1, 0, [node('n3')]));
  assert.is(h.snapshots, 1);
  await h.answer({ version: 1, previous: 0, upserts: [node('n3')], removals: [] });
  assert.equal(ids(h.view), ['me', 'n3']);
  assert.equal(h.view.state.node('me')?.labels, { zone: 'b' }, 'this node keeps what it knew');
  assert.equal(h.nodes.at(-1), { added: ['n3'], removed: ['n1', 'n2'] });
});

test('a failed snapshot request is asked again, with the held deltas kept', async () => {
  const h = harness();
  h.view.receive(delta(3, 2, [node('n2')]));
  await h.fail(new Error('no GCS'));
  h.view.receive(delta(4, 3, [node('n3')]));
  await until('the snapshot asked again', () => (h.snapshots === 2 ? true : undefined));
  await h.answer({ version: 3, previous: 0, upserts: [node('n2')], removals: [] });
  assert.equal(ids(h.view), ['me', 'n2', 'n3']);
  assert.is(h.view.stats().version, 4);
});

test("this node's available is its own accounting, whatever the view says", () => {
  const h = harness();
  h.view.setLocalUsed({ CPU: 3 * CPU });
  assert.is(available(h.view, 'me'), 1 * CPU);
  h.view.receive(delta(1, 0, [node('me', { resources: { total: { CPU: 4 * CPU }, available: { CPU: 4 * CPU } } })]));
  assert.is(available(h.view, 'me'), 1 * CPU, 'the GCS sees actors only, one sync period late');
  h.view.setLocalUsed({});
  assert.is(available(h.view, 'me'), 4 * CPU);
  h.view.receive(delta(2, 1, [], ['me']));
  assert.equal(ids(h.view), ['me'], 'a removal of this node leaves it in its own view');
});

test('load reports lower a node to what it has free; older reports are ignored; upserts keep the lower', () => {
  const h = harness();
  h.view.receive(delta(1, 0, [node('n1')]));
  h.view.applyLoad('n1', 2, { CPU: 1 * CPU });
  assert.is(available(h.view, 'n1'), 1 * CPU);
  h.view.applyLoad('n1', 1, { CPU: 4 * CPU });
  assert.is(available(h.view, 'n1'), 1 * CPU, 'an older report changes nothing');
  h.view.receive(delta(2, 1, [node('n1', { resources: { total: { CPU: 4 * CPU }, available: { CPU: 3 * CPU } } })]));
  assert.is(available(h.view, 'n1'), 1 * CPU, 'the lower of the view (3) and the report (1)');
  h.view.applyLoad('n1', 3, { CPU: 4 * CPU });
  assert.is(available(h.view, 'n1'), 3 * CPU, 'the lower of the view (3) and the report (4)');
  h.view.applyLoad('unknown', 1, { CPU: 0 });
  h.view.applyLoad('me', 9, { CPU: 0 });
  assert.is(available(h.view, 'me'), 4 * CPU, 'reports about this node come from its own accounting only');
  assert.is(h.view.stats().loads, 2, 'the two reports that were applied');
});

test('a spill reserves resources on its target until the next report', () => {
  const h = harness();
  h.view.receive(delta(1, 0, [node('n1')]));
  h.view.reserve('n1', { CPU: 3 * CPU });
  assert.is(available(h.view, 'n1'), 1 * CPU);
  h.view.reserve('n1', { CPU: 3 * CPU });
  assert.is(available(h.view, 'n1'), 0, 'never below zero');
  h.view.applyLoad('n1', 1, { CPU: 2 * CPU });
  assert.is(available(h.view, 'n1'), 2 * CPU);
});

test("a reservation no report replaces lapses after reservationMs: the node has what the view and its last report say, and queued tasks are decided again", async () => {
  const clock = { t: 0 };
  const h = harness({ reservationMs: 1_000, now: () => clock.t });
  h.view.receive(delta(1, 0, [node('n1'), node('n2')]));
  h.view.applyLoad('n1', 1, { CPU: 2 * CPU });
  h.view.reserve('n1', { CPU: 2 * CPU });
  clock.t = 600;
  h.view.reserve('n2', { CPU: 1 * CPU });
  assert.equal([available(h.view, 'n1'), available(h.view, 'n2')], [0, 3 * CPU]);
  const changes = h.changes;
  clock.t = 999;
  h.view.lapseReservations();
  assert.equal([available(h.view, 'n1'), h.changes], [0, changes], 'not yet');
  clock.t = 1_000;
  h.view.lapseReservations();
  assert.equal([available(h.view, 'n1'), available(h.view, 'n2')], [2 * CPU, 3 * CPU], "n1's lapsed (back to its report's 2); n2's holds until 1,600");
  assert.is(h.changes, changes + 1);
  clock.t = 1_600;
  h.view.lapseReservations();
  assert.is(available(h.view, 'n2'), 4 * CPU);
  assert.is(h.changes, changes + 2);
  // a report that comes first replaces the reservation: nothing lapses later
  h.view.reserve('n1', { CPU: 1 * CPU });
  h.view.applyLoad('n1', 2, { CPU: 0 });
  clock.t = 5_000;
  h.view.lapseReservations();
  assert.is(available(h.view, 'n1'), 0, 'the report stands');
  assert.is(h.changes, changes + 3, 'the report changed the view; no lapse did');
  h.view.stop();
});

test('a reservation lapses on its own timer, without anything else happening', async () => {
  const h = harness({ reservationMs: 20 });
  h.view.receive(delta(1, 0, [node('n1')]));
  h.view.reserve('n1', { CPU: 4 * CPU });
  assert.is(available(h.view, 'n1'), 0);
  await until('the reservation lapsed', () => (available(h.view, 'n1') === 4 * CPU ? true : undefined));
  h.view.stop();
});

test('resource changes in a delta change only the names given; load reports still lower their names', () => {
  const h = harness();
  h.view.receive(delta(1, 0, [node('n1', { resources: { total: { CPU: 4 * CPU, CPU_group_a: CPU }, available: { CPU: 3 * CPU, CPU_group_a: CPU } } })]));
  h.view.applyLoad('n1', 1, { CPU: 2 * CPU });
  const { resources: _, ...header } = node('n1');
  h.view.receive(delta(2, 1, [{ ...header, resourcesChanged: { total: { CPU_group_b: CPU }, available: { CPU: 2.5 * CPU, CPU_group_b: CPU }, removed: ['CPU_group_a'] } }]));
  const n1 = h.view.state.node('n1')!;
  assert.equal(n1.total, { CPU: 4 * CPU, CPU_group_b: CPU });
  assert.equal(n1.available, { CPU: 2 * CPU, CPU_group_b: CPU }, 'CPU: the lower of the view (2.5) and the report (2)');
  h.view.applyLoad('n1', 2, { CPU: 4 * CPU });
  assert.equal(n1.available, { CPU: 2.5 * CPU, CPU_group_b: CPU }, 'the view now the lower');
  h.view.receive(delta(3, 2, [{ ...header, resourcesChanged: { total: { CPU: 2 * CPU } } }]));
  assert.equal(n1.available, { CPU: 2 * CPU, CPU_group_b: CPU }, 'clamped to the new total');
  h.view.receive(delta(4, 3, [header]));
  assert.equal(n1.total, { CPU: 2 * CPU, CPU_group_b: CPU }, 'an upsert without resources leaves them');
  assert.is(h.snapshots, 0);
});

test('resource changes for a node the view does not hold mean something was missed: a snapshot is asked', async () => {
  const h = harness();
  const { resources: _, ...header } = node('n1');
  h.view.receive(delta(1, 0, [node('n2'), { ...header, resourcesChanged: { available: { CPU: CPU } } }]));
  assert.is(h.snapshots, 1);
  assert.equal(ids(h.view), ['me'], 'nothing of the delta was applied');
  await h.answer(delta(1, 0, [node('n1'), node('n2')]));
  assert.equal(ids(h.view), ['me', 'n1', 'n2']);
  assert.is(h.view.stats().gaps, 1);
});

test("resource changes about this node leave its own accounting alone", () => {
  const h = harness();
  h.view.setLocalUsed({ CPU: 1 * CPU });
  h.view.receive(delta(1, 0, [node('me')]));
  const { resources: _, ...header } = node('me');
  h.view.receive(delta(2, 1, [{ ...header, resourcesChanged: { total: { CPU_group_x: CPU }, available: { CPU: 0 }, removed: ['CPU'] } }]));
  assert.equal(h.view.state.node('me')!.total, { CPU: 4 * CPU });
  assert.equal(h.view.state.node('me')!.available, { CPU: 3 * CPU });
});

test("this node follows its leases name by name: the same as recomputing from the leases' whole sets", () => {
  const h = harness();
  const leases = new Leases({ CPU: 4 * CPU }, () => h.view.setLocalResources(leases.total, leases.used(), leases.takeChanged()));
  const whole = harness();
  const check = (what: string) => {
    whole.view.setLocalTotal({ ...leases.total });
    whole.view.setLocalUsed({ ...leases.used() });
    const me = h.view.state.node('me')!;
    assert.equal(me.total, whole.view.state.node('me')!.total, `${what}: total`);
    assert.equal(me.available, whole.view.state.node('me')!.available, `${what}: available`);
    assert.equal(me.available, leases.available(), `${what}: the leases' available`);
    assert.equal(leases.availableWithoutBundles(), withoutBundles(leases.available()), `${what}: what load reports carry`);
  };
  leases.batch(() => {
    leases.acquire('bundle/a/0', { CPU: 2 * CPU });
    leases.acquire('bundle/b/0', { CPU: 1 * CPU });
  });
  check('two bundles prepared');
  leases.batch(() => {
    leases.addTotal({ CPU_group_a: 2 * CPU, CPU_group_0_a: 2 * CPU });
    leases.addTotal({ CPU_group_b: 1 * CPU, CPU_group_0_b: 1 * CPU });
  });
  check('committed');
  leases.acquire('task/t1', { CPU_group_a: CPU, CPU_group_0_a: CPU });
  check('a task in bundle 0 of a');
  leases.batch(() => {
    leases.removeTotal({ CPU_group_a: 2 * CPU, CPU_group_0_a: 2 * CPU });
    leases.release('bundle/a/0');
  });
  check('a cancelled while its task still runs');
  leases.release('task/t1');
  check('the task ended');
  leases.clear();
  check('cleared');
  assert.equal(h.view.state.node('me')!.total, { CPU: 4 * CPU, CPU_group_b: CPU, CPU_group_0_b: CPU });
});

test("thousands of bundles committed and cancelled in one batch: the view follows, and the change list turns 'all' only once it outgrows the node", () => {
  const h = harness();
  let taken: ReadonlySet<string> | 'all' | undefined;
  const leases = new Leases({ CPU: 4 * CPU }, () => {
    taken = leases.takeChanged();
    h.view.setLocalResources(leases.total, leases.used(), taken);
  });
  const BUNDLES = 3_000;
  const names = (i: number) => ({ [`CPU_group_g${i}`]: CPU, [`CPU_group_0_g${i}`]: CPU });
  leases.batch(() => {
    for (let i = 0; i < BUNDLES; i++) leases.addTotal(names(i));
  });
  // 6,000 names changed on a node that now has 6,001: a list, not 'all'
  assert.ok(taken !== 'all' && taken !== undefined && taken.size === 2 * BUNDLES, 'every new name listed');
  assert.is(Object.keys(h.view.state.node('me')!.total).length, 2 * BUNDLES + 1);
  leases.batch(() => {
    for (let i = 0; i < BUNDLES; i++) leases.removeTotal(names(i));
  });
  // the same 6,000 names left a node that has one name left: more than twice its size, so 'all'
  assert.is(taken, 'all');
  assert.equal(h.view.state.node('me')!.total, { CPU: 4 * CPU });
  assert.equal(h.view.state.node('me')!.available, leases.available());
  assert.equal(leases.available(), { CPU: 4 * CPU });
});

test('after stop, nothing more is applied', () => {
  const h = harness();
  h.view.stop();
  h.view.receive(delta(1, 0, [node('n1')]));
  assert.equal(ids(h.view), ['me']);
});

test.run();
