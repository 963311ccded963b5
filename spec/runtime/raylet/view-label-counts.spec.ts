// The raylet's view holds each node's actor-label reference counts (seed 000), never the actors: a
// period's placements arrive as one signed change per label, a change that does not fit the counts
// is a gap answered by a snapshot, malformed counts are refused by the validator, and actor
// affinity decided on the counts agrees with the GCS's state that holds the actors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toLabelRecord } from '../../../lib/cluster/actor-label-counts.ts';
import { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import { ACTOR_ID_LABEL, actorScope } from '../../../lib/index.ts';
import { actorExpressionMatches } from '../../../lib/scheduling/filters/actor-affinity.ts';
import type { LabelMatchExpression } from '../../../lib/selectors/expression.ts';
import { decode, encode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import type { NodeView, ViewDelta } from '../../../protocols/messages/view.ts';
import { subjects } from '../../../protocols/subjects.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { ViewBroadcaster } from '../../../runtime/gcs/view.ts';
import { RayletView } from '../../../runtime/raylet/cluster-view.ts';

const VIEW = { view_delta: messages.view_delta } as const;
const ID = ACTOR_ID_LABEL;

const node = (nodeId: string, over: Partial<NodeView> = {}): NodeView => ({
  nodeId,
  name: nodeId,
  state: 'ALIVE',
  labels: {},
  taints: {},
  resources: { total: { CPU: 40_000 }, available: { CPU: 40_000 } },
  ...over,
});
type Changes = NonNullable<ViewDelta['actorLabelsChanged']>[number]['changes'];
/** A delta of label-count changes only, node by node (no upserts: counts change without them). */
const changes = (version: number, byNode: Record<string, Changes>, more: Partial<ViewDelta> = {}): ViewDelta => ({
  version, previous: version - 1, upserts: [], removals: [], actorLabelsChanged: Object.entries(byNode).map(([nodeId, c]) => ({ nodeId, changes: c })), ...more,
});

function view(snapshots: ViewDelta[] = []): { v: RayletView; asked: () => number; logs: string[] } {
  let asked = 0;
  const logs: string[] = [];
  const v = new RayletView({
    local: { nodeId: 'me', name: 'me', labels: {}, taints: {}, total: { CPU: 40_000 } },
    requestSnapshot: () => {
      asked++;
      const next = snapshots.shift();
      return next ? Promise.resolve(next) : Promise.reject(new Error('no snapshot expected'));
    },
    onChange: () => {},
    log: (line) => logs.push(line),
  });
  return { v, asked: () => asked, logs };
}
const counts = (v: RayletView, id: string) => toLabelRecord(v.state.node(id)?.actorLabels ?? new Map());
const has = (v: RayletView, id: string, key: string, value: string) => v.state.index.nodeHas(actorScope('default'), id, key, [value]);

test('one delta moves many actors as one change per label; a count reaching zero leaves the index', () => {
  const { v } = view();
  v.receive({ version: 1, previous: 0, upserts: [node('n1', { actorLabels: { default: { app: { web: 2 }, [ID]: { a1: 1, a2: 1 } } } })], removals: [] });
  assert.is(v.state.index.refCount(actorScope('default'), 'n1', 'app', 'web'), 2);
  v.receive(changes(2, { n1: { default: { app: { web: 498, db: 1 }, [ID]: { a3: 1 } } } }));
  assert.is(v.state.index.refCount(actorScope('default'), 'n1', 'app', 'web'), 500, '498 placements, one entry');
  v.receive(changes(3, { n1: { default: { app: { db: -1 }, [ID]: { a1: -1 } } } }));
  assert.is(has(v, 'n1', 'app', 'db'), false);
  assert.is(has(v, 'n1', ID, 'a1'), false);
  assert.is(has(v, 'n1', ID, 'a3'), true);
  assert.equal(counts(v, 'n1'), { default: { app: { web: 500 }, [ID]: { a2: 1, a3: 1 } } });
  assert.is(v.stats().gaps, 0);
});

test('a change that would take a count below zero is a gap: nothing of that delta applies, a snapshot replaces the counts', async () => {
  const snapshot: ViewDelta = { version: 3, previous: 0, upserts: [node('n1', { actorLabels: { default: { app: { db: 1 } } } }), node('n2')], removals: [] };
  const { v, asked } = view([snapshot]);
  v.receive({ version: 1, previous: 0, upserts: [node('n1', { actorLabels: { default: { app: { web: 1 } } } })], removals: [] });
  v.receive(changes(2, { n1: { default: { app: { web: -2 } } } }, { upserts: [node('n2')] }));
  assert.is(asked(), 1);
  assert.is(v.stats().gaps, 1);
  assert.is(v.state.node('n2'), undefined, 'the rest of the delta was not applied either');
  assert.is(v.state.index.refCount(actorScope('default'), 'n1', 'app', 'web'), 1, 'the count is untouched');
  await new Promise((r) => setImmediate(r));
  assert.equal(counts(v, 'n1'), { default: { app: { db: 1 } } }, 'the snapshot replaced the counts');
  assert.is(has(v, 'n1', 'app', 'web'), false);
  assert.equal(counts(v, 'n2'), undefined, 'a snapshot node without counts has none');
  assert.is(v.stats().version, 3);
});

test('deltas held while the snapshot is on its way replay their label changes on top of it', async () => {
  let release!: (d: ViewDelta) => void;
  const v = new RayletView({
    local: { nodeId: 'me', name: 'me', labels: {}, taints: {}, total: { CPU: 40_000 } },
    requestSnapshot: () => new Promise((resolve) => (release = resolve)),
    onChange: () => {},
    log: () => {},
  });
  v.receive(changes(5, { n1: { default: { app: { web: 1 } } } })); // a gap
  v.receive(changes(6, { n1: { default: { app: { web: 2 } } } }));
  v.receive(changes(7, { n1: { default: { app: { web: -1 } } } }));
  release({ version: 5, previous: 0, upserts: [node('n1', { actorLabels: { default: { app: { web: 4 } } } })], removals: [] });
  await new Promise((r) => setImmediate(r));
  assert.is(v.state.index.refCount(actorScope('default'), 'n1', 'app', 'web'), 5, 'snapshot 4, then +2 and -1');
  assert.is(v.stats().version, 7);
});

test('a snapshot replaces a node\'s counts; the node\'s own upsert with whole counts does too', () => {
  const { v } = view();
  v.receive({ version: 1, previous: 0, upserts: [node('n1', { actorLabels: { default: { app: { web: 3 } }, other: { app: { web: 1 } } } })], removals: [] });
  v.receive({ version: 2, previous: 1, upserts: [node('n1', { actorLabels: { default: { tier: { a: 1 } } } })], removals: [] });
  assert.equal(counts(v, 'n1'), { default: { tier: { a: 1 } } });
  assert.is(v.state.index.nodeHas(actorScope('other'), 'n1', 'app'), false, 'another namespace\'s counts left too');
});

test('malformed label counts are refused by the validator, and a raylet given one keeps its view', () => {
  const bad: [string, Record<string, unknown>][] = [
    ['a zero change', { actorLabelsChanged: [{ nodeId: 'n1', changes: { default: { app: { web: 0 } } } }] }],
    ['a fractional change', { actorLabelsChanged: [{ nodeId: 'n1', changes: { default: { app: { web: 0.5 } } } }] }],
    ['a change that is a string', { actorLabelsChanged: [{ nodeId: 'n1', changes: { default: { app: { web: '-1' } } } }] }],
    ['a change without its node', { actorLabelsChanged: [{ changes: { default: { app: { web: 1 } } } }] }],
    ['a forbidden value key', { actorLabelsChanged: [{ nodeId: 'n1', changes: { default: { app: JSON.parse('{"__proto__": 1}') } } }] }],
    ['a whole count of zero', { upserts: [node('n1', { actorLabels: { default: { app: { web: 0 } } } })] }],
    ['a negative whole count', { upserts: [node('n1', { actorLabels: { default: { app: { web: -1 } } } })] }],
    ['an empty label key', { upserts: [node('n1', { actorLabels: { default: { '': { web: 1 } } } })] }],
    ['an empty namespace', { upserts: [node('n1', { actorLabels: { '': { app: { web: 1 } } } })] }],
  ];
  const { v } = view();
  v.receive({ version: 1, previous: 0, upserts: [node('n1', { actorLabels: { default: { app: { web: 1 } } } })], removals: [] });
  for (const [name, over] of bad) {
    const delta = { version: 2, previous: 1, upserts: [], removals: [], ...over };
    // raylet-tasks.ts decodes every view message this way and drops (and counts) what does not decode
    assert.throws(() => decode(encode('view_delta' as string, delta), { registry: VIEW }), (e: { code?: string }) => e.code === 'INVALID_MESSAGE', name);
  }
  assert.equal(counts(v, 'n1'), { default: { app: { web: 1 } } });
  const good = changes(2, { n1: { default: { app: { web: -1 } } } }, { loads: [{ nodeId: 'n1', seq: 1, available: { CPU: 1 } }] });
  assert.equal(decode(encode('view_delta', good), { registry: VIEW }).body, good);
});

test('label changes for a node the view does not hold are a gap', () => {
  const { v, asked } = view();
  v.receive({ version: 1, previous: 0, upserts: [node('n1')], removals: [] });
  v.receive(changes(2, { n9: { default: { app: { web: 1 } } } }));
  assert.is(asked(), 1);
  assert.is(v.stats().version, 1);
});

test('a node new in a delta may take label changes in the same delta, on top of its whole counts', () => {
  const { v } = view();
  v.receive(changes(1, { n1: { default: { app: { web: 2, db: -1 } } } }, { previous: 0, upserts: [node('n1', { actorLabels: { default: { app: { db: 1 } } } })] }));
  assert.equal(counts(v, 'n1'), { default: { app: { web: 2 } } });
  assert.is(v.stats().gaps, 0);
});

/** A GCS ClusterState holding actors, broadcast to a raylet view through the wire. */
function mirrored(): { gcs: ClusterState; raylet: RayletView; sync(): void } {
  const gcs = new ClusterState();
  const { v } = view();
  const bus = { publish: (_s: string, data: Uint8Array) => v.receive(decode(data, { registry: VIEW }).body) } as unknown as Bus;
  const b = new ViewBroadcaster({ bus, subjects: subjects('spec'), state: gcs, intervalMs: 60_000, log: (line) => { throw new Error(line); } });
  return {
    gcs,
    raylet: v,
    sync: () => {
      for (const id of gcs.nodes.keys()) b.changed(id);
      b.flush();
    },
  };
}

test('actor affinity decided on the counts agrees with the GCS state that holds the actors, node by node', () => {
  const m = mirrored();
  for (const [id, zone] of [['n1', 'a'], ['n2', 'a'], ['n3', 'b'], ['n4', 'c']]) m.gcs.addNode({ nodeId: id, labels: { zone }, total: { CPU: 40_000 } });
  m.sync();
  const place = (nodeId: string, actorId: string, labels: Record<string, string>, namespace = 'default') => m.gcs.addActor(nodeId, { actorId, namespace, labels });
  place('n1', 'w1', { app: 'web', shard: '3' });
  place('n1', 'w2', { app: 'web', shard: '7' });
  place('n2', 'd1', { app: 'db' });
  place('n3', 'o1', { app: 'web' }, 'other');
  m.sync();
  m.gcs.removeActor('n1', 'w1');
  place('n4', 'w3', { app: 'web', shard: '12' });
  m.sync();
  const expr = (over: Partial<LabelMatchExpression> & Pick<LabelMatchExpression, 'key' | 'operator'>): LabelMatchExpression => ({ values: [], soft: false, ...over });
  const table: [string, LabelMatchExpression][] = [
    ['IN app=web', expr({ key: 'app', operator: 'IN', values: ['web'] })],
    ['NOT_IN app=db', expr({ key: 'app', operator: 'NOT_IN', values: ['db'] })],
    ['EXISTS shard', expr({ key: 'shard', operator: 'EXISTS' })],
    ['DOES_NOT_EXIST app', expr({ key: 'app', operator: 'DOES_NOT_EXIST' })],
    ['GT shard 5', expr({ key: 'shard', operator: 'GT', values: ['5'] })],
    ['LT shard 5 (w1 left)', expr({ key: 'shard', operator: 'LT', values: ['5'] })],
    ['IN actor id w2', expr({ key: ID, operator: 'IN', values: ['w2'] })],
    ['NOT_IN actor id w1 (gone)', expr({ key: ID, operator: 'NOT_IN', values: ['w1'] })],
    ['IN app=web in namespace other', expr({ key: 'app', operator: 'IN', values: ['web'], namespace: 'other' })],
    ['IN app=db per zone', expr({ key: 'app', operator: 'IN', values: ['db'], topologyKey: 'zone' })],
    ['NOT_IN app=web per zone', expr({ key: 'app', operator: 'NOT_IN', values: ['web'], topologyKey: 'zone' })],
    ['GT shard 10 per zone', expr({ key: 'shard', operator: 'GT', values: ['10'], topologyKey: 'zone' })],
  ];
  for (const [name, e] of table) {
    const want = ['n1', 'n2', 'n3', 'n4'].filter((id) => actorExpressionMatches(m.gcs, m.gcs.node(id)!, e, 'default'));
    const got = ['n1', 'n2', 'n3', 'n4'].filter((id) => actorExpressionMatches(m.raylet.state, m.raylet.state.node(id)!, e, 'default'));
    assert.equal(got, want, name);
  }
  // and a zone's actors follow a node's relabel on the raylet's side as on the GCS's
  m.gcs.setNodeLabels('n2', { zone: 'b' });
  m.sync();
  const perZone = expr({ key: 'app', operator: 'IN', values: ['db'], topologyKey: 'zone' });
  const ids = (s: ClusterState) => [...s.nodes.keys()].filter((id) => id !== 'me' && actorExpressionMatches(s, s.node(id)!, perZone, 'default')).sort();
  assert.equal(ids(m.raylet.state), ids(m.gcs));
  assert.equal(ids(m.raylet.state), ['n2', 'n3']);
  assert.is(m.raylet.stats().gaps, 0);
});

test('the raylet view holds no actors, only counts: its entries follow distinct labels, not actors', () => {
  const m = mirrored();
  m.gcs.addNode({ nodeId: 'n1', total: { CPU: 40_000 } });
  m.sync();
  for (let i = 0; i < 500; i++) m.gcs.addActor('n1', { actorId: `a${i}`, namespace: 'default', labels: { app: 'web', tier: `t${i % 3}` } });
  m.sync();
  const n1 = m.raylet.state.node('n1')!;
  assert.is(n1.actors.size, 0);
  const keys = n1.actorLabels!.get('default')!;
  assert.equal([keys.get('app')!.size, keys.get('tier')!.size, keys.get(ID)!.size], [1, 3, 500], 'one entry per distinct label value (each actor id is one)');
  assert.is(keys.get('app')!.get('web'), 500);
});

test.run();
