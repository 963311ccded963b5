// Failover as a driver sees it, on the memory transport: calls during a restart (with and without
// maxTaskRetries), running out of restarts, NoExecute and affinityDuringExecution through the
// client API, and schedule-failed events for each of seed 000's three cases through scheduleFailed$
// and recentEvents().
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, take, timeout, toArray } from 'rxjs';
import { actorAffinity, affinity } from '../../../lib/index.ts';
import type { ActorEvictedEvent } from '../../../runtime/client/index.ts';
import { ActorDiedError, ActorUnavailableError, CallAbortedError, startLocalCluster, type ActorHandle, type ActorInfo, type LocalCluster } from '../../../runtime/index.ts';
import { until } from '../../helpers/until.ts';
import { JournalActor } from './failover-actors.ts';

const READY = { timeoutMs: 10_000 };
let local: LocalCluster;
let ids: Record<string, string>;

test.before(async () => {
  local = await startLocalCluster({
    transport: 'memory',
    nodes: [
      { name: 'home', labels: { pool: 'a' }, resources: { CPU: 4 } },
      { name: 'spare', resources: { CPU: 4 } },
    ],
  });
  ids = Object.fromEntries((await local.cluster.nodes()).map((n) => [n.name, n.nodeId]));
});
test.after(async () => {
  await local?.stop();
});

/** Sets the pool label of both nodes (undefined: no pool). */
async function pools(home: string | undefined, spare: string | undefined): Promise<void> {
  for (const [node, pool] of [[ids.home, home], [ids.spare, spare]] as const) {
    await local.cluster.setNodeLabels(node, pool === undefined ? { remove: ['pool'] } : { set: { pool } });
  }
}

const stateOf = (handle: ActorHandle<unknown>, pass: (i: ActorInfo) => boolean): Promise<ActorInfo> =>
  firstValueFrom(handle.state$.pipe(filter(pass), timeout(10_000)));

test('with maxTaskRetries, calls made while the actor restarts wait and reach the new incarnation in call order', async () => {
  await pools(undefined, 'b');
  const actor = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'b' }, maxRestarts: -1, maxTaskRetries: -1 }).remote();
  await actor.ready(READY);
  assert.is(await actor.call('append', 'before'), 1);
  // the restart cannot be placed until pool b exists again: a window for calls to pile up
  await pools(undefined, undefined);
  const inFlight = actor.call('appendLater', 'in-flight', 200);
  await actor.kill({ noRestart: false });
  await stateOf(actor, (i) => i.state === 'PENDING' && i.numRestarts === 1);
  const calls = ['c1', 'c2', 'c3', 'c4', 'c5'].map((c) => actor.call('append', c));
  await pools('b', undefined);
  const results = await Promise.all([inFlight, ...calls]);
  assert.equal(await actor.call('journal'), ['in-flight', 'c1', 'c2', 'c3', 'c4', 'c5'], 'delivered in order after the restart');
  assert.equal(results, [1, 2, 3, 4, 5, 6]);
  const info = await actor.info();
  assert.equal([info.state, info.numRestarts, info.nodeId], ['ALIVE', 1, ids.home]);
  await actor.kill();
});

test('with maxTaskRetries, a call\'s timeout bounds its wait for the restart: TIMEOUT while the actor cannot be placed, and it never runs', async () => {
  await pools(undefined, 'b');
  const actor = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'b' }, maxRestarts: -1, maxTaskRetries: -1 }).remote();
  await actor.ready(READY);
  assert.is(await actor.call('append', 'before'), 1);
  await pools(undefined, undefined); // the restart cannot be placed
  await actor.kill({ noRestart: false });
  await stateOf(actor, (i) => i.state === 'PENDING' && i.numRestarts === 1);
  const started = Date.now();
  const guard = new Promise((_, reject) => setTimeout(() => reject(new Error('the call still waits 10 s later: its timeout did not bound the wait')), 10_000).unref());
  const err = await Promise.race([actor.options({ timeoutMs: 300 }).call('append', 'late'), guard]).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.is((err as { code?: string } | undefined)?.code, 'TIMEOUT', String(err));
  assert.match((err as Error).message, /timed out after 300 ms/);
  assert.ok(Date.now() - started < 10_000);
  assert.is((await actor.info()).state, 'PENDING', 'still waiting for a node when the call gave up');
  await pools('b', undefined);
  await actor.ready(READY);
  assert.equal(await actor.call('journal'), [], 'a new incarnation, and the call that timed out never ran in it');
  await actor.kill();
});

test('with maxTaskRetries, a call aborted while it waits for the restart fails at once and never runs; the calls behind it run in order', async () => {
  await pools(undefined, 'b');
  const actor = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'b' }, maxRestarts: -1, maxTaskRetries: -1 }).remote();
  await actor.ready(READY);
  await pools(undefined, undefined); // the restart cannot be placed
  await actor.kill({ noRestart: false });
  await stateOf(actor, (i) => i.state === 'PENDING' && i.numRestarts === 1);
  const controller = new AbortController();
  const kept1 = actor.call('append', 'k1');
  const aborted = actor.options({ signal: controller.signal }).call('append', 'aborted').catch((e: unknown) => e);
  const kept2 = actor.call('append', 'k2');
  // each has met the actor it could not take (UnavailableNow) and waits at the gate
  await until('the three calls at the restart gate', () => ((actor as unknown as { gate: { waiting: number } }).gate.waiting >= 3 ? true : undefined));
  controller.abort();
  const err = (await aborted) as CallAbortedError;
  assert.instance(err, CallAbortedError);
  await pools('b', undefined);
  assert.equal(await Promise.all([kept1, kept2]), [1, 2]);
  assert.equal(await actor.call('journal'), ['k1', 'k2'], 'the aborted call never ran in the new incarnation');
  await actor.kill();
});

test('every call in flight fails when the actor dies, and the handle follows its events only while calls are in flight', async () => {
  await pools('b', undefined);
  const stream = (local.cluster as unknown as { stream: { actorWatchers(actorId: string): number } }).stream;
  const actor = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'b' } }).remote();
  await actor.ready(READY);
  await Promise.all(['a', 'b', 'c'].map((e) => actor.call('append', e)));
  assert.is(stream.actorWatchers(actor.actorId), 0, 'no watch left once the calls were answered');
  const inFlight = ['x', 'y', 'z'].map((e) => actor.call('appendNeverAnswer', e).catch((err: unknown) => err));
  assert.is(stream.actorWatchers(actor.actorId), 1, 'one watch for all three calls, not one each');
  await actor.kill();
  for (const err of await Promise.all(inFlight)) assert.instance(err, ActorDiedError);
  assert.is(stream.actorWatchers(actor.actorId), 0, 'and none after they failed');
});

test('without maxTaskRetries, calls fail at once with ACTOR_UNAVAILABLE while the actor restarts', async () => {
  await pools('b', undefined);
  const actor = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'b' }, maxRestarts: 1 }).remote();
  await actor.ready(READY);
  await pools(undefined, undefined);
  const inFlight = actor.call('appendLater', 'lost', 200).catch((e: unknown) => e);
  await actor.kill({ noRestart: false });
  assert.instance(await inFlight, ActorUnavailableError, 'the call in flight fails when the actor restarts');
  await stateOf(actor, (i) => i.state === 'PENDING');
  const t0 = performance.now();
  const err = await actor.call('append', 'x').catch((e: unknown) => e);
  assert.instance(err, ActorUnavailableError);
  assert.is((err as ActorUnavailableError).code, 'ACTOR_UNAVAILABLE');
  assert.ok(performance.now() - t0 < 500, 'at once, not after a wait');
  await pools('b', undefined);
  await actor.ready(READY);
  assert.equal(await actor.call('journal'), [], 'nothing was delivered to the new incarnation');
  await actor.kill();
});

test('out of restarts: DEAD with a death cause, and calls — waiting ones included — fail with ACTOR_DIED', async () => {
  await pools('b', undefined);
  const actor = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'b' }, maxRestarts: 1, maxTaskRetries: -1 }).remote();
  await actor.ready(READY);
  await pools(undefined, undefined);
  await actor.kill({ noRestart: false });
  await stateOf(actor, (i) => i.state === 'PENDING' && i.numRestarts === 1);
  const waiting = actor.call('append', 'first').catch((e: unknown) => e);
  await pools('b', undefined);
  assert.equal(await waiting, 1, 'the waiting call reached the second incarnation');
  await local.cluster.setNodeTaints(ids.home, { add: { drain: 'now:NoExecute' } });
  const dead = await stateOf(actor, (i) => i.state === 'DEAD');
  assert.is(dead.deathCause, `evicted by taint {drain: now} (NoExecute) on node ${ids.home}`);
  assert.is(dead.numRestarts, 1);
  const err = await actor.call('append', 'late').catch((e: unknown) => e);
  assert.instance(err, ActorDiedError);
  assert.is((err as ActorDiedError).code, 'ACTOR_DIED');
  assert.match((err as Error).message, /NoExecute/);
  await local.cluster.setNodeTaints(ids.home, { remove: ['drain'] });
});

test('NoExecute moves an actor that does not tolerate it and says so on events$', async () => {
  await pools('b', 'b');
  const actor = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'b' }, maxRestarts: 2 }).remote();
  const first = await actor.ready(READY);
  const evicted = firstValueFrom(local.cluster.events$.pipe(filter((e): e is ActorEvictedEvent => e.type === 'actor_evicted' && e.actor.actorId === actor.actorId), timeout(10_000)));
  await local.cluster.setNodeTaints(first.nodeId!, { add: { maintenance: 'true:NoExecute' } });
  const event = await evicted;
  assert.is(event.reason, 'no_execute_taint');
  assert.match(event.message, /\{maintenance: true\} \(NoExecute\)/);
  const moved = await stateOf(actor, (i) => i.state === 'ALIVE' && i.numRestarts === 1);
  assert.is.not(moved.nodeId, first.nodeId);
  await local.cluster.setNodeTaints(first.nodeId!, { remove: ['maintenance'] });
  await actor.kill();
});

test('affinityDuringExecution: required follows its peer; a bad value is INVALID_OPTION at the call', async () => {
  const bad = await local.cluster.actor(JournalActor).options({ affinityDuringExecution: 'sometimes' as never }).remote().catch((e: unknown) => e);
  assert.is((bad as { code?: string }).code, 'INVALID_OPTION');
  await pools('lead', undefined);
  const lead = await local.cluster.actor(JournalActor).options({ labelSelector: { pool: 'lead' }, maxRestarts: -1 }).remote();
  const follower = await local.cluster.actor(JournalActor).options({ schedulingStrategy: actorAffinity(affinity(lead)), affinityDuringExecution: 'required', maxRestarts: -1 }).remote();
  assert.is((await follower.ready(READY)).nodeId, ids.home);
  await pools(undefined, 'lead');
  await lead.kill({ noRestart: false });
  assert.is((await stateOf(lead, (i) => i.state === 'ALIVE' && i.numRestarts === 1)).nodeId, ids.spare);
  const moved = await stateOf(follower, (i) => i.state === 'ALIVE' && i.numRestarts === 1);
  assert.is(moved.nodeId, ids.spare, 'the follower was re-placed next to its peer');
  await follower.kill();
  await lead.kill();
});

test('schedule_failed for each of seed 000\'s three cases, through scheduleFailed$ and recentEvents()', async () => {
  const three = firstValueFrom(local.cluster.scheduleFailed$.pipe(take(3), toArray(), timeout(10_000)));
  const constraints = await local.cluster.actor(JournalActor).options({ labelSelector: { region: 'mars' } }).remote();
  const resources = await local.cluster.actor(JournalActor).options({ numCpus: 64 }).remote();
  const both = await local.cluster.actor(JournalActor).options({ numCpus: 64, labelSelector: { region: 'mars' } }).remote();
  const events = await three;
  const byActor = new Map(events.map((e) => [e.target.id, e]));
  assert.is(byActor.get(constraints.actorId)!.reason, 'constraints');
  assert.is(byActor.get(resources.actorId)!.reason, 'resources');
  assert.is(byActor.get(both.actorId)!.reason, 'constraints_and_resources');
  assert.is(byActor.get(constraints.actorId)!.message, "0/2 nodes are available: 2 node(s) didn't match label selector region in (mars).");
  for (const e of events) assert.equal(e.nodes.map((n) => n.nodeId).sort(), [ids.home, ids.spare].sort());
  assert.is((await constraints.info()).pendingReason, byActor.get(constraints.actorId)!.message, 'pendingReason is the last message');

  const recent = await local.cluster.recentEvents({ types: ['schedule_failed'] });
  const mine = recent.events.filter((e) => e.type === 'schedule_failed' && byActor.has(e.target.id));
  assert.equal(mine, events, 'the same events, seq included');
  assert.ok(mine.every((e) => typeof e.seq === 'number'));
  for (const h of [constraints, resources, both]) await h.kill();
});

test.run();
