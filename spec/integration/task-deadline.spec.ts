// A task its driver gave up on while it waited in a raylet's queue never runs, on real processes
// (a nats-server, a GCS, a raylet and its task hosts). The driver's submission carries its call
// timeout; once that passed, the driver's caller has TIMEOUT, so a later run would be a task that
// "failed" and ran anyway — twice, if the caller tried again.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom } from 'rxjs';
import { connect, startLocalCluster, type Cluster, type LocalCluster } from '../../runtime/index.ts';
import { Hold, HoldUntil } from '../fixtures/tasks/tasks.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

// the raylet is frozen for a while below: long enough to lapse the default 3 s node timeout on a busy
// machine, which is not what this spec is about
process.env.ORRERY_NODE_TIMEOUT_MS = '60000';

let server: NatsServerHandle;
let local: LocalCluster;
let impatient: Cluster;
const output: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'orrery-task-deadline-'));

test.before(async () => {
  server = await startNatsServer();
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'one', resources: { CPU: 1 } }], onOutput: (line) => output.push(line) });
  impatient = await connect({ address: local.address, callTimeoutMs: 1_500 });
});
test.after(async () => {
  await impatient?.close();
  await local?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a task queued behind a busy CPU past its driver\'s timeout fails TIMEOUT and is never run; the next task gets the CPU', async () => {
  const gate = join(dir, 'gate');
  const busy = join(dir, 'busy');
  const gaveUp = join(dir, 'gave-up');
  const after = join(dir, 'after');
  // holds the node's one CPU until the gate opens
  const holding = local.cluster.task(HoldUntil).options({ numCpus: 1 }).remote(gate, busy);
  await until('the CPU taken', () => (existsSync(busy) ? true : undefined));
  const err = await impatient.task(Hold).options({ numCpus: 1, maxRetries: 0 }).remote(0, gaveUp).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.is((err as { code?: string } | undefined)?.code, 'TIMEOUT', 'the impatient driver gave up');
  await until('the raylet dropped the task nobody waits for', () => (output.some((l) => l.includes('dropped 1 queued task(s) whose driver stopped waiting')) ? true : undefined));
  // the CPU comes free: a queue that still held the dropped task would start it first
  writeFileSync(gate, '');
  await holding;
  await local.cluster.task(Hold).options({ numCpus: 1 }).remote(0, after);
  assert.ok(existsSync(after), 'the next task ran');
  assert.not.ok(existsSync(gaveUp), 'the task whose driver gave up never ran');
});

test('a raylet frozen (SIGSTOP) with the task queued and thawed after its driver gave up, with room waiting for it, drops it rather than run it', async () => {
  const gaveUp = join(dir, 'gave-up-frozen');
  const after = join(dir, 'after-frozen');
  const [node] = await local.cluster.nodes();
  const rayletPid = local.rayletPid!(node.nodeId)!;
  // no node has pool=later yet: the task waits in the raylet's queue, and the raylet says so
  const queued = firstValueFrom(local.cluster.scheduleFailed$.pipe(filter((e) => e.target.kind === 'task' && e.target.name === 'hold')));
  const asked = impatient.task(Hold).options({ numCpus: 1, maxRetries: 0, labelSelector: { pool: 'later' } }).remote(0, gaveUp).then(
    () => undefined,
    (e: unknown) => e,
  );
  await queued;
  // frozen now: the task is in its queue, or (the driver's second try, without a lease) still in its
  // socket, to be read after its driver gave up — either way it must never run
  process.kill(rayletPid, 'SIGSTOP');
  try {
    assert.is(((await asked) as { code?: string } | undefined)?.code, 'TIMEOUT', 'the driver gave up while the raylet was frozen');
    // room for it appears while the raylet cannot see it: the view change waits in its socket
    await local.cluster.setNodeLabels(node.nodeId, { set: { pool: 'later' } });
  } finally {
    process.kill(rayletPid, 'SIGCONT');
  }
  // the raylet's queue is first in, first out: a task it had kept would take the one CPU before this one
  await local.cluster.task(Hold).options({ numCpus: 1, labelSelector: { pool: 'later' } }).remote(0, after);
  assert.ok(existsSync(after), 'a task asking for the new label ran');
  assert.not.ok(existsSync(gaveUp), 'the task whose driver gave up never ran');
});

test('a task\'s own timeoutMs is what its driver waits: longer than the connection\'s call timeout it outlasts it, shorter it fails sooner', async () => {
  // the impatient connection waits 1.5 s for a call; this task runs 2.5 s and asked for 30 s
  const outlasts = await impatient.task(Hold).options({ numCpus: 0.5, timeoutMs: 30_000 }).remote(2_500);
  assert.ok(outlasts.nodeId.length > 0, 'it ran to the end and answered');
  // the cluster's own connection waits 60 s; this task asked for 300 ms, and waits on a gate
  const gate = join(dir, 'gate-2');
  const started = join(dir, 'started-2');
  const started0 = Date.now();
  const err = await local.cluster.task(HoldUntil).options({ numCpus: 0.5, timeoutMs: 300 }).remote(gate, started).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.is((err as { code?: string } | undefined)?.code, 'TIMEOUT');
  assert.ok(Date.now() - started0 < 30_000, 'long before the connection\'s 60 s');
  writeFileSync(gate, ''); // the run goes on where it is, and ends now
});

test.run();
