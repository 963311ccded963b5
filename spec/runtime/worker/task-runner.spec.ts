// Tasks in a worker host: loaded by module URL, run in a context with their task id, answered on
// the driver's reply subject; and the leases a host serves afterwards.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import { LEASE_DEPTH, taskOutcome } from '../../../protocols/messages/task.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { CodeLoadError, CodeSourceRefusedError, RemoteError, specializeError } from '../../../runtime/errors.ts';
import { DECORATED_URL } from '../../fixtures/decorated.ts';
import { OrreryError } from '../../../lib/errors.ts';
import { TaskRunner, type RunTask } from '../../../runtime/worker/task-runner.ts';
import { until } from '../../fixtures/tasks/scenarios.ts';

const FIXTURES = new URL('../../fixtures/tasks/tasks.ts', import.meta.url).href;
const node = { nodeId: 'aaaaaaaaaaaaaaaa', nodeName: 'node-a', labels: { zone: 'z1' } };
const s = subjects('default');

function setup() {
  const bus = connectMemoryBus(new MemoryBroker());
  const ended: string[] = [];
  const runner = new TaskRunner({ bus, node, onLeaseEnded: (id) => ended.push(id) });
  let n = 0;
  /** Runs a task and returns the answer the driver would get, decoded (errors as their classes). */
  const answerOf = async (task: Omit<RunTask, 'reply'>): Promise<unknown> => {
    const reply = `test.reply.${++n}`;
    const got = new Promise<Uint8Array>((resolve) => {
      const sub = bus.subscribe(reply, (msg) => {
        sub.unsubscribe();
        resolve(msg.data);
      });
    });
    await runner.run({ ...task, reply });
    return decodeReply(await got, { value: taskOutcome });
  };
  const fails = async (p: Promise<unknown>): Promise<OrreryError> => {
    try {
      await p;
    } catch (err) {
      return specializeError(err as OrreryError);
    }
    throw new Error('expected a failure');
  };
  return { bus, runner, ended, answerOf, fails };
}

const code = (functionName: string, ...args: unknown[]) => ({ moduleUrl: FIXTURES, functionName, args });

test('runs an exported function with its arguments and answers its result', async () => {
  const { answerOf } = setup();
  assert.equal(await answerOf({ taskId: 't1', code: code('add', 20, 22) }), { kind: 'done', value: 42 });
  assert.equal(await answerOf({ taskId: 't2', code: code('echo', { a: [1, 'b'] }) }), { kind: 'done', value: { a: [1, 'b'] } });
});

test('getRuntimeContext() inside a task has its node and its task id, no actor id', async () => {
  const { answerOf } = setup();
  assert.equal(await answerOf({ taskId: 'task-7', code: code('where') }), { kind: 'done', value: { nodeId: node.nodeId, nodeName: 'node-a', taskId: 'task-7' } });
});

test('a function that throws is answered REMOTE_ERROR with its name and message', async () => {
  const { answerOf, fails } = setup();
  const err = await fails(answerOf({ taskId: 't', code: code('fail', 'out of range') }));
  assert.instance(err, RemoteError);
  assert.is((err as RemoteError).remoteName, 'RangeError');
  assert.is(err.message, 'out of range');
});

test('a function not exported, a class, a non-function or a missing module is CODE_LOAD_FAILED', async () => {
  const { answerOf, fails } = setup();
  for (const [fn, moduleUrl, reason] of [
    ['hidden', FIXTURES, 'no export named "hidden"'],
    ['NotAFunction', FIXTURES, 'is neither a function nor a task from defineTask() (it is a class)'],
    ['notAFunction', FIXTURES, 'is neither a function nor a task from defineTask() (it is a number)'],
    ['f', new URL('./no-such-module.ts', import.meta.url).href, ''],
  ] as const) {
    const err = await fails(answerOf({ taskId: 't', code: { moduleUrl, functionName: fn, args: [] } }));
    assert.instance(err, CodeLoadError, fn);
    assert.match(err.message, reason);
  }
});

test('a result that cannot be sent is a REMOTE_ERROR naming what', async () => {
  const { answerOf, fails } = setup();
  const err = await fails(answerOf({ taskId: 't', code: code('returnsFunction') }));
  assert.instance(err, RemoteError);
  assert.match(err.message, 'returnsFunction returned a value that cannot be sent: a function');
});

test('a lease granted with a task serves pushes on actor.<leaseId>.call, running one at a time, until idle', async () => {
  const { bus, runner, ended, answerOf, fails } = setup();
  const first = await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-1', idleMs: 40, lifetimeMs: 10_000 } });
  assert.equal(first, { kind: 'done', value: 2, lease: { leaseId: 'lease-1', idleMs: 40 } });
  const push = (fn: string, ...args: unknown[]) =>
    bus.request(s.actorCall('lease-1'), encode('leased_task', { leaseId: 'lease-1', taskId: 'p', code: code(fn, ...args), attempt: 0 }), { timeoutMs: 2000 }).then((m) => decodeReply(m.data, { value: taskOutcome }));
  assert.equal(await push('add', 2, 3), { kind: 'done', value: 5 });
  const slow = push('slow', 30);
  // pushed while slow runs: they wait behind it on the host, up to LEASE_DEPTH tasks in all
  const queued = Array.from({ length: LEASE_DEPTH - 1 }, (_, i) => push('add', i, 1));
  const busy = await fails(push('add', 1, 2));
  assert.is(busy.code, 'LEASE_BUSY', `at most ${LEASE_DEPTH} tasks held at once`);
  assert.equal(await slow, { kind: 'done', value: 'p' });
  assert.equal(await Promise.all(queued), Array.from({ length: LEASE_DEPTH - 1 }, (_, i) => ({ kind: 'done', value: i + 1 })));
  assert.is(runner.leases.size, 1);
  const start = performance.now();
  while (runner.leases.size > 0) await new Promise((r) => setTimeout(r, 5));
  assert.ok(performance.now() - start >= 30, 'ended after being idle');
  assert.equal(ended, ['lease-1'], 'the raylet hears it ended');
  assert.is((await fails(push('add', 1, 1))).code, 'NO_RESPONDERS', 'nobody serves an ended lease');
});

test('a lease past its lifetime turns pushes away (LEASE_EXPIRED) and ends', async () => {
  const { bus, runner, ended, answerOf, fails } = setup();
  await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-2', idleMs: 10_000, lifetimeMs: 1 } });
  await new Promise((r) => setTimeout(r, 5));
  const err = await fails(bus.request(s.actorCall('lease-2'), encode('leased_task', { leaseId: 'lease-2', taskId: 'p', code: code('add', 1, 1), attempt: 0 }), { timeoutMs: 2000 }).then((m) => decodeReply(m.data, { value: taskOutcome })));
  assert.is(err.code, 'LEASE_EXPIRED');
  assert.is(runner.leases.size, 0);
  assert.equal(ended, ['lease-2']);
});

test('tasks waiting behind the running one when the lease ends are answered LEASE_EXPIRED: they never ran', async () => {
  const { bus, runner, ended, answerOf, fails } = setup();
  await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-5', idleMs: 10_000, lifetimeMs: 10_000 } });
  const push = (fn: string, ...args: unknown[]) =>
    bus.request(s.actorCall('lease-5'), encode('leased_task', { leaseId: 'lease-5', taskId: 'p', code: code(fn, ...args), attempt: 0 }), { timeoutMs: 2000 }).then((m) => decodeReply(m.data, { value: taskOutcome }));
  const running = push('slow', 20);
  const waiting = [fails(push('add', 1, 1)), fails(push('add', 2, 2))];
  await new Promise((r) => setTimeout(r, 5));
  runner.leases.revoke(['lease-5']);
  assert.equal(await running, { kind: 'done', value: 'p' }, 'the running task still answers');
  for (const err of await Promise.all(waiting)) assert.is(err.code, 'LEASE_EXPIRED');
  assert.equal(ended, ['lease-5']);
});

test('a task waiting on a lease behind a long one past its driver\'s timeout is dropped, never started; the one behind it runs', async () => {
  const { bus, runner, answerOf, fails } = setup();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-lease-deadline-'));
  try {
    await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-7', idleMs: 10_000, lifetimeMs: 10_000 } });
    const push = (taskId: string, timeoutMs: number, waitMs: number, fn: string, ...args: unknown[]) =>
      bus.request(s.actorCall('lease-7'), encode('leased_task', { leaseId: 'lease-7', taskId, code: code(fn, ...args), attempt: 0, timeoutMs }), { timeoutMs: waitMs }).then((m) => decodeReply(m.data, { value: taskOutcome }));
    const [gate, first, dropped, last] = ['gate', 'first', 'dropped', 'last'].map((f) => join(dir, f));
    const running = push('p1', 10_000, 10_000, 'holdUntil', gate, first);
    // its driver waits 50 ms; the host was told 1 ms (a driver's timeout runs from before the host saw it)
    const gaveUp = fails(push('p2', 1, 50, 'hold', 0, dropped));
    const next = push('p3', 10_000, 10_000, 'hold', 0, last);
    assert.is((await gaveUp).code, 'TIMEOUT');
    writeFileSync(gate, '');
    assert.equal(await running, { kind: 'done', value: 'aaaaaaaaaaaaaaaa' });
    assert.is(((await next) as { kind: string }).kind, 'done');
    assert.ok(existsSync(last), 'the task behind it ran');
    assert.not.ok(existsSync(dropped), 'the task whose driver gave up never ran');
    assert.is(runner.leases.expired, 1);
  } finally {
    runner.leases.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cancel_task on a lease drops a task waiting behind the running one, answered ABORTED; the running one, another key and a malformed cancel change nothing', async () => {
  const { bus, runner, answerOf, fails } = setup();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-lease-cancel-'));
  const key = 'c'.repeat(32);
  try {
    await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-9', idleMs: 10_000, lifetimeMs: 10_000 } });
    const push = (taskId: string, fn: string, ...args: unknown[]) =>
      bus.request(s.actorCall('lease-9'), encode('leased_task', { leaseId: 'lease-9', taskId, code: code(fn, ...args), attempt: 0, timeoutMs: 10_000, cancelKey: key }), { timeoutMs: 10_000 }).then((m) => decodeReply(m.data, { value: taskOutcome }));
    const [gate, first, dropped, kept] = ['gate', 'first', 'dropped', 'kept'].map((f) => join(dir, f));
    const running = push('p1', 'holdUntil', gate, first);
    const cancelled = fails(push('p2', 'hold', 0, dropped));
    const next = push('p3', 'hold', 0, kept);
    await until(() => existsSync(first), 'the first task running');
    const cancel = (taskId: string, cancelKey: string) => bus.publish(s.actorCall('lease-9'), encode('cancel_task', { taskId, cancelKey }));
    bus.publish(s.actorCall('lease-9'), new Uint8Array([0xc1]));
    cancel('p3', 'd'.repeat(32));
    cancel('p1', key);
    cancel('p2', key);
    assert.is((await cancelled).code, 'ABORTED');
    writeFileSync(gate, '');
    assert.equal(await running, { kind: 'done', value: 'aaaaaaaaaaaaaaaa' }, 'the running task ran on');
    assert.is(((await next) as { kind: string }).kind, 'done', 'the task a wrong key named ran');
    assert.ok(existsSync(kept));
    assert.not.ok(existsSync(dropped), 'the cancelled task never ran');
    assert.is(runner.leases.cancelled, 1);
    assert.is(runner.leases.malformed.total, 1);
  } finally {
    runner.leases.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a running task sees its driver\'s cancel in getRuntimeContext().signal — through the raylet (cancelRunning) or on its lease — and ends as it sees fit; a task without a key has a signal that never aborts', async () => {
  const { bus, runner, answerOf } = setup();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-task-signal-'));
  const key = 'e'.repeat(32);
  try {
    const [started, marker] = [join(dir, 'started'), join(dir, 'marker')];
    const plain = answerOf({ taskId: 'r0', code: code('untilCancelled', join(dir, 'plain-started'), join(dir, 'plain'), 300) });
    const running = answerOf({ taskId: 'r1', code: code('untilCancelled', started, marker), cancellable: true });
    await until(() => existsSync(started) && existsSync(join(dir, 'plain-started')), 'both running');
    assert.not.ok(runner.cancelRunning('r0'), 'no key, no cancel');
    assert.ok(runner.cancelRunning('r1'));
    assert.equal(await running, { kind: 'done', value: 'stopped' });
    assert.is(readFileSync(marker, 'utf8'), 'task r1 was cancelled by its driver');
    assert.not.ok(runner.cancelRunning('r1'), 'ended: nothing to cancel');
    assert.equal(await plain, { kind: 'done', value: 'ran out' }, 'the signal of a task without a key never aborted');

    // on a lease: the running task, pushed with its key
    await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-11', idleMs: 10_000, lifetimeMs: 10_000 } });
    const [leaseStarted, leaseMarker] = [join(dir, 'lease-started'), join(dir, 'lease-marker')];
    const pushed = bus.request(s.actorCall('lease-11'), encode('leased_task', { leaseId: 'lease-11', taskId: 'p1', code: code('untilCancelled', leaseStarted, leaseMarker), attempt: 0, timeoutMs: 20_000, cancelKey: key }), { timeoutMs: 20_000 }).then((m) => decodeReply(m.data, { value: taskOutcome }));
    await until(() => existsSync(leaseStarted), 'the pushed task running');
    bus.publish(s.actorCall('lease-11'), encode('cancel_task', { taskId: 'p1', cancelKey: 'f'.repeat(32) }));
    await bus.flush();
    assert.not.ok(existsSync(leaseMarker), 'another key: not cancelled');
    bus.publish(s.actorCall('lease-11'), encode('cancel_task', { taskId: 'p1', cancelKey: key }));
    assert.equal(await pushed, { kind: 'done', value: 'stopped' });
    assert.is(readFileSync(leaseMarker, 'utf8'), 'task p1 was cancelled by its driver');
  } finally {
    runner.leases.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a push already on its way when the lease ends is answered LEASE_EXPIRED, not lost', async () => {
  const { bus, runner, answerOf, fails } = setup();
  await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-6', idleMs: 10_000, lifetimeMs: 10_000 } });
  // published before the host ends the lease, delivered after: the subscription drains
  const late = fails(bus.request(s.actorCall('lease-6'), encode('leased_task', { leaseId: 'lease-6', taskId: 'p', code: code('add', 1, 1), attempt: 0 }), { timeoutMs: 2000 }).then((m) => decodeReply(m.data, { value: taskOutcome })));
  runner.leases.revoke(['lease-6']);
  assert.is((await late).code, 'LEASE_EXPIRED');
});

test('a task that fails ends its lease at once: the driver never hears of it', async () => {
  const { runner, ended, answerOf, fails } = setup();
  await fails(answerOf({ taskId: 't1', code: code('fail', 'no'), lease: { leaseId: 'lease-3', idleMs: 10_000, lifetimeMs: 10_000 } }));
  assert.is(runner.leases.size, 0);
  assert.equal(ended, ['lease-3']);
});

test('a revoked lease ends at once when idle, after its task when busy', async () => {
  const { bus, runner, ended, answerOf } = setup();
  const grant = (leaseId: string) => ({ leaseId, idleMs: 10_000, lifetimeMs: 10_000 });
  await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: grant('idle') });
  await answerOf({ taskId: 't2', code: code('add', 1, 1), lease: grant('busy') });
  const running = bus.request(s.actorCall('busy'), encode('leased_task', { leaseId: 'busy', taskId: 'p', code: code('slow', 20), attempt: 0 }), { timeoutMs: 2000 });
  await new Promise((r) => setTimeout(r, 5));
  runner.leases.revoke(['idle', 'busy', 'unknown']);
  assert.equal(ended, ['idle']);
  assert.equal(decodeReply((await running).data, { value: taskOutcome }), { kind: 'done', value: 'p' }, 'the running task still answers');
  assert.equal(ended, ['idle', 'busy']);
});

test('malformed pushes are answered with their wire error; the lease goes on', async () => {
  const { bus, runner, answerOf } = setup();
  await answerOf({ taskId: 't1', code: code('add', 1, 1), lease: { leaseId: 'lease-4', idleMs: 10_000, lifetimeMs: 10_000 } });
  const ask = (data: Uint8Array) => bus.request(s.actorCall('lease-4'), data, { timeoutMs: 2000 }).then((m) => decode(m.data, { registry: { reply: messages.reply } }).body);
  const codes = [];
  for (const data of [new Uint8Array([0xc1]), encode('actor_call', { method: 'x', args: [] }), encode('leased_task', { leaseId: 'lease-4' } as never), encode('leased_task', { leaseId: 'other', taskId: 'p', code: code('add'), attempt: 0 })]) {
    const body = await ask(data);
    codes.push(body.ok ? 'ok' : body.error.code);
  }
  assert.equal(codes, ['MALFORMED', 'UNKNOWN_TYPE', 'INVALID_MESSAGE', 'LEASE_MISMATCH']);
  assert.is(runner.leases.size, 1);
  runner.stop();
  assert.is(runner.leases.size, 0);
});

test('a function exported only as what defineTask returned (the decorated form) runs', async () => {
  const { answerOf } = setup();
  assert.equal(await answerOf({ taskId: 't1', code: { moduleUrl: DECORATED_URL, functionName: 'square', args: [9] } }), { kind: 'done', value: 81 });
  assert.equal(await answerOf({ taskId: 't2', code: { moduleUrl: DECORATED_URL, functionName: 'whereTask', args: [] } }), { kind: 'done', value: { nodeId: node.nodeId, taskId: 't2' } });
});

test('a node: or data: module is answered CODE_SOURCE_REFUSED and never imported', async () => {
  const { answerOf, fails } = setup();
  const flag = '__orreryTaskSpecImported';
  for (const moduleUrl of ['node:child_process', `data:text/javascript,globalThis.${flag}=true;export function f(){}`]) {
    const err = await fails(answerOf({ taskId: 't', code: { moduleUrl, functionName: moduleUrl.startsWith('node:') ? 'execSync' : 'f', args: ['true'] } }));
    assert.instance(err, CodeSourceRefusedError, moduleUrl);
    assert.is(err.code, 'CODE_SOURCE_REFUSED');
  }
  assert.is((globalThis as Record<string, unknown>)[flag], undefined, 'the data: module never ran');
});

test.run();
