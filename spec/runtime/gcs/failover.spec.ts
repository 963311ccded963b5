import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { actorAffinity, affinity, antiAffinity, Exists, labelIn, nodeIdAffinity } from '../../../lib/selectors/builders.ts';
import { withTopologyKey } from '../../../lib/selectors/terms.ts';
import type { ActorInfoWire } from '../../../protocols/messages/actor.ts';
import type { ClusterEventWire } from '../../../protocols/messages/cluster.ts';
import type { GcsOptions } from '../../../runtime/gcs/index.ts';
import { Harness, StubRaylet, type NodeSpec } from './support.ts';

// Failover in the GCS, on a memory bus with stub raylets: seed 000's failure scenarios step by step,
// anti-affinity on restart, affinityDuringExecution, NoExecute taints, and deaths with causes.

async function withGcs(opts: Partial<GcsOptions>, fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await Harness.start(opts);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

const node = (id: string, labels: Record<string, string> = {}, more: Partial<NodeSpec> = {}): NodeSpec => ({ nodeId: id, labels, ...more });

/** The actor's worker process died: its raylet reports it, as a real raylet does at once. */
async function crash(h: Harness, actorId: string): Promise<void> {
  const info = await h.actor(actorId);
  const res = await h.request('actor_died', 'actor_died', { nodeId: info.nodeId!, actors: [{ actorId, incarnation: info.numRestarts }], cause: 'worker host exited (signal SIGKILL)' });
  assert.equal(res, { failed: 1 }, `${actorId} was running`);
}

/** The actor_state event that has the actor ALIVE after `restarts` restarts. */
async function aliveAfter(h: Harness, actorId: string, restarts: number): Promise<ActorInfoWire> {
  const e = await h.events.wait((e) => e.type === 'actor_state' && e.actor?.actorId === actorId && e.actor.state === 'ALIVE' && e.actor.numRestarts === restarts, `${actorId} alive after ${restarts} restart(s)`);
  return e.actor!;
}

const eviction = (h: Harness, actorId: string): Promise<ClusterEventWire> =>
  h.events.wait((e) => e.type === 'actor_evicted' && e.actor?.actorId === actorId, `${actorId} evicted`);

/** Lets every pending pass and eviction check run, then a request round trip. */
const settled = async (h: Harness): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  await h.nodes();
};

test('seed 000, failure scenario 1 and 2: A restarts on node 2 and B stays on node 1; when B fails it joins A on node 2', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1', { pool: 'a' }));
    await h.addNode(node('n2'));
    // A's placement follows the pool label; B follows A
    await h.registerActor('A', { labelSelector: { pool: 'a' }, maxRestarts: -1 });
    await h.registerActor('B', { schedulingStrategy: actorAffinity(affinity('A')), maxRestarts: -1 });
    assert.is((await h.reached('A', 'ALIVE')).nodeId, 'n1');
    assert.is((await h.reached('B', 'ALIVE')).nodeId, 'n1', 'A and B complete scheduling on node 1');

    // the operator moves the pool to node 2; nothing running moves (constraints are checked at placement)
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n1', remove: ['pool'] });
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n2', set: { pool: 'a' } });
    await settled(h);
    assert.is((await h.actor('A')).nodeId, 'n1');

    await crash(h, 'A');
    assert.is((await aliveAfter(h, 'A', 1)).nodeId, 'n2', '1. A fails and restarts on node 2: its constraints are re-evaluated against the cluster as it is now');
    const b = await h.actor('B');
    assert.equal([b.state, b.nodeId, b.numRestarts], ['ALIVE', 'n1', 0], '1. B is not affected and keeps working on node 1');
    assert.is(h.raylets[0].killed.length, 0, 'nothing was killed on node 1');

    await crash(h, 'B');
    assert.is((await aliveAfter(h, 'B', 1)).nodeId, 'n2', '2. then B fails: it is scheduled to node 2 and collocates with A');
    assert.is(h.events.got.filter((e) => e.type === 'actor_evicted').length, 0);
  }));

test('a restarting actor never lands next to an actor it is anti-affine to', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1', { home: 'd' }));
    await h.addNode(node('n2'));
    await h.addNode(node('n3'));
    await h.registerActor('D2', { labelSelector: { home: 'd' }, labels: { app: 'db' }, maxRestarts: -1 });
    assert.is((await h.reached('D2', 'ALIVE')).nodeId, 'n1');
    await h.registerActor('C', { schedulingStrategy: actorAffinity(antiAffinity('D2')), maxRestarts: -1 });
    await h.registerActor('E', { schedulingStrategy: actorAffinity(labelIn('app', ['db'])), labels: { app: 'db-follower' }, maxRestarts: -1 });
    assert.is((await h.reached('E', 'ALIVE')).nodeId, 'n1');
    let restarts = 0;
    for (let i = 0; i < 12; i++) {
      const info = await aliveAfter(h, 'C', restarts);
      assert.is.not(info.nodeId, 'n1', `restart ${restarts} stayed off D2's node`);
      await crash(h, 'C');
      restarts++;
    }

    // D2 moves to the node C is not on; C's next restarts keep off that node as well
    const cNow = (await h.actor('C')).nodeId!;
    const target = cNow === 'n2' ? 'n3' : 'n2';
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n1', remove: ['home'] });
    await h.request('set_node_labels', 'set_node_labels', { nodeId: target, set: { home: 'd' } });
    await crash(h, 'D2');
    assert.is((await aliveAfter(h, 'D2', 1)).nodeId, target);
    for (let i = 0; i < 6; i++) {
      await crash(h, 'C');
      restarts++;
      assert.is.not((await aliveAfter(h, 'C', restarts)).nodeId, target, 'never next to D2 on its new node');
    }
  }));

test('hard anti-affinity holds both ways: an actor is not placed where a running actor is hard anti-affine to it', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1'));
    await h.addNode(node('n2'));
    await h.registerActor('Q', { schedulingStrategy: actorAffinity({ key: 'app', operator: 'NOT_IN', values: ['noisy'], soft: false }), maxRestarts: -1 });
    const q = await h.reached('Q', 'ALIVE');
    const other = q.nodeId === 'n1' ? 'n2' : 'n1';
    // a noisy actor that can only go to Q's node waits; one that may go anywhere avoids it
    const pinned = await h.registerActor('noisy-1', { labels: { app: 'noisy' }, labelSelector: { 'orrery.io/node-id': q.nodeId! } });
    assert.is(pinned.state, 'PENDING');
    assert.match(pinned.pendingReason!, /1 node\(s\) had an actor whose anti-affinity excludes this one/);
    assert.not.match(pinned.pendingReason!, /node affinity/, 'the resident rule is named, not a node-id affinity the user never wrote');
    for (let i = 2; i < 6; i++) assert.is((await h.registerActor(`noisy-${i}`, { labels: { app: 'noisy' } })).nodeId, other);
    assert.is((await h.registerActor('calm', { labels: { app: 'calm' }, labelSelector: { 'orrery.io/node-id': q.nodeId! } })).nodeId, q.nodeId, 'other labels are welcome');
    // once Q is gone, the waiting one gets in
    await h.request('kill_actor', 'kill_actor', { actorId: 'Q', noRestart: true });
    assert.is((await h.reached('noisy-1', 'ALIVE')).nodeId, q.nodeId);
  }));

test('affinityDuringExecution required: when its peer moves, the follower is evicted, counts a restart and joins the peer', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1', { pool: 'a' }));
    await h.addNode(node('n2'));
    await h.registerActor('A', { labelSelector: { pool: 'a' }, maxRestarts: -1 });
    await h.registerActor('B', { schedulingStrategy: actorAffinity(affinity('A')), maxRestarts: 2, affinityDuringExecution: 'required' });
    await h.reached('B', 'ALIVE');
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n1', remove: ['pool'] });
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n2', set: { pool: 'a' } });
    await crash(h, 'A');
    const evicted = await eviction(h, 'B');
    assert.is(evicted.reason, 'affinity_lost');
    assert.match(evicted.message!, /actor affinity orrery\.io\/actor-id in \(A\) no longer holds on node n1/);
    assert.is(evicted.actor!.state, 'RESTARTING');
    assert.is(evicted.actor!.numRestarts, 1);
    const b = await aliveAfter(h, 'B', 1);
    assert.is(b.nodeId, 'n2', 'B followed A');
    assert.equal(h.raylets[0].killed, [{ actorId: 'B', incarnation: 0 }], 'the old incarnation was killed on node 1');
  }));

test('affinityDuringExecution required: a peer restarting back onto the same node costs its follower nothing', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1', { pool: 'a' }));
    await h.addNode(node('n2'));
    await h.registerActor('A', { labelSelector: { pool: 'a' }, maxRestarts: -1 });
    await h.registerActor('B', { schedulingStrategy: actorAffinity(affinity('A')), affinityDuringExecution: 'required' });
    await h.reached('B', 'ALIVE');
    await crash(h, 'A');
    assert.is((await aliveAfter(h, 'A', 1)).nodeId, 'n1');
    await settled(h);
    const b = await h.actor('B');
    assert.equal([b.state, b.nodeId, b.numRestarts], ['ALIVE', 'n1', 0]);
    assert.is(h.events.got.filter((e) => e.type === 'actor_evicted').length, 0);
  }));

test('affinityDuringExecution required: a node label change re-places the actor; ignored (default) leaves it', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1', { zone: 'x' }));
    await h.addNode(node('n2', { zone: 'x' }));
    await h.registerActor('Z', { labelSelector: { zone: 'x' }, maxRestarts: -1, affinityDuringExecution: 'required' });
    await h.registerActor('lax', { labelSelector: { zone: 'x' } });
    const z = await h.reached('Z', 'ALIVE');
    const lax = await h.reached('lax', 'ALIVE');
    await h.request('set_node_labels', 'set_node_labels', { nodeId: z.nodeId!, set: { zone: 'y' } });
    const evicted = await eviction(h, 'Z');
    assert.match(evicted.message!, new RegExp(`label selector zone in \\(x\\) no longer matches node ${z.nodeId}`));
    const other = z.nodeId === 'n1' ? 'n2' : 'n1';
    assert.is((await aliveAfter(h, 'Z', 1)).nodeId, other);
    await settled(h);
    if (lax.nodeId === z.nodeId) assert.is((await h.actor('lax')).numRestarts, 0, 'the default ignores changes during execution');

  }));

test('affinityDuringExecution required with no restarts left: the actor dies with a cause naming the broken constraint', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1', { zone: 'x' }));
    await h.registerActor('Z', { labelSelector: { zone: 'x' }, affinityDuringExecution: 'required' });
    await h.reached('Z', 'ALIVE');
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n1', set: { zone: 'y' } });
    const dead = await h.reached('Z', 'DEAD');
    assert.match(dead.deathCause!, /^evicted: label selector zone in \(x\) no longer matches node n1 \(affinityDuringExecution: required\)$/);
    assert.equal(h.raylets[0].killed, [{ actorId: 'Z', incarnation: 0 }]);
  }));

test('NoExecute moves running actors that do not tolerate it; tolerating ones and NoSchedule leave them in place', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('n1', { pool: 'p' }));
    await h.addNode(node('n2'));
    const pin = { labelSelector: { pool: 'p' } };
    await h.registerActor('plain', { ...pin, maxRestarts: 1 });
    await h.registerActor('tolerant', { ...pin, tolerations: { maintenance: Exists() } });
    await h.registerActor('last', { ...pin });
    for (const id of ['plain', 'tolerant', 'last']) assert.is((await h.reached(id, 'ALIVE')).nodeId, 'n1');
    // placement used the pool label; n2 joins the pool so a restart has somewhere to go
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n2', set: { pool: 'p' } });

    await h.request('set_node_taints', 'set_node_taints', { nodeId: 'n1', add: { maintenance: 'soon' } });
    await settled(h);
    assert.equal(((await h.request('list_actors', 'list_actors', {})).items as ActorInfoWire[]).map((a) => [a.actorId, a.state, a.numRestarts]), [
      ['last', 'ALIVE', 0], ['plain', 'ALIVE', 0], ['tolerant', 'ALIVE', 0],
    ], 'NoSchedule keeps running actors where they are (listed in id order)');

    await h.request('set_node_taints', 'set_node_taints', { nodeId: 'n1', add: { maintenance: 'now:NoExecute' } });
    const evicted = await eviction(h, 'plain');
    assert.is(evicted.reason, 'no_execute_taint');
    assert.is(evicted.message, 'evicted by taint {maintenance: now} (NoExecute) on node n1');
    assert.is((await aliveAfter(h, 'plain', 1)).nodeId, 'n2', 'restarted on another node, counting a restart');
    const last = await h.reached('last', 'DEAD');
    assert.is(last.deathCause, 'evicted by taint {maintenance: now} (NoExecute) on node n1', 'no restarts left: dead, the cause names the taint');
    const tolerant = await h.actor('tolerant');
    assert.equal([tolerant.state, tolerant.nodeId, tolerant.numRestarts], ['ALIVE', 'n1', 0]);
    const next = await h.registerActor('new', { ...pin });
    assert.is(next.nodeId, 'n2', 'NoExecute keeps new work away too');
  }));

test('hard anti-affinity over a topology key holds both ways: no actor it excludes is placed anywhere in its zone', () =>
  withGcs({}, async (h) => {
    await h.addNode(node('a1', { zone: 'a' }));
    await h.addNode(node('a2', { zone: 'a' }));
    await h.addNode(node('b1', { zone: 'b' }));
    await h.registerActor('Q', {
      schedulingStrategy: actorAffinity(withTopologyKey({ key: 'app', operator: 'NOT_IN', values: ['noisy'], soft: false }, 'zone')),
      labelSelector: { zone: 'a' },
    });
    await h.reached('Q', 'ALIVE');
    // a noisy actor that may only go to zone a waits, whichever node of the zone; one that may go anywhere goes to zone b
    const pinned = await h.registerActor('noisy-1', { labels: { app: 'noisy' }, labelSelector: { zone: 'a' } });
    assert.is(pinned.state, 'PENDING');
    assert.match(pinned.pendingReason!, /2 node\(s\) had an actor whose anti-affinity excludes this one/);
    assert.is((await h.registerActor('noisy-2', { labels: { app: 'noisy' } })).nodeId, 'b1');
    assert.ok(['a1', 'a2'].includes((await h.registerActor('calm', { labels: { app: 'calm' }, labelSelector: { zone: 'a' } })).nodeId!), 'other labels are welcome');
  }));

test('a node whose raylet does not answer create_actor is avoided until it heartbeats again; the actor lands elsewhere without spending a restart', () =>
  withGcs({}, async (h) => {
    const gone = await h.addNode(node('n1'));
    await h.addNode(node('n2'));
    gone.close(); // its subjects are gone, its heartbeat has not timed out (60 s here)
    await h.registerActor('a', { schedulingStrategy: nodeIdAffinity('n1', { soft: true }), maxRestarts: 0 });
    const landed = await aliveAfter(h, 'a', 0);
    assert.is(landed.nodeId, 'n2', 'the second attempt kept off the node that did not answer');
    assert.is(landed.incarnation, 1, 'one create went nowhere; it was not counted as a restart');
    // another actor that prefers n1 keeps off it too, until n1 heartbeats again
    assert.is((await h.registerActor('b', { schedulingStrategy: nodeIdAffinity('n1', { soft: true }) })).nodeId, 'n2');
    const waiting = await h.registerActor('c', { schedulingStrategy: nodeIdAffinity('n1') });
    assert.is(waiting.state, 'PENDING');
    assert.match(waiting.pendingReason!, /didn't match node affinity orrery\.io\/node-id notin \(n1\)/);
    // the raylet is back (its subjects served again) and heartbeats
    const back = new StubRaylet(h, gone.spec);
    h.raylets.push(back);
    assert.equal(await back.heartbeat(), { known: true });
    assert.is((await h.reached('c', 'ALIVE')).nodeId, 'n1', 'a heartbeat lets placements back on the node');
  }));

test.run();
