import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../lib/errors.ts';
import { encode } from '../../protocols/codec.ts';
import { decodeReply } from '../../protocols/reply.ts';
import { subjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { ActorDiedError, specializeError, RemoteError } from '../../runtime/errors.ts';
import { WorkerProcess } from '../../runtime/raylet/worker-process.ts';
import { freePort, startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { StubGcs } from '../runtime/raylet/stub-gcs.ts';
import { hangUpPort } from '../helpers/hang-up-port.ts';
import { call, createSpec, rejection } from '../runtime/worker/support.ts';

const ENTRY = fileURLToPath(new URL('../../runtime/raylet/main.ts', import.meta.url));
const s = subjects('default');

let server: NatsServerHandle;
let bus: Bus;
let gcs: StubGcs;
let gcsBus: Bus;
const started: ChildProcess[] = [];

interface RayletProcess {
  child: ChildProcess;
  nodeId: string;
  nodeName: string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; stdout: string[]; stderr: () => string; exited: RayletProcess['exited'] } {
  const child = spawn(process.execPath, [...process.execArgv, ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  started.push(child);
  const stdout: string[] = [];
  let err = '';
  createInterface({ input: child.stdout! }).on('line', (line) => stdout.push(line));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, stdout, stderr: () => err, exited };
}

async function startRayletProcess(args: string[] = []): Promise<RayletProcess> {
  const p = run(['--address', server.url, ...args]);
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    const lines = createInterface({ input: p.child.stdout! });
    lines.on('line', (line) => {
      if (line.startsWith('ORRERY_READY ')) resolve(JSON.parse(line.slice('ORRERY_READY '.length)) as Record<string, string>);
    });
    void p.exited.then(({ code }) => reject(new Error(`raylet exited ${code} before ready: ${p.stderr()}`)));
  });
  assert.is(ready.role, 'raylet');
  return { child: p.child, nodeId: ready.nodeId, nodeName: ready.nodeName, stderr: p.stderr, exited: p.exited };
}

async function ask(nodeId: string, verb: 'create_actor' | 'kill_actor', data: Uint8Array): Promise<unknown> {
  const msg = await bus.request(s.raylet(nodeId, verb), data, { timeoutMs: 30_000 });
  try {
    return decodeReply(msg.data, { value: unknown() });
  } catch (err) {
    throw err instanceof OrreryError ? specializeError(err) : err;
  }
}

const create = async (nodeId: string, spec: ReturnType<typeof createSpec>) =>
  (await ask(nodeId, 'create_actor', encode('create_actor', spec))) as { actorId: string; incarnation: number; pid: number };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test.before(async () => {
  server = await startNatsServer();
  bus = await connectNatsBus({ servers: server.url, name: 'raylet-spec' });
  gcsBus = await connectNatsBus({ servers: server.url, name: 'stub-gcs' });
  gcs = new StubGcs(gcsBus);
});

test.after(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all([bus.close(), gcsBus.close()]);
  await server.stop();
});

test('a raylet process registers, prints one ready line, and runs actors in a worker process over NATS', async () => {
  const raylet = await startRayletProcess(['--node-name', 'int-1', '--labels', 'zone=a', '--num-cpus', '2', '--taints', 'gpu=yes:NoSchedule']);
  assert.is(raylet.nodeName, 'int-1');
  const reg = gcs.registrations.find((r) => r.nodeId === raylet.nodeId)!;
  assert.is(reg.labels.zone, 'a');
  assert.is(reg.labels['orrery.io/node-name'], 'int-1');
  assert.equal(reg.resources.total, { CPU: 20_000 });
  assert.equal(reg.taints, { gpu: 'yes' });
  assert.is(reg.address.pid, raylet.child.pid);

  const spec = createSpec('Counter', { args: [5], resources: { CPU: 10_000 } });
  const created = await create(raylet.nodeId, spec);
  assert.is(created.actorId, spec.actorId);
  assert.is.not(created.pid, raylet.child.pid);
  assert.is(await call(bus, spec.actorId, 'increment', 2), 7);
  assert.is(await call(bus, spec.actorId, 'pid'), created.pid);
  const context = (await call(bus, spec.actorId, 'context')) as { nodeId: string; nodeName: string; actorId: string };
  assert.equal([context.nodeId, context.nodeName, context.actorId], [raylet.nodeId, 'int-1', spec.actorId]);
  const thrown = await rejection(call(bus, spec.actorId, 'nope'));
  assert.instance(thrown, RemoteError);

  const failing = await rejection(create(raylet.nodeId, createSpec('Failing')));
  assert.instance(failing, RemoteError);
  assert.is(failing.message, 'cannot build a Failing');
  assert.is((await rejection(create(raylet.nodeId, createSpec('NotThere')))).code, 'CODE_LOAD_FAILED');

  const beat = gcs.heartbeats.length;
  await gcs.until(() => gcs.heartbeats.slice(beat).some((h) => h.nodeId === raylet.nodeId && h.available.CPU === 10_000), 'a heartbeat with the lease');

  raylet.child.kill('SIGTERM');
  assert.equal(await raylet.exited, { code: 0, signal: null });
  await until(() => !alive(created.pid), 'the worker host to end with its raylet');
});

test('a worker host started while its NATS server is away waits for it, and then runs the actor it was started for', async () => {
  // the "server" at first: a port that accepts and hangs up at once; each connection is one attempt by the host
  const hangUp = await hangUpPort();
  const { port } = hangUp;
  const starting = WorkerProcess.start({ cluster: 'default', natsAddress: `nats://127.0.0.1:${port}`, node: { nodeId: 'late-node', nodeName: 'late', labels: {} } });
  const started = starting.then((h) => h, (err: unknown) => err as Error);
  let late: NatsServerHandle | undefined;
  let lateBus: Bus | undefined;
  try {
    await until(() => hangUp.attempts >= 2, 'the host trying a second time');
    await hangUp.close();
    late = await startNatsServer({ port });
    const host = await started;
    assert.instance(host, WorkerProcess, `the host started: ${String(host)}`);
    lateBus = await connectNatsBus({ servers: late.url, name: 'late-caller' });
    const spec = createSpec('Counter', { args: [41] });
    await (host as WorkerProcess).create(spec);
    assert.is(await call(lateBus, spec.actorId, 'increment'), 42);
    await (host as WorkerProcess).stop();
  } finally {
    await hangUp.close();
    await lateBus?.close();
    await late?.stop();
  }
});

test('creates and kills of one turn go to a forked host as one message and come back in order, each answered once', async () => {
  const host = await WorkerProcess.start({ cluster: 'default', natsAddress: server.url, node: { nodeId: 'batch-node', nodeName: 'batch', labels: {} } });
  try {
    // One turn: 60 actors; every third is killed right after its create, every fifth throws in its
    // constructor, and a kill of an actor the host never saw — all in one requests message.
    const specs = Array.from({ length: 60 }, (_, i) => createSpec(i % 5 === 4 ? 'Failing' : 'Counter', { args: [i] }));
    const outcomes = specs.map((spec, i) => {
      const created = host.create(spec).then(() => 'created' as const, (err: unknown) => err as Error);
      const killed = i % 3 === 0 ? host.kill(spec.actorId) : undefined;
      return { spec, created, killed };
    });
    const stranger = host.kill('ffffffffffffffff');
    for (const [i, o] of outcomes.entries()) {
      const created = await o.created;
      if (i % 3 === 0) {
        assert.instance(created, ActorDiedError, `actor ${i} was killed while starting`);
        assert.is(await o.killed, true);
        assert.is((await rejection(call(bus, o.spec.actorId, 'get'))).code, 'NO_RESPONDERS');
      } else if (i % 5 === 4) {
        assert.instance(created, RemoteError, `actor ${i}'s constructor threw`);
      } else {
        assert.is(created, 'created', `actor ${i}`);
        assert.is(await call(bus, o.spec.actorId, 'increment'), i + 1, `actor ${i} got its own arguments`);
      }
    }
    assert.is(await stranger, false);
    // a kill then a create of a new incarnation in one turn: the new one runs
    const again = outcomes[1].spec;
    const [killed, recreated] = await Promise.all([host.kill(again.actorId), host.create({ ...again, incarnation: 1, code: { ...again.code, args: [100] } })]);
    assert.is(killed, true);
    assert.is(recreated, undefined);
    assert.is(await call(bus, again.actorId, 'increment'), 101);
  } finally {
    await host.stop();
  }
});

test('actor_died is sent again for as long as no GCS answers: a GCS unreachable for 6 s still hears of the death', async () => {
  const raylet = await startRayletProcess();
  const a = createSpec('Counter');
  const ca = await create(raylet.nodeId, a);
  gcs.silence('actor_died');
  const reported = gcs.died.length;
  const outageStart = Date.now();
  try {
    process.kill(ca.pid, 'SIGKILL');
    await until(() => /actor_died for 1 actor\(s\) not delivered \(attempt 2/.test(raylet.stderr()), 'the raylet trying again');
    // the outage lasts 6 s: before, the raylet gave up after 10 attempts 500 ms apart (~5 s), and
    // the GCS kept the actor ALIVE for good
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 6_000 - (Date.now() - outageStart))));
  } finally {
    await gcs.serve('actor_died');
  }
  await gcs.until(() => gcs.died.length > reported, 'actor_died once the GCS answers again', 15_000);
  assert.equal(gcs.died[reported].actors, [{ actorId: a.actorId, incarnation: 0 }]);
  assert.match(gcs.died[reported].cause, 'SIGKILL');
  raylet.child.kill('SIGKILL');
  await raylet.exited;
});

test('SIGKILL of the worker host reports gcs.actor_died at once; the next actor gets a new host', async () => {
  const raylet = await startRayletProcess();
  const a = createSpec('Counter');
  const b = createSpec('Slow', { incarnation: 3 });
  const [ca, cb] = [await create(raylet.nodeId, a), await create(raylet.nodeId, b)];
  assert.is(ca.pid, cb.pid, 'actors share one worker host by default');
  const reported = gcs.died.length;
  const t0 = Date.now();
  process.kill(ca.pid, 'SIGKILL');
  await gcs.until(() => gcs.died.length > reported, 'actor_died');
  const latency = Date.now() - t0;
  const died = gcs.died[reported];
  assert.is(died.nodeId, raylet.nodeId);
  assert.equal(
    died.actors.sort((x, y) => x.actorId.localeCompare(y.actorId)),
    [
      { actorId: a.actorId, incarnation: 0 },
      { actorId: b.actorId, incarnation: 3 },
    ].sort((x, y) => x.actorId.localeCompare(y.actorId)),
  );
  assert.match(died.cause, `pid ${ca.pid}`);
  assert.match(died.cause, 'SIGKILL');
  assert.ok(latency < 1000, `actor_died took ${latency} ms`);
  assert.is((await rejection(call(bus, a.actorId, 'get'))).code, 'NO_RESPONDERS');

  const c = createSpec('Counter');
  const cc = await create(raylet.nodeId, c);
  assert.is.not(cc.pid, ca.pid);
  assert.is(await call(bus, c.actorId, 'increment'), 1);

  const crasher = createSpec('Crasher', { isolation: 'process' });
  const cr = await create(raylet.nodeId, crasher);
  const before = gcs.died.length;
  await call(bus, crasher.actorId, 'exit', 3);
  await gcs.until(() => gcs.died.length > before, 'actor_died after the actor ended its process');
  assert.equal(gcs.died[before].actors, [{ actorId: crasher.actorId, incarnation: 0 }]);
  assert.match(gcs.died[before].cause, `pid ${cr.pid}`);
  assert.match(gcs.died[before].cause, 'code 3');
  assert.is(await call(bus, c.actorId, 'increment'), 2, 'the shared host is unaffected');

  raylet.child.kill('SIGKILL');
  await raylet.exited;
  await until(() => !alive(cc.pid), 'the worker host to exit when its raylet died');
});

test("isolation 'process' runs the actor in a worker process of its own, ended by kill", async () => {
  const raylet = await startRayletProcess();
  const shared = createSpec('Counter');
  const isolated = createSpec('Counter', { isolation: 'process' });
  const cs = await create(raylet.nodeId, shared);
  const ci = await create(raylet.nodeId, isolated);
  assert.is.not(ci.pid, cs.pid);
  assert.is(await call(bus, isolated.actorId, 'pid'), ci.pid);
  const reported = gcs.died.length;
  // the answer carries the node's secret, as every answer the GCS acts on does (set aside, not printed)
  const { secret, ...killedAnswer } = (await ask(raylet.nodeId, 'kill_actor', encode('raylet_kill_actor', { actorId: isolated.actorId, incarnation: 0 }))) as { killed: boolean; secret?: unknown };
  assert.equal(killedAnswer, { killed: true });
  assert.ok(typeof secret === 'string' && secret.length >= 16, 'the kill answer carries the node secret');
  await until(() => !alive(ci.pid), 'the dedicated host to exit');
  assert.ok(alive(cs.pid));
  assert.is(await call(bus, shared.actorId, 'increment'), 1);
  assert.is(gcs.died.length, reported, 'a kill is not a death to report');
  raylet.child.kill('SIGTERM');
  await raylet.exited;
});

const badFlags: [string[], RegExp][] = [
  [['--num-cpus', 'many'], /^orrery raylet: --num-cpus: expected a number/],
  [['--labels', 'orrery.io/node-id=x'], /^orrery raylet: --labels: .*orrery\.io/],
  [['--taints', 'a=b:Sometimes'], /^orrery raylet: --taints: .*effect/],
  [['--resources', '[1]'], /^orrery raylet: --resources: expected a JSON object/],
  [['--frobnicate'], /^orrery raylet: --frobnicate: unknown flag/],
  [['--labels-file', '/no/such/labels.yaml'], /^orrery raylet: --labels-file: no such file/],
];

for (const [args, line] of badFlags) {
  test(`bad flags exit 2 with one line: ${args.join(' ')}`, async () => {
    const p = run(['--address', server.url, ...args]);
    assert.equal(await p.exited, { code: 2, signal: null });
    const lines = p.stderr().trim().split('\n');
    assert.is(lines.length, 1, p.stderr());
    assert.match(lines[0], line);
    assert.equal(p.stdout, []);
  });
}

test('unreachable NATS exits 1 with one line naming the address', async () => {
  const p = run(['--address', 'nats://127.0.0.1:1']);
  assert.equal(await p.exited, { code: 1, signal: null });
  const lines = p.stderr().trim().split('\n');
  assert.is(lines.length, 1, p.stderr());
  assert.match(lines[0], 'nats://127.0.0.1:1');
});

test('with --connect-wait, a raylet started before its NATS server waits for it, then registers', async () => {
  const port = await freePort();
  const p = run(['--address', `nats://127.0.0.1:${port}`, '--node-name', 'early', '--connect-wait', '60']);
  await until(() => p.stderr().includes('does not answer'), 'the raylet saying it waits for NATS');
  assert.match(p.stderr(), `NATS at nats://127.0.0.1:${port} does not answer (connection refused); trying again for up to 60 s (--connect-wait)`);
  const late = await startNatsServer({ port });
  const lateBus = await connectNatsBus({ servers: late.url, name: 'stub-gcs-late' });
  const lateGcs = new StubGcs(lateBus);
  try {
    await until(() => p.stdout.some((l) => l.startsWith('ORRERY_READY ')), 'the ready line once the server is up', 30_000);
    assert.ok(lateGcs.registrations.some((r) => r.labels['orrery.io/node-name'] === 'early'), 'it registered with the GCS on that server');
    assert.match(p.stderr(), /connected to NATS at nats:\/\/127\.0\.0\.1:\d+ after \d+\.\d s/);
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, { code: 0, signal: null });
  } finally {
    lateGcs.close();
    await lateBus.close();
    await late.stop();
  }
});

test('with --connect-wait, NATS that never answers exits 1 once the wait is over, saying how long it tried', async () => {
  const p = run(['--address', 'nats://127.0.0.1:1', '--connect-wait', '0.6']);
  assert.equal(await p.exited, { code: 1, signal: null });
  const lines = p.stderr().trim().split('\n');
  assert.is(lines.length, 2, p.stderr());
  assert.match(lines[0], 'trying again for up to 0.6 s');
  assert.match(lines[1], /^orrery raylet: cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: connection refused \(tried for \d+\.\d s\)$/);
});

test('a bad --connect-wait exits 2 with one line naming it', async () => {
  const p = run(['--address', server.url, '--connect-wait', 'forever']);
  assert.equal(await p.exited, { code: 2, signal: null });
  assert.match(p.stderr().trim(), /^orrery raylet: --connect-wait: expected seconds from 0 to 86400, got "forever"$/);
});

test('the address can come from ORRERY_ADDRESS', async () => {
  const p = run([], { ORRERY_ADDRESS: server.url });
  await until(() => p.stdout.some((l) => l.startsWith('ORRERY_READY ')), 'the ready line');
  p.child.kill('SIGINT');
  assert.equal(await p.exited, { code: 0, signal: null });
  assert.is(p.stdout.length, 1);
});

test.run();
