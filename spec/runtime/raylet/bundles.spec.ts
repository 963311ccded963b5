// A raylet's half of the placement-group two-phase commit, on the memory bus with a stand-in GCS:
// prepare_bundle holds a bundle's resources (tasks cannot take them), commit_bundle turns them into
// bundle resources on the node's total (actors and tasks of the group fit there), cancel_bundle gives
// everything back; each is idempotent, and malformed messages change nothing.
import { test } from 'uvu';
import { forWire, MAX_WIRE_RESOURCES } from '../../../runtime/raylet/leases.ts';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { decode, encode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import { taskOutcome } from '../../../protocols/messages/task.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { subjects, type RayletVerb } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { specializeError } from '../../../runtime/errors.ts';
import { startRaylet, type RayletHandle } from '../../../runtime/raylet/index.ts';
import { until } from '../../fixtures/tasks/scenarios.ts';
import { call, createSpec, rejection } from '../worker/support.ts';
import { StubGcs } from './stub-gcs.ts';

const s = subjects('default');
const CPU = 10_000;
const FIXTURES = new URL('../../fixtures/tasks/tasks.ts', import.meta.url).href;
const PG = 'aaaabbbbccccdddd';
const PG2 = 'eeeeffff00001111';

interface World {
  bus: Bus;
  gcs: StubGcs;
  raylet: RayletHandle;
}

async function world(resources: Record<string, number> = { CPU: 4 }): Promise<World> {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  const bus = connectMemoryBus(broker);
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, resources });
  return { bus, gcs, raylet };
}

async function ask(w: World, verb: RayletVerb, data: Uint8Array): Promise<unknown> {
  const msg = await w.bus.request(s.raylet(w.raylet.nodeId, verb), data, { timeoutMs: 5000 });
  try {
    const answer = decodeReply(msg.data, { value: unknown() });
    // answers the GCS acts on carry the node's secret (raylet/served-subjects.ts, signed): checked, then set aside
    const { secret, ...value } = answer as Record<string, unknown>;
    assert.is(secret, w.gcs.registrations.at(-1)?.secret, 'answered with the secret the node registered with');
    return value;
  } catch (err) {
    throw err instanceof OrreryError ? specializeError(err) : err;
  }
}

type Bundle = { pgId: string; index: number; resources: Record<string, number> };
const prepare = (w: World, bundles: Bundle[]) => ask(w, 'prepare_bundle', encode('prepare_bundle', { bundles }));
const commit = (w: World, bundles: { pgId: string; index: number }[]) => ask(w, 'commit_bundle', encode('commit_bundle', { bundles }));
const cancel = (w: World, bundles: { pgId: string; index: number }[]) => ask(w, 'cancel_bundle', encode('cancel_bundle', { bundles }));

let nextTask = 1;
function submit(w: World, options: object) {
  const taskId = (nextTask++).toString(16).padStart(16, '0');
  const body = { taskId, code: { moduleUrl: FIXTURES, functionName: 'where', args: [] }, namespace: 'default', options, hops: 0, attempt: 0 };
  return w.bus.request(s.raylet(w.raylet.nodeId, 'submit_task'), encode('submit_task', body as never), { timeoutMs: 10_000 });
}

/** The next heartbeat the stub GCS receives from now on. */
async function nextHeartbeat(w: World) {
  const n = w.gcs.heartbeats.length;
  await w.gcs.until(() => w.gcs.heartbeats.length > n, 'a heartbeat');
  return w.gcs.lastHeartbeat()!;
}

test('prepare holds the bundle: available, heartbeats and tasks see it gone until it is cancelled', async () => {
  const w = await world();
  assert.equal(await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 2 * CPU } }]), { refused: [] });
  assert.equal(w.raylet.stats().available, { CPU: 2 * CPU });
  assert.equal(w.raylet.stats().bundles, { prepared: 1, committed: 0 });
  assert.equal((await nextHeartbeat(w)).available, { CPU: 2 * CPU });

  // a task for 3 CPUs fits the node but not what the bundle left: it waits
  const task = submit(w, { numCpus: 3 });
  await until(() => w.raylet.stats().tasks.queued === 1, 'the task to queue');
  assert.equal(await cancel(w, [{ pgId: PG, index: 0 }]), { returned: 1 });
  const answer = decodeReply((await task).data, { value: taskOutcome });
  assert.is(answer.kind, 'done', 'the cancelled bundle gave its CPUs back to the queued task');
  assert.equal(w.raylet.stats().bundles, { prepared: 0, committed: 0 });
  await until(() => w.raylet.stats().available.CPU === 4 * CPU, 'the task to end');
  await w.raylet.stop();
});

test('prepare refuses what does not fit now, saying what is short; each held bundle leaves less for the next', async () => {
  const w = await world({ CPU: 4, GPU: 1 });
  const reply = await prepare(w, [
    { pgId: PG, index: 0, resources: { CPU: 3 * CPU } },
    { pgId: PG, index: 1, resources: { CPU: 2 * CPU, GPU: CPU } },
    { pgId: PG, index: 2, resources: { TPU: CPU } },
    { pgId: PG, index: 3, resources: { CPU: 1 * CPU, GPU: CPU } },
  ]);
  const node = w.raylet.nodeId;
  assert.equal(reply, {
    refused: [
      { pgId: PG, index: 1, reason: `bundle 1 of placement group ${PG} needs CPU 2, 1 free (node ${node})` },
      { pgId: PG, index: 2, reason: `bundle 2 of placement group ${PG} needs TPU 1, none on this node (node ${node})` },
    ],
  });
  assert.equal(w.raylet.stats().available, { CPU: 0, GPU: 0 });
  assert.equal(w.raylet.stats().bundles, { prepared: 2, committed: 0 });
  await w.raylet.stop();
});

test('prepare and commit are idempotent; commit adds the named bundle resources to total and available', async () => {
  const w = await world({ CPU: 4, memory: 1000 });
  const loads: Record<string, number>[] = [];
  w.bus.subscribe(s.raylet(w.raylet.nodeId, 'load'), (msg) => loads.push(decode(msg.data, { registry: { raylet_load: messages.raylet_load } }).body.available));
  const bundles: Bundle[] = [
    { pgId: PG, index: 0, resources: { CPU: 1 * CPU, memory: 100 } },
    { pgId: PG, index: 1, resources: { CPU: 2 * CPU } },
  ];
  assert.equal(await prepare(w, bundles), { refused: [] });
  assert.equal(await prepare(w, bundles), { refused: [] }, 'held already: nothing more is taken');
  assert.equal(w.raylet.stats().available, { CPU: 1 * CPU, memory: 900 });

  assert.equal(await commit(w, bundles.map(({ pgId, index }) => ({ pgId, index }))), { missing: [] });
  const committed = {
    CPU: 1 * CPU,
    memory: 900,
    [`CPU_group_${PG}`]: 3 * CPU,
    [`CPU_group_0_${PG}`]: 1 * CPU,
    [`CPU_group_1_${PG}`]: 2 * CPU,
    [`memory_group_${PG}`]: 100,
    [`memory_group_0_${PG}`]: 100,
  };
  assert.equal(w.raylet.stats().available, committed);
  assert.equal(await commit(w, [{ pgId: PG, index: 1 }]), { missing: [] });
  assert.equal(await prepare(w, bundles), { refused: [] });
  assert.equal(w.raylet.stats().available, committed, 'committing or preparing again changes nothing');
  assert.equal(w.raylet.stats().bundles, { prepared: 0, committed: 2 });
  // heartbeats and load reports carry the node's own resources; bundle resources travel in the GCS's view
  assert.equal((await nextHeartbeat(w)).available, { CPU: 1 * CPU, memory: 900 });
  await until(() => loads.at(-1)?.CPU === 1 * CPU, 'a load report after the prepare');
  assert.equal(loads.at(-1), { CPU: 1 * CPU, memory: 900 });
  await w.raylet.stop();
});

test('commit of a bundle not held here is missing; the held ones in the same message are committed', async () => {
  const w = await world();
  await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 1 * CPU } }]);
  const reply = await commit(w, [
    { pgId: PG, index: 0 },
    { pgId: PG, index: 1 },
    { pgId: PG2, index: 0 },
  ]);
  assert.equal(reply, { missing: [{ pgId: PG, index: 1 }, { pgId: PG2, index: 0 }] });
  assert.equal(w.raylet.stats().available, { CPU: 3 * CPU, [`CPU_group_${PG}`]: CPU, [`CPU_group_0_${PG}`]: CPU });
  await w.raylet.stop();
});

test('cancel gives back raw resources and removes bundle resources; unknown bundles return 0', async () => {
  const w = await world();
  await prepare(w, [
    { pgId: PG, index: 0, resources: { CPU: 1 * CPU } },
    { pgId: PG, index: 1, resources: { CPU: 1 * CPU } },
    { pgId: PG2, index: 0, resources: { CPU: 1 * CPU } },
  ]);
  await commit(w, [
    { pgId: PG, index: 0 },
    { pgId: PG, index: 1 },
  ]);
  assert.equal(await cancel(w, [{ pgId: PG, index: 0 }]), { returned: 1 });
  assert.equal(w.raylet.stats().available, { CPU: 2 * CPU, [`CPU_group_${PG}`]: CPU, [`CPU_group_1_${PG}`]: CPU }, 'the group keeps what bundle 1 brought');
  assert.equal(
    await cancel(w, [
      { pgId: PG, index: 0 },
      { pgId: PG, index: 1 },
      { pgId: PG2, index: 0 },
      { pgId: PG2, index: 7 },
    ]),
    { returned: 2 },
    'a committed and a prepared one; the others were not held',
  );
  assert.equal(w.raylet.stats().available, { CPU: 4 * CPU });
  assert.equal(await cancel(w, [{ pgId: 'ffffffffffffffff', index: 0 }]), { returned: 0 });
  assert.equal(w.raylet.stats().bundles, { prepared: 0, committed: 0 });
  assert.equal((await nextHeartbeat(w)).available, { CPU: 4 * CPU });
  await w.raylet.stop();
});

test('an actor asking for bundle resources fits once committed, and its kill gives them back to the bundle', async () => {
  const w = await world();
  await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 2 * CPU } }]);
  await commit(w, [{ pgId: PG, index: 0 }]);
  const spec = createSpec('Counter', { resources: { [`CPU_group_0_${PG}`]: CPU, [`CPU_group_${PG}`]: CPU } });
  await ask(w, 'create_actor', encode('create_actor', spec));
  assert.is(await call(w.bus, spec.actorId, 'increment'), 1);
  assert.equal(w.raylet.stats().available, { CPU: 2 * CPU, [`CPU_group_${PG}`]: CPU, [`CPU_group_0_${PG}`]: CPU });
  assert.equal(await ask(w, 'kill_actor', encode('raylet_kill_actor', { actorId: spec.actorId, incarnation: 0 })), { killed: true });
  assert.equal(w.raylet.stats().available, { CPU: 2 * CPU, [`CPU_group_${PG}`]: 2 * CPU, [`CPU_group_0_${PG}`]: 2 * CPU });
  await w.raylet.stop();
});

test('an actor still holding bundle resources when its bundle is cancelled releases them later without harm', async () => {
  const w = await world();
  await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 2 * CPU } }]);
  await commit(w, [{ pgId: PG, index: 0 }]);
  const spec = createSpec('Counter', { resources: { [`CPU_group_0_${PG}`]: 2 * CPU, [`CPU_group_${PG}`]: 2 * CPU } });
  await ask(w, 'create_actor', encode('create_actor', spec));
  assert.equal(await cancel(w, [{ pgId: PG, index: 0 }]), { returned: 1 });
  assert.equal(w.raylet.stats().available, { CPU: 4 * CPU }, 'no bundle names are left, the raw CPUs are back');
  assert.equal(await ask(w, 'kill_actor', encode('raylet_kill_actor', { actorId: spec.actorId, incarnation: 0 })), { killed: true });
  assert.equal(w.raylet.stats().available, { CPU: 4 * CPU });
  // the group's bundle can be held and committed afresh, with nothing of the old actor in it
  await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 1 * CPU } }]);
  await commit(w, [{ pgId: PG, index: 0 }]);
  assert.equal(w.raylet.stats().available, { CPU: 3 * CPU, [`CPU_group_${PG}`]: CPU, [`CPU_group_0_${PG}`]: CPU });
  assert.is(w.raylet.stats().phase, 'running');
  await w.raylet.stop();
});

test('a task of the group waits until its bundle is committed here, then runs here on the local decision', async () => {
  const w = await world();
  await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 1 * CPU } }]);
  const task = submit(w, { numCpus: 1, schedulingStrategy: { type: 'PLACEMENT_GROUP', placementGroupId: PG, bundleIndex: 0 } });
  await until(() => w.raylet.stats().tasks.queued === 1, 'the task to wait for its bundle');
  await commit(w, [{ pgId: PG, index: 0 }]);
  const answer = decodeReply((await task).data, { value: taskOutcome });
  assert.is(answer.kind, 'done');
  assert.is((answer as { value: { nodeId: string } }).value.nodeId, w.raylet.nodeId);
  await until(() => w.raylet.stats().tasks.running === 0, 'the task to end');
  assert.equal(w.raylet.stats().available, { CPU: 3 * CPU, [`CPU_group_${PG}`]: CPU, [`CPU_group_0_${PG}`]: CPU });
  await w.raylet.stop();
});

test("the GCS's view of this node does not hide bundle resources committed here since", async () => {
  const w = await world();
  await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 1 * CPU } }]);
  await commit(w, [{ pgId: PG, index: 0 }]);
  const self = { nodeId: w.raylet.nodeId, name: 'me', state: 'ALIVE' as const, labels: {}, taints: {}, resources: { total: { CPU: 4 * CPU }, available: { CPU: 4 * CPU } } };
  // the raylet reads the GCS's view (a snapshot) when the task comes: it describes this node without the bundle
  w.gcs.snapshot = { version: 1, previous: 0, upserts: [self], removals: [] };
  const snapshotsBefore = w.gcs.snapshots;
  const answer = decodeReply((await submit(w, { numCpus: 1, schedulingStrategy: { type: 'PLACEMENT_GROUP', placementGroupId: PG, bundleIndex: -1 } })).data, { value: taskOutcome });
  assert.is(answer.kind, 'done');
  assert.is(w.gcs.snapshots, snapshotsBefore + 1, 'the task was decided on the view read from the GCS');
  assert.is(w.raylet.stats().view.version, 1);
  await w.raylet.stop();
});

test('a node holding the bundles of 600 groups heartbeats its own resources only, not the bundles\' 1,200 names', async () => {
  const w = await world({ CPU: 1000 });
  const bundles = Array.from({ length: 600 }, (_, i) => ({ pgId: (i + 1).toString(16).padStart(16, '0'), index: 0, resources: { CPU: CPU } }));
  assert.equal(await prepare(w, bundles), { refused: [] });
  assert.equal(await commit(w, bundles.map(({ pgId, index }) => ({ pgId, index }))), { missing: [] });
  assert.is(Object.keys(w.raylet.stats().available).length, 1201);
  const beat = await nextHeartbeat(w);
  assert.equal(beat.available, { CPU: 400 * CPU });
  assert.is(w.raylet.stats().phase, 'running');
  await w.raylet.stop();
});

test("forWire: past the wire limit of resource names, the node's own resources go first and bundle resources fill the rest", () => {
  const available: Record<string, number> = {};
  for (let i = 0; i < MAX_WIRE_RESOURCES + 10; i++) available[`CPU_group_${i.toString(16).padStart(16, '0')}`] = CPU;
  available.CPU = 3 * CPU;
  const out = forWire(available);
  assert.is(Object.keys(out).length, MAX_WIRE_RESOURCES);
  assert.is(out.CPU, 3 * CPU);
  assert.equal(forWire({ CPU: 1, GPU: 2 }), { CPU: 1, GPU: 2 });
});

test('when the GCS forgets the node, the bundles held here stay and are named in the registration that follows', async () => {
  const w = await world();
  await prepare(w, [
    { pgId: PG, index: 0, resources: { CPU: 1 * CPU } },
    { pgId: PG, index: 1, resources: { CPU: 1 * CPU } },
  ]);
  await commit(w, [{ pgId: PG, index: 0 }]);
  await nextHeartbeat(w);
  w.gcs.known = false;
  await w.gcs.until(() => w.gcs.registrations.length === 2, 'a second registration');
  // the GCS keeps those it agrees with and cancels the rest (runtime/gcs/recovery.ts)
  assert.equal(w.gcs.registrations[1].running?.bundles, [
    { pgId: PG, index: 0, committed: true },
    { pgId: PG, index: 1, committed: false },
  ]);
  assert.equal(w.raylet.stats().bundles, { prepared: 1, committed: 1 });
  // what it reports free names the node's own resources only: the GCS takes bundle resources back
  // from `running` (a node with 30,000 bundles had 60,000 such names here, 2 MB, never read)
  assert.equal(w.gcs.registrations[1].resources.available, { CPU: 2 * CPU });
  assert.equal(Object.keys(w.raylet.stats().available).length, 3, 'the committed bundle\'s two names are there all the same');
  await w.raylet.stop();
});

test('malformed, garbage and wrong-type messages on the bundle subjects get typed errors and change nothing', async () => {
  const w = await world();
  await prepare(w, [{ pgId: PG, index: 0, resources: { CPU: 1 * CPU } }]);
  await commit(w, [{ pgId: PG, index: 0 }]);
  await prepare(w, [{ pgId: PG, index: 1, resources: { CPU: 1 * CPU } }]);
  const before = w.raylet.stats();
  const ref = { pgId: PG2, index: 0 };
  const garbage: [string, Uint8Array][] = [
    ['MALFORMED', new Uint8Array([0xc1])],
    ['MALFORMED', encode('prepare_bundle', { bundles: [{ ...ref, resources: { CPU: CPU } }] }).slice(0, 8)],
    ['VERSION_MISMATCH', new Uint8Array([0x83, 0xa1, 0x76, 0x07, 0xa1, 0x74, 0xa1, 0x78, 0xa1, 0x62, 0x80])],
    ['TOO_LARGE', new Uint8Array(1024 * 1024 + 1)],
    ['UNKNOWN_TYPE', encode('heartbeat', { nodeId: 'x', seq: 1, available: {} })],
  ];
  const cases: Record<'prepare_bundle' | 'commit_bundle' | 'cancel_bundle', [string, Uint8Array][]> = {
    prepare_bundle: [
      ['UNKNOWN_TYPE', encode('commit_bundle', { bundles: [ref] })],
      ['INVALID_MESSAGE', encode('prepare_bundle', { bundles: [] })],
      ['INVALID_MESSAGE', encode('prepare_bundle', { bundles: [ref] } as never)],
      ['INVALID_MESSAGE', encode('prepare_bundle', { bundles: [{ ...ref, resources: { CPU: -1 } }] })],
      ['INVALID_MESSAGE', encode('prepare_bundle', { bundles: [{ ...ref, index: -1, resources: { CPU: 1 } }] })],
      ['INVALID_MESSAGE', encode('prepare_bundle', { bundles: [{ ...ref, index: 10_000, resources: { CPU: 1 } }] })],
      ['INVALID_MESSAGE', encode('prepare_bundle', { bundles: [{ ...ref, pgId: '', resources: { CPU: 1 } }] })],
    ],
    commit_bundle: [
      ['UNKNOWN_TYPE', encode('cancel_bundle', { bundles: [ref] })],
      ['INVALID_MESSAGE', encode('commit_bundle', { bundles: [] })],
      ['INVALID_MESSAGE', encode('commit_bundle', { bundles: [{ pgId: PG, index: 1.5 }] })],
      ['INVALID_MESSAGE', encode('commit_bundle', { bundles: 'all' } as never)],
    ],
    cancel_bundle: [
      ['UNKNOWN_TYPE', encode('prepare_bundle', { bundles: [{ pgId: PG, index: 1, resources: { CPU: 1 } }] })],
      ['INVALID_MESSAGE', encode('cancel_bundle', { bundles: [] })],
      ['INVALID_MESSAGE', encode('cancel_bundle', { bundles: [{ pgId: PG }] } as never)],
      ['INVALID_MESSAGE', encode('cancel_bundle', {} as never)],
    ],
  };
  let sent = 0;
  for (const verb of ['prepare_bundle', 'commit_bundle', 'cancel_bundle'] as const) {
    for (const [code, data] of [...garbage, ...cases[verb]]) {
      const err = await rejection(ask(w, verb, data));
      assert.is(err.code, code, `${verb}: ${code}`);
      sent++;
    }
    w.bus.publish(s.raylet(w.raylet.nodeId, verb), new Uint8Array([0xc1]));
    sent++;
  }
  await w.bus.flush();
  const after = w.raylet.stats();
  assert.equal(after.available, before.available);
  assert.equal(after.bundles, before.bundles);
  assert.is(after.phase, 'running');
  const count = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
  assert.is(count(after.malformed) - count(before.malformed), sent);
  // and the bundles still answer to well-formed messages
  assert.equal(await commit(w, [{ pgId: PG, index: 1 }]), { missing: [] });
  assert.equal(await cancel(w, [{ pgId: PG, index: 0 }, { pgId: PG, index: 1 }]), { returned: 2 });
  assert.equal(w.raylet.stats().available, { CPU: 4 * CPU });
  await w.raylet.stop();
});

test.run();
