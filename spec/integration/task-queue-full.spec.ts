// A raylet's bounded task queue on real processes (a nats-server, a GCS, a raylet whose queue takes
// two tasks — ORRERY_MAX_QUEUED_TASKS — and its task hosts): a task that would wait past the bound is
// answered `full` and not kept, and its driver submits it again after a pause. Nothing is lost — a
// burst larger than the queue runs whole, each task once — and a task refused for the whole of its
// timeout fails with TaskQueueFullError and never runs.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { decode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { startLocalCluster, TaskQueueFullError, type LocalCluster } from '../../runtime/index.ts';
import { Hold, HoldUntil } from '../fixtures/tasks/tasks.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

process.env.ORRERY_MAX_QUEUED_TASKS = '2';

let server: NatsServerHandle;
let local: LocalCluster;
let watcher: NatsConnection;
/** Answers to submit_task that said the queue was full, seen on the wire. */
let fullAnswers = 0;
const dir = mkdtempSync(join(tmpdir(), 'orrery-queue-full-'));

test.before(async () => {
  server = await startNatsServer();
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'one', resources: { CPU: 1 } }] });
  watcher = await natsConnect({ servers: server.url });
  watcher.subscribe('_INBOX.>', {
    callback: (_err, msg) => {
      try {
        const { body } = decode(msg.data, { registry: { reply: messages.reply } });
        if (body.ok && (body.value as { kind?: string } | undefined)?.kind === 'full') fullAnswers++;
      } catch {
        // another kind of message
      }
    },
  });
  await watcher.flush();
});
test.after(async () => {
  await watcher?.close();
  await local?.stop();
  await server?.stop();
  delete process.env.ORRERY_MAX_QUEUED_TASKS;
  rmSync(dir, { recursive: true, force: true });
});

const settle = <T>(p: Promise<T>): Promise<T | unknown> => p.then((v) => v, (e: unknown) => e);
const runs = (marker: string): number => (existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').filter(Boolean).length : 0);

test('a burst larger than the queue: the refused tasks are submitted again and every task runs, once', async () => {
  const [gate, started] = [join(dir, 'gate-burst'), join(dir, 'started-burst')];
  const blocker = settle(local.cluster.task(HoldUntil).options({ numCpus: 1 }).remote(gate, started));
  await until('the CPU taken', () => (existsSync(started) ? true : undefined));
  const before = fullAnswers;
  const markers = Array.from({ length: 6 }, (_, i) => join(dir, `burst-${i}`));
  const tasks = markers.map((m) => settle(local.cluster.task(Hold).options({ numCpus: 1 }).remote(0, m)));
  // two wait in the queue; the other four are refused, and asked again
  await until('refusals on the wire', () => (fullAnswers - before >= 4 ? true : undefined));
  writeFileSync(gate, '');
  for (const p of [blocker, ...tasks]) assert.not.instance(await p, Error);
  assert.equal(markers.map(runs), [1, 1, 1, 1, 1, 1], 'each task ran exactly once');
});

test('a task refused for the whole of its timeout fails with TaskQueueFullError, and never runs', async () => {
  const [gate, started] = [join(dir, 'gate-timeout'), join(dir, 'started-timeout')];
  const blocker = settle(local.cluster.task(HoldUntil).options({ numCpus: 1 }).remote(gate, started));
  await until('the CPU taken', () => (existsSync(started) ? true : undefined));
  const before = fullAnswers;
  const kept = [join(dir, 'kept-0'), join(dir, 'kept-1')];
  const refusedMarker = join(dir, 'refused');
  // submitted in this order on one connection, so the raylet reads them in it: two fill the queue,
  // the third finds it full each time it is asked
  const queued = kept.map((m) => settle(local.cluster.task(Hold).options({ numCpus: 1 }).remote(0, m)));
  const err = await local.cluster.task(Hold).options({ numCpus: 1, timeoutMs: 800 }).remote(0, refusedMarker).catch((e: unknown) => e);
  assert.instance(err, TaskQueueFullError);
  const full = err as TaskQueueFullError;
  assert.is(full.nodeId, (await local.cluster.nodes())[0]!.nodeId);
  assert.equal([full.queue.queued, full.queue.maxQueued], [2, 2]);
  assert.ok(full.waitedMs >= 800, `waited ${full.waitedMs} ms`);
  assert.ok(fullAnswers - before >= 2, 'refused more than once: it was asked again');
  writeFileSync(gate, '');
  for (const p of [blocker, ...queued]) assert.not.instance(await p, Error);
  assert.equal(kept.map(runs), [1, 1]);
  assert.is(runs(refusedMarker), 0, 'the refused task never ran');
});

test('the raylet that refused a task is killed (SIGKILL) while the driver waits to ask it again: the task goes to a node that can take it, and runs once', async () => {
  const [gate, started] = [join(dir, 'gate-killed'), join(dir, 'started-killed')];
  const doomed = await local.addNode({ name: 'doomed', resources: { CPU: 1 }, labels: { pool: 'doomed' } });
  const options = { numCpus: 1, labelSelector: { pool: 'doomed' }, maxRetries: 1 } as const;
  const blocker = settle(local.cluster.task(HoldUntil).options(options).remote(gate, started));
  await until('the CPU taken', () => (existsSync(started) ? true : undefined));
  const before = fullAnswers;
  const markers = Array.from({ length: 3 }, (_, i) => join(dir, `moved-${i}`));
  const tasks = markers.map((m) => settle(local.cluster.task(Hold).options(options).remote(0, m)));
  await until('the third refused', () => (fullAnswers > before ? true : undefined));
  await local.killNode(doomed.nodeId);
  writeFileSync(gate, ''); // the task that held the dead node is retried (maxRetries 1) and may end now
  // a node the tasks fit: each, queued on the dead raylet or refused by it, is submitted there
  await local.addNode({ name: 'heir', resources: { CPU: 1 }, labels: { pool: 'doomed' } });
  for (const p of [blocker, ...tasks]) {
    const outcome = await p;
    assert.not.instance(outcome, Error, outcome instanceof Error ? `${(outcome as { code?: string }).code}: ${outcome.message}` : '');
  }
  assert.equal(markers.map(runs), [1, 1, 1], 'each ran once');
});

test.run();
