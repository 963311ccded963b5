import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { until } from '../../helpers/until.ts';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import {
  actorAffinity, affinity, antiAffinity, In, labelIn, nodeAffinity, nodeIdAffinity,
} from '../../../lib/selectors/builders.ts';
import { encode } from '../../../protocols/codec.ts';
import type { NodeView, ViewDelta } from '../../../protocols/messages/view.ts';
import type { GcsOptions } from '../../../runtime/gcs/index.ts';
import { Harness, type NodeSpec } from './support.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { OrreryError } from '../../../lib/errors.ts';

// The GCS served on a memory bus, driven through its subjects by a client connection and stub
// raylets (peers answering create_actor / kill_actor); assertions read replies, events and views.

async function withGcs(opts: Partial<GcsOptions>, fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await Harness.start(opts);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

const CPU = (n: number) => parseResources({ CPU: n }).CPU;

// ---- start ----

test('a GCS says it opened its subjects: one gcs_leader event, first of all, with its epoch, also in list_events', () =>
  withGcs({ epoch: 4 }, async (h) => {
    const e = await h.events.wait((x) => x.type === 'gcs_leader', 'gcs_leader');
    assert.is(e.epoch, 4);
    assert.is(e.message, 'the GCS opened its subjects (leader epoch 4)');
    await h.addNode({ nodeId: 'n1' });
    const history = await h.request('list_events', 'list_events', {});
    assert.equal(history.events.map((x: { type: string }) => x.type), ['gcs_leader', 'node_added']);
  }));

// ---- nodes ----

test('register_node answers registered, publishes node_added, lists the node with rare-resource taints added', () =>
  withGcs({ heartbeatMs: 250, nodeTimeoutMs: 2000, rareResources: ['GPU'] }, async (h) => {
    const raylet = await h.addNode({ nodeId: 'n1', gpu: 2, labels: { region: 'eu' }, taints: { dedicated: 'ml:PreferNoSchedule' } });
    assert.equal(await raylet.register(), { nodeId: 'n1', heartbeatMs: 250, nodeTimeoutMs: 2000, rareResources: ['GPU'] }, 'registering again is answered the same, with the node timeout the raylet fences on');
    const added = await h.events.wait((e) => e.type === 'node_added', 'node_added');
    const [node] = await h.nodes();
    assert.equal(added.node, node);
    assert.equal(node, {
      nodeId: 'n1',
      name: 'n1',
      state: 'ALIVE',
      labels: { 'orrery.io/node-id': 'n1', region: 'eu' },
      taints: { dedicated: 'ml:PreferNoSchedule', 'orrery.io/rare-gpu': 'true' },
      resources: { total: parseResources({ CPU: 4, GPU: 2 }), available: parseResources({ CPU: 4, GPU: 2 }) },
    });
    assert.is(h.events.got.filter((e) => e.type === 'node_added').length, 1);
  }));

test('heartbeat answers known: true for a live node, false for one the GCS does not know', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode({ nodeId: 'n1' });
    assert.equal(await raylet.heartbeat(), { known: true });
    assert.equal(await h.request('heartbeat', 'heartbeat', { nodeId: 'stranger', seq: 0, available: {} }), { known: false });
  }));

test('a registration with an invalid label is refused with INVALID_LABEL and registers nothing', () =>
  withGcs({}, async (h) => {
    const err = await h.refusal('register_node', 'register_node', {
      nodeId: 'n1', name: 'n1', labels: { 'bad key!': 'x' }, taints: {},
      resources: { total: { CPU: CPU(1) }, available: { CPU: CPU(1) } }, address: { ip: '127.0.0.1', hostname: 'h', pid: 1 },
    });
    assert.is(err.code, 'INVALID_LABEL');
    assert.equal(await h.nodes(), []);
    assert.equal(h.gcs.snapshot().nodes, []);
  }));

// ---- placement through the GCS ----

const us = (id: string, more: Partial<NodeSpec> = {}): NodeSpec => ({ nodeId: id, labels: { region: 'us', zone: 'a' }, ...more });
const eu = (id: string, more: Partial<NodeSpec> = {}): NodeSpec => ({ nodeId: id, labels: { region: 'eu', zone: 'b' }, ...more });

const placements: { name: string; nodes: NodeSpec[]; options: Record<string, unknown>; want: string; rare?: string[] }[] = [
  { name: 'labelSelector', nodes: [us('n1'), eu('n2')], options: { labelSelector: { region: 'eu' } }, want: 'n2' },
  { name: 'labelSelector with a fallback when no node can ever match', nodes: [us('n1'), eu('n2')], options: { labelSelector: { region: 'ap' }, fallbackStrategy: [{ labelSelector: { region: 'in(eu,us)', zone: '!a' } }] }, want: 'n2' },
  { name: 'nodeAffinity', nodes: [us('n1'), eu('n2')], options: { schedulingStrategy: nodeAffinity(labelIn('zone', ['b'])) }, want: 'n2' },
  { name: 'hard nodeIdAffinity', nodes: [us('n1'), us('n2')], options: { schedulingStrategy: nodeIdAffinity('n2') }, want: 'n2' },
  { name: 'soft nodeIdAffinity to an unknown node uses the default policy', nodes: [us('n1'), us('n2')], options: { schedulingStrategy: nodeIdAffinity('gone', { soft: true }) }, want: 'n1' },
  { name: 'an untolerated taint keeps a request off a node', nodes: [us('n1', { taints: { dedicated: 'ml' } }), us('n2')], options: {}, want: 'n2' },
  { name: 'a toleration lets it on', nodes: [us('n1', { taints: { dedicated: 'ml' } }), us('n2', { cpu: 1 })], options: { numCpus: 2, tolerations: { dedicated: In('ml') } }, want: 'n1' },
  { name: 'custom resources', nodes: [us('n1'), us('n2', { resources: { my_res: 2 } })], options: { resources: { my_res: 1 } }, want: 'n2' },
  { name: 'rare resources: GPU work lands on the GPU node', rare: ['GPU'], nodes: [us('n1', { gpu: 1 }), us('n2')], options: { numGpus: 1 }, want: 'n1' },
  { name: 'rare resources: CPU work keeps off the GPU node', rare: ['GPU'], nodes: [us('n1', { gpu: 1 }), us('n2')], options: {}, want: 'n2' },
];

for (const c of placements) {
  test(`placement: ${c.name}`, () =>
    withGcs({ rareResources: c.rare }, async (h) => {
      for (const n of c.nodes) await h.addNode(n);
      const info = await h.registerActor('a1', c.options);
      assert.is(info.state, 'SCHEDULED');
      assert.is(info.nodeId, c.want);
      const alive = await h.reached('a1', 'ALIVE');
      assert.is(alive.nodeId, c.want);
      assert.equal(h.raylets.find((r) => r.nodeId === c.want)!.created.map((r) => r.actorId), ['a1']);
    }));
}

test('hard nodeIdAffinity to an unknown node is NODE_NOT_FOUND at once, and nothing is registered', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    const err = await h.refusal('register_actor', 'register_actor', {
      actorId: 'a1', code: { moduleUrl: 'file:///x.ts', className: 'C', args: [] }, namespace: 'default',
      options: { schedulingStrategy: nodeIdAffinity('nowhere') },
    });
    assert.is(err.code, 'NODE_NOT_FOUND');
    assert.equal(await h.request('list_actors', 'list_actors', {}), { items: [] });
    assert.is((await h.refusal('get_actor', 'get_actor', { actorId: 'a1' })).code, 'ACTOR_NOT_FOUND');
    assert.equal(h.events.got.filter((e) => e.type === 'actor_state'), []);
  }));

test('actor affinity to a placed actor lands with it; anti-affinity keeps away', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    await h.addNode(us('n2'));
    assert.is((await h.registerActor('a1', { schedulingStrategy: nodeIdAffinity('n2') })).nodeId, 'n2');
    assert.is((await h.registerActor('a2', { schedulingStrategy: actorAffinity(affinity('a1')) })).nodeId, 'n2');
    assert.is((await h.registerActor('a3', { schedulingStrategy: actorAffinity(antiAffinity(['a1'])) })).nodeId, 'n1');
  }));

test('actor affinity to an actor not placed yet waits, then lands with it', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    const leader = await h.registerActor('lead', { labelSelector: { zone: 'b' } });
    assert.is(leader.state, 'PENDING');
    const follower = await h.registerActor('follow', { schedulingStrategy: actorAffinity(affinity('lead')) });
    assert.is(follower.state, 'PENDING');
    assert.match(follower.pendingReason!, /^0\/1 nodes are available: 1 node\(s\) didn't match/);
    await h.addNode(eu('n2'));
    assert.is((await h.reached('lead', 'ALIVE')).nodeId, 'n2');
    assert.is((await h.reached('follow', 'ALIVE')).nodeId, 'n2');
  }));

test('SPREAD puts one actor on each node', () =>
  withGcs({}, async (h) => {
    for (const id of ['n1', 'n2', 'n3']) await h.addNode(us(id));
    const placed = [];
    for (const id of ['a1', 'a2', 'a3']) placed.push((await h.registerActor(id, { schedulingStrategy: 'SPREAD' })).nodeId);
    assert.equal([...placed].sort(), ['n1', 'n2', 'n3']);
  }));

// ---- named actors, queries, invalid options ----

test('named actors: found by name in their namespace; a taken name is ACTOR_NAME_TAKEN; freed when the actor dies', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    await h.registerActor('a1', {}, { name: 'counter' });
    assert.is((await h.request('get_actor', 'get_actor', { name: 'counter' })).actorId, 'a1');
    const taken = await h.refusal('register_actor', 'register_actor', { actorId: 'a2', code: { moduleUrl: 'file:///x.ts', className: 'C', args: [] }, namespace: 'default', name: 'counter', options: {} });
    assert.is(taken.code, 'ACTOR_NAME_TAKEN');
    assert.equal(taken.detail, { name: 'counter', namespace: 'default' });
    assert.is((await h.refusal('get_actor', 'get_actor', { actorId: 'a2' })).code, 'ACTOR_NOT_FOUND');
    await h.registerActor('a3', {}, { name: 'counter', namespace: 'other' });
    assert.is((await h.request('get_actor', 'get_actor', { name: 'counter', namespace: 'other' })).actorId, 'a3');
    assert.is((await h.refusal('get_actor', 'get_actor', { name: 'counter', namespace: 'third' })).code, 'ACTOR_NOT_FOUND');
    await h.request('kill_actor', 'kill_actor', { actorId: 'a1', noRestart: true });
    assert.is((await h.refusal('get_actor', 'get_actor', { name: 'counter' })).code, 'ACTOR_NOT_FOUND');
    assert.is((await h.registerActor('a4', {}, { name: 'counter' })).actorId, 'a4');
    const listed = (await h.request('list_actors', 'list_actors', {})).items as { actorId: string; state: string; name?: string; namespace: string }[];
    assert.equal(listed.map((a) => [a.actorId, a.namespace, a.name]), [['a1', 'default', 'counter'], ['a3', 'other', 'counter'], ['a4', 'default', 'counter']]);
    assert.is(listed[0].state, 'DEAD');
  }));

const invalid: { name: string; options: Record<string, unknown>; code: string }[] = [
  { name: 'a negative maxRestarts below -1', options: { maxRestarts: -2 }, code: 'INVALID_OPTION' },
  { name: 'a maxConcurrency of 0', options: { maxConcurrency: 0 }, code: 'INVALID_OPTION' },
  { name: 'an unknown isolation', options: { isolation: 'vm' }, code: 'INVALID_OPTION' },
  { name: 'a malformed selector', options: { labelSelector: { region: 'in(a' } }, code: 'INVALID_SELECTOR' },
  { name: 'a reserved actor label', options: { labels: { 'orrery.io/actor-id': 'x' } }, code: 'INVALID_LABEL' },
  { name: 'a negative resource', options: { resources: { my_res: -1 } }, code: 'INVALID_RESOURCE' },
];

for (const c of invalid) {
  test(`register_actor refuses ${c.name} with ${c.code} and registers nothing`, () =>
    withGcs({}, async (h) => {
      await h.addNode(us('n1'));
      const err = await h.refusal('register_actor', 'register_actor', { actorId: 'a1', code: { moduleUrl: 'file:///x.ts', className: 'C', args: [] }, namespace: 'default', options: c.options });
      assert.is(err.code, c.code);
      assert.equal(h.gcs.snapshot().actors, []);
    }));
}

// ---- kill, failures ----

test('kill: DEAD (killed), the raylet drops it, resources come back, labels leave the index', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode(us('n1'));
    await h.registerActor('a1', { numCpus: 3, labels: { role: 'db' } });
    await h.reached('a1', 'ALIVE');
    assert.equal((await h.nodes())[0].resources.available, { CPU: CPU(1) });
    assert.equal((await h.request('view_snapshot', 'view_snapshot', {})).upserts[0].actorLabels, { default: { role: { db: 1 }, 'orrery.io/actor-id': { a1: 1 } } });

    const info = await h.request('kill_actor', 'kill_actor', { actorId: 'a1', noRestart: true });
    assert.is(info.state, 'DEAD');
    assert.is(info.deathCause, 'killed');
    assert.is(info.nodeId, undefined);
    assert.equal(raylet.killed, [{ actorId: 'a1', incarnation: 0 }], 'answered after the raylet dropped it');
    assert.equal((await h.nodes())[0].resources.available, { CPU: CPU(4) });
    assert.is((await h.request('view_snapshot', 'view_snapshot', {})).upserts[0].actorLabels, undefined, 'no actor labels left on the node');
    const follower = await h.registerActor('a2', { schedulingStrategy: actorAffinity(labelIn('role', ['db'])) });
    assert.is(follower.state, 'PENDING', 'no node carries the dead actor\'s labels any more');
    assert.equal(await h.request('kill_actor', 'kill_actor', { actorId: 'a1', noRestart: true }), info, 'killing a dead actor again is harmless');
  }));

test('kill without noRestart restarts an actor that has restarts left', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode(us('n1'));
    await h.registerActor('a1', { maxRestarts: 1 });
    await h.reached('a1', 'ALIVE');
    await h.request('kill_actor', 'kill_actor', { actorId: 'a1', noRestart: false });
    await h.reached('a1', 'RESTARTING');
    const again = await h.events.wait((e) => e.actor?.actorId === 'a1' && e.actor.state === 'ALIVE' && e.actor.numRestarts === 1, 'a1 alive again');
    assert.is(again.actor!.nodeId, 'n1');
    assert.equal(raylet.created.map((c) => c.incarnation), [0, 1]);
    assert.equal(raylet.killed, [{ actorId: 'a1', incarnation: 0 }]);
  }));

test('a constructor that throws on the raylet makes the actor DEAD with that cause', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode(us('n1'));
    raylet.failCreate = (req) => (req.code.className === 'Broken' ? { code: 'REMOTE_ERROR', message: 'boom', detail: { name: 'Error', message: 'boom' } } : undefined);
    await h.registerActor('a1', { numCpus: 2, maxRestarts: 3 }, { className: 'Broken' });
    const dead = await h.reached('a1', 'DEAD');
    assert.is(dead.deathCause, 'REMOTE_ERROR: boom');
    assert.is(dead.numRestarts, 0);
    assert.equal((await h.nodes())[0].resources.available, { CPU: CPU(4) });
  }));

test('a raylet that answers NODE_STOPPING (it stopped while the constructor ran) fails the attempt as a node death would — a restart, not DEAD — and the restart keeps off that node', () =>
  withGcs({}, async (h) => {
    const n1 = await h.addNode(us('n1'));
    const n2 = await h.addNode(us('n2'));
    n1.failCreate = () => ({ code: 'NODE_STOPPING', message: 'node n1 is stopping', detail: { nodeId: 'n1', actorId: 'a1' } });
    await h.registerActor('a1', { maxRestarts: 1, schedulingStrategy: nodeIdAffinity('n1', { soft: true }) });
    await h.reached('a1', 'RESTARTING', 3000);
    const alive = await h.reached('a1', 'ALIVE');
    assert.equal([alive.numRestarts, alive.nodeId], [1, 'n2']);
    assert.equal(n1.created.map((c) => c.incarnation), [0]);
    assert.equal(n2.created.map((c) => c.incarnation), [1]);
  }));

test('a kill_actor the raylet does not answer is sent again until it does: a killed actor does not keep running there', () =>
  withGcs({ killTimeoutMs: 100 }, async (h) => {
    const n1 = await h.addNode({ nodeId: 'n1' });
    await h.registerActor('a1', { numCpus: 1 });
    await h.reached('a1', 'ALIVE');
    n1.silentKill = true;
    await h.request('kill_actor', 'kill_actor', { actorId: 'a1', noRestart: true });
    assert.is((await h.reached('a1', 'DEAD')).deathCause, 'killed');
    await until('the kill to go unanswered', () => (n1.silentKills >= 1 ? true : undefined));
    assert.equal(n1.killed, []);
    n1.silentKill = false;
    // before, the unanswered kill was only logged and the actor kept serving calls on n1
    const taken = await until('the kill sent again and taken', () => n1.killed[0]);
    assert.equal(taken, { actorId: 'a1', incarnation: 0 });
    assert.ok(h.logs.some((l) => /kill_actor a1#0 on node n1: .*TIMEOUT.*; sending it again/.test(l)));
  }));

test("a create_actor the GCS's own fence refused (its lease lapsed for a moment) is sent again: the actor comes up without spending a restart", async () => {
  // the GCS's bus refuses its first create_actor before sending it, as fenced-bus.ts does while the
  // lease has lapsed (a renewal late under load)
  let refused = 0;
  const fencedOnce = (bus: Bus): Bus => {
    const wrapped: Bus = Object.create(bus);
    wrapped.request = (subject, data, opts) => {
      if (subject.endsWith('.create_actor') && refused++ === 0) return Promise.reject(new OrreryError('STALE_EPOCH', 'this GCS no longer holds the leader lease'));
      return bus.request(subject, data, opts);
    };
    return wrapped;
  };
  const h = await Harness.start({}, fencedOnce);
  try {
    const n1 = await h.addNode({ nodeId: 'n1' });
    await h.registerActor('a1', { numCpus: 1, maxRestarts: 0 });
    const alive = await h.reached('a1', 'ALIVE');
    // before, the refusal was a failed creation: with no restarts left the actor died of it
    assert.equal([alive.nodeId, alive.numRestarts], ['n1', 0]);
    assert.is(refused, 2, 'refused once, sent again');
    assert.is(n1.created.length, 1, 'the raylet heard one create');
    assert.equal(h.events.got.filter((e) => e.type === 'actor_state' && e.actor?.actorId === 'a1').map((e) => e.actor!.state), ['PENDING', 'SCHEDULED', 'ALIVE']);
  } finally {
    await h.close();
  }
});

test('actor_died from a raylet restarts the actor; a stale report changes nothing', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    await h.registerActor('a1', { maxRestarts: 1 });
    await h.reached('a1', 'ALIVE');
    assert.equal(await h.request('actor_died', 'actor_died', { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 0 }], cause: 'worker host exited (code 1)' }), { failed: 1 });
    await h.events.wait((e) => e.actor?.actorId === 'a1' && e.actor.state === 'ALIVE' && e.actor.numRestarts === 1, 'a1 restarted');
    assert.equal(await h.request('actor_died', 'actor_died', { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 0 }], cause: 'late' }), { failed: 0 });
    assert.is((await h.actor('a1')).state, 'ALIVE');
  }));

test('a raylet that does not answer create_actor within the create timeout (a constructor loading a model) is asked again, the same incarnation, while its node lives: the actor waits SCHEDULED, spends no restart, and is ALIVE once it answers', () =>
  withGcs({ createTimeoutMs: 100 }, async (h) => {
    const raylet = await h.addNode(us('n1'));
    raylet.hold = () => true;
    await h.registerActor('a1', { maxRestarts: 1 });
    await until('create_actor asked three times', () => (raylet.held.length >= 3 ? true : undefined));
    assert.equal(raylet.created.map((c) => c.incarnation), raylet.created.map(() => 0), 'the same incarnation each time');
    const waiting = await h.actor('a1');
    assert.equal([waiting.state, waiting.numRestarts, waiting.nodeId], ['SCHEDULED', 0, 'n1']);
    // the constructor returns: the raylet answers the attempt the GCS waits on (the earlier ones timed out)
    raylet.hold = () => false;
    raylet.held.at(-1)!.answer();
    const alive = await h.reached('a1', 'ALIVE');
    assert.equal([alive.numRestarts, alive.nodeId], [0, 'n1']);
    assert.equal(raylet.kills.got, [], 'nothing killed');
  }));

test('a node that dies while a create_actor it has not answered waits: the asking stops, and the actor restarts elsewhere', () =>
  withGcs({ heartbeatMs: 20, nodeTimeoutMs: 200, createTimeoutMs: 100 }, async (h) => {
    const n1 = await h.addNode(us('n1'), { heartbeat: true });
    n1.hold = () => true;
    await h.registerActor('a1', { maxRestarts: 1, labelSelector: {} });
    await until('create_actor asked twice on n1', () => (n1.held.length >= 2 ? true : undefined));
    await h.addNode(us('n2'), { heartbeat: true });
    n1.stopHeartbeats();
    await h.events.wait((e) => e.type === 'node_dead' && e.node?.nodeId === 'n1', 'n1 dead', 3000);
    const restarted = await h.events.wait((e) => e.actor?.actorId === 'a1' && e.actor.state === 'ALIVE', 'a1 ALIVE', 3000);
    assert.equal([restarted.actor!.nodeId, restarted.actor!.numRestarts], ['n2', 1]);
    // no create for n1 after its death: a timeout's worth of time for one to go out, seen on the bus itself
    const asked = n1.created.length;
    await h.bus.flush();
    await h.request('list_nodes', 'list_nodes', {});
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.is(n1.created.length, asked, 'not asked again once dead');
  }));

test('a create_actor that reaches no raylet (NO_RESPONDERS) sends the actor back to PENDING without spending a restart; it lands on the next node', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode(us('n1'));
    raylet.close();
    const info = await h.registerActor('a2', {});
    assert.is(info.numRestarts, 0);
    const waiting = await h.events.wait((e) => e.actor?.actorId === 'a2' && e.actor.state === 'PENDING' && e.actor.incarnation === 1, 'a2 back to PENDING');
    assert.is(waiting.actor!.numRestarts, 0, 'no restart spent: the constructor never ran');
    assert.is(waiting.actor!.nodeId, undefined);
    assert.equal((await h.nodes())[0].resources.available, { CPU: CPU(4) }, 'what it held on n1 is released');
    // n1 answered nothing: the next placement keeps off it until it heartbeats
    const n2 = await h.addNode(us('n2'));
    const alive = await h.reached('a2', 'ALIVE');
    assert.is(alive.nodeId, 'n2');
    assert.is(alive.numRestarts, 0);
    assert.is(alive.incarnation, 1);
    assert.equal(n2.created.map((c) => c.incarnation), [1]);
  }));

test('an ALIVE actor sleeps (its machine stopped); a kill wakes it and it dies killed, its raylet told', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode(us('n1'));
    await h.registerActor('a1', {});
    await h.reached('a1', 'ALIVE');
    assert.equal(h.gcs.snapshot().actorMachines, { running: 0, asleep: 1 });
    // read while asleep: nothing wakes it
    assert.is((await h.actor('a1')).nodeId, 'n1');
    assert.equal(h.gcs.snapshot().actorMachines, { running: 0, asleep: 1 });
    const dead = await h.request('kill_actor', 'kill_actor', { actorId: 'a1', noRestart: true });
    assert.is(dead.state, 'DEAD');
    assert.is(dead.deathCause, 'killed');
    assert.equal(raylet.killed, [{ actorId: 'a1', incarnation: 0 }]);
    assert.equal(h.gcs.snapshot().actorMachines, { running: 0, asleep: 0 });
    assert.equal((await h.nodes())[0].resources.available, { CPU: CPU(4) });
  }));

test('a sleeping actor woken by a failure restarts with its counts and sleeps again; a stale report leaves it asleep', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    await h.registerActor('a1', { maxRestarts: 2 });
    await h.reached('a1', 'ALIVE');
    assert.equal(await h.request('actor_died', 'actor_died', { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 0 }], cause: 'host exited' }), { failed: 1 });
    await h.events.wait((e) => e.actor?.actorId === 'a1' && e.actor.state === 'ALIVE' && e.actor.numRestarts === 1, 'a1 restarted');
    await until('a1 asleep again', () => (h.gcs.snapshot().actorMachines.asleep === 1 ? true : undefined));
    assert.equal(await h.request('actor_died', 'actor_died', { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 0 }], cause: 'late' }), { failed: 0 });
    assert.equal(h.gcs.snapshot().actorMachines, { running: 0, asleep: 1 });
    assert.equal(await h.request('actor_died', 'actor_died', { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 1 }], cause: 'host exited again' }), { failed: 1 });
    const again = await h.events.wait((e) => e.actor?.actorId === 'a1' && e.actor.state === 'ALIVE' && e.actor.numRestarts === 2, 'a1 restarted twice');
    assert.is(again.actor!.incarnation, 2);
  }));

test('a late create_actor answer for an older incarnation is an orphan: the GCS kills it', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode(us('n1'));
    raylet.hold = () => true;
    await h.registerActor('a1', { maxRestarts: 1 });
    assert.equal(await h.request('actor_died', 'actor_died', { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 0 }], cause: 'host exited' }), { failed: 1 });
    await h.events.wait((e) => e.actor?.actorId === 'a1' && e.actor.state === 'SCHEDULED' && e.actor.numRestarts === 1, 'a1 scheduled again');
    await raylet.creates.wait((c) => c.incarnation === 1, 'the second create');
    const [first, second] = raylet.held;
    assert.equal([first.req.incarnation, second.req.incarnation], [0, 1]);
    first.answer();
    second.answer();
    assert.is((await h.reached('a1', 'ALIVE')).numRestarts, 1);
    await raylet.kills.wait((k) => k.incarnation === 0, 'the orphan killed');
    assert.equal(raylet.killed, [{ actorId: 'a1', incarnation: 0 }]);
    assert.is((await h.actor('a1')).state, 'ALIVE', 'the current incarnation lives on');
  }));

// ---- the pending queue ----

test('a pending actor is placed when a matching node registers', () =>
  withGcs({}, async (h) => {
    const info = await h.registerActor('a1', {});
    assert.is(info.state, 'PENDING');
    assert.is(info.pendingReason, '0/0 nodes are available: the cluster has no nodes.');
    await h.addNode(us('n1'));
    assert.is((await h.reached('a1', 'ALIVE')).nodeId, 'n1');
    assert.is((await h.actor('a1')).pendingReason, undefined);
  }));

test('a schedule_failed event lists at most 100 nodes with their reasons, counts the rest, and its message counts them all', () =>
  withGcs({}, async (h) => {
    for (let i = 0; i < 102; i++) await h.addNode(us(`n${i}`, { cpu: 1 }));
    await h.registerActor('big', { numCpus: 2 });
    const e = await h.events.wait((e) => e.type === 'schedule_failed', 'schedule_failed');
    assert.is(e.nodes!.length, 100);
    assert.is(e.nodesOmitted, 2);
    assert.is(e.message, '0/102 nodes are available: 102 node(s) had less total CPU than requested.');
    assert.equal((e.nodes as { reasons: string[] }[])[0].reasons, ['had less total CPU than requested']);
  }));

test('schedule_failed is published once per distinct explanation, not on every retry', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    await h.registerActor('hog', { numCpus: 4 });
    await h.registerActor('big', { numCpus: 2 });
    const busy = '0/1 nodes are available: 1 node(s) had insufficient CPU.';
    const first = await h.events.wait((e) => e.type === 'schedule_failed', 'first schedule_failed');
    assert.equal(first.target, { kind: 'actor', id: 'big' });
    assert.is(first.reason, 'resources');
    assert.is(first.message, busy);
    assert.equal(first.nodes, [{ nodeId: 'n1', reasons: ['had insufficient CPU'] }]);
    assert.is((await h.actor('big')).pendingReason, busy);

    await h.addNode(us('n2', { cpu: 1 }));
    const twoNodes = '0/2 nodes are available: 1 node(s) had insufficient CPU, 1 node(s) had less total CPU than requested.';
    await h.events.wait((e) => e.type === 'schedule_failed' && e.message === twoNodes, 'the second explanation');
    const passes = h.gcs.snapshot().pending.passes;
    for (let i = 0; i < 3; i++) {
      assert.is((await h.registerActor(`small${i}`, { numCpus: 1 })).nodeId, 'n2');
      await h.request('kill_actor', 'kill_actor', { actorId: `small${i}`, noRestart: true });
    }
    await h.request('kill_actor', 'kill_actor', { actorId: 'hog', noRestart: true });
    assert.is((await h.reached('big', 'ALIVE')).nodeId, 'n1');
    assert.ok(h.gcs.snapshot().pending.passes >= passes + 4, 'every release retried the queue');
    assert.equal(h.events.got.filter((e) => e.type === 'schedule_failed').map((e) => e.message), [busy, twoNodes]);
  }));

test('orrery.io/node-id is the id a node registers under, whatever its raylet sent', () =>
  withGcs({}, async (h) => {
    await h.addNode({ nodeId: 'n1', labels: { region: 'us' } });
    await h.addNode({ nodeId: 'n2', labels: { region: 'us', 'orrery.io/node-id': 'n1' } });
    const labels = Object.fromEntries((await h.nodes()).map((n) => [n.nodeId, n.labels['orrery.io/node-id']]));
    assert.equal(labels, { n1: 'n1', n2: 'n2' });
    // a hard node-id affinity to n1 lands on n1, not on the node that claimed its id
    assert.is((await h.registerActor('pinned', { schedulingStrategy: nodeAffinity(labelIn('orrery.io/node-id', ['n1'])) })).nodeId, 'n1');
  }));

test('an unplaceable actor is retried on every change but re-explained only after its backoff; the held-back reason still arrives', () =>
  withGcs({ explainBackoffMs: { initial: 3000, max: 12_000 } }, async (h) => {
    await h.addNode(us('n1'));
    await h.registerActor('hog', { numCpus: 4 });
    await h.registerActor('big', { numCpus: 2 });
    const one = '0/1 nodes are available: 1 node(s) had insufficient CPU.';
    assert.is((await h.actor('big')).pendingReason, one);
    const passes = h.gcs.snapshot().pending.passes;
    await h.addNode(us('n2', { cpu: 1 }));
    await until('the retry pass after n2 joined', () => (h.gcs.snapshot().pending.passes > passes && h.gcs.snapshot().pending.idle ? true : undefined));
    // tried again at once, but inside its backoff the reason is not worked out again
    assert.is((await h.actor('big')).pendingReason, one);
    // nothing else changes: the held-back refresh comes on its own when the backoff runs out
    const two = '0/2 nodes are available: 1 node(s) had insufficient CPU, 1 node(s) had less total CPU than requested.';
    await h.events.wait((e) => e.type === 'schedule_failed' && e.message === two, 'the refreshed reason', 15_000);
    assert.is((await h.actor('big')).pendingReason, two);
    // a change that lets it fit places it at once, backoff or not
    await h.request('kill_actor', 'kill_actor', { actorId: 'hog', noRestart: true });
    assert.is((await h.reached('big', 'ALIVE')).nodeId, 'n1');
  }));

test('labels changed on a node retry the queue (set_node_labels); draining keeps new work away', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1'));
    await h.addNode(us('n2'));
    assert.is((await h.registerActor('a1', { labelSelector: { disk: 'ssd' } })).state, 'PENDING');
    const changed = await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n2', set: { disk: 'ssd' } });
    assert.is(changed.labels.disk, 'ssd');
    assert.is((await h.reached('a1', 'ALIVE')).nodeId, 'n2');
    await h.events.wait((e) => e.type === 'node_labels_changed' && e.node?.nodeId === 'n2', 'node_labels_changed');

    assert.is((await h.request('drain_node', 'drain_node', { nodeId: 'n1' })).state, 'DRAINING');
    assert.is((await h.registerActor('a2', {})).nodeId, 'n2');
    const tainted = await h.request('set_node_taints', 'set_node_taints', { nodeId: 'n2', add: { maintenance: 'now' } });
    assert.equal(tainted.taints, { maintenance: 'now' });
    const a3 = await h.registerActor('a3', {});
    assert.is(a3.state, 'PENDING');
    assert.is(a3.pendingReason, '0/2 nodes are available: 1 node(s) had untolerated taint {maintenance: now}, 1 node(s) were draining.');
    await h.request('set_node_taints', 'set_node_taints', { nodeId: 'n2', remove: ['maintenance'] });
    assert.is((await h.reached('a3', 'ALIVE')).nodeId, 'n2');
  }));

test('a node name is one live node\'s: a second registration under it is NODE_NAME_TAKEN and changes nothing, until that node is dead', () =>
  withGcs({ heartbeatMs: 20, nodeTimeoutMs: 200 }, async (h) => {
    const first = await h.addNode(us('n1', { name: 'web' }), { heartbeat: true });
    const err = await h.refusal('register_node', 'register_node', {
      nodeId: 'n2',
      name: 'web',
      labels: {},
      taints: {},
      resources: { total: { CPU: CPU(4) }, available: { CPU: CPU(4) } },
      address: { ip: '127.0.0.1', hostname: 'spec', pid: 2 },
    });
    assert.is(err.code, 'NODE_NAME_TAKEN');
    assert.equal(err.detail, { name: 'web', holder: 'n1' });
    assert.equal((await h.nodes()).map((n) => n.nodeId), ['n1']);
    assert.equal(await first.register(), { nodeId: 'n1', heartbeatMs: 20, nodeTimeoutMs: 200, rareResources: [] }, 'its own raylet registering again keeps it');
    first.stopHeartbeats();
    await h.events.wait((e) => e.type === 'node_dead' && e.node?.nodeId === 'n1', 'n1 dead', 3000);
    await h.addNode(us('n2', { name: 'web' }));
    assert.equal((await h.nodes()).map((n) => `${n.nodeId}:${n.name}:${n.state}`), ['n1:web:DEAD', 'n2:web:ALIVE']);
  }));

// ---- node death ----

/** n1 (heartbeating) runs 'keeps' (one restart left) and 'dies' (none); then n2 joins. Returns n1. */
async function keepsAndDiesOnN1(h: Harness) {
  const n1 = await h.addNode(us('n1'), { heartbeat: true });
  await h.registerActor('keeps', { maxRestarts: 1, numCpus: 1 });
  await h.registerActor('dies', { numCpus: 1 });
  await h.reached('keeps', 'ALIVE');
  await h.reached('dies', 'ALIVE');
  await h.addNode(us('n2'), { heartbeat: true });
  return n1;
}

test('a node that stops heartbeating is DEAD: node_dead, its actors restart elsewhere or die', () =>
  withGcs({ heartbeatMs: 20, nodeTimeoutMs: 200 }, async (h) => {
    const n1 = await keepsAndDiesOnN1(h);

    n1.stopHeartbeats();
    const dead = await h.events.wait((e) => e.type === 'node_dead', 'node_dead', 3000);
    assert.is(dead.node!.nodeId, 'n1');
    assert.is(dead.node!.state, 'DEAD');
    const restarted = await h.events.wait((e) => e.actor?.actorId === 'keeps' && e.actor.state === 'ALIVE' && e.actor.numRestarts === 1, 'keeps restarted');
    assert.is(restarted.actor!.nodeId, 'n2');
    const died = await h.reached('dies', 'DEAD');
    assert.is(died.deathCause, 'node n1 died');
    assert.equal(await n1.heartbeat(), { known: false });
    assert.equal((await h.nodes()).map((n) => `${n.nodeId}:${n.state}`), ['n1:DEAD', 'n2:ALIVE']);

    await n1.register();
    n1.startHeartbeats();
    await h.events.wait((e) => e.type === 'node_added' && e.node?.nodeId === 'n1' && h.events.got.indexOf(e) > h.events.got.indexOf(dead), 'n1 back');
    assert.equal((await h.nodes()).map((n) => `${n.nodeId}:${n.state}`), ['n1:ALIVE', 'n2:ALIVE']);
  }));

test('unregister_node: the node is DEAD at once, long before its timeout; its actors fail with "node … stopped" and restart elsewhere or die; asked again, known: false', () =>
  withGcs({ heartbeatMs: 20, nodeTimeoutMs: 60_000 }, async (h) => {
    const n1 = await keepsAndDiesOnN1(h);

    n1.stopHeartbeats();
    assert.equal(await h.request('unregister_node', 'unregister_node', { nodeId: 'n1' }), { known: true });
    const dead = await h.events.wait((e) => e.type === 'node_dead', 'node_dead', 3000);
    assert.is(dead.node!.nodeId, 'n1');
    const restarted = await h.events.wait((e) => e.actor?.actorId === 'keeps' && e.actor.state === 'ALIVE' && e.actor.numRestarts === 1, 'keeps restarted');
    assert.is(restarted.actor!.nodeId, 'n2');
    assert.is((await h.reached('dies', 'DEAD')).deathCause, 'node n1 stopped');
    assert.equal(await h.request('unregister_node', 'unregister_node', { nodeId: 'n1' }), { known: false });
    assert.equal(await h.request('unregister_node', 'unregister_node', { nodeId: 'n7' }), { known: false });
    assert.equal((await h.nodes()).map((n) => `${n.nodeId}:${n.state}`), ['n1:DEAD', 'n2:ALIVE']);
  }));

test('a node that stops fails exactly its actors, asleep or still being created; another node\'s sleeping actor is not woken', () =>
  withGcs({ heartbeatMs: 20, nodeTimeoutMs: 60_000 }, async (h) => {
    await h.addNode(us('n2'), { heartbeat: true });
    await h.registerActor('b', { numCpus: 4 }); // fills n2
    await h.reached('b', 'ALIVE');
    const n1 = await h.addNode(us('n1'), { heartbeat: true });
    await h.registerActor('a', { numCpus: 1 });
    assert.is((await h.reached('a', 'ALIVE')).nodeId, 'n1');
    n1.hold = (req) => req.actorId === 'held';
    await h.registerActor('held', { numCpus: 1 });
    assert.is((await h.reached('held', 'SCHEDULED')).nodeId, 'n1');
    await until('a and b asleep', () => (h.gcs.snapshot().actorMachines.asleep === 2 ? true : undefined));

    n1.stopHeartbeats();
    assert.equal(await h.request('unregister_node', 'unregister_node', { nodeId: 'n1' }), { known: true });
    assert.is((await h.reached('a', 'DEAD')).deathCause, 'node n1 stopped');
    assert.is((await h.reached('held', 'DEAD')).deathCause, 'node n1 stopped');
    const b = await h.actor('b');
    assert.equal([b.state, b.nodeId, b.numRestarts], ['ALIVE', 'n2', 0]);
    assert.equal(h.gcs.snapshot().actorMachines, { running: 0, asleep: 1 }, 'b slept through it');
    assert.not.ok(h.events.got.some((e) => e.actor?.actorId === 'b' && e.actor.state !== 'ALIVE' && e.actor.state !== 'SCHEDULED' && e.actor.state !== 'PENDING'));
  }));

test('unregister_node without the secret the node registered with is NODE_NOT_OWNED and changes nothing', () =>
  withGcs({}, async (h) => {
    await h.addNode(us('n1', { secret: 'k'.repeat(32) }));
    await h.registerActor('a1', { numCpus: 1 });
    await h.reached('a1', 'ALIVE');
    for (const secret of [undefined, 'x'.repeat(32)]) {
      const err = await h.request('unregister_node', 'unregister_node', { nodeId: 'n1', ...(secret === undefined ? {} : { secret }) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.is((err as { code?: string }).code, 'NODE_NOT_OWNED', `secret ${secret}`);
    }
    assert.equal((await h.nodes()).map((n) => `${n.nodeId}:${n.state}`), ['n1:ALIVE']);
    assert.is((await h.actor('a1')).state, 'ALIVE');
  }));

// ---- the cluster view ----

test('view_snapshot answers pages under the message limit that add up to the whole view; a snapshot no longer kept is SNAPSHOT_MOVED', () =>
  withGcs({ maxMessageBytes: 2 * 1024 }, async (h) => {
    for (let i = 1; i <= 4; i++) await h.addNode(us(`n${i}`, { cpu: 64 }));
    // 300 actors with labels spread over the nodes: some 3 KB of label counts (each actor's id is one), two pages or more at 2 KB
    for (let i = 0; i < 300; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => h.registerActor(`a${i + k}`, { schedulingStrategy: 'SPREAD', labels: { app: `service-${(i + k) % 9}`, tier: 'backend' } })));
    const first: ViewDelta = await h.request('view_snapshot', 'view_snapshot', {});
    assert.ok(first.next !== undefined, 'more than one page');
    const pages = [first];
    while (pages.at(-1)!.next !== undefined) pages.push(await h.request('view_snapshot', 'view_snapshot', { after: pages.at(-1)!.next, version: first.version }));
    assert.ok(pages.every((p) => p.version === first.version && p.previous === 0), 'one snapshot, one version');
    assert.equal(pages.flatMap((p) => p.upserts.map((n) => n.nodeId)), ['n1', 'n2', 'n3', 'n4'], 'every node once, in node order');
    const actors = pages.flatMap((p) => p.upserts.flatMap((n) => Object.keys(n.actorLabels?.default?.['orrery.io/actor-id'] ?? {})));
    assert.equal(actors.sort(), Array.from({ length: 300 }, (_, i) => `a${i}`).sort(), "every actor's id label once");
    assert.ok(pages.every((p) => p.upserts.every((n) => n.resources !== undefined)), 'whole nodes');
    const err = await h.request('view_snapshot', 'view_snapshot', { after: 'n1', version: first.version + 1000 }).then(() => undefined, (e: { code?: string }) => e);
    assert.is(err?.code, 'SNAPSHOT_MOVED');
  }));

test('view deltas come in version order and view_snapshot matches what they add up to', () =>
  withGcs({ viewIntervalMs: 20 }, async (h) => {
    await h.addNode(us('n1'));
    await h.addNode(eu('n2'));
    // the nodes are sent (with no actor labels) before a1 is placed, so a1's labels must come as changes
    await h.views.wait((v) => v.upserts.some((n) => n.nodeId === 'n1'), 'n1 in a view');
    await h.views.wait((v) => v.upserts.some((n) => n.nodeId === 'n2'), 'n2 in a view');
    await h.registerActor('a1', { numCpus: 2, labels: { role: 'db' } });
    await h.reached('a1', 'ALIVE');
    await h.request('set_node_taints', 'set_node_taints', { nodeId: 'n2', add: { maintenance: 'soon:PreferNoSchedule' } });
    const snapshot: ViewDelta = await h.request('view_snapshot', 'view_snapshot', {});
    assert.is(snapshot.previous, 0);
    await h.views.wait((v) => v.version === snapshot.version, `view ${snapshot.version}`);

    const versions = h.views.got.map((v) => v.version);
    assert.equal(versions, versions.map((_, i) => i + 1), 'consecutive from 1');
    h.views.got.forEach((v) => assert.is(v.previous, v.version - 1));
    // fold the deltas the way a raylet does: a node's full label counts and resources when sent, else their changes
    const applied = new Map<string, NodeView>();
    for (const v of h.views.got) {
      for (const { resourcesChanged: changed, ...n } of v.upserts) {
        const resources = n.resources ?? structuredClone(applied.get(n.nodeId)!.resources!);
        for (const name of changed?.removed ?? []) {
          delete resources.total[name];
          delete resources.available[name];
        }
        Object.assign(resources.total, changed?.total);
        Object.assign(resources.available, changed?.available);
        const counts = n.resources ? n.actorLabels : applied.get(n.nodeId)?.actorLabels;
        applied.set(n.nodeId, { ...n, resources, ...(counts ? { actorLabels: counts } : {}) });
      }
      for (const id of v.removals) applied.delete(id);
      // then the label-count changes, which come without an upsert of their node
      for (const { nodeId, changes } of v.actorLabelsChanged ?? []) {
        const node = applied.get(nodeId)!;
        const counts = structuredClone(node.actorLabels ?? {});
        for (const ns in changes) for (const key in changes[ns]) for (const value in changes[ns][key]) {
          const values = ((counts[ns] ??= {})[key] ??= {});
          values[value] = (values[value] ?? 0) + changes[ns][key][value];
          if (values[value] === 0) delete values[value];
          if (Object.keys(values).length === 0) delete counts[ns][key];
          if (Object.keys(counts[ns]).length === 0) delete counts[ns];
        }
        const { actorLabels: _, ...rest } = node;
        applied.set(nodeId, { ...rest, ...(Object.keys(counts).length ? { actorLabels: counts } : {}) });
      }
    }
    assert.equal([...applied.values()], snapshot.upserts);
    assert.ok(h.views.got.some((v) => v.actorLabelsChanged?.some((c) => c.nodeId === 'n1' && c.changes.default?.['orrery.io/actor-id']?.a1 === 1)), "a1's labels arrived as changes, not by resending n1");
    const n1 = snapshot.upserts.find((n) => n.nodeId === 'n1')!;
    assert.equal(n1.resources!.available, { CPU: CPU(2) });
    assert.equal(n1.actorLabels, { default: { role: { db: 1 }, 'orrery.io/actor-id': { a1: 1 } } });
    assert.equal(snapshot.upserts.find((n) => n.nodeId === 'n2')!.taints, { maintenance: 'soon:PreferNoSchedule' });
  }));

test('heartbeats neither retry the pending queue nor change the view', () =>
  withGcs({}, async (h) => {
    const raylet = await h.addNode(us('n1'));
    assert.is((await h.registerActor('big', { numCpus: 64 })).state, 'PENDING');
    const before = await h.request('view_snapshot', 'view_snapshot', {});
    const { passes } = h.gcs.snapshot().pending;
    for (let i = 0; i < 5; i++) assert.equal(await raylet.heartbeat(), { known: true });
    assert.is(h.gcs.snapshot().pending.passes, passes);
    assert.is((await h.request('view_snapshot', 'view_snapshot', {})).version, before.version, 'nothing changed, no new version');
  }));

test("raylets' load reports reach the others through the view: the latest of each node per delta, with the GCS's own seq; a report from an unknown node, or naming another node than its subject, is not", () =>
  withGcs({ viewIntervalMs: 20 }, async (h) => {
    await h.addNode(us('n1'));
    await h.addNode(us('n2'));
    await h.views.wait((v) => v.upserts.some((n) => n.nodeId === 'n2'), 'n2 in a view');
    const load = (subjectNode: string, nodeId: string, seq: number, cpus: number) => h.bus.publish(h.s.raylet(subjectNode, 'load'), encode('raylet_load', { nodeId, seq, available: { CPU: CPU(cpus) } }));
    const before = h.gcs.wireErrors().total;
    load('n1', 'n1', 7, 3);
    load('n1', 'n1', 8, 2);
    load('nx', 'nx', 1, 1);
    load('n2', 'n1', 9, 0);
    load('n2', 'n2', 1, 5);
    const carried = await h.views.wait((v) => (v.loads ?? []).some((l) => l.nodeId === 'n2'), 'a view with loads');
    const loads = h.views.got.flatMap((v) => v.loads ?? []);
    assert.equal(loads.filter((l) => l.nodeId === 'n1').at(-1), { nodeId: 'n1', seq: 2, available: { CPU: CPU(2) } }, "n1's latest report, the second the GCS took from it");
    assert.ok(carried.loads!.every((l) => l.nodeId !== 'nx'), 'no load of a node the GCS does not know');
    assert.ok(loads.every((l) => l.available.CPU !== 0), 'the report naming n1 on n2\'s subject was refused');
    assert.is(h.gcs.wireErrors().total, before + 1);
    assert.is(h.gcs.wireErrors().byVerb.raylet_load, 1);
    const snapshot: ViewDelta = await h.request('view_snapshot', 'view_snapshot', {});
    assert.equal(snapshot.loads?.map((l) => [l.nodeId, l.available.CPU]), [['n1', CPU(2)], ['n2', CPU(5)]], 'a snapshot carries the last report of each node');
  }));

test('view deltas are at most one per interval: a burst of changes is coalesced', () =>
  withGcs({ viewIntervalMs: 100 }, async (h) => {
    await h.addNode(us('n1'));
    const first = await h.views.wait((v) => v.version === 1, 'view 1');
    const firstAt = Date.now();
    await Promise.all([0, 1, 2, 3, 4].map((i) => h.registerActor(`a${i}`, { numCpus: 0.5 })));
    const second = await h.views.wait((v) => v.version === 2, 'view 2');
    assert.ok(Date.now() - firstAt >= 85, `the second delta came ${Date.now() - firstAt} ms after the first`);
    assert.equal(first.upserts.map((n) => n.nodeId), ['n1']);
    assert.equal(second.actorLabelsChanged!.map((c) => c.nodeId), ['n1']);
    assert.equal(Object.keys(second.actorLabelsChanged![0].changes.default['orrery.io/actor-id']).sort(), ['a0', 'a1', 'a2', 'a3', 'a4'], 'five placements in one delta');
    assert.ok(second.upserts.every((n) => n.actorLabels === undefined), 'the node is not resent with its whole label counts');
  }));

test.run();
