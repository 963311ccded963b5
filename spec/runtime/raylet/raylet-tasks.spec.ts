// A raylet service on the memory bus with a stand-in GCS: it follows gcs.view (a gap asks for a
// snapshot), runs tasks in its inline task host, reports what they hold in heartbeats and in its
// load reports, and refuses malformed submissions without changing anything.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import { taskOutcome } from '../../../protocols/messages/task.ts';
import type { NodeView } from '../../../protocols/messages/view.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { startRaylet } from '../../../runtime/raylet/index.ts';
import { until } from '../../fixtures/tasks/scenarios.ts';
import { StubGcs } from './stub-gcs.ts';

const s = subjects('default');
const FIXTURES = new URL('../../fixtures/tasks/tasks.ts', import.meta.url).href;
const CPU = 10_000;

async function world(opts: { followView?: 'always' | 'with-tasks'; viewLingerMs?: number; requestTimeoutMs?: number; retryMs?: number; maxQueuedTasks?: number } = {}) {
  const broker = new MemoryBroker();
  const gcs = new StubGcs(connectMemoryBus(broker));
  const bus = connectMemoryBus(broker);
  const raylet = await startRaylet({ bus: connectMemoryBus(broker), hosts: { mode: 'inline' }, nodeName: 'r1', resources: { CPU: 2 }, ...opts });
  const submit = (body: object) => bus.request(s.raylet(raylet.nodeId, 'submit_task'), encode('submit_task', body as never), { timeoutMs: 5000 });
  return { broker, gcs, bus, raylet, submit };
}

const peer = (nodeId: string): NodeView => ({ nodeId, name: nodeId, state: 'ALIVE', labels: {}, taints: {}, resources: { total: { CPU: 4 * CPU }, available: { CPU: 4 * CPU } } });

test('follows gcs.view: deltas in order, a gap answered by a snapshot from the GCS', async () => {
  const w = await world({ followView: 'always' });
  await until(() => w.raylet.stats().view.snapshots === 1, 'the first snapshot');
  w.bus.publish(s.view(), encode('view_delta', { version: 1, previous: 0, upserts: [peer('p1')], removals: [] }));
  await until(() => w.raylet.stats().view.version === 1, 'delta 1');
  assert.is(w.raylet.stats().view.nodes, 2);
  w.gcs.snapshot = { version: 7, previous: 0, upserts: [peer('p1'), peer('p2')], removals: [] };
  w.bus.publish(s.view(), encode('view_delta', { version: 7, previous: 6, upserts: [peer('p2')], removals: [] }));
  await until(() => w.raylet.stats().view.version === 7, 'the snapshot');
  assert.is(w.gcs.snapshots, 2);
  assert.equal({ nodes: w.raylet.stats().view.nodes, gaps: w.raylet.stats().view.gaps }, { nodes: 3, gaps: 1 });
  w.bus.publish(s.view(), new Uint8Array([0xc1]));
  await w.bus.flush();
  assert.is(w.raylet.stats().malformed.MALFORMED, 1, 'an unreadable delta is counted and dropped');
  await w.raylet.stop();
});

test("a running task holds its CPU: in heartbeats, in load reports and in the raylet's stats", async () => {
  const w = await world();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-raylet-tasks-'));
  const loads: { seq: number; available: Record<string, number> }[] = [];
  w.bus.subscribe(s.raylet(w.raylet.nodeId, 'load'), (msg) => loads.push(decode(msg.data, { registry: { raylet_load: messages.raylet_load } }).body));
  const marker = join(dir, 'started');
  const running = w.submit({ taskId: 'aaaa000000000001', code: { moduleUrl: FIXTURES, functionName: 'hold', args: [150, marker] }, namespace: 'default', options: { numCpus: 2 }, hops: 0, attempt: 0 });
  await until(() => existsSync(marker), 'the task to start');
  assert.equal(w.raylet.stats().available, { CPU: 0 });
  assert.equal(w.raylet.stats().tasks, { running: 1, queued: 0, queuedBytes: 0, leases: 0, expired: 0, cancelled: 0, refused: 0 });
  await w.gcs.until(() => w.gcs.lastHeartbeat()?.available.CPU === 0, 'a heartbeat with the CPU held');
  const answer = decodeReply((await running).data, { value: taskOutcome });
  assert.is(answer.kind, 'done');
  await w.gcs.until(() => w.gcs.lastHeartbeat()?.available.CPU === 2 * CPU, 'a heartbeat with the CPU back');
  await until(() => loads.at(-1)?.available.CPU === 2 * CPU, 'a load report with the CPU back');
  assert.ok(loads.some((l) => l.available.CPU === 0), 'a load report with the CPU held');
  assert.ok(loads.every((l, i) => i === 0 || l.seq > loads[i - 1].seq), 'seq grows');
  await w.raylet.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('malformed submissions are answered with their wire error and change nothing', async () => {
  const w = await world();
  const good = { taskId: 'aaaa000000000002', code: { moduleUrl: FIXTURES, functionName: 'add', args: [1, 2] }, namespace: 'default', options: {}, hops: 0, attempt: 0 };
  const before = w.raylet.stats();
  const cases: [string, Uint8Array][] = [
    ['MALFORMED', new Uint8Array([0xc1])],
    ['UNKNOWN_TYPE', encode('raylet_kill_actor', { actorId: 'x', incarnation: 0 })],
    ['INVALID_MESSAGE', encode('submit_task', { ...good, taskId: '' })],
    ['INVALID_MESSAGE', encode('submit_task', { ...good, hops: 65 })],
    ['INVALID_MESSAGE', encode('submit_task', { ...good, attempt: 1.5 })],
    ['TOO_LARGE', encode('submit_task', { ...good, code: { ...good.code, args: ['x'.repeat(1_100_000)] } }, { maxBytes: 2_000_000 })],
    ['INVALID_SELECTOR', encode('submit_task', { ...good, options: { labelSelector: { a: 'in(' } } })],
  ];
  for (const [code, data] of cases) {
    const reply = decode((await w.bus.request(s.raylet(w.raylet.nodeId, 'submit_task'), data, { timeoutMs: 5000 })).data, { registry: { reply: messages.reply } }).body;
    assert.is(reply.ok ? 'ok' : reply.error.code, code);
  }
  w.bus.publish(s.raylet(w.raylet.nodeId, 'submit_task'), encode('submit_task', good));
  await w.bus.flush();
  const after = w.raylet.stats();
  assert.equal(after.available, before.available);
  assert.equal(after.tasks, { running: 0, queued: 0, queuedBytes: 0, leases: 0, expired: 0, cancelled: 0, refused: 0 });
  assert.ok(Object.values(after.malformed).reduce((a, b) => a + b, 0) >= 7, 'counted, the reply-less one too');
  assert.equal(decodeReply((await w.submit(good)).data, { value: taskOutcome }), { kind: 'done', value: 3 }, 'and it goes on running tasks');
  await w.raylet.stop();
});

test('follows gcs.view only while it has tasks: a submission reads a snapshot first and is decided on it; idle again, it stops', async () => {
  const w = await world({ viewLingerMs: 200 });
  w.gcs.snapshot = { version: 4, previous: 0, upserts: [peer('p1')], removals: [] };
  w.bus.publish(s.view(), encode('view_delta', { version: 1, previous: 0, upserts: [peer('p0')], removals: [] }));
  await w.bus.flush();
  const idle = w.raylet.stats().view;
  assert.equal({ following: idle.following, version: idle.version, deltas: idle.deltas, snapshots: w.gcs.snapshots }, { following: false, version: 0, deltas: 0, snapshots: 0 }, 'no task yet: no view');
  const failed: unknown[] = [];
  w.bus.subscribe(s.event('schedule_failed'), (msg) => failed.push(msg));
  // 3 CPUs do not fit this node's 2: the task goes where the snapshot read for it says they fit
  const task = { taskId: 'aaaa000000000003', code: { moduleUrl: FIXTURES, functionName: 'add', args: [1, 2] }, namespace: 'default', options: { numCpus: 3 }, hops: 0, attempt: 0 };
  assert.equal(decodeReply((await w.submit(task)).data, { value: taskOutcome }), { kind: 'spillback', nodeId: 'p1' });
  assert.is(w.gcs.snapshots, 1);
  assert.is(failed.length, 0, 'not reported unschedulable on the empty view it had before');
  w.bus.publish(s.view(), encode('view_delta', { version: 5, previous: 4, upserts: [peer('p2')], removals: [] }));
  await until(() => w.raylet.stats().view.version === 5, 'delta 5, followed now');
  await until(() => !w.raylet.stats().view.following, 'the view left once idle for the linger time');
  w.bus.publish(s.view(), encode('view_delta', { version: 6, previous: 5, upserts: [peer('p3')], removals: [] }));
  await w.bus.flush();
  assert.equal({ version: w.raylet.stats().view.version, nodes: w.raylet.stats().view.nodes }, { version: 5, nodes: 3 });
  // the next task reads the view again, as it is now
  w.gcs.snapshot = { version: 9, previous: 0, upserts: [peer('p1'), peer('p2'), peer('p3')], removals: [] };
  assert.equal(decodeReply((await w.submit({ ...task, taskId: 'aaaa000000000004', code: { ...task.code, args: [2, 2] }, options: {} })).data, { value: taskOutcome }), { kind: 'done', value: 4 });
  assert.equal({ version: w.raylet.stats().view.version, nodes: w.raylet.stats().view.nodes, snapshots: w.gcs.snapshots }, { version: 9, nodes: 4, snapshots: 2 });
  await w.raylet.stop();
});

test('a GCS that does not answer the view snapshot holds a task only for the request timeout: it is then decided on the view the raylet has', async () => {
  const w = await world({ requestTimeoutMs: 300, retryMs: 100 });
  w.gcs.muteSnapshots = true;
  const task = { taskId: 'aaaa000000000005', code: { moduleUrl: FIXTURES, functionName: 'add', args: [20, 22] }, namespace: 'default', options: {}, hops: 0, attempt: 0 };
  assert.equal(decodeReply((await w.submit(task)).data, { value: taskOutcome }), { kind: 'done', value: 42 }, 'run here: it fits this node, which the raylet always knows');
  assert.ok(w.gcs.snapshots >= 1, 'the snapshot was asked for');
  assert.is(w.raylet.stats().view.snapshots, 0);
  w.gcs.snapshot = { version: 3, previous: 0, upserts: [peer('p1')], removals: [] };
  w.gcs.muteSnapshots = false;
  await until(() => w.raylet.stats().view.version === 3, 'the snapshot, asked for again once the GCS answers');
  await w.raylet.stop();
});

test("submissions held until the view's snapshot comes are held within the queue's bounds: past them one is answered full at once", async () => {
  // a GCS that does not answer: the two are held for the request timeout, then decided on the view the raylet has
  const w = await world({ requestTimeoutMs: 3_000, retryMs: 100, maxQueuedTasks: 2 });
  w.gcs.muteSnapshots = true;
  const task = (i: number) => ({ taskId: `aaaa00000000010${i}`, code: { moduleUrl: FIXTURES, functionName: 'add', args: [i, 1] }, namespace: 'default', options: {}, hops: 0, attempt: 0 });
  const held = [w.submit(task(1)), w.submit(task(2))];
  const third = decodeReply((await w.submit(task(3))).data, { value: taskOutcome }) as { kind: string; queued?: number; maxQueued?: number };
  assert.equal([third.kind, third.queued, third.maxQueued], ['full', 2, 2], 'refused while two are held');
  assert.is(w.raylet.stats().tasks.refused, 1);
  const answers = await Promise.all(held);
  assert.equal(answers.map((a) => decodeReply(a.data, { value: taskOutcome })), [{ kind: 'done', value: 2 }, { kind: 'done', value: 3 }], 'the held ones run when the wait ends');
  w.gcs.muteSnapshots = false;
  await w.raylet.stop();
});

test('cancel_task: malformed or forged cancels (another key, a task not queued) change nothing; the key the task came with drops it from the queue, answered ABORTED', async () => {
  const w = await world();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-raylet-cancel-'));
  const key = '0123456789abcdef'.repeat(2);
  const task = (taskId: string, marker: string, cancelKey?: string) => ({
    taskId,
    code: { moduleUrl: FIXTURES, functionName: 'hold', args: [0, join(dir, marker)] },
    namespace: 'default',
    options: { numCpus: 2 },
    hops: 0,
    attempt: 0,
    ...(cancelKey ? { cancelKey } : {}),
  });
  const gate = join(dir, 'gate');
  const holding = w.submit({ ...task('aaaa0000000000c1', 'held'), code: { moduleUrl: FIXTURES, functionName: 'holdUntil', args: [gate, join(dir, 'busy')] } });
  await until(() => existsSync(join(dir, 'busy')), 'the CPU taken');
  const kept = w.submit(task('aaaa0000000000c2', 'kept', key));
  const dropped = w.submit(task('aaaa0000000000c3', 'dropped', key));
  await until(() => w.raylet.stats().tasks.queued === 2, 'two queued');
  const cancel = s.raylet(w.raylet.nodeId, 'cancel_task');
  const before = Object.values(w.raylet.stats().malformed).reduce((a, b) => a + b, 0);
  w.bus.publish(cancel, new Uint8Array([0xc1]));
  w.bus.publish(cancel, encode('cancel_task', { taskId: 'aaaa0000000000c2', cancelKey: 'short' } as never));
  w.bus.publish(cancel, encode('cancel_task', { taskId: 'aaaa0000000000c2', cancelKey: 'f'.repeat(32) }));
  w.bus.publish(cancel, encode('cancel_task', { taskId: 'aaaa0000000000c1', cancelKey: key }));
  w.bus.publish(cancel, encode('cancel_task', { taskId: 'aaaa0000000000c3', cancelKey: key }));
  await w.bus.flush();
  assert.is(Object.values(w.raylet.stats().malformed).reduce((a, b) => a + b, 0) - before, 2, 'the unreadable and the invalid one counted');
  const reply = decode((await dropped).data, { registry: { reply: messages.reply } }).body;
  assert.is(reply.ok ? 'ok' : reply.error.code, 'ABORTED');
  const { queuedBytes, ...counts } = w.raylet.stats().tasks;
  assert.equal(counts, { running: 1, queued: 1, leases: 0, expired: 0, cancelled: 1, refused: 0 });
  assert.ok(queuedBytes > 0, "the kept task's bytes are counted");
  writeFileSync(gate, '');
  await holding;
  assert.is(decodeReply((await kept).data, { value: taskOutcome }).kind, 'done', 'the task a forged key named ran');
  assert.ok(existsSync(join(dir, 'kept')));
  assert.not.ok(existsSync(join(dir, 'dropped')), 'the cancelled task never ran');
  await w.raylet.stop();
  rmSync(dir, { recursive: true, force: true });
});

test.run();
