// The tasks of one raylet: run here, spill back (bounded), queue and decide again, leases, failures.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { seededRng, type ScheduleFailure } from '../../../lib/index.ts';
import { decode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import type { SubmitTask } from '../../../protocols/messages/task.ts';
import type { NodeView } from '../../../protocols/messages/view.ts';
import type { BusMsg } from '../../../runtime/bus/bus.ts';
import { RayletView } from '../../../runtime/raylet/cluster-view.ts';
import { Leases } from '../../../runtime/raylet/leases.ts';
import { LocalTasks } from '../../../runtime/raylet/local-tasks.ts';
import type { RunTask } from '../../../runtime/worker/task-runner.ts';
import { until } from '../../helpers/until.ts';

const CPU = 10_000;
const node = (nodeId: string, labels: Record<string, string> = {}, cpus = 2): NodeView => ({
  nodeId, name: nodeId, state: 'ALIVE', labels: { ...labels, 'orrery.io/node-id': nodeId }, taints: {},
  resources: { total: { CPU: cpus * CPU }, available: { CPU: cpus * CPU } },
});

interface Answer {
  ok: boolean;
  value?: { kind: string; nodeId?: string };
  code?: string;
}

interface Running {
  task: RunTask;
  end(): void;
  die(err: Error): void;
}

function world(opts: { maxSpillHops?: number; localCpus?: number; clock?: { t: number }; wall?: { t: number }; maxQueued?: number; maxQueuedBytes?: number; reservationMs?: number } = {}) {
  const running: Running[] = [];
  const waiting: { taskId: string; failure: ScheduleFailure }[] = [];
  const lost: string[] = [];
  const revoked: string[] = [];
  const cancelledRunning: string[] = [];
  let tasks!: LocalTasks;
  const view = new RayletView({
    local: { nodeId: 'me', name: 'me', labels: { region: 'us', 'orrery.io/node-id': 'me' }, taints: {}, total: { CPU: (opts.localCpus ?? 2) * CPU } },
    requestSnapshot: () => Promise.reject(new Error('none')),
    onChange: () => tasks.viewChanged(),
    onLocalChange: () => tasks.localChanged(),
    log: () => {},
    reservationMs: opts.reservationMs,
  });
  const leases = new Leases({ CPU: (opts.localCpus ?? 2) * CPU }, () => {
    view.setLocalUsed(leases.used());
    tasks.resourcesFreed();
  });
  tasks = new LocalTasks({
    view,
    leases,
    run: (task) =>
      new Promise<void>((resolve, reject) => {
        running.push({ task, end: resolve, die: reject });
      }),
    rareResources: () => [],
    rng: seededRng(7),
    log: () => {},
    onWaiting: (task, failure) => waiting.push({ taskId: task.taskId, failure }),
    onLeaseLost: (leaseId) => lost.push(leaseId),
    revokeLeases: (ids) => revoked.push(...ids),
    cancelRunning: (taskId) => cancelledRunning.push(taskId),
    maxSpillHops: opts.maxSpillHops,
    maxQueued: opts.maxQueued,
    maxQueuedBytes: opts.maxQueuedBytes,
    ...(opts.clock ? { now: () => opts.clock!.t } : {}),
    ...(opts.wall ? { wallNow: () => opts.wall!.t } : {}),
  });
  view.receive({ version: 1, previous: 0, upserts: [node('a', { region: 'eu' }), node('b', { region: 'eu' })], removals: [] });
  const answers = new Map<string, Answer>();
  let n = 0;
  const submit = (over: Partial<SubmitTask> = {}, bytes = 0): string => {
    const taskId = over.taskId ?? `t${++n}`;
    const body: SubmitTask = { taskId, code: { moduleUrl: 'file:///x.ts', functionName: 'f', args: [] }, namespace: 'default', options: {}, hops: 0, attempt: 0, ...over };
    const msg: BusMsg & { reply: string } = {
      subject: 'raylet.me.submit_task',
      data: new Uint8Array(bytes),
      reply: `inbox.${taskId}`,
      respond: (data) => {
        const { body: reply } = decode(data, { registry: { reply: messages.reply } });
        assert.not.ok(answers.has(taskId), `task ${taskId} answered once`);
        answers.set(taskId, reply.ok ? { ok: true, value: reply.value as Answer['value'] } : { ok: false, code: reply.error.code });
        return true;
      },
    };
    tasks.submit(body, msg);
    return taskId;
  };
  const settle = () => new Promise((r) => setImmediate(r));
  return { view, leases, tasks, running, waiting, lost, revoked, cancelledRunning, answers, submit, settle };
}

test('a task that fits here runs here, holding its resources until it ends', async () => {
  const w = world();
  const id = w.submit({ options: { numCpus: 2 } });
  assert.is(w.running.length, 1);
  assert.equal(w.running[0].task, { taskId: id, code: { moduleUrl: 'file:///x.ts', functionName: 'f', args: [] }, reply: `inbox.${id}`, namespace: 'default' });
  assert.equal(w.leases.available(), { CPU: 0 });
  assert.is(w.view.state.node('me')!.available.CPU, 0, 'the view sees it at once');
  assert.not.ok(w.answers.has(id), 'the host answers the driver, not the raylet');
  w.running[0].end();
  await w.settle();
  assert.equal(w.leases.available(), { CPU: 2 * CPU });
  assert.equal(w.tasks.stats(), { running: 0, queued: 0, queuedBytes: 0, leases: 0, expired: 0, cancelled: 0, refused: 0 });
});

test('a task for another node is spilled back, and its resources reserved there in the view', () => {
  const w = world();
  const id = w.submit({ options: { labelSelector: { region: 'eu' }, numCpus: 2 } });
  const answer = w.answers.get(id)!;
  assert.is(answer.value?.kind, 'spillback');
  const target = answer.value!.nodeId!;
  assert.ok(['a', 'b'].includes(target));
  assert.is(w.view.state.node(target)!.available.CPU, 0, 'reserved until the node reports');
  const next = w.submit({ options: { labelSelector: { region: 'eu' }, numCpus: 2 } });
  assert.is(w.answers.get(next)!.value?.nodeId, target === 'a' ? 'b' : 'a', 'the next one goes to the other eu node');
});

test('busy here: spilled to a node with room; a task spilled here runs here when it fits', () => {
  const w = world();
  w.submit({ options: { numCpus: 2 } });
  const spilled = w.submit({ options: { numCpus: 1 } });
  assert.is(w.answers.get(spilled)!.value?.kind, 'spillback');
  const w2 = world();
  w2.submit({ options: { numCpus: 1 } });
  const arrived = w2.submit({ options: { numCpus: 1 }, hops: 1, visited: ['a'] });
  assert.is(w2.running.length, 2, 'above the threshold, but the task was sent here and fits: it runs');
  assert.not.ok(w2.answers.has(arrived));
});

test('a spilled task that cannot run here any more goes on to an unvisited node, within maxSpillHops, then waits here', async () => {
  const w = world({ maxSpillHops: 2 });
  w.submit({ options: { numCpus: 2 } });
  const onward = w.submit({ options: { numCpus: 1 }, hops: 1, visited: ['a'] });
  assert.equal(w.answers.get(onward)!.value, { kind: 'spillback', nodeId: 'b' }, 'not back to a, which sent it');
  const back = w.submit({ options: { numCpus: 1, labelSelector: { region: 'eu' } }, hops: 1, visited: ['a', 'b'] });
  assert.is(w.answers.get(back)!.value?.kind, 'spillback', 'it cannot run here at all: it must go somewhere');
  const kept = w.submit({ options: { numCpus: 1 }, hops: 2, visited: ['a'] });
  assert.not.ok(w.answers.has(kept), 'spilled twice already (the bound): it waits here');
  assert.equal(w.tasks.stats().queued, 1);
  w.running[0].end();
  await w.settle();
  assert.is(w.running.length, 2, 'it runs here once there is room');
  assert.is(w.running[1].task.taskId, kept);
});

test('a task no node can take waits, explained once per explanation, and runs when the view changes', async () => {
  const w = world();
  const id = w.submit({ options: { labelSelector: { gpu: 'a100' } } });
  assert.not.ok(w.answers.has(id));
  assert.is(w.waiting.length, 1);
  assert.match(w.waiting[0].failure.message, "3 node(s) didn't match label selector gpu in (a100)");
  w.view.receive({ version: 2, previous: 1, upserts: [node('b', { region: 'eu' })], removals: [] });
  await w.settle();
  assert.is(w.waiting.length, 1, 'the same explanation is not published again');
  w.view.receive({ version: 3, previous: 2, upserts: [node('c', { gpu: 'a100' })], removals: [] });
  await w.settle();
  assert.equal(w.answers.get(id)!.value, { kind: 'spillback', nodeId: 'c' });
});

test('many waiting tasks of the same options: each is explained when the explanation changes, and each goes once a node for them appears', async () => {
  const w = world();
  const ids = Array.from({ length: 50 }, () => w.submit({ options: { labelSelector: { gpu: 'a100' } } }));
  assert.is(w.waiting.length, 50, 'each task explained once');
  w.view.receive({ version: 2, previous: 1, upserts: [node('c', { gpu: 'h100' })], removals: [] });
  await w.settle();
  assert.is(w.waiting.length, 100, 'a new explanation (one more node that does not match), for each task');
  assert.ok(w.waiting.slice(50).every((x, i) => x.taskId === ids[i] && x.failure.message === w.waiting[50].failure.message));
  w.view.receive({ version: 3, previous: 2, upserts: [node('d', { gpu: 'a100' }, 64)], removals: [] });
  await w.settle();
  assert.equal(ids.map((id) => w.answers.get(id)?.value), ids.map(() => ({ kind: 'spillback', nodeId: 'd' })));
});

test('waiting for room is not a failure: no explanation is published', async () => {
  const w = world();
  w.view.receive({ version: 2, previous: 1, upserts: [], removals: ['a', 'b'] });
  w.submit({ options: { numCpus: 2 } });
  const queued = w.submit({ options: { numCpus: 1 } });
  assert.is(w.waiting.length, 0);
  assert.not.ok(w.answers.has(queued));
  w.running[0].end();
  await w.settle();
  assert.is(w.running.at(-1)!.task.taskId, queued);
});

test('a driver seeking a lease hears busy instead of its task waiting; a grant holds the resources until the lease ends', async () => {
  const w = world();
  w.view.receive({ version: 2, previous: 1, upserts: [], removals: ['a', 'b'] });
  w.submit({ options: { numCpus: 1 }, lease: true });
  const grant = w.running[0].task.lease!;
  assert.ok(grant && grant.idleMs > 0 && grant.lifetimeMs >= grant.idleMs);
  w.running[0].end();
  await w.settle();
  assert.equal(w.leases.available(), { CPU: 1 * CPU }, 'the lease keeps its task resources');
  w.submit({ options: { numCpus: 1 }, lease: true });
  const busy = w.submit({ options: { numCpus: 1 }, lease: true });
  assert.equal(w.answers.get(busy)!.value, { kind: 'busy' });
  w.tasks.leaseEnded(grant.leaseId);
  assert.equal(w.leases.available(), { CPU: 1 * CPU }, 'the first lease ended; the second holds one CPU');
  w.tasks.leasesLost([w.running[1].task.lease!.leaseId, 'unknown'], 'host died');
  assert.equal(w.leases.available(), { CPU: 2 * CPU });
  assert.equal(w.lost, [w.running[1].task.lease!.leaseId], 'drivers are told of the lease that was lost');
  const spread = w.submit({ options: { schedulingStrategy: 'SPREAD' }, lease: true });
  assert.is(w.running.at(-1)!.task.taskId, spread);
  assert.is(w.running.at(-1)!.task.lease, undefined, 'SPREAD tasks get no lease');
});

test("leases whose constraints stop holding here are revoked when the view changes this node", async () => {
  const w = world({ localCpus: 4 });
  w.submit({ options: { labelSelector: { region: 'us' } }, lease: true });
  w.submit({ options: {}, lease: true });
  const [bySelector, plain] = w.running.map((r) => r.task.lease!.leaseId);
  assert.is(w.running.length, 2, 'both run here');
  const me = (labels: Record<string, string>): NodeView => node('me', labels, 4);
  w.view.receive({ version: 2, previous: 1, upserts: [me({ region: 'us' })], removals: [] });
  assert.equal(w.revoked, [], 'labels unchanged: nothing revoked');
  w.view.receive({ version: 3, previous: 2, upserts: [me({ region: 'eu' })], removals: [] });
  assert.equal(w.revoked, [bySelector], 'only the lease whose selector no longer matches');
  w.view.receive({ version: 4, previous: 3, upserts: [], removals: [], actorLabelsChanged: [{ nodeId: 'me', changes: { default: { 'orrery.io/actor-id': { x1: 1 } } } }] });
  assert.equal(w.revoked, [bySelector], 'a new actor here breaks neither (and a lease is revoked once)');
  assert.not.ok(w.revoked.includes(plain));
});

test('a task whose host dies is answered TASK_WORKER_DIED and gives its resources back', async () => {
  const w = world();
  const id = w.submit({});
  w.running[0].die(new Error('the worker host exited (signal SIGKILL)'));
  await w.settle();
  assert.equal(w.answers.get(id), { ok: false, code: 'TASK_WORKER_DIED' });
  assert.equal(w.leases.available(), { CPU: 2 * CPU });
});

test('bad options are answered with their typed error; a hard pin to an unknown node with NODE_NOT_FOUND', () => {
  const w = world();
  const bad = w.submit({ options: { labelSelector: { region: 'in(' } } });
  assert.is(w.answers.get(bad)!.code, 'INVALID_SELECTOR');
  const resources = w.submit({ options: { numCpus: -1 } });
  assert.is(w.answers.get(resources)!.code, 'INVALID_OPTION');
  const pinned = w.submit({ options: { schedulingStrategy: { type: 'NODE_ID_AFFINITY', nodeId: 'gone', soft: false, spillOnUnavailable: false, failOnUnavailable: false } } });
  assert.is(w.answers.get(pinned)!.code, 'NODE_NOT_FOUND');
});

test('stop answers queued tasks resubmit and refuses new ones the same way; crash answers nothing', () => {
  const w = world();
  w.view.receive({ version: 2, previous: 1, upserts: [], removals: ['a', 'b'] });
  w.submit({ options: { numCpus: 2 } });
  const queued = w.submit({ options: { numCpus: 2 } });
  w.tasks.stop();
  assert.equal(w.answers.get(queued)!.value, { kind: 'resubmit' });
  const late = w.submit({});
  assert.equal(w.answers.get(late)!.value, { kind: 'resubmit' });
  const c = world();
  c.view.receive({ version: 2, previous: 1, upserts: [], removals: ['a', 'b'] });
  c.submit({ options: { numCpus: 2 } });
  const silent = c.submit({ options: { numCpus: 2 } });
  c.tasks.crash();
  c.running[0].die(new Error('gone'));
  assert.not.ok(c.answers.has(silent));
  assert.is(c.answers.size, 0);
});

// A driver waits `timeoutMs` (its call timeout, sent with the submission) and then tells its caller
// TIMEOUT: a task still queued then must never start, or it would run after its caller was told it
// failed — and again if the caller tried again.
test('a queued task whose driver stopped waiting never starts: the room made after its timeout goes to the next task, and it is dropped unanswered', async () => {
  const clock = { t: 0 };
  const w = world({ clock });
  const busy = w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } } });
  const late = w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } }, timeoutMs: 1_000 });
  const next = w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } }, timeoutMs: 5_000 });
  assert.equal(w.running.map((r) => r.task.taskId), [busy]);
  assert.is(w.tasks.stats().queued, 2);
  clock.t = 1_500; // the first queued task's driver has given up; the second's has not
  w.running[0].end();
  await w.settle();
  assert.equal(w.running.map((r) => r.task.taskId), [busy, next], 'the room went to the task still awaited');
  assert.not.ok(w.answers.has(late), 'nobody waits for an answer');
  assert.equal(w.tasks.stats(), { running: 1, queued: 0, queuedBytes: 0, leases: 0, expired: 1, cancelled: 0, refused: 0 });
});

test('a queued task is dropped at its deadline even when no room ever comes: the queue keeps no task nobody waits for', async () => {
  const clock = { t: 0 };
  const w = world({ clock });
  w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } } });
  const kept = w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } } }); // an older driver: no deadline
  w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } }, timeoutMs: 20 });
  assert.is(w.tasks.stats().queued, 2);
  clock.t = 25;
  await until('the expired task dropped', () => (w.tasks.stats().expired === 1 ? true : undefined), 5_000);
  assert.is(w.tasks.stats().queued, 1);
  w.running[0].end();
  await w.settle();
  assert.equal(w.running.map((r) => r.task.taskId).slice(1), [kept], 'the one without a deadline still runs');
});

test('a submission read after its driver\'s deadline (a frozen raylet, a backlog) is dropped, not run, even with room; one read late keeps only what is left of its time', async () => {
  const clock = { t: 0 };
  const wall = { t: 1_000_000 };
  const w = world({ clock, wall });
  const late = w.submit({ options: { numCpus: 1, labelSelector: { region: 'us' } }, timeoutMs: 60_000, deadline: 999_000 });
  assert.equal(w.running, [], 'not started, though it fits');
  assert.not.ok(w.answers.has(late), 'nobody waits for an answer');
  assert.is(w.tasks.stats().expired, 1);
  w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } } }); // takes the room
  const short = w.submit({ options: { numCpus: 2, labelSelector: { region: 'us' } }, timeoutMs: 60_000, deadline: 1_000_500 });
  clock.t = 600; // past the half second its driver had left when it was read, well inside timeoutMs
  w.running[0].end();
  await w.settle();
  assert.is(w.running.length, 1, 'the room was not given to it');
  assert.not.ok(w.answers.has(short));
  assert.is(w.tasks.stats().expired, 2);
});

test('cancel(): a queued task leaves the queue unstarted only with its own key, answered ABORTED; a running one has its signal aborted; one without a key is left alone', async () => {
  const w = world();
  const key = 'a'.repeat(32);
  const options = { numCpus: 2, labelSelector: { region: 'us' } };
  const busy = w.submit({ options, cancelKey: key });
  const queued = w.submit({ options, cancelKey: key });
  const keyless = w.submit({ options });
  assert.equal(w.running.map((r) => r.task.taskId), [busy]);
  assert.is(w.running[0].task.cancellable, true, 'handed to its host as cancellable');
  assert.not.ok(w.tasks.cancel(busy, 'b'.repeat(32)), 'another key: the running task is left alone');
  assert.is(w.tasks.cancel(busy, key), 'signalled', 'running: its signal aborts in its task host');
  assert.equal(w.cancelledRunning, [busy]);
  assert.not.ok(w.tasks.cancel(queued, 'b'.repeat(32)), 'another key changes nothing');
  assert.not.ok(w.tasks.cancel(keyless, 'b'.repeat(32)), 'a task submitted without a key cannot be cancelled');
  assert.not.ok(w.tasks.cancel('unknown', key));
  assert.is(w.tasks.stats().queued, 2);
  assert.is(w.tasks.cancel(queued, key), 'dropped');
  assert.equal(w.answers.get(queued), { ok: false, code: 'ABORTED' });
  assert.not.ok(w.tasks.cancel(queued, key), 'gone: a second cancel changes nothing');
  w.running[0].end();
  await w.settle();
  assert.equal(w.running.map((r) => r.task.taskId), [busy, keyless], 'the room went to the task behind it');
  assert.equal(w.tasks.stats(), { running: 1, queued: 0, queuedBytes: 0, leases: 0, expired: 0, cancelled: 1, refused: 0 });
});

test('cancel(): a task id queued twice is found twice, each with its key; a cancel for no queued task changes nothing', () => {
  const w = world();
  const here = { numCpus: 2, labelSelector: { region: 'us' } };
  w.submit({ options: here });
  const [k1, k2] = ['1'.repeat(32), '2'.repeat(32)];
  w.submit({ taskId: 'dup', options: here, cancelKey: k1 });
  w.submit({ taskId: 'dup', options: here, cancelKey: k2 });
  assert.not.ok(w.tasks.cancel('nothing-here', k1));
  assert.is(w.tasks.stats().queued, 2);
  assert.is(w.tasks.cancel('dup', k2), 'dropped', 'the later one, by its key');
  assert.not.ok(w.tasks.cancel('dup', k1), 'the earlier one is no longer found by id: left to run or expire');
  assert.is(w.tasks.stats().queued, 1);
});

test("a task waiting for room a spill reserved on another node is decided again once the reservation lapses, though that node never reports", async () => {
  const w = world({ reservationMs: 30 });
  // only x has my_res; nothing will ever report x's load
  w.view.receive({ version: 2, previous: 1, upserts: [{ ...node('x'), resources: { total: { CPU: 2 * CPU, my_res: 1 * CPU }, available: { CPU: 2 * CPU, my_res: 1 * CPU } } }], removals: [] });
  const [first, second] = [w.submit({ options: { resources: { my_res: 1 } } }), w.submit({ options: { resources: { my_res: 1 } } })];
  assert.equal(w.answers.get(first), { ok: true, value: { kind: 'spillback', nodeId: 'x' } });
  assert.not.ok(w.answers.has(second), 'the spill reserved x\'s my_res: the second waits here');
  await until('the second decided again', () => (w.answers.has(second) ? true : undefined));
  assert.equal(w.answers.get(second), { ok: true, value: { kind: 'spillback', nodeId: 'x' } });
  w.view.stop();
});

test('the queue is bounded: past maxQueued tasks or maxQueuedBytes bytes, a task that would wait is answered full and not kept; one that runs or is spilled is taken as before', async () => {
  const clock = { t: 0 };
  const w = world({ maxQueued: 2, maxQueuedBytes: 1000, clock });
  const here = { numCpus: 2, labelSelector: { region: 'us' } };
  const busy = w.submit({ options: here, timeoutMs: 60_000 });
  const [q1, q2] = [w.submit({ options: here, timeoutMs: 60_000 }, 100), w.submit({ options: here, timeoutMs: 1_000, cancelKey: 'c'.repeat(32) }, 100)];
  const refused = w.submit({ options: here }, 10);
  assert.equal(w.answers.get(refused), { ok: true, value: { kind: 'full', queued: 2, maxQueued: 2, queuedBytes: 200, maxQueuedBytes: 1000 } });
  assert.equal([q1, q2].map((t) => w.answers.has(t)), [false, false], 'the queued tasks are kept');
  // a task that need not wait here is not refused: another node takes it
  const spilled = w.submit({ options: { labelSelector: { region: 'eu' } } }, 10);
  assert.is(w.answers.get(spilled)?.value?.kind, 'spillback');
  assert.equal([w.tasks.stats().queued, w.tasks.stats().queuedBytes, w.tasks.stats().refused], [2, 200, 1]);

  // room in the queue by count, not by bytes: a task of 801 bytes would pass 1,000
  assert.is(w.tasks.cancel(q2, 'c'.repeat(32)), 'dropped');
  assert.equal([w.tasks.stats().queued, w.tasks.stats().queuedBytes], [1, 100]);
  const tooBig = w.submit({ options: here }, 901);
  assert.is(w.answers.get(tooBig)?.value?.kind, 'full');
  const fits = w.submit({ options: here, timeoutMs: 1_000 }, 900);
  assert.not.ok(w.answers.has(fits));
  assert.equal([w.tasks.stats().queued, w.tasks.stats().queuedBytes, w.tasks.stats().refused], [2, 1000, 2]);

  // a queued task that runs, and one dropped at its deadline, leave room
  w.running[0].end();
  await w.settle();
  assert.equal(w.running.map((r) => r.task.taskId), [busy, q1]);
  assert.equal([w.tasks.stats().queued, w.tasks.stats().queuedBytes], [1, 900]);
  clock.t = 2_000;
  w.running[1].end();
  await w.settle();
  assert.equal(w.running.map((r) => r.task.taskId), [busy, q1], 'the task past its deadline never started');
  assert.equal([w.tasks.stats().queued, w.tasks.stats().queuedBytes, w.tasks.stats().expired], [0, 0, 1]);
  const later = w.submit({ options: here }, 900);
  assert.equal(w.running.map((r) => r.task.taskId), [busy, q1, later], 'an empty queue and a free node: it runs');
});

test.run();
