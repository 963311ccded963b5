// The driver's side of a raylet's bounded queue (docs/runtime.md, "A raylet's queue is bounded"): a
// submission answered `full` was not kept, so the driver submits it again to the same raylet after
// a pause, for as long as the task's timeout — then fails it with TaskQueueFullError, never having
// run. A fake raylet on the memory bus answers; the submitter is the real one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { decode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import type { SubmitTask } from '../../../protocols/messages/task.ts';
import { encodeOk } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { connectMemoryBus } from '../../../runtime/bus/memory.ts';
import type { ClusterEvent } from '../../../runtime/client/cluster-info.types.ts';
import type { GcsClient } from '../../../runtime/client/gcs-client.ts';
import { TaskAbortedError, TaskQueueFullError } from '../../../runtime/client/task-errors.ts';
import { TaskSubmitter, type TaskSpec } from '../../../runtime/client/task-submitter.ts';
import { until } from '../../helpers/until.ts';

const NODE = 'aaaa000000000001';
const s = subjects('default');
const FULL = { kind: 'full', queued: 2, maxQueued: 2, queuedBytes: 300, maxQueuedBytes: 1000 } as const;

/** A raylet whose queue is full for the first `fullFor` submissions of each task, then runs it. */
function world(fullFor: number) {
  const bus = connectMemoryBus();
  const seen: { taskId: string; hops: number; at: number }[] = [];
  bus.subscribe(s.raylet(NODE, 'submit_task'), (msg) => {
    const { body } = decode(msg.data, { registry: { submit_task: messages.submit_task } }) as { body: SubmitTask };
    seen.push({ taskId: body.taskId, hops: body.hops, at: Date.now() });
    const n = seen.filter((x) => x.taskId === body.taskId).length;
    msg.respond(encodeOk(n <= fullFor ? FULL : { kind: 'done', value: `ran ${body.taskId}` }));
  });
  const gcs = { all: async () => [{ nodeId: NODE, state: 'ALIVE' }] } as unknown as GcsClient;
  const submitter = new TaskSubmitter({ bus, gcs, subjects: s, callTimeoutMs: 10_000, events$: new Subject<ClusterEvent>(), revive: (v) => v });
  return { bus, seen, submitter };
}

const spec = (taskId: string, over: Partial<TaskSpec> = {}): TaskSpec => ({ taskId, code: { moduleUrl: 'file:///t.ts', functionName: 'f', args: [] }, namespace: 'default', options: {}, maxRetries: 0, ...over });

test('a task refused for a full queue is submitted again to the same raylet, after growing pauses, and runs once there is room', async () => {
  const w = world(3);
  const result = await w.submitter.run(spec('t1'));
  assert.is(result.value, 'ran t1');
  assert.equal(result.route, [NODE], 'the same raylet, not a hop');
  assert.equal(w.seen.map((x) => x.hops), [0, 0, 0, 0]);
  const gaps = w.seen.slice(1).map((x, i) => x.at - w.seen[i]!.at);
  assert.ok(gaps[0]! >= 45 && gaps[1]! >= 95 && gaps[2]! >= 195, `pauses of 50, 100 and 200 ms at least: ${gaps.join(', ')}`);
  w.submitter.close();
  await w.bus.close();
});

test('a queue full for the whole of the task\'s timeout fails it with TaskQueueFullError: it never ran', async () => {
  const w = world(Number.POSITIVE_INFINITY);
  const err = await w.submitter.run(spec('t2', { timeoutMs: 400 })).catch((e: unknown) => e);
  assert.instance(err, TaskQueueFullError);
  const full = err as TaskQueueFullError;
  assert.is(full.code, 'TASK_QUEUE_FULL');
  assert.is(full.nodeId, NODE);
  assert.ok(full.waitedMs >= 400, `waited ${full.waitedMs} ms`);
  assert.equal(full.queue, { queued: 2, maxQueued: 2, queuedBytes: 300, maxQueuedBytes: 1000 });
  assert.match(full.message, /did not run: the queue of node aaaa000000000001's raylet stayed full for \d+ ms \(2 of 2 tasks, 300 of 1000 bytes\)/);
  assert.ok(w.seen.length <= 6, `submitted ${w.seen.length} times: pauses, not a busy loop`);
  w.submitter.close();
  await w.bus.close();
});

test('an abort during the pause fails the task at once: not sent, since the raylet did not keep it', async () => {
  const w = world(Number.POSITIVE_INFINITY);
  const controller = new AbortController();
  const run = w.submitter.run(spec('t3', { signal: controller.signal, cancelKey: 'c'.repeat(32) })).catch((e: unknown) => e);
  await until('refused once', () => (w.seen.length >= 1 ? true : undefined));
  controller.abort('enough');
  const err = (await run) as TaskAbortedError;
  assert.instance(err, TaskAbortedError);
  assert.is(err.sent, false, 'the raylet did not keep it');
  w.submitter.close();
  await w.bus.close();
});

test.run();
