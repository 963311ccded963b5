// An autoscaler process SIGKILLed while a node it launched is still starting, or between draining
// an idle node and terminating it, and the GCS SIGKILLed and started again (or the nats-server down
// while a node starts, its raylet trying to connect meanwhile), on real parts: a
// nats-server this spec starts, a GCS and one fixed node (startLocalCluster), and autoscaler
// processes (runtime/autoscaler/main.ts) whose `local` provider starts raylets in the background,
// recorded in a run dir of the spec's own. The raylet left starting is frozen (SIGSTOP) until the
// next autoscaler has decided, so the race between its registration and that decision always goes
// the same way. Every wait is on a condition, bounded.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { autoscalerGcs, LocalProvider } from '../../runtime/autoscaler/index.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { readRecords } from '../../runtime/cli/run-dir.ts';
import { startLocalCluster, type ActorHandle, type LocalCluster } from '../../runtime/index.ts';
import { isRunning, signal } from '../../runtime/local/process-tree.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import type { AutoscalerStatus } from '../../protocols/messages/autoscaling.ts';
import { CounterActor, type Counter } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const WAIT_MS = 30_000;
let server: NatsServerHandle;
let local: LocalCluster;
const runDir = mkdtempSync(join(tmpdir(), 'orrery-autoscaler-restart-'));
const env = { ...process.env, ORRERY_RUN_DIR: runDir };
const configFile = join(runDir, 'cluster.yaml');
const autoscalers: RuntimeProcess[] = [];
const frozen = new Set<number>();

test.before(async () => {
  server = await startNatsServer({ jetstream: true }); // the GCS keeps its tables there, for the GCS restart below
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'fixed', resources: { CPU: 1 } }] });
  writeFileSync(
    configFile,
    `cluster: default
provider: { type: local }
idleTimeoutSeconds: 1
launchTimeoutSeconds: 120
updateIntervalSeconds: 0.2
nodeTypes:
  worker: { resources: { CPU: 2 }, labels: { type: worker }, minWorkers: 0, maxWorkers: 3 }
`,
  );
});

test.after(async () => {
  for (const pid of frozen) signal(pid, 'SIGCONT');
  for (const a of autoscalers) await a.crash();
  // whatever the local provider left running
  for (const r of readRecords(runDir)) if (r.role === 'raylet') signal(-r.pid, 'SIGKILL');
  await local?.stop();
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

function startAutoscaler(onLine?: (line: string) => void): Promise<RuntimeProcess> {
  return spawnRuntimeProcess('autoscaler', ['--config', configFile, '--address', server.url], { env, onLine }).then((a) => (autoscalers.push(a), a));
}

/** A status the GCS holds from an autoscaler that reported at or after `since` (ms since the epoch) and passes `pass`. */
const statusSince = (since: number, pass: (s: AutoscalerStatus) => boolean, what: string): Promise<AutoscalerStatus> =>
  until(
    what,
    async () => {
      const { status } = await local.cluster.autoscalerStatus();
      return status !== null && status.time >= since && pass(status) ? status : undefined;
    },
    WAIT_MS,
  );

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

/**
 * An autoscaler started with an actor only a worker node takes: resolves once it launched that node,
 * with the node's name and the pid of its raylet — recorded in the run dir as soon as it exists (it
 * runs in a process group of its own, and is not ready yet); looked for without pause, as it
 * registers within a second. `lines` gets everything the autoscaler writes.
 */
async function launchOne(lines: string[] = []): Promise<{ autoscaler: RuntimeProcess; actor: ActorHandle<Counter>; name: string; rayletPid: number }> {
  let launched!: (name: string) => void;
  const launching = new Promise<string>((resolve) => (launched = resolve));
  const autoscaler = await startAutoscaler((line) => {
    lines.push(line);
    const name = /launching (default-worker-[0-9a-f]{6})/.exec(line)?.[1];
    if (name !== undefined) launched(name);
  });
  const actor = (await local.cluster.actor(CounterActor).options({ labelSelector: { type: 'worker' }, numCpus: 2 }).remote(0)) as ActorHandle<Counter>;
  const name = await launching;
  let rayletPid: number | undefined;
  for (const giveUp = Date.now() + WAIT_MS; rayletPid === undefined && Date.now() < giveUp; await new Promise((resolve) => setImmediate(resolve))) {
    rayletPid = readRecords(runDir).find((r) => r.nodeName === name)?.pid;
  }
  assert.ok(rayletPid !== undefined, 'the raylet the autoscaler started is recorded');
  assert.ok(cmdline(rayletPid).includes(name), 'the recorded pid is that raylet');
  return { autoscaler, actor, name, rayletPid };
}

/** Resolves once the raylet process and every raylet record are gone. */
const retired = (rayletPid: number, what: string): Promise<true> =>
  until(what, () => (isRunning(rayletPid) || readRecords(runDir).some((r) => r.role === 'raylet') ? undefined : true), WAIT_MS);

test('an autoscaler SIGKILLed while the node it launched starts: the next one takes the launch over, launches nothing more for that demand, and retires the node once idle', async () => {
  const { autoscaler: first, actor, name, rayletPid } = await launchOne();
  signal(rayletPid, 'SIGSTOP');
  frozen.add(rayletPid);
  signal(first.pid, 'SIGKILL');
  await first.exited;
  assert.ok(isRunning(rayletPid), 'the raylet outlives the autoscaler that started it');

  const startedAt = Date.now();
  const second = await startAutoscaler();
  const taken = await statusSince(startedAt, (s) => s.launching.length > 0, 'the second autoscaler reporting a launch in flight');
  assert.equal(taken.launching.map((l) => l.name), [name], 'the launch it took over, and no launch of its own');
  signal(rayletPid, 'SIGCONT');
  frozen.delete(rayletPid);

  const info = await actor.ready({ timeoutMs: WAIT_MS });
  const node = (await local.cluster.nodes()).find((n) => n.nodeId === info.nodeId)!;
  assert.is(node.name, name, 'the actor runs on the node the first autoscaler launched');
  const settled = await statusSince(Date.now(), (s) => s.launching.length === 0, 'the second autoscaler with nothing in flight');
  assert.equal(settled.nodeTypes.find((t) => t.name === 'worker')?.live, 1, 'one worker node in all');
  const workers = (await local.cluster.nodes()).filter((n) => n.labels['orrery.io/node-group'] === 'worker');
  assert.equal(workers.map((n) => n.name), [name], 'no second worker node ever registered');

  // idle once its actor is gone: drained and terminated by the autoscaler that took it over
  await actor.kill();
  await retired(rayletPid, 'the node retired: its raylet process gone, and its record');
  const after = (await local.cluster.nodes()).find((n) => n.nodeId === info.nodeId);
  assert.ok(after === undefined || after.state === 'DEAD', `the node is gone from the cluster (${after?.state})`);
  await second.stop();
});

test('the GCS SIGKILLed while a launched node starts: the node registers with the next GCS and is taken as launched; nothing more is launched', async () => {
  const lines: string[] = [];
  const { autoscaler: a, actor, name, rayletPid } = await launchOne(lines);
  // held until no GCS runs, so it registers with the next one
  signal(rayletPid, 'SIGSTOP');
  frozen.add(rayletPid);
  await local.killLeaderGcs!();
  signal(rayletPid, 'SIGCONT');
  frozen.delete(rayletPid);
  const restartedAt = Date.now();
  await local.startGcs!();

  const info = await actor.ready({ timeoutMs: WAIT_MS });
  const node = (await local.cluster.nodes()).find((n) => n.nodeId === info.nodeId)!;
  assert.is(node.name, name, 'the actor runs on the node launched before the GCS died');
  const settled = await statusSince(restartedAt, (s) => s.launching.length === 0 && s.nodeTypes.some((t) => t.name === 'worker' && t.live === 1), 'the autoscaler reporting the node live to the new GCS');
  assert.equal(settled.launching, []);
  const workers = (await local.cluster.nodes()).filter((n) => n.labels['orrery.io/node-group'] === 'worker' && n.state === 'ALIVE');
  assert.equal(workers.map((n) => n.name), [name], 'no second worker node');
  assert.ok(!lines.some((l) => /launching default-worker-/.test(l) && !l.includes(name)), `nothing else launched: ${lines.join(' | ')}`);

  await actor.kill();
  await retired(rayletPid, 'the node retired once idle');
  await a.stop();
});

test('an autoscaler killed between draining an idle node and terminating it: the next one finishes the retirement', async () => {
  const { autoscaler: first, actor, rayletPid } = await launchOne();
  const info = await actor.ready({ timeoutMs: WAIT_MS });
  signal(first.pid, 'SIGKILL');
  await first.exited;
  // what the first would have done next, had it lived: the node idle, and drained
  await actor.kill();
  const bus = await connectNatsBus({ servers: server.url, name: 'autoscaler-restart-spec' });
  try {
    await until('the node idle', async () => ((await local.cluster.nodes()).find((n) => n.nodeId === info.nodeId)?.resources.available.CPU === 2 ? true : undefined), WAIT_MS);
    await autoscalerGcs(bus, { cluster: 'default', address: server.url }).drainNode(info.nodeId!);
  } finally {
    await bus.close();
  }
  assert.is((await local.cluster.nodes()).find((n) => n.nodeId === info.nodeId)?.state, 'DRAINING');

  const second = await startAutoscaler();
  await retired(rayletPid, 'the drained node terminated by the next autoscaler');
  const after = (await local.cluster.nodes()).find((n) => n.nodeId === info.nodeId);
  assert.ok(after === undefined || after.state === 'DEAD', `the node is gone from the cluster (${after?.state})`);
  await second.stop();
});

test('the nats-server down while a launched node starts, its raylet trying to connect meanwhile (SIGKILL, back on the same port and store): the raylet waits for the server (--connect-wait, the launch timeout) and joins; nothing else is launched, nothing leaks', async () => {
  const lines: string[] = [];
  const { autoscaler: a, actor, name, rayletPid } = await launchOne(lines);
  // frozen before it connects (it is still loading its modules), let go once the server is down, and
  // the server kept down until the raylet has said it waits
  signal(rayletPid, 'SIGSTOP');
  frozen.add(rayletPid);
  const logFile = readRecords(runDir).find((r) => r.nodeName === name)!.logFile;
  const log = (): string => readFileSync(logFile, 'utf8');
  let resumed = false;
  await server.restart({
    until: () => {
      if (!resumed) signal(rayletPid, 'SIGCONT');
      resumed = true;
      frozen.delete(rayletPid);
      return /does not answer|cannot connect/.test(log()); // waiting, or (without a wait) gone
    },
  });
  assert.match(log(), /trying again for up to 120 s \(--connect-wait\)/);
  const info = await actor.ready({ timeoutMs: WAIT_MS });
  assert.match(log(), /connected to NATS at .* after \d+\.\d s/);
  const node = (await local.cluster.nodes()).find((n) => n.nodeId === info.nodeId)!;
  assert.is(node.name, name, 'the actor runs on the node launched before the outage');
  await statusSince(Date.now(), (s) => s.launching.length === 0 && s.nodeTypes.some((t) => t.name === 'worker' && t.live === 1), 'the autoscaler reporting one worker live after the outage');
  const workers = (await local.cluster.nodes()).filter((n) => n.labels['orrery.io/node-group'] === 'worker' && n.state === 'ALIVE');
  assert.equal(workers.map((n) => n.name), [name], 'one worker node');
  assert.equal(lines.filter((l) => /launching default-worker-[0-9a-f]{6} \(worker\)$/.test(l)).length, 1, `one launch: ${lines.join(' | ')}`);
  assert.not.ok(lines.some((l) => /failed/.test(l)), `no launch failed: ${lines.join(' | ')}`);
  await actor.kill();
  await retired(rayletPid, 'the node retired once idle, and no raylet or record left');
  await a.stop();
});

test('the local provider waits for a raylet that cannot register yet (no GCS for its cluster) rather than kill it; a terminate meanwhile stops it and fails the launch', async () => {
  const provider = new LocalProvider({ cluster: 'nogcs', env });
  const nodeName = 'nogcs-worker-0f0f0f';
  const launch = provider.launch({ nodeType: 'worker', nodeName, labels: { 'orrery.io/node-group': 'worker' }, taints: {}, resources: { CPU: 1 }, address: server.url, cluster: 'nogcs' });
  const outcome = launch.then(
    () => 'ready',
    (err: Error) => err,
  );
  const pid = await until('the raylet recorded as it starts', () => readRecords(runDir).find((r) => r.nodeName === nodeName)?.pid, WAIT_MS);
  assert.equal((await provider.launched()).map((n) => [n.nodeName, n.nodeType]), [[nodeName, 'worker']], 'listed as launched, not registered');
  assert.ok(isRunning(pid));
  await provider.terminate({ nodeType: 'worker', nodeName });
  assert.not.ok(isRunning(pid), 'stopped');
  const failed = await outcome;
  assert.instance(failed, Error, 'the launch failed: its raylet was stopped before it registered');
  assert.match((failed as Error).message, /exited/);
  assert.equal(readRecords(runDir).filter((r) => r.nodeName === nodeName), [], 'no record left');
});

test.run();
