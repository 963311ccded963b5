// The GCS's view broadcaster sends a node's resources whole only the first time (and in snapshots),
// then only the names that changed; a raylet folding those deltas ends with the view a snapshot gives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toLabelRecord } from '../../../lib/cluster/actor-label-counts.ts';
import { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import { randomInt, seededRng } from '../../../lib/random.ts';
import { decode, encode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import type { ViewDelta } from '../../../protocols/messages/view.ts';
import { subjects } from '../../../protocols/subjects.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { ViewBroadcaster } from '../../../runtime/gcs/view.ts';
import { RayletView } from '../../../runtime/raylet/cluster-view.ts';
import { joinNodeRuns } from '../../../runtime/raylet/raylet-tasks.ts';

const CPU = 10_000;
const VIEW = { view_delta: messages.view_delta } as const;
/** What a raylet reads: the bytes decoded with the protocol's own validator. */
const wire = (delta: ViewDelta): ViewDelta => decode(encode('view_delta', delta), { registry: VIEW }).body;

/** A broadcaster over `state` whose published deltas are kept (decoded, as raylets read them); deltas go out on `flush()`. */
function broadcaster(state: ClusterState, maxBytes?: number): { view: ViewBroadcaster; published: ViewDelta[]; next(...changed: string[]): ViewDelta } {
  const published: ViewDelta[] = [];
  const bus = {
    publish: (_subject: string, data: Uint8Array) => {
      if (maxBytes !== undefined && data.byteLength > maxBytes) throw new Error(`a ${data.byteLength}-byte delta over the ${maxBytes}-byte limit`);
      published.push(decode(data, { registry: VIEW }).body);
    },
  } as unknown as Bus;
  const view = new ViewBroadcaster({ bus, subjects: subjects('spec'), state, intervalMs: 60_000, log: (line) => { throw new Error(line); }, ...(maxBytes === undefined ? {} : { maxBytes }) });
  return {
    view,
    published,
    next: (...changed) => {
      for (const id of changed) view.changed(id);
      view.flush();
      return published.at(-1)!;
    },
  };
}

function raylet(requestSnapshot: () => Promise<ViewDelta> = () => Promise.reject(new Error('no snapshot expected'))): RayletView {
  return new RayletView({ local: { nodeId: 'me', name: 'me', labels: {}, taints: {}, total: { CPU: 2 * CPU } }, requestSnapshot, onChange: () => {}, log: () => {} });
}

/** A committed bundle as the GCS records it: its CPU taken, its bundle resources added. */
function commit(state: ClusterState, nodeId: string, pg: string, index: number, cpus: number): void {
  state.allocate(nodeId, { CPU: cpus * CPU });
  state.growTotal(nodeId, { [`CPU_group_${pg}`]: cpus * CPU, [`CPU_group_${index}_${pg}`]: cpus * CPU });
}

function uncommit(state: ClusterState, nodeId: string, pg: string, index: number, cpus: number): void {
  state.shrinkTotal(nodeId, { [`CPU_group_${pg}`]: cpus * CPU, [`CPU_group_${index}_${pg}`]: cpus * CPU });
  state.release(nodeId, { CPU: cpus * CPU });
}

test('a node sent before carries only the resource names that changed, and the names it lost', () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', labels: { zone: 'a' }, total: { CPU: 8 * CPU } });
  const b = broadcaster(state);
  const first = b.next('n1');
  assert.equal(first.upserts[0].resources, { total: { CPU: 8 * CPU }, available: { CPU: 8 * CPU } }, 'the first time, the whole sets');
  assert.is(first.upserts[0].resourcesChanged, undefined);

  commit(state, 'n1', 'pg1', 0, 2);
  const second = b.next('n1');
  assert.is(second.upserts[0].resources, undefined, 'not the whole sets again');
  assert.equal(second.upserts[0].resourcesChanged, {
    total: { CPU_group_pg1: 2 * CPU, CPU_group_0_pg1: 2 * CPU },
    available: { CPU: 6 * CPU, CPU_group_pg1: 2 * CPU, CPU_group_0_pg1: 2 * CPU },
  });

  state.allocate('n1', { CPU_group_0_pg1: 1 * CPU, CPU_group_pg1: 1 * CPU }); // an actor in bundle 0
  assert.equal(b.next('n1').upserts[0].resourcesChanged, { available: { CPU_group_pg1: 1 * CPU, CPU_group_0_pg1: 1 * CPU } }, 'only available changed');

  state.release('n1', { CPU_group_0_pg1: 1 * CPU, CPU_group_pg1: 1 * CPU });
  uncommit(state, 'n1', 'pg1', 0, 2);
  const lost = b.next('n1').upserts[0].resourcesChanged!;
  assert.equal({ ...lost, removed: lost.removed?.sort() }, { available: { CPU: 8 * CPU }, removed: ['CPU_group_0_pg1', 'CPU_group_pg1'] });

  state.setNodeLabels('n1', { zone: 'b' });
  const relabelled = b.next('n1').upserts[0];
  assert.equal(relabelled.labels, { zone: 'b' });
  assert.ok(relabelled.resources === undefined && relabelled.resourcesChanged === undefined, 'resources unchanged: neither whole sets nor changes');
  b.view.stop();
});

test('with a thousand groups on a node, one more group is a delta of its own names', () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', total: { CPU: 2_000 * CPU } });
  const b = broadcaster(state);
  b.next('n1');
  for (let g = 0; g < 1_000; g++) commit(state, 'n1', `pg${g}`, g % 2, 1);
  b.next('n1');
  commit(state, 'n1', 'last', 1, 1);
  const changed = b.next('n1').upserts[0].resourcesChanged!;
  assert.equal(Object.keys(changed.total!).sort(), ['CPU_group_1_last', 'CPU_group_last']);
  assert.equal(Object.keys(changed.available!).sort(), ['CPU', 'CPU_group_1_last', 'CPU_group_last']);
  const bytes = encode('view_delta', b.published.at(-1)!).length;
  assert.ok(bytes < 400, `the delta is ${bytes} bytes, not the node's 3,000 names`);
  b.view.stop();
});

test('a node that left and came back is sent whole again; snapshots are always whole', () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', total: { CPU: 4 * CPU } });
  state.addNode({ nodeId: 'n2', total: { CPU: 4 * CPU } });
  const b = broadcaster(state);
  b.next('n1', 'n2');
  commit(state, 'n2', 'pg', 0, 1);
  state.removeNode('n1');
  const gone = b.next('n1', 'n2');
  assert.equal(gone.removals, ['n1']);
  state.addNode({ nodeId: 'n1', total: { CPU: 4 * CPU } });
  assert.equal(b.next('n1').upserts[0].resources, { total: { CPU: 4 * CPU }, available: { CPU: 4 * CPU } });
  const snapshot = wire(b.view.snapshot());
  assert.equal(snapshot.upserts.map((n) => [n.nodeId, n.resources?.total]), [
    ['n1', { CPU: 4 * CPU }],
    ['n2', { CPU: 4 * CPU, CPU_group_pg: CPU, CPU_group_0_pg: CPU }],
  ]);
  assert.ok(snapshot.upserts.every((n) => n.resourcesChanged === undefined));
  b.view.stop();
});

test('a delta over the message limit goes as consecutive parts under it; a raylet folding them has every actor label count', () => {
  const state = new ClusterState();
  for (const id of ['n1', 'n2', 'n3']) state.addNode({ nodeId: id, labels: { zone: id }, total: { CPU: 8 * CPU } });
  const b = broadcaster(state, 16 * 1024);
  const follower = raylet();
  b.next('n1', 'n2', 'n3');
  follower.receive(b.published[0]);
  // 3,000 actors placed within one interval: every actor's own id label makes ~1,000 counts per node, over 16 KB
  for (let i = 0; i < 3000; i++) state.addActor(`n${1 + (i % 3)}`, { actorId: `actor-${i}`, namespace: 'sim', labels: { app: `web-${i % 7}`, 'orrery.io/actor-id': `actor-${i}` } });
  const before = b.published.length;
  b.next('n1', 'n2', 'n3');
  const parts = b.published.slice(before);
  assert.ok(parts.length >= 3, `${parts.length} parts (each under the limit, or the bus above would have thrown)`);
  parts.forEach((p, i) => assert.equal([p.previous, p.version], [1 + i, 2 + i], 'consecutive versions'));
  assert.is(b.view.version, 1 + parts.length);
  for (const p of parts) follower.receive(p);
  for (const id of ['n1', 'n2', 'n3']) assert.equal(toLabelRecord(follower.state.actorLabelCounts(id)), toLabelRecord(state.actorLabelCounts(id)), id);
  assert.is(follower.state.node('n1')!.actorLabels!.get('sim')!.get('orrery.io/actor-id')!.size, 1000, 'every actor\'s own id label');
  assert.is(follower.state.node('n1')!.actors.size, 0, 'counts, never the actors');
  b.view.stop();
});

test('a raylet folding seeded random deltas and load reports ends with exactly what a fresh snapshot gives', async () => {
  const rng = seededRng(20_261_122);
  const state = new ClusterState();
  const ids = ['n1', 'n2', 'n3', 'n4'];
  for (const id of ids) state.addNode({ nodeId: id, total: { CPU: 64 * CPU, GPU: 4 * CPU } });
  const b = broadcaster(state);
  const follower = raylet();
  const groups: { nodeId: string; pg: string; index: number; cpus: number }[] = [];
  const actors: { nodeId: string; resources: Record<string, number> }[] = [];
  const loads = new Map<string, { seq: number; available: Record<string, number> }>();
  let pgs = 0;
  let seq = 0;
  const dirty = new Set<string>(ids);
  const live = (): string[] => [...state.nodes.keys()];
  let received = 0;
  const publish = (): void => {
    for (const id of dirty) b.view.changed(id);
    dirty.clear();
    b.view.flush();
    for (const delta of b.published.slice(received)) follower.receive(delta);
    received = b.published.length;
  };
  for (let step = 0; step < 3_000; step++) {
    const r = rng();
    const nodeId = live()[randomInt(rng, live().length)];
    const node = state.node(nodeId)!;
    if (r < 0.35) {
      const cpus = 1 + randomInt(rng, 3);
      if ((node.available.CPU ?? 0) < cpus * CPU) continue;
      const group = { nodeId, pg: `pg${pgs++}`, index: randomInt(rng, 4), cpus };
      commit(state, nodeId, group.pg, group.index, cpus);
      groups.push(group);
      dirty.add(nodeId);
    } else if (r < 0.55 && groups.length > 0) {
      const i = randomInt(rng, groups.length);
      const g = groups[i];
      if (actors.some((a) => a.nodeId === g.nodeId && Object.hasOwn(a.resources, `CPU_group_${g.pg}`))) continue; // its actors first
      groups.splice(i, 1);
      uncommit(state, g.nodeId, g.pg, g.index, g.cpus);
      dirty.add(g.nodeId);
    } else if (r < 0.7) {
      // an actor, in a bundle or not; or one leaves
      const inGroup = groups.filter((g) => g.nodeId === nodeId && (node.available[`CPU_group_${g.index}_${g.pg}`] ?? 0) >= CPU);
      const g = inGroup[randomInt(rng, inGroup.length + 1)];
      const resources = g ? { [`CPU_group_${g.pg}`]: CPU, [`CPU_group_${g.index}_${g.pg}`]: CPU } : { GPU: CPU };
      if (!g && (node.available.GPU ?? 0) < CPU) continue;
      state.allocate(nodeId, resources);
      actors.push({ nodeId, resources });
      dirty.add(nodeId);
    } else if (r < 0.82 && actors.length > 0) {
      const [a] = actors.splice(randomInt(rng, actors.length), 1);
      if (state.node(a.nodeId)) state.release(a.nodeId, a.resources);
      dirty.add(a.nodeId);
    } else if (r < 0.9) {
      // another raylet's load report: its own resources, never bundle ones
      const available = { CPU: randomInt(rng, 70) * CPU, ...(rng() < 0.5 ? { GPU: randomInt(rng, 5) * CPU } : {}) };
      loads.set(nodeId, { seq: ++seq, available });
      follower.applyLoad(nodeId, seq, available);
    } else if (r < 0.93) {
      state.setNodeLabels(nodeId, { step: String(step) });
      dirty.add(nodeId);
    } else if (r < 0.945 && live().length > 2) {
      // a node dies (its groups and actors with it) and comes back empty later
      state.removeNode(nodeId);
      loads.delete(nodeId);
      for (let i = groups.length - 1; i >= 0; i--) if (groups[i].nodeId === nodeId) groups.splice(i, 1);
      for (let i = actors.length - 1; i >= 0; i--) if (actors[i].nodeId === nodeId) actors.splice(i, 1);
      dirty.add(nodeId);
    } else if (r < 0.96) {
      const back = ids.find((id) => !state.node(id));
      if (back) {
        state.addNode({ nodeId: back, total: { CPU: 64 * CPU, GPU: 4 * CPU } });
        dirty.add(back);
      }
    } else {
      publish();
    }
  }
  publish();
  assert.ok(b.published.length > 50, `${b.published.length} deltas`);
  assert.ok(b.published.some((d) => d.upserts.some((n) => n.resourcesChanged?.removed?.length)), 'some deltas removed names');
  assert.is(follower.stats().gaps, 0);

  // a raylet that starts now: the snapshot, then the same last load report of each node
  const snapshot = wire(b.view.snapshot());
  const fresh = raylet();
  fresh.receive(snapshot);
  for (const [nodeId, load] of loads) fresh.applyLoad(nodeId, load.seq, load.available);

  const picture = (v: RayletView) =>
    [...v.state.nodes.values()]
      .map((n) => ({ id: n.id, state: n.state, labels: n.labels, total: sorted(n.total), available: sorted(n.available), score: n.score }))
      .sort((x, y) => (x.id < y.id ? -1 : 1));
  assert.equal(picture(follower), picture(fresh));
  const order = (v: RayletView) => Array.from({ length: v.state.order.size }, (_, i) => v.state.order.at(i).id);
  assert.equal(order(follower), order(fresh), 'the same (score, id) order');
  // and both are the GCS's state under the rule: available = min(view, load), per name of the total
  for (const n of state.nodes.values()) {
    const seen = fresh.state.node(n.id)!;
    assert.equal(sorted(seen.total), sorted(n.total));
    const load = loads.get(n.id)?.available ?? {};
    for (const name in n.total) assert.is(seen.available[name], Math.min(n.available[name], load[name] ?? n.total[name]), `${n.id} ${name}`);
  }
  assert.ok(Object.keys(state.node(live()[0])!.total).length > 20, 'the nodes hold many bundle resources');
  b.view.stop();
});

test('actors placed and removed within a period are one signed change per label, and no upsert of their node', () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', labels: { zone: 'a' }, total: { CPU: 8 * CPU } });
  const b = broadcaster(state);
  b.next('n1');
  for (let i = 0; i < 40; i++) state.addActor('n1', { actorId: `a${i}`, namespace: 'default', labels: { app: 'web' } });
  state.removeActor('n1', 'a0');
  state.addActor('n1', { actorId: 'gone', namespace: 'default', labels: { app: 'db' } });
  state.removeActor('n1', 'gone');
  const d = b.next('n1');
  assert.equal(d.upserts, [], 'nothing of the node itself changed');
  assert.is(d.actorLabelsChanged!.length, 1);
  const changes = d.actorLabelsChanged![0].changes.default;
  assert.equal(changes.app, { web: 39 }, 'one entry for 39 placements; the placed-then-removed db actor leaves nothing');
  assert.is(Object.keys(changes['orrery.io/actor-id']).length, 39);
  b.view.stop();
});

test('load reports: the latest of each node goes in the next delta, numbered by the GCS; a repeat, an unknown node and a node gone are left out', () => {
  const state = new ClusterState();
  for (const id of ['n1', 'n2']) state.addNode({ nodeId: id, total: { CPU: 8 * CPU } });
  const b = broadcaster(state);
  b.next('n1', 'n2');
  assert.is(b.view.load('n1', { CPU: 3 * CPU }), true);
  assert.is(b.view.load('n1', { CPU: 2 * CPU }), true);
  assert.is(b.view.load('nx', { CPU: 1 * CPU }), false, 'not a node of the view');
  b.view.flush();
  assert.equal(b.published.at(-1)!.loads, [{ nodeId: 'n1', seq: 2, available: { CPU: 2 * CPU } }]);
  const before = b.published.length;
  b.view.load('n1', { CPU: 2 * CPU });
  b.view.flush();
  assert.is(b.published.length, before, 'the same report again: no delta at all');
  b.view.load('n2', { CPU: 5 * CPU });
  state.removeNode('n2');
  b.view.changed('n2');
  b.view.flush();
  assert.equal([b.published.at(-1)!.removals, b.published.at(-1)!.loads], [['n2'], undefined], 'a node gone takes its load with it');
  assert.equal(wire(b.view.snapshot()).loads, [{ nodeId: 'n1', seq: 2, available: { CPU: 2 * CPU } }]);
  const page = b.view.snapshotPage({});
  assert.equal(page.loads, [{ nodeId: 'n1', seq: 2, available: { CPU: 2 * CPU } }], 'snapshot pages carry their nodes\' loads');
  b.view.stop();
});

test('the first page of a snapshot is the kept copy while the view has not moved, and a fresh one once it has', () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', total: { CPU: 4 * CPU } });
  state.addNode({ nodeId: 'n2', total: { CPU: 4 * CPU } });
  const b = broadcaster(state);
  b.next('n1', 'n2');
  const first = b.view.snapshotPage({});
  const again = b.view.snapshotPage({});
  assert.is(again.version, first.version);
  // the same node objects: read from the copy kept for this version, not built again for every raylet
  assert.ok(again.upserts.every((n, i) => n === first.upserts[i]));
  commit(state, 'n2', 'pg', 0, 1);
  b.view.changed('n2'); // pending, not yet published: the next first page publishes it first
  const moved = b.view.snapshotPage({});
  assert.ok(moved.version > first.version, 'a new version once the view moved');
  assert.is(b.published.at(-1)!.version, moved.version, 'what was pending went out before the snapshot');
  assert.equal(moved.upserts.find((n) => n.nodeId === 'n2')!.resources?.total, { CPU: 4 * CPU, CPU_group_pg: CPU, CPU_group_0_pg: CPU });
  b.view.stop();
});

function sorted(set: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(set).sort(([a], [b]) => (a < b ? -1 : 1));
}

// A node holding thousands of bundles: its resource names alone pass the message limit

test('a node first sent with thousands of bundle names goes in runs over consecutive parts; a raylet folding them has its whole sets', () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', labels: { zone: 'a' }, total: { CPU: 4_000 * CPU } });
  state.addNode({ nodeId: 'n2', total: { CPU: 8 * CPU } });
  for (let i = 0; i < 1_500; i++) commit(state, 'n1', `pg${String(i).padStart(5, '0')}`, 0, 1);
  const b = broadcaster(state, 16 * 1024);
  const follower = raylet();
  b.next('n1', 'n2'); // the first send: whole sets, ~100 KB for n1 (the bus above throws past 16 KB)
  assert.ok(b.published.length >= 6, `${b.published.length} parts`);
  b.published.forEach((p, i) => assert.equal([p.previous, p.version], [i, i + 1], 'consecutive versions'));
  for (const p of b.published) assert.ok(p.upserts.filter((u) => u.nodeId === 'n1').length <= 1, 'a run of a node per part');
  for (const p of b.published) follower.receive(p);
  for (const id of ['n1', 'n2']) {
    assert.equal(follower.state.node(id)!.total, state.node(id)!.total, `${id} total`);
    assert.equal(follower.state.node(id)!.available, state.node(id)!.available, `${id} available`);
  }
  assert.equal(follower.state.node('n1')!.labels, { zone: 'a' });
  b.view.stop();
});

test('thousands of bundles committed on a node already sent: the changed names go in runs; given back, the names removed go the same way', () => {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', total: { CPU: 4_000 * CPU } });
  const b = broadcaster(state, 16 * 1024);
  const follower = raylet();
  follower.receive(b.next('n1'));
  const from = b.published.length;
  for (let i = 0; i < 1_500; i++) commit(state, 'n1', `pg${String(i).padStart(5, '0')}`, 0, 1);
  b.next('n1');
  assert.ok(b.published.length - from >= 6, `${b.published.length - from} parts`);
  for (const p of b.published.slice(from)) follower.receive(p);
  assert.equal(follower.state.node('n1')!.total, state.node('n1')!.total);
  assert.equal(follower.state.node('n1')!.available, state.node('n1')!.available);
  const back = b.published.length;
  for (let i = 0; i < 1_500; i++) uncommit(state, 'n1', `pg${String(i).padStart(5, '0')}`, 0, 1);
  b.next('n1');
  assert.ok(b.published.length - back >= 2, `${b.published.length - back} parts of removed names`);
  for (const p of b.published.slice(back)) follower.receive(p);
  assert.equal(follower.state.node('n1')!.total, { CPU: 4_000 * CPU });
  assert.equal(follower.state.node('n1')!.available, { CPU: 4_000 * CPU });
  b.view.stop();
});

test('a snapshot of a node larger than a page: pages under the limit, the node in runs a raylet joins into its whole sets', () => {
  const state = new ClusterState();
  for (const id of ['n0', 'n1', 'n2']) state.addNode({ nodeId: id, total: { CPU: 4_000 * CPU } });
  for (let i = 0; i < 1_500; i++) commit(state, 'n1', `pg${String(i).padStart(5, '0')}`, 0, 1);
  const b = broadcaster(state);
  b.view.load('n1', { CPU: 2_500 * CPU });
  b.view.flush();
  const MAX = 16 * 1024;
  const pages: ViewDelta[] = [];
  let page = b.view.snapshotPage({}, { maxBytes: MAX });
  for (;;) {
    assert.ok(encode('view_delta', page).byteLength <= MAX, `a page of ${encode('view_delta', page).byteLength} bytes`);
    pages.push(wire(page));
    if (page.next === undefined) break;
    page = b.view.snapshotPage({ after: page.next, version: page.version }, { maxBytes: MAX });
  }
  assert.ok(pages.length >= 6, `${pages.length} pages`);
  const upserts = joinNodeRuns(pages.flatMap((p) => p.upserts));
  assert.equal(upserts.map((u) => u.nodeId), ['n0', 'n1', 'n2']);
  for (const u of upserts) {
    assert.equal(u.resources!.total, state.node(u.nodeId)!.total, `${u.nodeId} total`);
    assert.equal(u.resources!.available, state.node(u.nodeId)!.available, `${u.nodeId} available`);
  }
  assert.equal(pages.flatMap((p) => p.loads ?? []).map((l) => l.nodeId), ['n1'], "the node's load once, with its first run");
  b.view.stop();
});

test.run();
