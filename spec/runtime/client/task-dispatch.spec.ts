import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { getEventListeners } from 'node:events';
import { TaskDispatcher } from '../../../runtime/client/task-dispatch.ts';
import { TaskAbortedError } from '../../../runtime/client/task-errors.ts';
import type { TaskContext, TaskSubmitter } from '../../../runtime/client/task-submitter.ts';

// The driver's task dispatcher without leases (a submitter that grants none): tasks of one class go
// to raylets in the order they were submitted, at most 16 at once, and one a raylet had no room for
// goes again before those behind it.

const ctx = { bus: { subscribe: () => ({ unsubscribe() {} }) }, subjects: { event: (t: string) => `e.${t}`, actorCall: (id: string) => `a.${id}` } } as unknown as TaskContext;
const spec = (i: number) => ({ taskId: `t${i}`, code: { moduleUrl: 'file:///t.ts', functionName: 'f', args: [] }, namespace: 'default', options: {}, maxRetries: 0 }) as never;

/** A submitter answering each submission on the next turn; `busy` says which attempts a raylet refuses. */
function submitter(busy: (taskId: string, seen: number) => boolean = () => false) {
  const sent: string[] = [];
  let inFlight = 0;
  let most = 0;
  const seen = new Map<string, number>();
  const s = {
    isLive: () => true,
    submit: (task: { taskId: string }) => {
      sent.push(task.taskId);
      const n = (seen.get(task.taskId) ?? 0) + 1;
      seen.set(task.taskId, n);
      most = Math.max(most, ++inFlight);
      return new Promise((resolve) =>
        setImmediate(() => {
          inFlight--;
          resolve(busy(task.taskId, n) ? { busy: true } : { result: { value: task.taskId, taskId: task.taskId, nodeId: 'n1', route: ['n1'], attempts: 1 } });
        }),
      );
    },
  };
  return { s: s as unknown as TaskSubmitter, sent, most: () => most };
}

test('40,000 tasks of one class reach the raylets in submission order, at most 16 at a time', async () => {
  const sub = submitter();
  const d = new TaskDispatcher(ctx, sub.s);
  const n = 40_000;
  const results = await Promise.all(Array.from({ length: n }, (_, i) => d.run(spec(i), 'k')));
  assert.is(results.length, n);
  assert.ok(results.every((r, i) => r.value === `t${i}`));
  assert.ok(sub.sent.every((id, i) => id === `t${i}`), 'sent in submission order');
  assert.is(sub.most(), 16);
  d.close();
});

test('a task a raylet had no room for goes again before the tasks behind it', async () => {
  const sub = submitter((id, seen) => id === 't20' && seen === 1);
  const d = new TaskDispatcher(ctx, sub.s);
  await Promise.all(Array.from({ length: 40 }, (_, i) => d.run(spec(i), 'k')));
  const first = sub.sent.indexOf('t20');
  const again = sub.sent.indexOf('t20', first + 1);
  assert.ok(again > first, 't20 was sent twice');
  const after = sub.sent.slice(first + 1, again);
  // what went between the refusal and the retry was already on its way before the answer came
  assert.ok(after.every((id) => Number(id.slice(1)) < 20 + 16), `sent between: ${after.join(' ')}`);
  assert.ok(sub.sent.slice(again + 1).every((id) => Number(id.slice(1)) > 20), 'nothing older than t20 after its retry');
  d.close();
});

test('a class of options is forgotten once it holds no task and no lease', async () => {
  const sub = submitter();
  const d = new TaskDispatcher(ctx, sub.s);
  // a pin per task: 500 distinct sets of options, as a driver placing tasks node by node makes
  const done = Array.from({ length: 500 }, (_, i) => d.run(spec(i), `pinned-to-n${i}`));
  assert.is(d.classCount, 500, 'each waits in its own class');
  await Promise.all(done);
  assert.is(d.classCount, 0);
  d.close();
});

test('a class holding a worker lease is kept: the next task of its options goes straight to the lease', async () => {
  const pushed: string[] = [];
  let submitted = 0;
  const s = {
    isLive: () => true,
    submit: (task: { taskId: string }) => {
      submitted++;
      return Promise.resolve({ result: { value: task.taskId, taskId: task.taskId, nodeId: 'n1', route: ['n1'], attempts: 1 }, lease: { leaseId: 'lease1', idleMs: 60_000, lifetimeMs: 600_000 } });
    },
    request: (_nodeId: string, subject: string) => {
      pushed.push(subject);
      return Promise.resolve({ kind: 'done', value: 'pushed' });
    },
  } as unknown as TaskSubmitter;
  const d = new TaskDispatcher(ctx, s);
  assert.is((await d.run(spec(1), 'k')).value, 't1');
  assert.is(d.classCount, 1, 'kept while it holds the lease');
  assert.is((await d.run(spec(2), 'k')).value, 'pushed');
  assert.equal([submitted, pushed], [1, ['a.lease1']]);
  d.close();
});

test('an abort fails the tasks still waiting at the driver at once, unsent, and they are never sent; one listener serves them all', async () => {
  const sub = submitter();
  const d = new TaskDispatcher(ctx, sub.s);
  const controller = new AbortController();
  const signal = controller.signal;
  const runs = Array.from({ length: 40 }, (_, i) => d.run({ ...(spec(i) as object), signal, cancelKey: 'k'.repeat(32) } as never, 'k').then((r) => r.value, (e: unknown) => e));
  assert.is(sub.sent.length, 16, '16 out, 24 waiting at the driver');
  assert.is(getEventListeners(signal, 'abort').length, 1, 'one listener for 40 tasks');
  controller.abort('enough');
  const outcomes = await Promise.all(runs);
  // the 16 out are their submissions' to settle (here: answered done); the 24 waiting never left
  assert.equal(outcomes.slice(0, 16), Array.from({ length: 16 }, (_, i) => `t${i}`));
  for (const err of outcomes.slice(16)) {
    assert.instance(err, TaskAbortedError);
    assert.is((err as TaskAbortedError).sent, false);
    assert.is((err as TaskAbortedError).cause, 'enough');
  }
  assert.is(sub.sent.length, 16, 'nothing sent after the abort');
  assert.is(getEventListeners(signal, 'abort').length, 0);
  assert.is(d.classCount, 0, 'the class is forgotten: nothing waits');
  d.close();
});

test.run();
