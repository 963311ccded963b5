// A task its driver gave up on while it waited in a raylet's queue never runs, on real processes
// (a nats-server, a GCS, a raylet and its task hosts). The driver's submission carries its call
// timeout; once that passed, the driver's caller has TIMEOUT, so a later run would be a task that
// "failed" and ran anyway — twice, if the caller tried again.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, startLocalCluster, type Cluster, type LocalCluster } from '../../runtime/index.ts';
import { Hold, HoldUntil } from '../fixtures/tasks/tasks.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

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
