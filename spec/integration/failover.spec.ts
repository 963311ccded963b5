// Failover on real processes: a nats-server, a GCS process and raylet processes (startLocalCluster
// with transport 'nats'), actors in worker host processes of their own where a spec crashes them.
// Node death detection timing, each restart path, seed 000's failover story step by step,
// anti-affinity on restart, calls during a restart with and without retries, and
// affinityDuringExecution. Every wait is on an event or a state, bounded.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { actorAffinity, affinity, antiAffinity, nodeIdAffinity } from '../../lib/index.ts';
import type { ActorEvictedEvent } from '../../runtime/client/index.ts';
import {
  ActorDiedError, ActorUnavailableError, startLocalCluster, type ActorHandle, type ActorInfo, type ActorOptions, type ClusterEvent, type LocalCluster, type NodeEvent,
} from '../../runtime/index.ts';
import { JournalActor, type Journal } from '../runtime/client/failover-actors.ts';
import { ExplodingActor } from '../fixtures/client/actors.ts';

const HEARTBEAT_MS = 200;
const NODE_TIMEOUT_MS = 1500;
const WAIT_MS = 20_000;
// the GCS process reads these (runtime/gcs/flags.ts); the raylets learn the heartbeat from it
process.env.ORRERY_HEARTBEAT_MS = String(HEARTBEAT_MS);
process.env.ORRERY_NODE_TIMEOUT_MS = String(NODE_TIMEOUT_MS);

let local: LocalCluster;
let ids: Record<string, string>;

test.before(async () => {
  local = await startLocalCluster({
    transport: 'nats',
    nodes: [
      { name: 'n1', labels: { pool: 'a' }, resources: { CPU: 4 } },
      { name: 'n2', resources: { CPU: 4 } },
      { name: 'n3', resources: { CPU: 4 } },
    ],
  });
  ids = Object.fromEntries((await local.cluster.nodes()).map((n) => [n.name, n.nodeId]));
});
test.after(async () => {
  await local?.stop();
});

const nameOf = (nodeId: string | undefined): string | undefined => Object.entries(ids).find(([, id]) => id === nodeId)?.[0];
const event = <E extends ClusterEvent>(pass: (e: ClusterEvent) => e is E): Promise<E> => firstValueFrom(local.cluster.events$.pipe(filter(pass), timeout(WAIT_MS)));
const stateOf = (h: ActorHandle<unknown>, pass: (i: ActorInfo) => boolean): Promise<ActorInfo> => firstValueFrom(h.state$.pipe(filter(pass), timeout(WAIT_MS)));
const aliveAfter = (h: ActorHandle<unknown>, restarts: number) => stateOf(h, (i) => i.state === 'ALIVE' && i.numRestarts === restarts);

async function actor(opts: ActorOptions): Promise<{ handle: ActorHandle<Journal>; info: ActorInfo }> {
  const handle = await local.cluster.actor(JournalActor).options({ isolation: 'process', ...opts }).remote();
  return { handle, info: await handle.ready({ timeoutMs: WAIT_MS }) };
}

/** The actor's worker host process exits (its raylet reports the actors at once). */
async function crash(h: ActorHandle<Journal>): Promise<void> {
  await h.call('exit');
}

async function setPool(nodeName: string, pool: string | undefined): Promise<void> {
  await local.cluster.setNodeLabels(ids[nodeName], pool === undefined ? { remove: ['pool'] } : { set: { pool } });
}

test('a SIGKILLed raylet is DEAD within the node timeout; its actors restart or die; a pending actor lands the moment a matching node joins', async () => {
  const victim = await local.addNode({ name: 'victim', labels: { role: 'victim' }, resources: { CPU: 2 } });
  const movable = await local.cluster.actor(JournalActor).options({ schedulingStrategy: nodeIdAffinity(victim.nodeId, { soft: true }), maxRestarts: -1 }).remote();
  const bound = await local.cluster.actor(JournalActor).options({ labelSelector: { role: 'victim' }, maxRestarts: -1 }).remote();
  const mortal = await local.cluster.actor(JournalActor).options({ labelSelector: { role: 'victim' } }).remote();
  for (const h of [movable, bound, mortal]) assert.is((await h.ready({ timeoutMs: WAIT_MS })).nodeId, victim.nodeId);

  const dead = event((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === victim.nodeId);
  const killedAt = performance.now();
  await local.killNode(victim.nodeId);
  await dead;
  const detectedIn = performance.now() - killedAt;
  assert.ok(detectedIn <= NODE_TIMEOUT_MS + 500, `declared DEAD ${detectedIn.toFixed(0)} ms after the SIGKILL (timeout ${NODE_TIMEOUT_MS} ms)`);
  assert.ok(detectedIn >= NODE_TIMEOUT_MS - HEARTBEAT_MS - 100, `not before the timeout (${detectedIn.toFixed(0)} ms)`);

  const moved = await aliveAfter(movable, 1);
  assert.ok(['n1', 'n2', 'n3'].includes(nameOf(moved.nodeId)!), 'restarted on a live node');
  assert.equal(await movable.call('journal'), []);
  const deadActor = await stateOf(mortal, (i) => i.state === 'DEAD');
  assert.is(deadActor.deathCause, `node ${victim.nodeId} died`);
  assert.instance(await mortal.call('append', 'x').catch((e: unknown) => e), ActorDiedError);
  const waiting = await stateOf(bound, (i) => i.state === 'PENDING' && i.numRestarts === 1);
  assert.match(waiting.pendingReason!, /didn't match label selector role in \(victim\)/);

  // a raylet started again is a new node; the waiting actor is placed as soon as it registers
  const joined = event((e): e is NodeEvent => e.type === 'node_added' && e.node.name === 'victim-2');
  const scheduled = stateOf(bound, (i) => i.state === 'SCHEDULED');
  const again = await local.addNode({ name: 'victim-2', labels: { role: 'victim' }, resources: { CPU: 2 } });
  assert.is.not(again.nodeId, victim.nodeId);
  const [added, placed] = await Promise.all([joined, scheduled]);
  assert.is(placed.nodeId, again.nodeId);
  assert.ok(placed.numRestarts === 1);
  const addedSeq = added.seq!;
  const placedEvent = (await local.cluster.recentEvents({ types: ['actor_state'], afterSeq: addedSeq })).events.find(
    (e) => e.type === 'actor_state' && e.actor.actorId === bound.actorId && e.actor.state === 'SCHEDULED',
  );
  assert.ok(placedEvent && placedEvent.time - added.time < 100, 'placed within 100 ms of the node joining: the join kicked the queue');
  const states = (await local.cluster.nodes()).filter((n) => n.name.startsWith('victim')).map((n) => `${n.name}:${n.state}`).sort();
  assert.equal(states, ['victim-2:ALIVE', 'victim:DEAD']);
  const gone = event((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === again.nodeId);
  await local.killNode(again.nodeId);
  await gone;
});

test('restart paths: worker crash, kill without noRestart, out of restarts (DEAD with a cause, calls ACTOR_DIED), a constructor that throws', async () => {
  const { handle, info } = await actor({ maxRestarts: 2 });
  const pid0 = (await handle.call('where')).pid;
  await crash(handle);
  const crashed = await aliveAfter(handle, 1);
  const pid1 = (await handle.call('where')).pid;
  assert.is.not(pid1, pid0, 'a new worker process');
  assert.ok(crashed.nodeId !== undefined && info.nodeId !== undefined);

  await handle.kill({ noRestart: false });
  await aliveAfter(handle, 2);
  assert.is.not((await handle.call('where')).pid, pid1);

  await crash(handle);
  const dead = await stateOf(handle, (i) => i.state === 'DEAD');
  assert.is(dead.numRestarts, 2);
  assert.match(dead.deathCause!, /worker host .*exited|exited/);
  const err = await handle.call('append', 'x').catch((e: unknown) => e);
  assert.instance(err, ActorDiedError);
  assert.is((err as ActorDiedError).code, 'ACTOR_DIED');

  const exploding = await local.cluster.actor(ExplodingActor).options({ maxRestarts: 3 }).remote();
  const broken = await stateOf(exploding, (i) => i.state === 'DEAD');
  assert.match(broken.deathCause!, /constructor refused/);
  assert.is(broken.numRestarts, 0, 'a constructor that throws is not restarted');
});

test('seed 000 failover, step by step: A restarts on node 2 and B stays; then B fails and joins A on node 2', async () => {
  await setPool('n1', 'seed');
  const A = await actor({ labelSelector: { pool: 'seed' }, maxRestarts: -1 });
  const B = await actor({ schedulingStrategy: actorAffinity(affinity(A.handle)), maxRestarts: -1 });
  assert.equal([nameOf(A.info.nodeId), nameOf(B.info.nodeId)], ['n1', 'n1'], 'A and B complete scheduling on node 1');
  const bPid = (await B.handle.call('where')).pid;

  await setPool('n1', undefined);
  await setPool('n2', 'seed');
  await crash(A.handle);
  const a1 = await aliveAfter(A.handle, 1);
  assert.is(nameOf(a1.nodeId), 'n2', '1. A failed and restarted on node 2');
  const b = await B.handle.info();
  assert.equal([b.state, nameOf(b.nodeId), b.numRestarts], ['ALIVE', 'n1', 0], '1. B is not affected');
  assert.is((await B.handle.call('where')).pid, bPid, '1. B still works on node 1, the same process');

  await crash(B.handle);
  const b1 = await aliveAfter(B.handle, 1);
  assert.is(nameOf(b1.nodeId), 'n2', '2. B failed and was scheduled to node 2, collocated with A');
  assert.equal((await B.handle.call('where')).nodeId, ids.n2);
  await setPool('n2', undefined);
  await A.handle.kill();
  await B.handle.kill();
});

test('anti-affinity on restart: a restarting actor never lands next to an actor it is anti-affine to', async () => {
  await setPool('n1', 'anchor');
  const D = await actor({ labelSelector: { pool: 'anchor' } });
  const C = await actor({ schedulingStrategy: actorAffinity(antiAffinity(D.handle)), maxRestarts: -1 });
  assert.is.not(C.info.nodeId, D.info.nodeId);
  for (let i = 1; i <= 3; i++) {
    await crash(C.handle);
    const again = await aliveAfter(C.handle, i);
    assert.is.not(again.nodeId, D.info.nodeId, `restart ${i} kept off ${nameOf(D.info.nodeId)}`);
  }
  await setPool('n1', undefined);
  await C.handle.kill();
  await D.handle.kill();
});

test('calls during a restart: with retries they wait and arrive in call order; without, they fail at once with ACTOR_UNAVAILABLE', async () => {
  const patient = await actor({ maxRestarts: -1, maxTaskRetries: -1, maxConcurrency: 8 });
  assert.is(await patient.handle.call('append', 'c0'), 1);
  const inFlight = patient.handle.call('appendLater', 'in-flight', 800);
  await crash(patient.handle);
  const later = ['c1', 'c2', 'c3'].map((c) => patient.handle.call('append', c));
  const results = await Promise.all([inFlight, ...later]);
  assert.equal(await patient.handle.call('journal'), ['in-flight', 'c1', 'c2', 'c3'], 'the new incarnation received them in call order');
  assert.equal(results, [1, 2, 3, 4]);
  assert.is((await patient.handle.info()).numRestarts, 1);

  const impatient = await actor({ maxRestarts: -1, maxConcurrency: 8 });
  const lost = impatient.handle.call('appendLater', 'lost', 5000).catch((e: unknown) => e);
  await crash(impatient.handle);
  const err = await lost;
  assert.instance(err, ActorUnavailableError, 'the call in flight fails');
  assert.is((err as ActorUnavailableError).code, 'ACTOR_UNAVAILABLE');
  await aliveAfter(impatient.handle, 1);
  assert.equal(await impatient.handle.call('journal'), [], 'nothing was retried');
  await patient.handle.kill();
  await impatient.handle.kill();
});

test('calls with retries that time out while the actor cannot be placed fail TIMEOUT, leave the handle, and never run once it is back', async () => {
  await setPool('n3', 'b');
  const { handle } = await actor({ labelSelector: { pool: 'b' }, maxRestarts: -1, maxTaskRetries: -1 });
  assert.is(await handle.call('append', 'before'), 1);
  await setPool('n3', undefined); // its restart cannot be placed
  await crash(handle); // the worker host process exits
  await stateOf(handle, (i) => i.state === 'PENDING' && i.numRestarts === 1);
  const outcomes = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      handle.options({ timeoutMs: 400 }).call('append', `late-${i}`).then(
        () => 'ran',
        (e: { code?: string }) => e.code ?? String(e),
      ),
    ),
  );
  assert.equal([...new Set(outcomes)], ['TIMEOUT']);
  const gate = (handle as unknown as { gate: { waiting: number; shut: boolean } }).gate;
  assert.ok(gate.shut, 'the actor is still PENDING');
  assert.is(gate.waiting, 0, 'the calls that timed out no longer wait at the gate');
  await setPool('n3', 'b');
  await aliveAfter(handle, 1);
  assert.equal(await handle.call('journal'), [], 'the new incarnation ran none of them');
  await handle.kill();
  await setPool('n3', undefined);
});

test('affinityDuringExecution required: when its peer moves, the follower is evicted, counts a restart and follows', async () => {
  await setPool('n1', 'lead');
  const lead = await actor({ labelSelector: { pool: 'lead' }, maxRestarts: -1 });
  const follower = await actor({ schedulingStrategy: actorAffinity(affinity(lead.handle)), affinityDuringExecution: 'required', maxRestarts: -1 });
  const bystander = await actor({ schedulingStrategy: actorAffinity(affinity(lead.handle)), maxRestarts: -1 });
  assert.equal([follower.info.nodeId, bystander.info.nodeId], [lead.info.nodeId, lead.info.nodeId]);
  await setPool('n1', undefined);
  await setPool('n3', 'lead');
  const evicted = event((e): e is ActorEvictedEvent => e.type === 'actor_evicted' && e.actor.actorId === follower.handle.actorId);
  await crash(lead.handle);
  assert.is(nameOf((await aliveAfter(lead.handle, 1)).nodeId), 'n3');
  const e = await evicted;
  assert.is(e.reason, 'affinity_lost');
  assert.match(e.message, /actor affinity orrery\.io\/actor-id in \(.+\) no longer holds on node/);
  assert.is(nameOf((await aliveAfter(follower.handle, 1)).nodeId), 'n3', 'it followed its peer');
  const b = await bystander.handle.info();
  assert.equal([nameOf(b.nodeId), b.numRestarts], ['n1', 0], 'without the option nothing moves while it runs');
  await setPool('n3', undefined);
  for (const a of [lead, follower, bystander]) await a.handle.kill();
});

test.run();
