// A task whose AbortSignal aborts, on real processes (a nats-server, a GCS, raylets and their task
// hosts): it fails at once with TaskAbortedError, and — sent or not — it never starts if it was still
// queued. The raylet drops it on the driver's cancel_task. Each case then makes room for the
// aborted tasks and runs a probe task with the same options after them: the raylet's queue is first
// in, first out on one CPU, so a task it had kept would run before the probe.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Subscription } from 'rxjs';
import { InvalidOptionError } from '../../lib/errors.ts';
import { credsFile } from '../../runtime/auth/init.ts';
import { connect, startLocalCluster, TaskAbortedError, type Cluster, type LocalCluster, type ScheduleFailedEvent } from '../../runtime/index.ts';
import { Hold, UntilCancelled } from '../fixtures/tasks/tasks.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

// a raylet is frozen below; the default 3 s node timeout could lapse on a busy machine, which is not
// what this spec is about
process.env.ORRERY_NODE_TIMEOUT_MS = '60000';

let server: NatsServerHandle;
let local: LocalCluster;
let events: Subscription;
/** Task ids the raylets said wait (schedule_failed): such a task is queued on a raylet. */
const waiting = new Set<string>();
const dir = mkdtempSync(join(tmpdir(), 'orrery-task-cancel-'));

test.before(async () => {
  server = await startNatsServer();
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'one', resources: { CPU: 1 } }] });
  events = local.cluster.scheduleFailed$.subscribe((e: ScheduleFailedEvent) => {
    if (e.target.kind === 'task') waiting.add(e.target.id);
  });
});
test.after(async () => {
  events?.unsubscribe();
  await local?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const settle = <T>(p: Promise<T>): Promise<T | unknown> => p.then((v) => v, (e: unknown) => e);

/**
 * Queues a probe task with `pool` from `driver` (the connection that submitted the aborted tasks),
 * gives node `nodeId` that label, and checks that the probe ran and no aborted task did.
 */
async function probeAfter(pool: string, nodeId: string, aborted: string[], driver: Cluster = local.cluster, admin: Cluster = local.cluster, seenBy: Set<string> = waiting): Promise<void> {
  const seen = seenBy.size;
  const probe = join(dir, `probe-${pool}`);
  const ran = driver.task(Hold).options({ numCpus: 1, labelSelector: { pool } }).remote(0, probe);
  // queued behind whatever the raylet kept of the aborted ones (NATS keeps one connection's order)
  await until(`the probe queued (${pool})`, () => (seenBy.size > seen ? true : undefined));
  await admin.setNodeLabels(nodeId, { set: { pool } });
  await ran;
  assert.ok(existsSync(probe), 'the probe ran');
  assert.equal(aborted.filter((m) => existsSync(m)), [], 'no aborted task ran');
}

test('a signal aborted before remote() sends nothing; a bad one is INVALID_OPTION', async () => {
  const marker = join(dir, 'pre');
  const err = await settle(local.cluster.task(Hold).options({ signal: AbortSignal.abort('not now') }).remote(0, marker));
  assert.instance(err, TaskAbortedError);
  assert.is((err as TaskAbortedError).code, 'ABORTED');
  assert.is((err as TaskAbortedError).sent, false);
  assert.is((err as TaskAbortedError).cause, 'not now');
  const bad = await settle(local.cluster.task(Hold).options({ signal: {} as AbortSignal }).remote(0));
  assert.instance(bad, InvalidOptionError);
  assert.match((bad as Error).message, /invalid option signal/);
  await local.cluster.task(Hold).options({ numCpus: 1 }).remote(0);
  assert.not.ok(existsSync(marker), 'it never ran');
});

test('twenty tasks on one signal that no node can place yet — sixteen queued on the raylet, four waiting at the driver: the abort fails each at once, and none runs once room comes', async () => {
  const [node] = await local.cluster.nodes();
  const controller = new AbortController();
  const markers = Array.from({ length: 20 }, (_, i) => join(dir, `batch-${i}`));
  const before = waiting.size;
  const runs = markers.map((m) => settle(local.cluster.task(Hold).options({ numCpus: 1, labelSelector: { pool: 'batch' }, signal: controller.signal }).remote(0, m)));
  // a driver keeps at most 16 submissions of one set of options out at once (task-dispatch.ts)
  await until('sixteen queued on the raylet', () => (waiting.size - before >= 16 ? true : undefined));
  controller.abort(new Error('batch cancelled'));
  const errs = await Promise.all(runs);
  assert.ok(errs.every((e) => e instanceof TaskAbortedError && (e.cause as Error).message === 'batch cancelled'), 'each fails ABORTED, with the reason');
  const sent = (errs as TaskAbortedError[]).filter((e) => e.sent);
  assert.is(sent.length, 16, 'sixteen had reached the raylet');
  assert.match(sent[0].message, /a queued task is dropped unstarted/);
  assert.match((errs as TaskAbortedError[]).find((e) => !e.sent)!.message, /before it was sent: it will not run/);
  await probeAfter('batch', node.nodeId, markers);
});

test('the cancel waits out a frozen raylet (SIGSTOP): aborted while it is frozen, the task is dropped once it thaws', async () => {
  const [node] = await local.cluster.nodes();
  const pid = local.rayletPid!(node.nodeId)!;
  const marker = join(dir, 'frozen');
  const controller = new AbortController();
  const before = waiting.size;
  const run = settle(local.cluster.task(Hold).options({ numCpus: 1, labelSelector: { pool: 'frozen' }, signal: controller.signal }).remote(0, marker));
  await until('queued on the raylet', () => (waiting.size > before ? true : undefined));
  process.kill(pid, 'SIGSTOP');
  try {
    controller.abort();
    const err = await run;
    assert.instance(err, TaskAbortedError, 'the driver needs no answer from the frozen raylet');
    assert.is((err as TaskAbortedError).sent, true);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await probeAfter('frozen', node.nodeId, [marker]);
});

test('an aborted task is not run again elsewhere when its raylet is then killed (SIGKILL)', async () => {
  const [first] = await local.cluster.nodes();
  const marker = join(dir, 'killed');
  const controller = new AbortController();
  const before = waiting.size;
  const run = settle(local.cluster.task(Hold).options({ numCpus: 1, labelSelector: { pool: 'moved' }, signal: controller.signal }).remote(0, marker));
  await until('queued on the raylet', () => (waiting.size > before ? true : undefined));
  controller.abort();
  assert.instance(await run, TaskAbortedError);
  await local.killNode(first.nodeId);
  // a node that fits it now: a driver that retried the task after its node died would run it here
  const other = await local.addNode({ name: 'two', resources: { CPU: 1 } });
  await probeAfter('moved', other.nodeId, [marker]);
});

test('a running task: the abort fails it at once, and the task sees it in getRuntimeContext().signal in its worker host', async () => {
  const [started, marker] = [join(dir, 'running-started'), join(dir, 'running')];
  const controller = new AbortController();
  const run = settle(local.cluster.task(UntilCancelled).options({ numCpus: 1, signal: controller.signal }).remote(started, marker));
  await until('the task running', () => (existsSync(started) ? true : undefined));
  controller.abort();
  const err = await run;
  assert.instance(err, TaskAbortedError);
  assert.is((err as TaskAbortedError).sent, true);
  await until('the task saw the cancel', () => (existsSync(marker) ? true : undefined));
  assert.match(readFileSync(marker, 'utf8'), /^task [0-9a-f]{16} was cancelled by its driver$/);
});

test('with roles on NATS (auth): a driver cancels its own queued task — cancel_task is among its subjects — and it never runs', async () => {
  const secured = await startLocalCluster({ transport: 'nats', auth: true, nodes: [{ name: 'solo', resources: { CPU: 1 } }] });
  const driver = await connect({ address: secured.address, creds: credsFile(secured.authDir!, 'driver') });
  const seen = new Set<string>();
  const sub = driver.scheduleFailed$.subscribe((e) => {
    if (e.target.kind === 'task') seen.add(e.target.id);
  });
  try {
    const [node] = await secured.cluster.nodes();
    const marker = join(dir, 'secured');
    const controller = new AbortController();
    const run = settle(driver.task(Hold).options({ numCpus: 1, labelSelector: { pool: 'secured' }, signal: controller.signal }).remote(0, marker));
    await until('queued on the raylet', () => (seen.size > 0 ? true : undefined));
    controller.abort();
    assert.is(((await run) as TaskAbortedError).sent, true);
    await probeAfter('secured', node.nodeId, [marker], driver, secured.cluster, seen);
  } finally {
    sub.unsubscribe();
    await driver.close();
    await secured.stop();
  }
});

test.run();
