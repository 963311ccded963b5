import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isHostToRaylet, isRayletToHost, parseRayletToHost } from '../../../protocols/ipc.ts';
import { TurnBatch } from '../../../runtime/worker/turn-batch.ts';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('TurnBatch hands over what one turn pushed as one list, in order, promise chains included', async () => {
  const delivered: number[][] = [];
  const pushed: number[] = [];
  const batch = new TurnBatch<number>((items) => delivered.push(items));
  const push = (n: number): void => {
    pushed.push(n);
    batch.push(n);
  };
  push(1);
  void Promise.resolve().then(() => push(2)).then(() => push(3)).then(() => push(4));
  queueMicrotask(() => push(5));
  assert.equal(delivered, [], 'nothing before the turn ends');
  await turn();
  assert.equal(delivered, [pushed]);
  assert.equal([...pushed].sort(), [1, 2, 3, 4, 5]);
  batch.push(6);
  await turn();
  assert.equal(delivered.slice(1), [[6]]);
  await turn();
  assert.is(delivered.length, 2, 'an empty turn hands over nothing');
});

test('TurnBatch.flush hands over at once, and the turn then delivers only what came after', async () => {
  const delivered: string[][] = [];
  const batch = new TurnBatch<string>((items) => delivered.push(items));
  batch.push('a');
  batch.push('b');
  assert.is(batch.size, 2);
  batch.flush();
  assert.equal(delivered, [['a', 'b']]);
  batch.push('c');
  batch.flush();
  batch.flush();
  batch.push('d');
  await turn();
  await turn();
  assert.equal(delivered, [['a', 'b'], ['c'], ['d']]);
});

test('TurnBatch loses nothing under many pushes spread over turns', async () => {
  const delivered: number[][] = [];
  const batch = new TurnBatch<number>((items) => delivered.push(items));
  let n = 0;
  for (let t = 0; t < 20; t++) {
    for (let i = 0; i < t; i++) batch.push(n++);
    if (t % 3 === 0) batch.flush();
    await turn();
  }
  assert.equal(delivered.flat(), Array.from({ length: n }, (_, i) => i));
  assert.ok(delivered.every((list) => list.length > 0));
});

test('the IPC checks accept request and result lists and refuse malformed entries', () => {
  const actor = { actorId: 'a', code: { moduleUrl: 'file:///x.js', className: 'X', args: [] } };
  assert.ok(isRayletToHost({ type: 'requests', requests: [{ type: 'create', id: 1, actor }, { type: 'kill', id: 2, actorId: 'a' }] }));
  assert.ok(isRayletToHost({ type: 'requests', requests: [] }));
  assert.not.ok(isRayletToHost({ type: 'requests', requests: [{ type: 'create', id: '1', actor }] }));
  assert.not.ok(isRayletToHost({ type: 'requests', requests: [{ type: 'kill', id: 2 }] }));
  assert.not.ok(isRayletToHost({ type: 'requests', requests: [{ type: 'start', id: 2, actorId: 'a' }] }));
  assert.not.ok(isRayletToHost({ type: 'create', id: 1, actor }), 'single creates travel in a requests list');
  assert.ok(isRayletToHost({ type: 'cancel', taskIds: ['t1', 't2'] }));
  assert.not.ok(isRayletToHost({ type: 'cancel', taskIds: 't1' }));
  assert.not.ok(isRayletToHost({ type: 'cancel', taskIds: [''] }));
  const task = { taskId: 't', code: { moduleUrl: 'file:///x.js', functionName: 'f', args: [] }, reply: 'r' };
  assert.ok(isRayletToHost({ type: 'tasks', tasks: [{ id: 1, task: { ...task, cancellable: true } }] }));
  assert.not.ok(isRayletToHost({ type: 'tasks', tasks: [{ id: 1, task: { ...task, cancellable: 'yes' } }] }));
  assert.ok(isHostToRaylet({ type: 'results', results: [{ id: 1, ok: true }, { id: 2, ok: true, value: false }, { id: 3, ok: false, error: { code: 'X', message: 'm' } }] }));
  assert.not.ok(isHostToRaylet({ type: 'results', results: [{ id: 3, ok: false }] }));
  assert.not.ok(isHostToRaylet({ type: 'results', results: {} }));
  assert.not.ok(isHostToRaylet({ type: 'result', id: 1, ok: true }));
});

test('table: the fence messages (renew, fence, and the lease of init) and the code roots of init are checked', () => {
  const node = { nodeId: 'a', nodeName: 'n', labels: {} };
  const cases: { message: unknown; ok: boolean }[] = [
    { message: { type: 'renew', remainingMs: 500, sentAt: 1 }, ok: true },
    { message: { type: 'renew', remainingMs: '500', sentAt: 1 }, ok: false },
    { message: { type: 'renew', remainingMs: 500 }, ok: false },
    { message: { type: 'fence' }, ok: true },
    { message: { type: 'init', cluster: 'c', natsAddress: 'x', node }, ok: true },
    { message: { type: 'init', cluster: 'c', natsAddress: 'x', node, lease: { type: 'fence' } }, ok: true },
    { message: { type: 'init', cluster: 'c', natsAddress: 'x', node, lease: { type: 'renew', remainingMs: 1, sentAt: 2 } }, ok: true },
    { message: { type: 'init', cluster: 'c', natsAddress: 'x', node, lease: { type: 'renew' } }, ok: false },
    { message: { type: 'init', cluster: 'c', natsAddress: 'x', node, codeRoots: ['/srv/app'] }, ok: true },
    { message: { type: 'init', cluster: 'c', natsAddress: 'x', node, codeRoots: '/srv/app' }, ok: false },
    { message: { type: 'init', cluster: 'c', natsAddress: 'x', node, codeRoots: [7] }, ok: false },
  ];
  for (const c of cases) assert.is(isRayletToHost(c.message), c.ok, JSON.stringify(c.message));
});

test('tasks on IPC follow the plain-data rule of every intake: too deep, a function or a class instance is refused with its path', () => {
  const task = (args: unknown[]) => ({ type: 'tasks', tasks: [{ id: 1, task: { taskId: 't1', code: { moduleUrl: 'file:///x.mjs', functionName: 'f', args }, reply: '_INBOX.x.1' } }] });
  assert.ok(isRayletToHost(task([1, 'two', { three: [3] }, new Uint8Array(2), new Date(0)])));
  let deep: unknown = 1;
  for (let i = 0; i < 600; i++) deep = [deep];
  for (const [args, where] of [[[deep], /tasks\[0\]\.task\.code\.args\[0\]/], [[() => 1], /tasks\[0\]\.task\.code\.args\[0\]/], [[new (class Foo {})()], /args\[0\]/]] as const) {
    try {
      parseRayletToHost(task(args as unknown as unknown[]));
      assert.unreachable('refused');
    } catch (err) {
      assert.is((err as { code: string }).code, 'INVALID_MESSAGE');
      assert.match((err as Error).message, where);
    }
  }
});

test('an unknown type names what is expected; a create keeps its body for its own validator', () => {
  try {
    parseRayletToHost({ type: 'explode' });
    assert.unreachable('refused');
  } catch (err) {
    assert.match((err as Error).message, /type: expected one of init, renew, fence, requests, tasks, revoke, cancel, exit/);
  }
  const actor = { actorId: 'a', extra: 'kept for the createActor validator' };
  const parsed = parseRayletToHost({ type: 'requests', requests: [{ type: 'create', id: 1, actor }] });
  assert.is((parsed as unknown as { requests: { actor: unknown }[] }).requests[0].actor, actor);
});

test.run();
