import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseResources } from '../../lib/resources/resource-set.ts';
import { encode } from '../../protocols/codec.ts';
import { decodeReply, encodeOk } from '../../protocols/reply.ts';
import { subjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

// The GCS as a process (runtime/gcs/main.ts) on a private nats-server: its ready line, a node
// registered and an actor placed over NATS, garbage survived, a graceful SIGTERM, and the exit codes
// of a bad flag (2) and of a NATS that is not there (1).

const ENTRY = fileURLToPath(new URL('../../runtime/gcs/main.ts', import.meta.url));

let server: NatsServerHandle;
let bus: Bus;
const started: ChildProcess[] = [];

type Exit = { code: number | null; signal: NodeJS.Signals | null };

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: () => string;
  exited: Promise<Exit>;
  /** The ready line's JSON; rejects when the process exits first. */
  ready: Promise<Record<string, unknown>>;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(process.execPath, [...process.execArgv, ENTRY, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  started.push(child);
  const stdout: string[] = [];
  let err = '';
  let onReady!: (info: Record<string, unknown>) => void;
  const readyLine = new Promise<Record<string, unknown>>((resolve) => (onReady = resolve));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout.push(line);
    if (line.startsWith('ORRERY_READY ')) onReady(JSON.parse(line.slice('ORRERY_READY '.length)) as Record<string, unknown>);
  });
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = Promise.race([readyLine, exited.then((e): never => {
    throw new Error(`gcs exited ${e.code} before it was ready: ${err}`);
  })]);
  ready.catch(() => undefined);
  return { child, stdout, stderr: () => err, exited, ready };
}

async function ask(cluster: string, verb: Parameters<ReturnType<typeof subjects>['gcs']>[0], data: Uint8Array): Promise<any> {
  const msg = await bus.request(subjects(cluster).gcs(verb), data, { timeoutMs: 10_000 });
  return decodeReply(msg.data, { value: unknown() });
}

test.before(async () => {
  server = await startNatsServer();
  bus = await connectNatsBus({ servers: server.url });
});

test.after(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await bus?.close();
  await server?.stop();
});

test('serves after its ready line: a node registers and an actor is placed over NATS; garbage is refused; SIGTERM exits 0', async () => {
  const p = run(['--address', server.url, '--cluster', 'itest', '--rare-resources', 'GPU', '--heartbeat-ms', '100', '--node-timeout-ms', '5000']);
  assert.equal(await p.ready, { role: 'gcs', cluster: 'itest' });
  assert.is(p.stdout.filter((l) => l.startsWith('ORRERY_READY ')).length, 1);

  const total = parseResources({ CPU: 2, GPU: 1 });
  const registered = await ask('itest', 'register_node', encode('register_node', {
    nodeId: 'n1', name: 'n1', labels: { 'orrery.io/node-id': 'n1' }, taints: {},
    resources: { total, available: total }, address: { ip: '127.0.0.1', hostname: 'itest', pid: process.pid },
  }));
  assert.equal(registered, { nodeId: 'n1', heartbeatMs: 100, nodeTimeoutMs: 5000, rareResources: ['GPU'] });
  const created = new Promise<void>((resolve) => {
    const sub = bus.subscribe(subjects('itest').raylet('n1', 'create_actor'), (m) => {
      m.respond(encodeOk(null));
      sub.unsubscribe();
      resolve();
    });
  });
  await bus.flush();
  const info = await ask('itest', 'register_actor', encode('register_actor', {
    actorId: 'a1', code: { moduleUrl: 'file:///x.ts', className: 'C', args: [] }, namespace: 'default', options: { numGpus: 1 },
  }));
  assert.is(info.nodeId, 'n1');
  await created;

  const garbage = await bus.request(subjects('itest').gcs('heartbeat'), Uint8Array.of(0xc1, 0xff), { timeoutMs: 10_000 });
  try {
    decodeReply(garbage.data, { value: unknown() });
    assert.unreachable('garbage accepted');
  } catch (err) {
    assert.is((err as { code: string }).code, 'MALFORMED');
  }
  const nodes = (await ask('itest', 'list_nodes', encode('list_nodes', {}))).items;
  assert.equal(nodes[0].taints, { 'orrery.io/rare-gpu': 'true' });

  p.child.kill('SIGTERM');
  assert.equal(await p.exited, { code: 0, signal: null });
  assert.match(p.stderr(), /refused a message on orrery\.itest\.gcs\.heartbeat: MALFORMED/);
});

test('a bad flag is one line naming it, exit 2', async () => {
  const p = run(['--address', server.url, '--heartbeat-ms', 'often']);
  assert.equal(await p.exited, { code: 2, signal: null });
  const lines = p.stderr().trim().split('\n');
  assert.is(lines.length, 1);
  assert.match(lines[0], /--heartbeat-ms: expected a whole number/);
  assert.equal(p.stdout, []);
});

test('NATS that cannot be reached is one line naming the address, exit 1', async () => {
  const port = await new Promise<number>((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
  const address = `nats://127.0.0.1:${port}`;
  const p = run([], { ORRERY_ADDRESS: address });
  assert.equal(await p.exited, { code: 1, signal: null });
  const lines = p.stderr().trim().split('\n');
  assert.is(lines.length, 1);
  assert.ok(lines[0].includes(address), lines[0]);
});

test.run();
