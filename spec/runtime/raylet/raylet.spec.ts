import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Packr } from 'msgpackr';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { encode, encodedSize, PROTOCOL_VERSION } from '../../../protocols/codec.ts';
import type { RegisterNode } from '../../../protocols/messages/node.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { RayletVerb, subjects } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { CodeLoadError, CodeSourceRefusedError, RemoteError, specializeError } from '../../../runtime/errors.ts';
import { startRaylet, type RayletHandle, type RayletOptions } from '../../../runtime/raylet/index.ts';
import { call, createSpec, rejection } from '../worker/support.ts';
import { FIXTURES_URL } from '../../fixtures/actors.ts';
import { StubGcs } from './stub-gcs.ts';

/** Raw msgpack, as a peer that skips the codec's encode would send it. */
const packr = new Packr({ useRecords: false, moreTypes: false });

const s = subjects('default');

interface World {
  broker: MemoryBroker;
  bus: Bus;
  gcs: StubGcs;
  raylet: RayletHandle;
}

async function world(opts: Partial<RayletOptions> = {}): Promise<World> {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  const bus = connectMemoryBus(broker);
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, nodeIp: '10.0.0.7', ...opts });
  return { broker, bus, gcs, raylet };
}

/** Requests a raylet verb and returns the reply value, or throws the (specialized) wire error. */
async function ask(bus: Bus, nodeId: string, verb: RayletVerb, data: Uint8Array): Promise<unknown> {
  const msg = await bus.request(s.raylet(nodeId, verb), data, { timeoutMs: 5000 });
  try {
    return decodeReply(msg.data, { value: unknown() });
  } catch (err) {
    throw err instanceof OrreryError ? specializeError(err) : err;
  }
}

const create = (w: World, spec: ReturnType<typeof createSpec>) => ask(w.bus, w.raylet.nodeId, 'create_actor', encode('create_actor', spec));
/** kill_actor's answer, its secret checked (the GCS takes no kill answer without it: runtime/gcs/raylets.ts) and set aside. */
const kill = async (w: World, actorId: string, incarnation = 0) => {
  const { secret, ...value } = (await ask(w.bus, w.raylet.nodeId, 'kill_actor', encode('raylet_kill_actor', { actorId, incarnation }))) as { killed: boolean; secret?: string };
  assert.is(secret, w.gcs.registrations.at(-1)?.secret, 'the kill answer carries the secret the node registered with');
  return value;
};

test('registers with built-in and user labels, taints and resources in units', async () => {
  const w = await world({
    nodeName: 'gpu-1',
    labels: { region: 'eu', 'example.com/tier': 'gold' },
    taints: { dedicated: 'ml', pressure: 'high:PreferNoSchedule', quiet: 'yes:NoSchedule' },
    resources: { CPU: 4, GPU: 1, my_res: 2.5, memory: 1024 },
  });
  const reg = w.gcs.registrations[0];
  assert.is(w.gcs.registrations.length, 1);
  assert.is(reg.nodeId, w.raylet.nodeId);
  assert.match(reg.nodeId, /^[0-9a-f]{16}$/);
  assert.is(reg.name, 'gpu-1');
  assert.is(w.raylet.nodeName, 'gpu-1');
  assert.equal(reg.labels, {
    region: 'eu',
    'example.com/tier': 'gold',
    'orrery.io/node-id': w.raylet.nodeId,
    'orrery.io/node-name': 'gpu-1',
    'orrery.io/node-ip': '10.0.0.7',
  });
  assert.equal(reg.taints, { dedicated: 'ml', pressure: 'high:PreferNoSchedule', quiet: 'yes' });
  assert.equal(reg.resources.total, { CPU: 40_000, GPU: 10_000, my_res: 25_000, memory: 1024 });
  assert.equal(reg.resources.available, reg.resources.total);
  assert.equal(reg.address, { ip: '10.0.0.7', hostname: reg.address.hostname, pid: process.pid });
  await w.raylet.stop();
});

test('stop() unregisters with the node secret once no actor of the node answers; a GCS that does not answer delays the stop by at most the request timeout', async () => {
  for (const gcsAnswers of [true, false]) {
    const w = await world({ requestTimeoutMs: 300 });
    const spec = createSpec('Counter');
    await create(w, spec);
    assert.is(await call(w.bus, spec.actorId, 'get'), 0);
    w.gcs.muteUnregister = !gcsAnswers;
    let answeredThen: boolean | undefined;
    w.gcs.onUnregister = () => (answeredThen = w.broker.hasInterest(s.actorCall(spec.actorId)));
    const started = performance.now();
    await w.raylet.stop();
    const took = performance.now() - started;
    assert.equal(
      w.gcs.unregistered.map(({ nodeId, secret }) => ({ nodeId, secret })),
      [{ nodeId: w.raylet.nodeId, secret: w.gcs.registrations[0].secret }],
      `gcs answers: ${gcsAnswers}`,
    );
    assert.match(w.gcs.unregistered[0]!.nonce ?? '', /^[A-Za-z0-9_-]{22}$/, 'with a nonce for the answer’s proof');
    assert.is(answeredThen, false, 'the actor no longer answers when the GCS hears the node is gone');
    // Node.js fires a timer against the event loop's cached clock, taken when the loop turn began,
    // so a 300-ms timeout can end up to a millisecond before 300 ms of performance.now() (a CI run on
    // a loaded machine measured 299.x): the lower bound allows that much
    if (!gcsAnswers) assert.ok(took >= 299 && took < 5_000, `waited for the unanswered request, then stopped (${took.toFixed(1)} ms)`);
  }
});

test('CPU defaults to the machine parallelism; defaults name the node and find its IP', async () => {
  const { availableParallelism } = await import('node:os');
  const w = await world({ nodeIp: undefined });
  const reg = w.gcs.registrations[0];
  assert.equal(reg.resources.total, { CPU: availableParallelism() * 10_000 });
  assert.ok(reg.name.length > 0);
  assert.match(reg.labels['orrery.io/node-ip'], /^\d+\.\d+\.\d+\.\d+$/);
  await w.raylet.stop();
});

test('subscribes its own subjects before it registers', async () => {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  const interest: Record<string, boolean> = {};
  gcs.onRegister = (body) => {
    for (const verb of Object.values(RayletVerb)) interest[verb] = broker.hasInterest(s.raylet(body.nodeId, verb));
  };
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' } });
  // load is what the raylet publishes for the others, not a request it serves
  assert.equal(interest, Object.fromEntries(Object.values(RayletVerb).map((v) => [v, v !== 'load'])));
  await raylet.stop();
});

test('bad labels, taints or resources are refused before anything is sent', async () => {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  const cases: [Partial<RayletOptions>, string][] = [
    [{ labels: { 'orrery.io/node-id': 'x' } }, 'INVALID_LABEL'],
    [{ labels: { 'bad key': 'x' } }, 'INVALID_LABEL'],
    [{ taints: { t: 'v:Sometimes' } }, 'INVALID_TAINT'],
    [{ resources: { CPU: -1 } }, 'INVALID_RESOURCE'],
    [{ resources: { 'no spaces': 1 } }, 'INVALID_RESOURCE'],
    [{ nodeName: 'not a label value!' }, 'INVALID_LABEL'],
    [{ cluster: 'a.b' }, 'PROTOCOL'],
  ];
  for (const [opts, code] of cases) {
    const err = await rejection(startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, ...opts }));
    assert.is(err.code, code, JSON.stringify(opts));
  }
  assert.is(gcs.registrations.length, 0);
});

test('heartbeats every heartbeatMs of the reply, with a growing seq and the available resources', async () => {
  const w = await world({ resources: { CPU: 2 } });
  await w.gcs.until(() => w.gcs.heartbeats.length >= 4, '4 heartbeats');
  const seqs = w.gcs.heartbeats.map((h) => h.seq);
  assert.equal(seqs.slice(0, 4), [1, 2, 3, 4]);
  assert.ok(w.gcs.heartbeats.every((h) => h.nodeId === w.raylet.nodeId));
  assert.equal(w.gcs.lastHeartbeat()!.available, { CPU: 20_000 });
  await w.raylet.stop();
});

test('registers again with the same node id and the actors it runs when a heartbeat answer says known:false', async () => {
  const w = await world();
  const spec = createSpec('Counter');
  await create(w, spec);
  assert.is(w.gcs.registrations[0].running?.actors.length ?? 0, 0);
  await w.gcs.until(() => w.gcs.heartbeats.length >= 1, 'a heartbeat');
  w.gcs.known = false;
  await w.gcs.until(() => w.gcs.registrations.length === 2, 'a second registration');
  assert.is(w.gcs.registrations[1].nodeId, w.raylet.nodeId);
  // the actor keeps running and is named, so a restarted GCS can keep it (or have it killed)
  assert.equal(w.gcs.registrations[1].running, { actors: [{ actorId: spec.actorId, incarnation: 0 }], bundles: [] });
  const seqBefore = w.gcs.lastHeartbeat()!.seq;
  await w.gcs.until(() => w.gcs.lastHeartbeat()!.seq > seqBefore, 'a heartbeat after registering again');
  assert.is(w.raylet.stats().actors, 1);
  assert.is(await call(w.bus, spec.actorId, 'get'), 0);
  await w.raylet.stop();
});

/** The actor ids a registration lists, with the parts its batch sent ahead, in the order they came. */
function listedActors(gcs: StubGcs, reg: RegisterNode): string[] {
  const earlier = reg.running?.earlier;
  const parts = earlier === undefined ? [] : gcs.runningParts.filter((p) => p.batch === earlier.batch);
  return [...parts.flatMap((p) => p.actors), ...(reg.running?.actors ?? [])].map((a) => a.actorId);
}

test('a raylet that runs more than one message lists registers again in parts: register_running 0 … n-1 in order, then register_node with the last and `earlier`; every actor listed once', async () => {
  const budget = 600;
  const w = await world({ registrationPartBytes: budget });
  const specs = Array.from({ length: 40 }, () => createSpec('Counter'));
  for (const spec of specs) await create(w, spec);
  assert.equal(w.gcs.runningParts, [], 'the first registration had nothing to list');
  await w.gcs.until(() => w.gcs.heartbeats.length >= 1, 'a heartbeat');
  w.gcs.known = false;
  await w.gcs.until(() => w.gcs.registrations.length === 2, 'a second registration');
  const reg = w.gcs.registrations[1];
  const earlier = reg.running?.earlier;
  assert.ok(earlier !== undefined, 'the last part says how many went ahead');
  const parts = w.gcs.runningParts.filter((p) => p.batch === earlier.batch);
  assert.ok(parts.length >= 2, `40 actors at ~50 bytes each do not fit in ${budget} bytes`);
  assert.is(earlier.parts, parts.length);
  assert.equal(parts.map((p) => p.index), [...parts.keys()], 'parts in order, none twice');
  for (const p of [...parts, { actors: reg.running!.actors, bundles: reg.running!.bundles ?? [] }]) {
    assert.ok(p.actors.length > 0, 'no empty part');
    assert.ok(encodedSize({ actors: p.actors, bundles: p.bundles }) <= budget, 'each part within the budget');
  }
  assert.ok(parts.every((p) => p.secret === reg.secret && p.nodeId === reg.nodeId), 'the parts carry the node and its secret');
  assert.equal(listedActors(w.gcs, reg).sort(), specs.map((x) => x.actorId).sort(), 'every actor once');
  await w.raylet.stop();
});

test('REGISTRATION_INCOMPLETE (the GCS no longer holds the earlier parts: it restarted between them) is tried again: every part again under a new batch', async () => {
  const w = await world({ registrationPartBytes: 600, retryMs: 5 });
  const specs = Array.from({ length: 30 }, () => createSpec('Counter'));
  for (const spec of specs) await create(w, spec);
  let refused = 0;
  w.gcs.onRegister = (body) => {
    if (body.running?.earlier === undefined) return;
    w.gcs.refuse = refused++ === 0 ? new OrreryError('REGISTRATION_INCOMPLETE', 'the GCS holds none of batch x', { detail: { nodeId: body.nodeId } }) : undefined;
  };
  await w.gcs.until(() => w.gcs.heartbeats.length >= 1, 'a heartbeat');
  w.gcs.known = false;
  await w.gcs.until(() => w.gcs.registrations.length === 2, 'the registration taken on the second attempt');
  assert.is(refused, 2, 'refused once, taken the next time');
  const batches = [...new Set(w.gcs.runningParts.map((p) => p.batch))];
  assert.is(batches.length, 2, 'a fresh batch for the second attempt');
  const reg = w.gcs.registrations[1];
  assert.is(reg.running?.earlier?.batch, batches[1]);
  assert.equal(listedActors(w.gcs, reg).sort(), specs.map((x) => x.actorId).sort());
  await waitUntil(() => w.raylet.stats().phase === 'running');
  assert.is(await call(w.bus, specs[0].actorId, 'get'), 0, 'the actors kept running throughout');
  await w.raylet.stop();
});

test('a create or kill carrying an older leader epoch than one heard of is refused STALE_EPOCH and changes nothing', async () => {
  const w = await world();
  w.gcs.epoch = 5;
  const seen = w.gcs.heartbeats.length;
  await w.gcs.until(() => w.gcs.heartbeats.length > seen + 1, 'a heartbeat answered with epoch 5');
  const stale = createSpec('Counter');
  assert.is((await rejection(ask(w.bus, w.raylet.nodeId, 'create_actor', encode('create_actor', { ...stale, epoch: 4 })))).code, 'STALE_EPOCH');
  assert.is(w.raylet.stats().actors, 0);
  // a newer epoch is adopted from the message itself (a new leader may speak before its heartbeat answers)
  const fresh = createSpec('Counter');
  await ask(w.bus, w.raylet.nodeId, 'create_actor', encode('create_actor', { ...fresh, epoch: 6 }));
  const killed = await rejection(ask(w.bus, w.raylet.nodeId, 'kill_actor', encode('raylet_kill_actor', { actorId: fresh.actorId, incarnation: 0, epoch: 5 })));
  assert.is(killed.code, 'STALE_EPOCH');
  assert.is(w.raylet.stats().actors, 1);
  assert.is(await call(w.bus, fresh.actorId, 'get'), 0);
  assert.equal(await kill(w, fresh.actorId), { killed: true }, 'a message without an epoch (a GCS without a lease) is not refused');
  await w.raylet.stop();
});

test('create_actor starts the actor, answers once it is constructed, and leases its resources', async () => {
  const w = await world({ resources: { CPU: 4, GPU: 1 } });
  const spec = createSpec('Counter', { args: [41], resources: { CPU: 15_000, GPU: 10_000 } });
  const { secret, ...value } = (await create(w, spec)) as { actorId: string; incarnation: number; pid: number; secret: string };
  assert.equal(value, { actorId: spec.actorId, incarnation: 0, pid: process.pid });
  assert.is(secret, w.gcs.registrations[0].secret, 'the answer carries the secret the node registered with: no other peer can answer for it');
  assert.is(await call(w.bus, spec.actorId, 'increment'), 42);
  assert.equal(w.raylet.stats().available, { CPU: 25_000, GPU: 0 });
  const n = w.gcs.heartbeats.length;
  await w.gcs.until(() => w.gcs.heartbeats.length > n, 'a heartbeat');
  assert.equal(w.gcs.lastHeartbeat()!.available, { CPU: 25_000, GPU: 0 });
  const context = (await call(w.bus, spec.actorId, 'context')) as { nodeId: string; labels: Record<string, string> };
  assert.is(context.nodeId, w.raylet.nodeId);
  assert.is(context.labels['orrery.io/node-id'], w.raylet.nodeId);

  assert.equal(await kill(w, spec.actorId), { killed: true });
  assert.equal(w.raylet.stats().available, { CPU: 40_000, GPU: 10_000 });
  assert.is((await rejection(call(w.bus, spec.actorId, 'get'))).code, 'NO_RESPONDERS');
  assert.equal(await kill(w, spec.actorId), { killed: false });
  await w.raylet.stop();
});

test('create errors: code that cannot load, and a constructor that throws; nothing stays leased', async () => {
  const w = await world({ resources: { CPU: 1 } });
  const missing = createSpec('Missing', { resources: { CPU: 10_000 } });
  assert.instance(await rejection(create(w, missing)), CodeLoadError);
  const failing = createSpec('Failing', { resources: { CPU: 10_000 } });
  const err = (await rejection(create(w, failing))) as RemoteError;
  assert.instance(err, RemoteError);
  assert.is(err.remoteName, 'RangeError');
  assert.is(err.message, 'cannot build a Failing');
  assert.equal(w.raylet.stats().available, { CPU: 10_000 });
  assert.is(w.raylet.stats().actors, 0);
  await w.raylet.stop();
});

test('the same incarnation twice is one actor; an older one is refused; a newer one replaces it', async () => {
  const w = await world();
  const spec = createSpec('Counter', { incarnation: 1 });
  const [a, b] = await Promise.all([create(w, spec), create(w, spec)]);
  assert.equal(a, b);
  assert.is(await call(w.bus, spec.actorId, 'increment'), 1);
  assert.is((await rejection(create(w, { ...spec, incarnation: 0 }))).code, 'STALE_INCARNATION');
  assert.equal(await kill(w, spec.actorId, 0), { killed: false });
  assert.is(await call(w.bus, spec.actorId, 'increment'), 2);
  await create(w, { ...spec, incarnation: 2 });
  assert.is(await call(w.bus, spec.actorId, 'increment'), 1);
  assert.is(w.raylet.stats().actors, 1);
  assert.equal(await kill(w, spec.actorId, 2), { killed: true });
  await w.raylet.stop();
});

test("isolation 'process' gets a host of its own (in-process with inline hosts)", async () => {
  const w = await world();
  await create(w, createSpec('Counter'));
  await create(w, createSpec('Counter'));
  assert.is(w.raylet.stats().hosts, 1);
  const isolated = createSpec('Counter', { isolation: 'process' });
  await create(w, isolated);
  assert.is(w.raylet.stats().hosts, 2);
  await kill(w, isolated.actorId);
  assert.is(w.raylet.stats().hosts, 1);
  await w.raylet.stop();
});

test('malformed messages on every raylet subject get typed errors and change nothing', async () => {
  const w = await world({ resources: { CPU: 2 } });
  const alive = createSpec('Counter', { resources: { CPU: 10_000 } });
  await create(w, alive);
  const before = w.raylet.stats();
  const valid = createSpec('Counter');
  const bodies: [string, Uint8Array][] = [
    ['MALFORMED', new Uint8Array([0xc1])],
    ['MALFORMED', encode('create_actor', valid).slice(0, 10)],
    ['VERSION_MISMATCH', new Uint8Array([0x83, 0xa1, 0x76, 0x07, 0xa1, 0x74, 0xa1, 0x78, 0xa1, 0x62, 0x80])],
    ['UNKNOWN_TYPE', encode('heartbeat', { nodeId: 'x', seq: 1, available: {} })],
    ['TOO_LARGE', new Uint8Array(1024 * 1024 + 1)],
  ];
  const invalid: Record<string, Uint8Array[]> = {
    create_actor: [
      encode('create_actor', { ...valid, maxConcurrency: 0 }),
      encode('create_actor', { ...valid, isolation: 'thread' }),
      encode('create_actor', { ...valid, resources: { CPU: -1 } }),
      encode('create_actor', { ...valid, code: { moduleUrl: '', className: 'Counter', args: [] } }),
      encode('create_actor', { ...valid, labels: { __proto__x: 1 } }),
    ],
    kill_actor: [encode('raylet_kill_actor', { actorId: alive.actorId }), encode('raylet_kill_actor', { actorId: alive.actorId, incarnation: -1 })],
  };
  for (const verb of ['create_actor', 'kill_actor'] as const) {
    const cases: [string, Uint8Array][] = [...bodies, ...invalid[verb].map((b): [string, Uint8Array] => ['INVALID_MESSAGE', b])];
    if (verb === 'kill_actor') cases.push(['UNKNOWN_TYPE', encode('create_actor', valid)]);
    else cases.push(['UNKNOWN_TYPE', encode('raylet_kill_actor', { actorId: alive.actorId, incarnation: 0 })]);
    for (const [code, data] of cases) {
      const err = await rejection(ask(w.bus, w.raylet.nodeId, verb, data));
      assert.is(err.code, code, `${verb}: ${code}`);
    }
    w.bus.publish(s.raylet(w.raylet.nodeId, verb), new Uint8Array([0xc1]));
  }
  // the placement-group verbs decode like the others (their invalid bodies: bundles.spec.ts)
  for (const verb of ['prepare_bundle', 'commit_bundle', 'cancel_bundle'] as const) {
    for (const [code, data] of bodies) assert.is((await rejection(ask(w.bus, w.raylet.nodeId, verb, data))).code, code, `${verb}: ${code}`);
  }
  assert.is((await rejection(ask(w.bus, w.raylet.nodeId, 'lease', new Uint8Array([0xc1])))).code, 'UNSUPPORTED');
  await w.bus.flush();
  const after = w.raylet.stats();
  assert.is(after.actors, before.actors);
  assert.is(after.hosts, before.hosts);
  assert.equal(after.available, before.available);
  assert.is(after.phase, 'running');
  assert.ok(Object.values(after.malformed).reduce((a, b) => a + b, 0) >= 2 * 5 + 7 + 2);
  assert.is(await call(w.bus, alive.actorId, 'increment'), 1);
  await w.raylet.stop();
});

test('waits for a GCS that is not there yet, then registers', async () => {
  const broker = new MemoryBroker();
  const probe = connectMemoryBus(broker);
  let attempts = 0;
  probe.subscribe(s.gcs('register_node'), () => void attempts++);
  const starting = startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, retryMs: 5, requestTimeoutMs: 20 });
  await waitUntil(() => attempts >= 3);
  const gcs = new StubGcs(connectMemoryBus(broker));
  const raylet = await starting;
  assert.is(gcs.registrations[0].nodeId, raylet.nodeId);
  assert.is(raylet.stats().registrations, 1);
  await raylet.stop();
});

test('a registration the GCS refuses rejects startRaylet with its code and stops the raylet', async () => {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  gcs.refuse = new OrreryError('INVALID_LABEL', 'no thanks');
  let nodeId = '';
  gcs.onRegister = (body) => (nodeId = body.nodeId);
  const err = await rejection(startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' } }));
  assert.is(err.code, 'INVALID_LABEL');
  assert.is(err.message, 'no thanks');
  await waitUntil(() => !broker.hasInterest(s.raylet(nodeId, 'create_actor')));
});

test('a node name a live node holds (NODE_NAME_TAKEN) is tried again until it is free, said once in the log', async () => {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  gcs.refuse = new OrreryError('NODE_NAME_TAKEN', 'taken', { detail: { name: 'web', holder: 'old0000000000001' } });
  let attempts = 0;
  gcs.onRegister = () => {
    if (++attempts === 3) gcs.refuse = undefined; // the holder was declared dead
  };
  const logs: string[] = [];
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, nodeName: 'web', retryMs: 5, log: (l) => logs.push(l) });
  assert.is(attempts, 3);
  assert.is(raylet.stats().registrations, 1);
  const said = logs.filter((l) => l.includes('NODE_NAME_TAKEN') || l.includes('belongs to live node'));
  assert.is(said.length, 1, 'said once, not per attempt');
  assert.match(said[0], /the node name "web" belongs to live node old0000000000001; .*--node-name/);
  await raylet.stop();
});

test('unanswered heartbeats move to reconnecting; the GCS answering again moves back to running', async () => {
  const broker = new MemoryBroker();
  let gcs = new StubGcs(connectMemoryBus(broker));
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, requestTimeoutMs: 50 });
  await gcs.until(() => gcs.heartbeats.length >= 1, 'a heartbeat');
  gcs.close();
  await waitUntil(() => raylet.stats().phase === 'reconnecting');
  const registrations = gcs.registrations.length;
  gcs = new StubGcs(connectMemoryBus(broker));
  await gcs.until(() => gcs.heartbeats.length >= 1, 'a heartbeat to the new GCS');
  await waitUntil(() => raylet.stats().phase === 'running');
  assert.is(registrations, 1);
  assert.is(gcs.registrations.length, 0);
  await raylet.stop();
});

test('stop ends heartbeats, subjects and actors', async () => {
  const w = await world();
  const spec = createSpec('Counter');
  await create(w, spec);
  await w.raylet.stop();
  assert.equal(await w.raylet.closed, {});
  assert.not.ok(w.broker.hasInterest(s.raylet(w.raylet.nodeId, 'create_actor')));
  assert.not.ok(w.broker.hasInterest(s.actorCall(spec.actorId)));
  const beats = w.gcs.heartbeats.length;
  await w.gcs.until(() => true);
  await w.bus.flush();
  assert.is(w.gcs.heartbeats.length, beats);
  assert.is(w.raylet.stats().phase, 'stopped');
});

test('crash drops subjects and actors without a word to the GCS', async () => {
  const w = await world();
  const spec = createSpec('Counter');
  await create(w, spec);
  const seen = w.gcs.heartbeats.length + w.gcs.registrations.length + w.gcs.died.length;
  await w.raylet.crash();
  assert.not.ok(w.broker.hasInterest(s.raylet(w.raylet.nodeId, 'kill_actor')));
  assert.is((await rejection(call(w.bus, spec.actorId, 'get'))).code, 'NO_RESPONDERS');
  await w.bus.flush();
  assert.is(w.gcs.heartbeats.length + w.gcs.registrations.length + w.gcs.died.length, seen);
});

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A raylet whose GCS told it a node timeout of 200 ms: lease 120 ms, heartbeats every 20 ms. */
async function fencedWorld(opts: { prove?: boolean } = {}): Promise<World & { actorId: string }> {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  gcs.nodeTimeoutMs = 200;
  gcs.prove = opts.prove ?? false;
  const bus = connectMemoryBus(broker);
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, requestTimeoutMs: 50, retryMs: 5 });
  const w = { broker, bus, gcs, raylet };
  const spec = createSpec('Counter');
  await create(w, spec);
  assert.is(await call(bus, spec.actorId, 'increment'), 1);
  return { ...w, actorId: spec.actorId };
}

/** Resolves once `pass` holds, looked at every few ms; bounded. */
async function polled(what: string, pass: () => boolean): Promise<void> {
  const giveUp = performance.now() + 10_000;
  while (!pass()) {
    if (performance.now() > giveUp) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('fence: heartbeats unanswered past the lease stop its actors answering; an acknowledged one brings them back', async () => {
  const w = await fencedWorld();
  try {
    w.gcs.mute = true;
    await w.gcs.until(() => w.raylet.stats().fenced, 'the raylet to fence itself');
    const err = (await rejection(call(w.bus, w.actorId, 'get'))) as { code?: string };
    assert.is(err.code, 'NO_RESPONDERS');
    w.gcs.mute = false;
    await w.gcs.until(() => !w.raylet.stats().fenced, 'the fence to lift');
    assert.is(await call(w.bus, w.actorId, 'increment'), 2, 'the same incarnation, its state kept');
  } finally {
    await w.raylet.stop();
    w.gcs.close();
  }
});

test('fence: once the GCS has proven its answers, heartbeat answers without a proof (a peer answering in its place) acknowledge nothing: the raylet fences; proven ones lift it', async () => {
  const w = await fencedWorld({ prove: true });
  try {
    assert.ok(w.gcs.registrations[0]!.nonce, 'the registration carried a nonce');
    await w.gcs.until(() => w.gcs.heartbeats.length >= 2, 'two heartbeats');
    assert.ok(w.gcs.lastHeartbeat()?.nonce, 'each heartbeat carries one');
    assert.is.not(w.gcs.heartbeats.at(-2)?.nonce, w.gcs.lastHeartbeat()?.nonce, 'a fresh one');
    w.gcs.forgeHeartbeats = true;
    await w.gcs.until(() => w.raylet.stats().fenced, 'the raylet to fence itself');
    const err = (await rejection(call(w.bus, w.actorId, 'get'))) as { code?: string };
    assert.is(err.code, 'NO_RESPONDERS');
    w.gcs.forgeHeartbeats = false;
    await w.gcs.until(() => !w.raylet.stats().fenced, 'the fence to lift');
    assert.is(await call(w.bus, w.actorId, 'increment'), 2, 'the same incarnation, its state kept');
  } finally {
    await w.raylet.stop();
    w.gcs.close();
  }
});

test('a GCS from before proofs (answers without one, never proven): its answers are taken as before', async () => {
  const w = await fencedWorld({ prove: false });
  try {
    const seq = w.raylet.stats().seq;
    await polled('10 more acknowledged heartbeats (2 leases)', () => w.raylet.stats().seq >= seq + 10);
    assert.is(w.raylet.stats().fenced, false);
    assert.is(await call(w.bus, w.actorId, 'increment'), 2);
  } finally {
    await w.raylet.stop();
    w.gcs.close();
  }
});

test('fence: while heartbeats meet only NO_RESPONDERS (no GCS at all) its actors keep answering', async () => {
  const w = await fencedWorld();
  try {
    w.gcs.close();
    const seq = w.raylet.stats().seq;
    await polled('20 heartbeats with no GCS (4 leases)', () => w.raylet.stats().seq >= seq + 20);
    assert.is(w.raylet.stats().fenced, false);
    assert.is(await call(w.bus, w.actorId, 'increment'), 2);
  } finally {
    await w.raylet.stop();
  }
});

test('create_actor naming a module the node does not load is CODE_SOURCE_REFUSED and starts nothing', async () => {
  const fixtures = dirname(fileURLToPath(FIXTURES_URL));
  const open = await world();
  const rooted = await world({ codeRoots: [join(fixtures, 'client')] });
  try {
    const raw = (spec: ReturnType<typeof createSpec>) => packr.pack({ v: PROTOCOL_VERSION, t: 'create_actor', b: spec });
    for (const moduleUrl of ['node:child_process', 'data:text/javascript,export class Counter {}', 'https://example.com/a.js']) {
      const err = await rejection(ask(open.bus, open.raylet.nodeId, 'create_actor', raw(createSpec('Counter', { moduleUrl }))));
      assert.instance(err, CodeSourceRefusedError, moduleUrl);
    }
    // spec/fixtures/actors.ts is outside the rooted node's code root (spec/fixtures/client)
    const outside = await rejection(create(rooted, createSpec('Counter')));
    assert.instance(outside, CodeSourceRefusedError);
    assert.is(outside.detail.reason, 'outside the code roots of this node');
    assert.is(open.raylet.stats().actors, 0);
    assert.is(rooted.raylet.stats().actors, 0);
    assert.is(open.raylet.stats().hosts, 0, 'no worker host started for it');
  } finally {
    await open.raylet.stop();
    await rooted.raylet.stop();
  }
});

test('a gcs_leader event makes the raylet beat at once (once per heartbeat period); a malformed one is counted and changes nothing', async () => {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  gcs.heartbeatMs = 3_600_000; // no beat falls due during this spec: any beat is the announcement's
  const bus = connectMemoryBus(broker);
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' } });
  assert.is(gcs.heartbeats.length, 0);
  const announce = () => bus.publish(s.event('gcs_leader'), encode('event', { type: 'gcs_leader', time: Date.now(), epoch: 2, message: 'the GCS opened its subjects (leader epoch 2)' }));
  announce();
  await gcs.until(() => gcs.heartbeats.length === 1, 'a beat after the announcement');
  // a second one within the period, and one that is not a gcs_leader event
  announce();
  bus.publish(s.event('gcs_leader'), encode('event', { type: 'node_added', time: Date.now() }));
  bus.publish(s.event('gcs_leader'), new Uint8Array([0xc1]));
  // a round trip to the raylet after them: they have been handled
  await ask(bus, raylet.nodeId, 'kill_actor', encode('raylet_kill_actor', { actorId: 'none', incarnation: 0 }));
  assert.is(gcs.heartbeats.length, 1, 'at most one early beat per heartbeat period');
  const malformed = Object.values(raylet.stats().malformed).reduce((a, b) => a + b, 0);
  assert.is(malformed, 2);
  await raylet.stop();
  gcs.close();
});

test.run();
