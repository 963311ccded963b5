// The driver API on the memory transport: the whole cluster in this process.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { InvalidOptionError, InvalidResourceError, InvalidSelectorError, NodeNotFoundError, labelIn, nodeAffinity, nodeIdAffinity } from '../../../lib/index.ts';
import { connectMemoryBus } from '../../../runtime/bus/memory.ts';
import { lookupMemoryBroker } from '../../../runtime/client/memory-registry.ts';
import {
  ActorArgumentError,
  ActorDiedError,
  ActorUnavailableError,
  connect,
  startLocalCluster,
  type ActorInfo,
  type ClusterEvent,
  type LocalCluster,
} from '../../../runtime/index.ts';
import { CounterActor } from '../../fixtures/client/actors.ts';
import { coreFlowSuite } from './core-flow.ts';

const memory = (nodes = [{ name: 'm1', resources: { CPU: 2 } }, { name: 'm2', resources: { CPU: 2 }, labels: { region: 'us' } }]) =>
  startLocalCluster({ transport: 'memory', nodes });

coreFlowSuite('core flow (memory transport)', () => memory()).run();

let local: LocalCluster;
test.before(async () => {
  local = await memory();
});
test.after(async () => {
  await local?.stop();
});

test('the memory cluster has an in-process address a second client can connect to', async () => {
  assert.is(local.transport, 'memory');
  assert.match(local.address, /^memory:\/\/[0-9a-f]+$/);
  const other = await connect({ address: local.address });
  assert.is((await other.nodes()).length, 2);
  await other.close();
  const gone = await connect({ address: 'memory://nope' }).catch((e: unknown) => e);
  assert.is((gone as { code: string }).code, 'CONNECTION_FAILED');
});

test('bad options are typed errors at the call, and nothing is sent to the GCS', async () => {
  const spy = connectMemoryBus(lookupMemoryBroker(local.address)!);
  let sent = 0;
  spy.subscribe('orrery.default.gcs.register_actor', () => void sent++);
  const cases: [string, Record<string, unknown>, new (...a: never[]) => Error, RegExp][] = [
    ['negative CPUs', { numCpus: -1 }, InvalidOptionError, /numCpus/],
    ['a bad custom resource', { resources: { 'no way': 1 } }, InvalidResourceError, /no way/],
    ['a bad selector value', { labelSelector: { region: 'in(us' } }, InvalidSelectorError, /region/],
    ['an unknown strategy', { schedulingStrategy: 'NEAREST' }, InvalidOptionError, /schedulingStrategy/],
    ['a misspelt option', { numCPUs: 2 }, InvalidOptionError, /numCPUs/],
    ['maxRestarts below -1', { maxRestarts: -2 }, InvalidOptionError, /maxRestarts/],
    ['maxConcurrency 0', { maxConcurrency: 0 }, InvalidOptionError, /maxConcurrency/],
    ['a reserved actor label', { labels: { 'orrery.io/x': 'y' } }, Error, /orrery\.io/],
    ['an empty name', { name: '' }, InvalidOptionError, /name/],
  ];
  for (const [what, opts, type, pattern] of cases) {
    const err = await local.cluster.actor(CounterActor).options(opts as never).remote().catch((e: unknown) => e);
    assert.instance(err, type, what);
    assert.match((err as Error).message, pattern, what);
  }
  await spy.flush();
  assert.is(sent, 0, 'no register_actor was sent');
  await spy.close();
});

test('constructor arguments that cannot be sent are ActorArgumentError at remote(), with the path, and nothing is sent', async () => {
  const spy = connectMemoryBus(lookupMemoryBroker(local.address)!);
  let sent = 0;
  spy.subscribe('orrery.default.gcs.register_actor', () => void sent++);
  let deep: unknown = 0;
  for (let i = 0; i < 2000; i++) deep = [deep];
  const cases: [string, unknown, RegExp][] = [
    ['nested 2,000 deep', deep, /constructor argument 0 of actor \S+ cannot be sent at (\[0\])+: nested deeper than 512 levels/],
    ['a Map', { cache: new Map([[1, 2]]) }, /at cache: a Map cannot be sent as it is/],
    ['a function', { onTick: () => 1 }, /at onTick: a function \(onTick\) cannot be sent/],
  ];
  for (const [what, arg, pattern] of cases) {
    const err = await (local.cluster.actor(CounterActor) as unknown as { remote(...a: unknown[]): Promise<unknown> }).remote(arg).catch((e: unknown) => e);
    assert.instance(err, ActorArgumentError, what);
    assert.is((err as ActorArgumentError).code, 'INVALID_ARGUMENT', what);
    assert.match((err as Error).message, pattern, what);
  }
  await spy.flush();
  assert.is(sent, 0, 'no register_actor was sent');
  await spy.close();
});

test('options merge over the class defaults, and later options() over earlier ones', async () => {
  const nodes = await local.cluster.nodes();
  const m2 = nodes.find((n) => n.name === 'm2')!;
  const pinned = await local.cluster
    .actor(CounterActor)
    .options({ numCpus: 2, schedulingStrategy: nodeIdAffinity(nodes.find((n) => n.name === 'm1')!.nodeId) })
    .options({ schedulingStrategy: nodeAffinity(labelIn('region', ['us'])) })
    .remote();
  const info = await pinned.ready({ timeoutMs: 5000 });
  assert.is(info.nodeId, m2.nodeId);
  await pinned.kill();
});

test('a hard node-id affinity to an unknown node is NodeNotFoundError at remote()', async () => {
  const err = await local.cluster.actor(CounterActor).options({ schedulingStrategy: nodeIdAffinity('feedfacefeedface') }).remote().catch((e: unknown) => e);
  assert.instance(err, NodeNotFoundError);
});

test('an unplaceable actor stays PENDING with the reason; scheduleFailed$ and events$ say why; calls made meanwhile wait for it; state$ follows it to ALIVE', async () => {
  const failed = firstValueFrom(local.cluster.scheduleFailed$);
  const events: ClusterEvent[] = [];
  const all = local.cluster.events$.subscribe((e) => events.push(e));
  const handle = await local.cluster.actor(CounterActor).options({ labelSelector: { region: 'eu' } }).remote();
  const event = await failed;
  assert.is(event.type, 'schedule_failed');
  assert.equal(event.target, { kind: 'actor', id: handle.actorId });
  assert.is(event.reason, 'constraints');
  assert.is(event.message, '0/2 nodes are available: 2 node(s) didn\'t match label selector region in (eu).');
  assert.is(event.nodes.length, 2);
  assert.type(event.time, 'number');

  const info = await handle.info();
  assert.is(info.state, 'PENDING');
  assert.is(info.pendingReason, event.message);
  // calls made before it is alive wait for it, in call order, each up to its own timeout
  const early = Promise.all([handle.call('add', 2), handle.call('add', 3), handle.call('get')]);
  const short = await handle.options({ timeoutMs: 50 }).call('get').catch((e: unknown) => e);
  assert.instance(short, ActorUnavailableError, 'a call whose timeout passes before it is alive');
  assert.is((short as ActorUnavailableError).state, 'PENDING');
  assert.is((short as ActorUnavailableError).reason, event.message, 'it says why the actor waits');
  assert.ok((short as ActorUnavailableError).message.endsWith(`(PENDING: ${event.message})`), (short as Error).message);
  const notYet = await handle.ready({ timeoutMs: 50 }).catch((e: unknown) => e);
  assert.is((notYet as { code: string }).code, 'TIMEOUT');

  const states = firstValueFrom(handle.state$.pipe(filter((i) => i.state === 'ALIVE' || i.state === 'DEAD'), take(1)));
  const seen: ActorInfo[] = [];
  let firstSeen!: () => void;
  const gotFirst = new Promise<void>((resolve) => (firstSeen = resolve));
  const follow = handle.state$.subscribe((i) => {
    seen.push(i);
    firstSeen();
  });
  await gotFirst;
  const added = await local.addNode({ name: 'eu1', labels: { region: 'eu' } });
  assert.is(added.state, 'ALIVE');
  assert.is(added.labels.region, 'eu');
  assert.equal(added.resources.total, { CPU: 1 });
  const alive = await states;
  assert.is(alive.state, 'ALIVE');
  assert.is(alive.nodeId, added.nodeId);
  assert.equal(await early, [2, 5, 5], 'the early calls ran once each, in the order they were made');
  assert.is(await handle.call('get'), 5, 'the short one did not run');
  follow.unsubscribe();
  const order = seen.map((i) => i.state);
  assert.is(order[0], 'PENDING');
  assert.is(order[order.length - 1], 'ALIVE');
  assert.ok(order.every((s, i) => i === 0 || s !== order[i - 1]), `one emission per change: ${order.join(' → ')}`);
  all.unsubscribe();
  assert.ok(events.some((e) => e.type === 'node_added' && e.node.nodeId === added.nodeId));
  assert.ok(events.some((e) => e.type === 'actor_state' && e.actor.actorId === handle.actorId && e.actor.state === 'ALIVE'));
  await handle.kill();
});

test('setNodeLabels and setNodeTaints change a node, publish events, and unblock a waiting actor', async () => {
  const m1 = (await local.cluster.nodes()).find((n) => n.name === 'm1')!;
  const waiting = await local.cluster.actor(CounterActor).options({ labelSelector: { tier: 'gold' } }).remote();
  assert.is((await waiting.info()).state, 'PENDING');
  const changed = firstValueFrom(local.cluster.events$.pipe(filter((e) => e.type === 'node_labels_changed')));
  const labelled = await local.cluster.setNodeLabels(m1.nodeId, { set: { tier: 'gold' } });
  assert.is(labelled.labels.tier, 'gold');
  assert.is((await changed).type, 'node_labels_changed');
  assert.is((await waiting.ready({ timeoutMs: 5000 })).nodeId, m1.nodeId);
  await waiting.kill();
  const tainted = await local.cluster.setNodeTaints(m1.nodeId, { add: { maintenance: 'true:PreferNoSchedule' } });
  assert.is(tainted.taints.maintenance, 'true:PreferNoSchedule');
  const cleared = await local.cluster.setNodeTaints(m1.nodeId, { remove: ['maintenance'] });
  assert.equal(cleared.taints, {});
  await local.cluster.setNodeLabels(m1.nodeId, { remove: ['tier'] });
  const reserved = await local.cluster.setNodeLabels(m1.nodeId, { set: { 'orrery.io/x': 'y' } }).catch((e: unknown) => e);
  assert.match((reserved as Error).message, /orrery\.io/);
  const badTaint = await local.cluster.setNodeTaints(m1.nodeId, { add: { k: 'v:Sometimes' } }).catch((e: unknown) => e);
  assert.is((badTaint as { code: string }).code, 'INVALID_TAINT');
  const noNode = await local.cluster.setNodeLabels('feedfacefeedface', { set: { a: 'b' } }).catch((e: unknown) => e);
  assert.instance(noNode, NodeNotFoundError);
});

test('kill({ noRestart: false }) restarts the actor; with maxTaskRetries a call waits for it instead of failing', async () => {
  const retrying = await local.cluster.actor(CounterActor).options({ maxRestarts: 2, maxTaskRetries: -1 }).remote(7);
  await retrying.ready({ timeoutMs: 5000 });
  assert.is(await retrying.call('add', 1), 8);
  await retrying.kill({ noRestart: false });
  assert.is(await retrying.call('get'), 7, 'the restarted instance was constructed again with its arguments');
  const info = await retrying.info();
  assert.is(info.state, 'ALIVE');
  assert.is(info.numRestarts, 1);

  await retrying.kill();
});

test('state$ completes after DEAD; ready() on a dead actor rejects with ActorDiedError', async () => {
  const handle = await local.cluster.actor(CounterActor).remote();
  await handle.ready({ timeoutMs: 5000 });
  const history = firstValueFrom(handle.state$.pipe(toArray()));
  await handle.kill();
  const states = (await history).map((i) => i.state);
  assert.is(states[states.length - 1], 'DEAD');
  const err = await handle.ready().catch((e: unknown) => e);
  assert.instance(err, ActorDiedError);
});

test('killNode: the node dies abruptly; its actors die and calls to them fail', async () => {
  const node = await local.addNode({ name: 'doomed', labels: { role: 'doomed' } });
  const handle = await local.cluster.actor(CounterActor).options({ labelSelector: { role: 'doomed' } }).remote();
  await handle.ready({ timeoutMs: 5000 });
  const dead = firstValueFrom(local.cluster.events$.pipe(filter((e) => e.type === 'node_dead' && e.node.nodeId === node.nodeId)));
  await local.killNode(node.nodeId);
  await dead;
  const err = await handle.call('get').catch((e: unknown) => e);
  assert.instance(err, ActorDiedError);
  const unknownNode = await local.killNode(node.nodeId).catch((e: unknown) => e);
  assert.instance(unknownNode, NodeNotFoundError);
});

test('ready() right after remote() needs no get_actor: remote() followed the events from before registration', async () => {
  const spy = connectMemoryBus(lookupMemoryBroker(local.address)!);
  let asked = 0;
  spy.subscribe('orrery.default.gcs.get_actor', () => void asked++);
  await spy.flush();
  // ready() right after each remote(): remote()'s watch ends once the actor is ALIVE (then ready()
  // asks get_actor), so waiting for all 20 remote()s first would let the first actors get there before
  // their ready() — under load, often
  const created = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const handle = await local.cluster.actor(CounterActor).remote();
      return { handle, info: await handle.ready({ timeoutMs: 5000 }) };
    }),
  );
  const handles = created.map((c) => c.handle);
  assert.ok(created.every(({ info }) => info.state === 'ALIVE' && info.nodeId !== undefined));
  await spy.flush();
  assert.is(asked, 0, 'no get_actor');
  // every state from registration on, in order, through state$ of a handle made by remote()
  const slow = await local.cluster.actor(CounterActor).options({ labelSelector: { region: 'nowhere' }, maxRestarts: 1 }).remote();
  const seen = firstValueFrom(slow.state$.pipe(take(2), toArray()));
  // before the node exists, for the same reason: the actor may be ALIVE by the time addNode() resolves
  const ready = slow.ready({ timeoutMs: 5000 });
  ready.catch(() => undefined); // awaited below; not an unhandled rejection if an assertion fails first
  const node = await local.addNode({ name: 'somewhere', labels: { region: 'nowhere' } });
  assert.equal((await seen).map((i) => i.state), ['PENDING', 'SCHEDULED']);
  assert.is((await ready).nodeId, node.nodeId);
  await spy.flush();
  assert.is(asked, 0, 'still no get_actor');
  // once the actor was ALIVE, remote()'s watch has ended: a later state$ asks the GCS, and a kill
  // and restart after that are seen as they happen
  await slow.kill({ noRestart: false });
  const again = await slow.ready({ timeoutMs: 5000 });
  assert.is(again.numRestarts, 1);
  await spy.flush();
  assert.ok(asked >= 1, 'a state$ after ALIVE asks get_actor');
  await Promise.all([...handles, slow].map((h) => h.kill()));
  await local.killNode(node.nodeId);
  await spy.close();
});

test('calls right after remote() wait on remote()\'s watch, unsent: answered once the actor is ALIVE, with no get_actor asked', async () => {
  const spy = connectMemoryBus(lookupMemoryBroker(local.address)!);
  let asked = 0;
  spy.subscribe('orrery.default.gcs.get_actor', () => void asked++);
  await spy.flush();
  // nothing can place it until the node below joins, so the calls are made while it is PENDING
  const handle = await local.cluster.actor(CounterActor).options({ labelSelector: { zone: 'later' } }).remote(10);
  const calls = Promise.all([handle.call('add', 1), handle.call('add', 2)]);
  const node = await local.addNode({ name: 'later', labels: { zone: 'later' } });
  assert.equal(await calls, [11, 13]);
  await spy.flush();
  assert.is(asked, 0, 'no get_actor: the watch knew the actor was being created');
  await handle.kill();
  await local.killNode(node.nodeId);
  await spy.close();
});

test('close() completes events$ and state$; a pending ready() rejects with BUS_CLOSED', async () => {
  const client = await connect({ address: local.address });
  // detached: close() would kill an actor the job owns (the next test), and ready() would see it die
  const waiting = await client.actor(CounterActor).options({ labelSelector: { region: 'mars' }, lifetime: 'detached' }).remote();
  await waiting.info();
  const events = firstValueFrom(client.events$.pipe(toArray()));
  const states = firstValueFrom(waiting.state$.pipe(toArray()));
  const ready = waiting.ready().catch((e: unknown) => e);
  await client.close();
  assert.ok(Array.isArray(await events));
  assert.ok((await states).every((i) => i.state === 'PENDING'));
  assert.is((await ready as { code: string }).code, 'BUS_CLOSED');
});

test('close() kills the actors the connection owns, with a cause naming its job, and frees their names; a detached one lives on', async () => {
  const client = await connect({ address: local.address, job: { name: 'spec' } });
  const jobId = client.jobId!;
  assert.type(jobId, 'string');
  const owned = await client.actor(CounterActor).options({ name: 'owned-web' }).remote();
  const detached = await client.actor(CounterActor).options({ name: 'detached-web', lifetime: 'detached' }).remote();
  await Promise.all([owned.ready(), detached.ready()]);
  const listed = (await client.jobs()).find((j) => j.jobId === jobId)!;
  assert.is(listed.state, 'RUNNING');
  assert.is(listed.name, 'spec');
  assert.is(listed.pid, process.pid);
  await client.close();

  const other = await connect({ address: local.address });
  try {
    const dead = await other.actors();
    const info = dead.find((a) => a.actorId === owned.actorId)!;
    assert.is(info.state, 'DEAD');
    assert.match(info.deathCause!, new RegExp(`job ${jobId} finished`));
    assert.is(dead.find((a) => a.actorId === detached.actorId)!.state, 'ALIVE');
    const job = (await other.jobs()).find((j) => j.jobId === jobId)!;
    assert.is(job.state, 'FINISHED');
    assert.is(job.endReason, 'closed');
    // the name is free again
    const again = await other.actor(CounterActor).options({ name: 'owned-web' }).remote();
    await again.ready();
    await (await other.getActor('detached-web')).kill();
  } finally {
    await other.close();
  }
});

test('connect({ job: false }) is no job: nothing registered, what it creates is owned by nobody', async () => {
  const tool = await connect({ address: local.address, job: false });
  try {
    assert.is(tool.jobId, undefined);
    const a = await tool.actor(CounterActor).remote();
    assert.is((await a.info()).jobId, undefined);
    await a.kill();
  } finally {
    await tool.close();
  }
});

test("on the memory transport a job beats on the event loop, whatever it asks: its GCS shares that loop", async () => {
  const client = await connect({ address: local.address, job: { name: 'loop', heartbeat: 'thread' } });
  try {
    await client.jobs(); // a round trip: the job has registered by the time the GCS answers a later request
    await client.actor(CounterActor).options({ lifetime: 'detached' }).remote(0).then((a) => a.kill());
    assert.is((client as unknown as { job: { heartbeat?: string } }).job.heartbeat, 'loop');
  } finally {
    await client.close();
  }
});

test('a bad lifetime or job option is refused at the call', async () => {
  const refused = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as InvalidOptionError);
  assert.is((await refused(connect({ address: local.address, job: { nom: 'x' } as never })))?.option, 'job.nom');
  const heartbeat = await refused(connect({ address: local.address, job: { heartbeat: 'process' as never } }));
  assert.is(heartbeat?.option, 'job.heartbeat');
  assert.match(heartbeat!.message, /expected 'thread' or 'loop'/);
  assert.is((await refused(local.cluster.actor(CounterActor).options({ lifetime: 'forever' as never }).remote()))?.option, 'lifetime');
  assert.is((await refused(local.cluster.placementGroup({ bundles: [{ CPU: 1 }], lifetime: 'always' as never })))?.option, 'lifetime');
});

test.run();
