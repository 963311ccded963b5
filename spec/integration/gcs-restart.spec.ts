// A GCS killed with SIGKILL and started again, on real processes: a nats-server with JetStream, a
// GCS process, two raylet processes, actors in worker hosts. What the GCS knew comes back from its
// JetStream tables and from what the raylets still run: actors (named ones too, with their state)
// stay where they were, same incarnation, no restart; a pending actor is pending again; calls are
// answered while no GCS runs; a new GCS serves requests that waited for it; calls with retries
// waiting for an actor's restart (sent again, or held at its restart gate) ride through a GCS killed
// or frozen meanwhile and run once each, in call order. Every wait is on a condition, bounded.
import { spawn } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity, placementGroupStrategy } from '../../lib/index.ts';
import { ActorUnavailableError, connect, type ActorHandle, type ActorInfo, type Cluster, type GcsStatus } from '../../runtime/index.ts';
import { startDashboard } from '../../runtime/dashboard/server.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';
import { ORRERY_MAIN } from '../helpers/orrery-cli.ts';
import { CounterActor, type Counter } from '../fixtures/client/actors.ts';
import { JournalActor, type Journal } from '../runtime/client/failover-actors.ts';

process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '1500';
const CLUSTER = 'restart';
const WAIT_MS = 30_000;

let nats: NatsServerHandle;
let gcs: RuntimeProcess;
const raylets: RuntimeProcess[] = [];
let cluster: Cluster;

const startGcs = (graceMs = 10_000): Promise<RuntimeProcess> => spawnRuntimeProcess('gcs', ['--address', nats.url, '--cluster', CLUSTER, '--grace-ms', String(graceMs)]);

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
  gcs = await startGcs();
  for (const name of ['n1', 'n2']) {
    raylets.push(await spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', name, '--num-cpus', '4']));
  }
  cluster = await connect({ address: nats.url, cluster: CLUSTER });
});

test.after(async () => {
  await cluster?.close().catch(() => undefined);
  for (const r of raylets) await r.stop();
  await gcs?.stop();
  await nats?.stop();
});

test('a GCS killed and started again keeps every actor where it runs, with its state, and serves again', async () => {
  const named = await cluster.actor(CounterActor).options({ name: 'ledger', isolation: 'process' }).remote(10);
  const shared = await Promise.all([1, 2, 3, 4].map(() => cluster.actor(CounterActor).options({ maxRestarts: 1 }).remote(0)));
  const pending = await cluster.actor(CounterActor).options({ numCpus: 64 }).remote(0);
  for (const h of [named, ...shared]) await h.ready({ timeoutMs: WAIT_MS });
  assert.is(await named.call('add', 5), 15);
  const before = new Map((await cluster.actors()).map((a) => [a.actorId, a]));
  assert.is(before.get(pending.actorId)?.state, 'PENDING');
  const seqBefore = (await cluster.recentEvents({ limit: 1 })).lastSeq;
  assert.ok(seqBefore > 0);

  // no GCS: calls go straight to the worker hosts and are answered all along
  await gcs.crash();
  const during: number[] = [];
  for (let i = 0; i < 5; i++) during.push(await named.call('add', 1));
  assert.equal(during, [16, 17, 18, 19, 20]);

  // a request made while no GCS runs waits for the next one (bounded), then is answered
  const waiting = cluster.actor(CounterActor).options({ name: 'late' }).remote(1);
  gcs = await startGcs();
  const late = await waiting;
  assert.is((await late.ready({ timeoutMs: WAIT_MS })).state, 'ALIVE');

  const after = new Map((await cluster.actors()).map((a) => [a.actorId, a]));
  for (const h of [named, ...shared]) {
    const was = before.get(h.actorId)!;
    const now = after.get(h.actorId)!;
    assert.is(now.state, 'ALIVE', `${h.actorId} is ALIVE`);
    assert.is(now.nodeId, was.nodeId, `${h.actorId} stays on its node`);
    assert.is(now.numRestarts, 0, `${h.actorId} was not restarted`);
  }
  assert.is(after.get(pending.actorId)?.state, 'PENDING');
  assert.match(after.get(pending.actorId)?.pendingReason ?? '', /0\/2 nodes are available/);

  // the named actor is found by name and kept its state; the shared ones answer too
  const again = await cluster.getActor<Counter>('ledger');
  assert.is(again.actorId, named.actorId);
  assert.is(await again.call('add', 1), 21);
  assert.equal(await Promise.all(shared.map((h) => h.call('get'))), [0, 0, 0, 0]);

  // it schedules again: a new actor is placed, and a kill is carried out
  const fresh = await cluster.actor(CounterActor).remote(7);
  assert.is((await fresh.ready({ timeoutMs: WAIT_MS })).state, 'ALIVE');
  await shared[0].kill();
  const dead = await until('the killed actor DEAD', async () => {
    const info = (await cluster.actors()).find((a) => a.actorId === shared[0].actorId);
    return info?.state === 'DEAD' ? info : undefined;
  });
  assert.is(dead.deathCause, 'killed');
  const nodes = await cluster.nodes();
  assert.equal(nodes.map((n) => n.state).sort(), ['ALIVE', 'ALIVE']);

  // the new GCS numbered its events above every seq the killed one handed out: `orrery events`
  // skips by seq, so a seq handed out again would hide the event that got it
  // (its ring holds only what it published itself)
  const published = (await cluster.recentEvents({})).events;
  assert.ok(published.some((e) => e.type === 'gcs_leader'));
  assert.ok(published.some((e) => e.type === 'actor_state' && e.actor.actorId === shared[0].actorId && e.actor.state === 'DEAD'));
  const low = published.filter((e) => e.seq! <= seqBefore);
  assert.equal(low.map((e) => `${e.seq} ${e.type}`), [], `every seq above ${seqBefore}, the last one the killed GCS handed out`);
});

test('an actor the restarted GCS expects but no raylet runs is restarted; an incarnation it does not know is killed', async () => {
  const victim = (await cluster.actor(CounterActor).options({ isolation: 'process', maxRestarts: 2 }).remote(3)) as ActorHandle<Counter>;
  const info: ActorInfo = await victim.ready({ timeoutMs: WAIT_MS });
  await gcs.crash();
  // while no GCS runs, the victim's worker host dies: its raylet cannot report it to anyone
  assert.is(info.state, 'ALIVE');
  process.kill(await victim.call('pid'), 'SIGKILL');
  gcs = await startGcs();
  const back = await until('the victim ALIVE again after a restart', async () => {
    const a = (await cluster.actors()).find((x) => x.actorId === victim.actorId);
    return a?.state === 'ALIVE' && a.numRestarts === 1 ? a : undefined;
  });
  assert.is(back.numRestarts, 1);
  assert.is(await victim.call('get'), 3, 'a restart runs the constructor again');
});

test('placement groups come back as they were: CREATED with their bundles where they were, actors in them kept; pending and removed ones as they were', async () => {
  const group = await cluster.placementGroup({ strategy: 'STRICT_SPREAD', bundles: [{ CPU: 1 }, { CPU: 1 }], name: 'pair' });
  const created = await group.ready({ timeoutMs: WAIT_MS });
  const inGroup = await cluster.actor(CounterActor).options({ numCpus: 1, schedulingStrategy: placementGroupStrategy(group, 1) }).remote(100);
  await inGroup.ready({ timeoutMs: WAIT_MS });
  assert.is(await inGroup.call('add', 1), 101);
  const waiting = await cluster.placementGroup({ strategy: 'PACK', bundles: [{ CPU: 64 }] });
  const gone = await cluster.placementGroup({ strategy: 'PACK', bundles: [{ CPU: 1 }] });
  await gone.ready({ timeoutMs: WAIT_MS });
  await gone.remove();
  const actorBefore = (await cluster.actors()).find((a) => a.actorId === inGroup.actorId)!;

  await gcs.crash();
  gcs = await startGcs();

  const groups = new Map((await cluster.placementGroups()).map((g) => [g.id, g]));
  const again = groups.get(group.id)!;
  assert.is(again.state, 'CREATED');
  assert.equal(again.bundles.map((b) => b.nodeId), created.bundles.map((b) => b.nodeId), 'bundles where they were');
  assert.is(groups.get(waiting.id)?.state, 'PENDING');
  assert.is(groups.get(gone.id)?.state, 'REMOVED');
  const actorAfter = (await cluster.actors()).find((a) => a.actorId === inGroup.actorId)!;
  assert.equal([actorAfter.state, actorAfter.nodeId, actorAfter.numRestarts], ['ALIVE', actorBefore.nodeId, 0]);
  assert.is(await inGroup.call('add', 1), 102, 'its state kept');
  // the bundle resources exist again: another actor fits into bundle 0, and the group is found by name
  const second = await cluster.actor(CounterActor).options({ numCpus: 1, schedulingStrategy: placementGroupStrategy(group, 0) }).remote(0);
  assert.is((await second.ready({ timeoutMs: WAIT_MS })).nodeId, created.bundles[0].nodeId);
  assert.is((await cluster.getPlacementGroup('pair')).id, group.id);
  await group.remove();
  assert.is((await inGroup.info()).state, 'DEAD');
});

test('asked while a restarted GCS recovers (waiting for a frozen raylet), get_actor, list_actors and list_nodes answer with what it recovered, not ACTOR_NOT_FOUND or the node table as the store left it', async () => {
  const n1 = (await cluster.nodes()).find((n) => n.name === 'n1')!;
  const keeper = await cluster.actor(CounterActor).options({ name: 'keeper', schedulingStrategy: nodeIdAffinity(n1.nodeId) }).remote(40);
  await keeper.ready({ timeoutMs: WAIT_MS });
  // n2 frozen: the next GCS holds it as live and recovers — the actors restored only at the end —
  // for its whole grace window (3 s), since n2 cannot register again
  const n2 = raylets[1];
  process.kill(n2.pid, 'SIGSTOP');
  try {
    await gcs.crash();
    // asked while no GCS runs: the client asks again (100 ms, doubling to 1 s) until one answers,
    // and the next GCS answers from the moment its subjects open, while it recovers
    const found = cluster.getActor<Counter>('keeper');
    const listed = cluster.actors();
    const nodes = cluster.nodes();
    gcs = await startGcs(3000);
    assert.is((await found).actorId, keeper.actorId, 'found by name');
    const info = (await listed).find((a) => a.actorId === keeper.actorId);
    assert.equal([info?.state, info?.nodeId, info?.numRestarts], ['ALIVE', n1.nodeId, 0], 'listed, ALIVE where it was');
    assert.is(await (await found).call('add', 2), 42, 'its state kept');
    // every node the table held, the frozen one too: DEAD once the grace window ran out without it
    assert.equal((await nodes).map((n) => `${n.name} ${n.state}`).sort(), ['n1 ALIVE', 'n2 DEAD']);
  } finally {
    process.kill(n2.pid, 'SIGCONT');
  }
  // declared dead when the grace window ran out, n2 registers again once it runs
  await until('n2 ALIVE again', async () => ((await cluster.nodes()).find((n) => n.name === 'n2')?.state === 'ALIVE' ? true : undefined));
  await keeper.kill();
});

test('gcs_status and `orrery status`, asked while a restarted GCS waits for a frozen raylet, say at once that it recovers and how far; the tables follow once it serves', async () => {
  const n2 = raylets[1];
  process.kill(n2.pid, 'SIGSTOP');
  let resumed = false;
  // a window long enough that only n2's return ends it: the test decides when the recovery ends
  let starting: Promise<RuntimeProcess> | undefined;
  const dash = await startDashboard({ cluster, port: 0 });
  try {
    await gcs.crash();
    starting = startGcs(120_000);
    // asked while no GCS runs, answered by the new one as soon as its subjects open
    const status = await cluster.gcsStatus();
    assert.is(status.state, 'RECOVERING');
    assert.ok(status.epoch > 0, 'a leader epoch: the GCS holds the lease');
    assert.is(status.recovering?.phase, 'WAITING');
    assert.is(status.recovering?.nodesExpected, 2);
    assert.ok(status.recovering!.nodesBack <= 1, 'n2 is frozen');
    assert.ok(status.recovering!.graceLeftMs > 0 && status.recovering!.graceLeftMs <= 120_000);
    // the dashboard's summary asks the same, through its REST API
    const viaDashboard = (await (await fetch(new URL('/api/gcs', dash.url))).json()) as GcsStatus;
    assert.equal([viaDashboard.state, viaDashboard.recovering?.phase, viaDashboard.recovering?.nodesExpected], ['RECOVERING', 'WAITING', 2]);
    // a read meanwhile waits for the recovery
    let nodesRead = false;
    const nodes = cluster.nodes().then((list) => ((nodesRead = true), list));

    const cli = spawn(process.execPath, [...process.execArgv, ORRERY_MAIN, 'status', '--address', nats.url, '--cluster', CLUSTER], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const said = new Promise<void>((resolve) => cli.stdout.on('data', (d) => ((out += d), /^GCS: /m.test(out) && resolve())));
    cli.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => cli.on('close', resolve));
    await Promise.race([said, exited]);
    assert.match(out, /^GCS: recovering what an earlier GCS left \(leader epoch \d+\): [01] of 2 node\(s\) back; waiting at most \d+\.\d s more for the rest/m, `stdout: ${out} stderr: ${err}`);
    assert.not.match(out, /^Nodes:/m, 'the tables wait for the recovery');
    assert.is(nodesRead, false);

    process.kill(n2.pid, 'SIGCONT');
    resumed = true;
    gcs = await starting;
    starting = undefined;
    assert.is(await exited, 0, err);
    assert.match(out, /^Nodes: 2/m);
    assert.equal((await nodes).map((n) => `${n.name} ${n.state}`).sort(), ['n1 ALIVE', 'n2 ALIVE'], 'n2 came back within the window');
    const serving = await cluster.gcsStatus();
    assert.equal([serving.state, serving.epoch, serving.recovering], ['SERVING', status.epoch, undefined]);
  } finally {
    if (!resumed) process.kill(n2.pid, 'SIGCONT');
    if (starting) gcs = await starting;
    await dash.close();
  }
});

test('a ready() waiting on a group it created rides through a GCS killed meanwhile; the new GCS answers get_pg for it while it recovers (waiting for a frozen raylet), and places it once a node fits', async () => {
  // 6 CPUs in one bundle: no node of 4 CPUs fits it, so it waits PENDING
  const group = await cluster.placementGroup({ strategy: 'PACK', bundles: [{ CPU: 6 }] });
  let settled = false;
  const ready = group.ready({ timeoutMs: WAIT_MS }).finally(() => (settled = true));
  ready.catch(() => undefined); // awaited below; a failed assertion before that must not leave it unhandled

  // n2 frozen: the next GCS recovers (groups restored only at the end) for its whole grace window
  const n2 = raylets[1];
  process.kill(n2.pid, 'SIGSTOP');
  try {
    await gcs.crash();
    // asked while no GCS runs, and so again while the next one recovers: answered once it has
    // restored the group, not PLACEMENT_GROUP_NOT_FOUND
    const asked = group.info();
    gcs = await startGcs(3000);
    assert.is((await asked).state, 'PENDING', 'the new GCS has it, still waiting');
    assert.not.ok(settled);
  } finally {
    process.kill(n2.pid, 'SIGCONT');
  }

  // a node that fits it joins the new GCS
  raylets.push(await spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', 'n3', '--num-cpus', '8']));
  const info = await ready;
  assert.is(info.state, 'CREATED');
  const n3 = (await cluster.nodes()).find((n) => n.name === 'n3')!;
  assert.is(info.bundles[0].nodeId, n3.nodeId);
  await group.remove();
});

test('calls waiting for an actor nothing could place yet ride through a GCS killed and started again; once a node fits, they run once each, in call order', async () => {
  const waiting = (await cluster.actor(CounterActor).options({ labelSelector: { stage: 'late' } }).remote(0)) as ActorHandle<Counter>;
  const early = Promise.all([waiting.call('add', 1), waiting.call('add', 2)]);
  // made with them, and so waiting with them: its timeout shows they wait for the actor's creation
  const probe = await waiting.options({ timeoutMs: 300 }).call('get').catch((e: unknown) => e);
  assert.is((probe as { code?: string }).code, 'ACTOR_UNAVAILABLE');
  assert.is((probe as { state?: string }).state, 'PENDING', 'waiting for the creation, not failed at once');

  await gcs.crash();
  gcs = await startGcs();
  raylets.push(await spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', 'n4', '--num-cpus', '1', '--labels', 'stage=late']));
  assert.equal(await early, [1, 3]);
  assert.is(await waiting.call('get'), 3, 'each ran once; the probe never ran');
  const n4 = (await cluster.nodes()).find((n) => n.name === 'n4')!;
  assert.is((await waiting.info()).nodeId, n4.nodeId);
  await waiting.kill();
});

test('calls waiting for an actor\'s creation while the GCS is frozen (SIGSTOP): one whose timeout passes fails then, unsent; the rest run once each after SIGCONT, once a node fits', async () => {
  const waiting = (await cluster.actor(CounterActor).options({ labelSelector: { stage: 'frozen' } }).remote(0)) as ActorHandle<Counter>;
  process.kill(gcs.pid, 'SIGSTOP');
  let early: Promise<number[]>;
  try {
    early = Promise.all([waiting.call('add', 1), waiting.call('add', 2)]);
    // its bound holds with no GCS to ask: the handle's own timer fails it
    const short = await waiting.options({ timeoutMs: 500 }).call('add', 100).catch((e: unknown) => e);
    assert.is((short as { code?: string }).code, 'ACTOR_UNAVAILABLE');
    assert.is((short as { state?: string }).state, 'PENDING');
  } finally {
    process.kill(gcs.pid, 'SIGCONT');
  }
  raylets.push(await spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', 'n5', '--num-cpus', '1', '--labels', 'stage=frozen']));
  assert.equal(await early, [1, 3]);
  assert.is(await waiting.call('get'), 3, 'each ran once; the one that timed out never ran');
  await waiting.kill();
});

/** Resolves once process `pid` is gone. */
const gone = (pid: number): Promise<true> =>
  until(`process ${pid} gone`, () => {
    try {
      process.kill(pid, 0);
      return undefined;
    } catch {
      return true;
    }
  });

test('calls with retries made after an actor\'s host died while no GCS ran are sent again until the next GCS restarts it; each runs once, in call order', async () => {
  const handle = (await cluster.actor(JournalActor).options({ isolation: 'process', maxRestarts: -1, maxTaskRetries: -1 }).remote()) as ActorHandle<Journal>;
  await handle.ready({ timeoutMs: WAIT_MS });
  assert.is(await handle.call('append', 'before'), 1);
  const hostPid = (await handle.call('where')).pid;
  await gcs.crash();
  let calls: Promise<number>[];
  try {
    await handle.call('exit');
    await gone(hostPid);
    // the handle still knows the actor ALIVE: no responder, so each is sent again (call-resend.ts)
    calls = ['c1', 'c2', 'c3'].map((c) => handle.call('append', c));
    for (const call of calls) call.catch(() => undefined); // failed or not, Promise.all below reports it
    const short = await handle.options({ timeoutMs: 400 }).call('append', 'short').catch((e: unknown) => e);
    assert.instance(short, ActorUnavailableError, `the short call failed typed when its time was up: ${String(short)}`);
    assert.is((short as ActorUnavailableError).state, 'ALIVE', 'as the handle last heard of it');
  } finally {
    gcs = await startGcs();
  }
  assert.equal(await Promise.all(calls), [1, 2, 3], 'answered by the new incarnation, in call order');
  assert.equal(await handle.call('journal'), ['c1', 'c2', 'c3'], 'each ran once; the short call never ran');
  const info = await handle.info();
  assert.equal([info.state, info.numRestarts], ['ALIVE', 1], 'restarted once');
  await handle.kill();
});

/**
 * Calls waiting at an actor's restart gate (it is PENDING: its restart fits no node) while the GCS
 * goes away (`stop`: SIGKILL or SIGSTOP) and comes back (`resume`). Once a node fits, the actor is
 * restarted once and each call runs once, in call order; a call whose time ran out while no GCS
 * answered never runs.
 */
async function gateThroughGcsOutage(tag: string, stop: () => Promise<void>, resume: () => Promise<void>): Promise<void> {
  const nodes = await cluster.nodes();
  const [first, second] = ['n1', 'n2'].map((name) => nodes.find((n) => n.name === name && n.state === 'ALIVE')!.nodeId);
  await cluster.setNodeLabels(first, { set: { gate: tag } });
  const handle = (await cluster.actor(JournalActor).options({ isolation: 'process', labelSelector: { gate: tag }, maxRestarts: -1, maxTaskRetries: -1 }).remote()) as ActorHandle<Journal>;
  assert.is((await handle.ready({ timeoutMs: WAIT_MS })).nodeId, first);
  assert.is(await handle.call('append', 'before'), 1);
  await cluster.setNodeLabels(first, { remove: ['gate'] }); // its restart fits no node now
  await handle.call('exit');
  await until('the actor PENDING after its host exited', async () => {
    const info = await handle.info();
    return info.state === 'PENDING' && info.numRestarts === 1 ? info : undefined;
  });
  const calls = ['c1', 'c2', 'c3'].map((c) => handle.call('append', c));
  for (const call of calls) call.catch(() => undefined); // failed or not, Promise.all below reports it
  const gate = (handle as unknown as { gate: { waiting: number; shut: boolean } }).gate;
  await until('three calls waiting at the restart gate', () => (gate.shut && gate.waiting === 3 ? true : undefined));
  await stop();
  let resumed = false;
  try {
    const short = await handle.options({ timeoutMs: 400 }).call('append', 'short').catch((e: unknown) => e);
    assert.is((short as { code?: string }).code, 'TIMEOUT', `the short call failed: ${String(short)}`);
    assert.is(gate.waiting, 3, 'the short call left the gate');
  } finally {
    await resume();
    resumed = true;
  }
  assert.ok(resumed);
  await cluster.setNodeLabels(second, { set: { gate: tag } });
  assert.equal(await Promise.all(calls), [1, 2, 3], 'answered by the new incarnation, in call order');
  assert.equal(await handle.call('journal'), ['c1', 'c2', 'c3'], 'each ran once; the short call never ran');
  const info = await handle.info();
  assert.equal([info.state, info.nodeId, info.numRestarts], ['ALIVE', second, 1], 'restarted once, where it fits');
  await handle.kill();
  await cluster.setNodeLabels(second, { remove: ['gate'] });
}

test('calls with retries waiting at a restarting actor\'s gate ride through a GCS killed and started again; once a node fits, each runs once, in call order', async () => {
  await gateThroughGcsOutage(
    'killed',
    () => gcs.crash(),
    async () => {
      gcs = await startGcs();
    },
  );
});

test('calls with retries waiting at a restarting actor\'s gate ride through a frozen GCS (SIGSTOP, then SIGCONT); once a node fits, each runs once, in call order', async () => {
  const pid = gcs.pid;
  await gateThroughGcsOutage(
    'frozen',
    async () => {
      process.kill(pid, 'SIGSTOP');
    },
    async () => {
      process.kill(pid, 'SIGCONT');
    },
  );
});

test.run();
