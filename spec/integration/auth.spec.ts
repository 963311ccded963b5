// Roles on NATS, on real processes: startLocalCluster({ auth: true }) writes a configuration and one
// credentials file per role (orrery auth init), starts nats-server with it, and runs the GCS and the
// raylets with their own credentials. Every attack of issue 14 that needs only a connection to the
// bus is tried here with each role's credentials, or none, and refused by the server; each role's
// own work goes through; the cluster's state is unchanged after every refusal.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as natsConnect, nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Packr } from 'msgpackr';
import { CALL_BATCH_CODEC } from '../../protocols/call-batch.ts';
import { encode, PROTOCOL_VERSION } from '../../protocols/codec.ts';
import { encodeCall } from '../../protocols/fast-path.ts';
import { decodeReply, encodeOk } from '../../protocols/reply.ts';
import { unknown } from '../../protocols/validate.ts';
import { subjects } from '../../protocols/subjects.ts';
import { readCredentials } from '../../runtime/auth/credentials.ts';
import { authAdd, credsFile } from '../../runtime/auth/init.ts';
import { inboxPrefix, type Role } from '../../runtime/auth/roles.ts';
import type { BatchRequest, Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import type { ConnectionFailedError } from '../../runtime/bus/errors.ts';
import { watchInspection } from '../../runtime/inspect/watch.ts';
import { connect, startLocalCluster, type Cluster, type LocalCluster } from '../../runtime/index.ts';
import { runCli } from '../../runtime/cli/run.ts';
import { CounterActor, SlowStartActor } from '../fixtures/client/actors.ts';
import { TallyActor } from '../fixtures/handles/actors.ts';
import { Add } from '../fixtures/tasks/tasks.ts';
import { outcome } from '../helpers/outcome.ts';
import { until } from '../helpers/until.ts';

const s = suite('authenticated roles (nats-server with orrery auth init, GCS and raylet processes)');
const sub = subjects('default');
/**
 * Short enough that a hold of a driver's loop can outlast it (its heartbeat thread keeps the job
 * through one), long enough for the loop's beats before the thread starts on a loaded machine (3 s
 * was not: a driver of this spec lost its job at load 11).
 */
const JOB_TIMEOUT_MS = 8000;

let local: LocalCluster;
let dir: string;
const clients: Cluster[] = [];
const buses: Bus[] = [];
const raw: NatsConnection[] = [];

const creds = (role: Role): string => credsFile(dir, role);
const client = async (role: Role): Promise<Cluster> => {
  const c = await connect({ address: local.address, creds: creds(role) });
  clients.push(c);
  return c;
};
const bus = async (role: Role): Promise<Bus> => {
  const b = await connectNatsBus({ servers: local.address, creds: creds(role), connectTimeoutMs: 5000 });
  buses.push(b);
  return b;
};
/** A nats.js connection of its own: to watch the server refuse a subscription. */
const rawAs = async (role: Role): Promise<NatsConnection> => {
  const c = readCredentials(creds(role));
  const nc = await natsConnect({ servers: local.address, authenticator: nkeyAuthenticator(c.secret), inboxPrefix: c.inboxPrefix });
  raw.push(nc);
  return nc;
};

/** Whether the server refuses a subscription on `subject` for this connection (it says so at once). */
function subscriptionRefused(nc: NatsConnection, subject: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = nc.subscribe(subject, {
      callback: (err) => {
        if (err) resolve(/permissions violation/i.test(err.message));
      },
    });
    // a subscription the server accepted is answered by nothing; the flush's PONG comes after the
    // server processed the SUB, and a refusal's -ERR comes before that PONG
    void nc.flush().then(() => setImmediate(() => resolve(s.isClosed())));
  });
}

s.before(async () => {
  local = await startLocalCluster({ transport: 'nats', auth: true, nodes: [{ name: 'a', resources: { CPU: 2 } }, { name: 'b', resources: { CPU: 2 } }], jobTimeoutMs: JOB_TIMEOUT_MS });
  dir = local.authDir!;
});

s.after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const b of buses) await b.close().catch(() => undefined);
  for (const nc of raw) await nc.close().catch(() => undefined);
  await local?.stop();
});

s('a connection without credentials is refused, and the error says how to give them', async () => {
  const err = await connectNatsBus({ servers: local.address, connectTimeoutMs: 5000 }).then(
    () => undefined,
    (e: Error & { code?: string }) => e,
  );
  assert.ok(err, 'refused');
  assert.is(err!.code, 'CONNECTION_FAILED');
  assert.match(err!.message, /--creds FILE or ORRERY_CREDS/);
  assert.is((err as ConnectionFailedError).transient, false, 'a refusal is not waited out (--connect-wait)');
});

s('a password in the address never appears in the error', async () => {
  const url = new URL(local.address);
  const err = await connectNatsBus({ servers: `nats://bob:hunter2secret@${url.host}`, connectTimeoutMs: 5000 }).then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err);
  assert.not.match(err!.message, /hunter2secret/);
  assert.match(err!.message, /bob:\*\*\*@/);
});

s('credentials files are 0600 in a 0700 directory, and hold the seed only between the armour lines', async () => {
  const { statSync } = await import('node:fs');
  assert.is(statSync(dir).mode & 0o777, 0o700);
  for (const role of ['gcs', 'node', 'driver', 'observer', 'admin'] as const) {
    assert.is(statSync(creds(role)).mode & 0o777, 0o600, role);
    const c = readCredentials(creds(role));
    assert.is(c.role, role);
    assert.is(c.inboxPrefix, inboxPrefix('default', role));
  }
  assert.is(statSync(join(dir, 'nats-server.conf')).mode & 0o777, 0o600);
  // the configuration names public keys only
  assert.not.match(readFileSync(join(dir, 'nats-server.conf'), 'utf8'), /\bSU[A-Z2-7]{50,}/);
});

s('driver: creates and calls actors, runs tasks, lists state and hears events', async () => {
  const driver = await client('driver');
  const events: string[] = [];
  const sub$ = driver.events$.subscribe((e) => events.push(e.type));
  const counter = await driver.actor(CounterActor).remote(10);
  await counter.ready({ timeoutMs: 30_000 });
  assert.is(await counter.call('add', 5), 15);
  // calls of one turn travel as one call_batch, answered on the driver's own inbox
  assert.equal(await Promise.all([1, 2, 3].map((n) => counter.call('add', n))), [16, 18, 21]);
  assert.is(await driver.task(Add).remote(2, 3), 5);
  assert.ok((await driver.actors()).some((a) => a.actorId === counter.actorId));
  assert.is((await driver.nodes()).length, 2);
  await counter.kill();
  sub$.unsubscribe();
  assert.ok(events.length > 0, 'lifecycle events reached the driver');
});

s("driver: its job's heartbeat thread connects with the driver's credentials and inbox, and its beats keep the job through a hold of the event loop", async () => {
  const driver = await client('driver');
  const counter = await driver.actor(CounterActor).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  const job = (driver as unknown as { job: { heartbeat?: string } }).job;
  await until('the heartbeat beating from its thread', async () => (job.heartbeat === 'thread' ? true : undefined));
  // this process's own code holds its loop past the job timeout: only the thread beats meanwhile
  const end = performance.now() + JOB_TIMEOUT_MS + 2000;
  while (performance.now() < end);
  const info = (await local.cluster.jobs()).find((j) => j.jobId === driver.jobId);
  assert.is(info?.state, 'RUNNING', `the job: ${JSON.stringify(info)}`);
  assert.is(job.heartbeat, 'thread');
  assert.is(await counter.call('add', 1), 2);
  await counter.kill();
});

s('driver: a batched call whose reply fits a message alone but not a reply_batch gets its value — the worker host may publish it to the call\'s own subject in the driver\'s inbox', async () => {
  const driver = await client('driver');
  const tally = await driver.actor(TallyActor).remote(0);
  await tally.ready({ timeoutMs: 30_000 });
  const overhead = encodeOk('x'.repeat(100_000)).byteLength - 100_000;
  const length = 1024 * 1024 - 16 - overhead; // the reply is 16 bytes under the 1 MiB payload limit
  const [text, sum] = await Promise.all([tally.call('text', length), tally.call('add', 2)]);
  assert.is((text as string).length, length);
  assert.is(sum, 2);
  await tally.kill();
});

s('driver: cannot speak for a node, drive a raylet, change nodes or read the view', async () => {
  const b = await bus('driver');
  const before = await local.cluster.nodes();
  const nodeId = before[0].nodeId;
  const forged = [
    [sub.gcs('register_node'), encode('register_node', { nodeId: 'f'.repeat(16), name: 'fake', resources: { CPU: 256, GPU: 8 }, labels: {}, taints: {} } as never)],
    [sub.gcs('heartbeat'), encode('heartbeat', { nodeId } as never)],
    [sub.gcs('set_node_taints'), encode('set_node_taints', { nodeId, add: { x: 'y:NoExecute' } } as never)],
    [sub.gcs('drain_node'), encode('drain_node', { nodeId } as never)],
    [sub.raylet(nodeId, 'create_actor'), new Uint8Array([0x80])],
    [sub.raylet(nodeId, 'kill_actor'), new Uint8Array([0x80])],
    [sub.raylet(nodeId, 'prepare_bundle'), new Uint8Array([0x80])],
    // only the GCS announces itself: a forged gcs_leader would make every client and raylet resend
    [sub.event('gcs_leader'), encode('event', { type: 'gcs_leader', time: 1, epoch: 99, message: 'forged' })],
  ] as const;
  for (const [subject, data] of forged) {
    assert.is(await outcome(() => b.request(subject, data, { timeoutMs: 10_000 })), 'PERMISSION_DENIED', subject);
  }
  const after = await local.cluster.nodes();
  assert.equal(after.map((n) => [n.nodeId, n.state, n.taints]), before.map((n) => [n.nodeId, n.state, n.taints]), 'no node added, no taint, no drain');
  const nc = await rawAs('driver');
  for (const subject of [sub.view(), 'orrery.default.actor.*.call', `${sub.all()}`, '_INBOX.>', `${inboxPrefix('default', 'admin')}.>`, `${inboxPrefix('default', 'gcs')}.>`, sub.allInspect()]) {
    assert.ok(await subscriptionRefused(nc, subject), `subscribe ${subject}`);
  }
  assert.not.ok(await subscriptionRefused(nc, `${inboxPrefix('default', 'driver')}.x`), 'its own inbox is allowed');
});

s('observer: reads nodes, actors and events; changes nothing and creates nothing', async () => {
  const observer = await client('observer');
  assert.is((await observer.nodes()).length, 2);
  await observer.actors();
  const nodeId = (await observer.nodes())[0].nodeId;
  assert.is(await outcome(() => observer.setNodeTaints(nodeId, { add: { evil: 'yes:NoExecute' } })), 'PERMISSION_DENIED');
  assert.is(await outcome(() => observer.actor(CounterActor).remote(1)), 'PERMISSION_DENIED');
  const b = await bus('observer');
  assert.is(await outcome(() => b.request(sub.gcs('kill_actor'), encode('kill_actor', { actorId: 'a'.repeat(16), noRestart: true } as never), { timeoutMs: 10_000 })), 'PERMISSION_DENIED');
  assert.is(await outcome(() => b.request(sub.actorCall('a'.repeat(16)), new Uint8Array([0x80]), { timeoutMs: 10_000 })), 'PERMISSION_DENIED');
  // a refused call_batch fails every call of it, at once rather than at its timeout
  const batchRequests: BatchRequest[] = [];
  const refusedBatch = [0, 1].map(
    (i) => new Promise<string | undefined>((resolve) => batchRequests.push({ data: encodeCall('add', [i]), timeoutMs: 10_000, done: (err) => resolve((err as { code?: string } | undefined)?.code) })),
  );
  b.requestBatch!(sub.actorCall('a'.repeat(16)), batchRequests, CALL_BATCH_CODEC);
  assert.equal(await Promise.all(refusedBatch), ['PERMISSION_DENIED', 'PERMISSION_DENIED']);
  assert.is((await local.cluster.nodes()).find((n) => n.nodeId === nodeId)!.taints.evil, undefined);
  const nc = await rawAs('observer');
  for (const subject of ['orrery.default.actor.*.call', '_INBOX.>', sub.view()]) assert.ok(await subscriptionRefused(nc, subject), `subscribe ${subject}`);
});

s('admin: taints and untaints a node (what a driver may not)', async () => {
  const admin = await client('admin');
  const nodeId = (await admin.nodes()).find((n) => n.name === 'b')!.nodeId;
  const tainted = await admin.setNodeTaints(nodeId, { add: { maintenance: 'yes:NoSchedule' } });
  assert.ok(tainted.taints.maintenance !== undefined);
  const untainted = await admin.setNodeTaints(nodeId, { remove: ['maintenance'] });
  assert.is(untainted.taints.maintenance, undefined);
  const driver = await client('driver');
  assert.is(await outcome(() => driver.setNodeTaints(nodeId, { add: { maintenance: 'yes:NoSchedule' } })), 'PERMISSION_DENIED');
});

s('node: cannot act as the GCS (drive another raylet, publish the view) nor read the answers of drivers', async () => {
  const b = await bus('node');
  const nodeId = (await local.cluster.nodes())[0].nodeId;
  assert.is(await outcome(() => b.request(sub.raylet(nodeId, 'create_actor'), new Uint8Array([0x80]), { timeoutMs: 10_000 })), 'PERMISSION_DENIED');
  assert.is(await outcome(() => b.request(sub.gcs('set_node_labels'), new Uint8Array([0x80]), { timeoutMs: 10_000 })), 'PERMISSION_DENIED');
  assert.is(await outcome(() => b.request(sub.event('gcs_leader'), encode('event', { type: 'gcs_leader', time: 1, epoch: 99, message: 'forged' }), { timeoutMs: 10_000 })), 'PERMISSION_DENIED', 'announce itself as the GCS');
  const nc = await rawAs('node');
  for (const subject of [`${inboxPrefix('default', 'driver')}.>`, `${inboxPrefix('default', 'gcs')}.>`]) {
    assert.ok(await subscriptionRefused(nc, subject), `subscribe ${subject}`);
  }
  // events it may follow: a handle inside a worker host watches its actor's state (docs/actors.md)
  assert.not.ok(await subscriptionRefused(nc, sub.allEvents()), 'subscribe to events');
});

s('wrong credentials (another cluster’s keys) are refused at connect, naming the file and not its seed', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { authInit } = await import('../../runtime/auth/init.ts');
  const other = mkdtempSync(join(tmpdir(), 'orrery-other-auth-'));
  try {
    const files = authInit({ dir: other, cluster: 'default' });
    const err = await connectNatsBus({ servers: local.address, creds: files.creds.driver, connectTimeoutMs: 5000 }).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    assert.ok(err);
    assert.is(err!.code, 'CONNECTION_FAILED');
    assert.match(err!.message, new RegExp(`refused the credentials in ${files.creds.driver.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const seed = readCredentials(files.creds.driver).secret;
    assert.not.match(err!.message, new RegExp(new TextDecoder().decode(seed)));
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});

s('the CLI: --creds or ORRERY_CREDS gives a command its role; without them one line says what is missing', async () => {
  const cli = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env });
    return { code, out, err };
  };
  const open = await cli(['status', '--address', local.address]);
  assert.is(open.code, 1);
  assert.is(open.err.length, 1);
  assert.match(open.err[0], /the server requires credentials: --creds FILE or ORRERY_CREDS.*\[CONNECTION_FAILED\]$/);
  const observer = await cli(['list', 'nodes', '--json', '--address', local.address, '--creds', creds('observer')]);
  assert.is(observer.code, 0, observer.err.join('\n'));
  assert.is((JSON.parse(observer.out.join('\n')) as unknown[]).length, 2);
  const fromEnv = await cli(['list', 'nodes', '--json', '--address', local.address], { ORRERY_CREDS: creds('observer') });
  assert.is(fromEnv.code, 0, fromEnv.err.join('\n'));
  const nodeName = 'a';
  const refused = await cli(['taint', '--node-name', nodeName, '--add', 'evil=yes:NoExecute', '--address', local.address, '--creds', creds('observer')]);
  assert.is(refused.code, 1);
  assert.is(refused.err.length, 1);
  assert.match(refused.err[0], /\[PERMISSION_DENIED\]$/);
  assert.is((await local.cluster.nodes()).find((n) => n.name === nodeName)!.taints.evil, undefined);
  const admin = await cli(['taint', '--node-name', nodeName, '--add', 'drill=yes:NoSchedule', '--address', local.address, '--creds', creds('admin')]);
  assert.is(admin.code, 0, admin.err.join('\n'));
  await cli(['taint', '--node-name', nodeName, '--remove', 'drill', '--address', local.address, '--creds', creds('admin')]);
});

s('driver: what its role may send is still checked — node: and data: code, a payload nested past the limit, one over the size limit — and refused; nothing is created', async () => {
  const b = await bus('driver');
  const driver = await client('driver');
  const before = (await driver.actors()).length;
  const nodeId = (await driver.nodes())[0].nodeId;
  const codeOf = async (subject: string, data: Uint8Array) => outcome(async () => decodeReply((await b.request(subject, data, { timeoutMs: 10_000 })).data, { value: unknown() }));
  const base = { namespace: 'default', options: {}, hops: 0, attempt: 0 };
  assert.is(await codeOf(sub.raylet(nodeId, 'submit_task'), encode('submit_task', { ...base, taskId: 'authtask00000001', code: { moduleUrl: 'node:child_process', functionName: 'execSync', args: ['id'] } } as never)), 'CODE_SOURCE_REFUSED');
  assert.is(await codeOf(sub.gcs('register_actor'), encode('register_actor', { actorId: 'authactor0000001', code: { moduleUrl: 'data:text/javascript,export class C {}', className: 'C', args: [] }, namespace: 'default', options: {} } as never)), 'CODE_SOURCE_REFUSED');
  let deep: unknown = 1;
  for (let i = 0; i < 600; i++) deep = [deep];
  const deepCode = await codeOf(sub.gcs('register_actor'), encode('register_actor', { actorId: 'authactor0000002', code: { moduleUrl: 'file:///x.mjs', className: 'C', args: [deep] }, namespace: 'default', options: {} } as never));
  assert.ok(['INVALID_MESSAGE', 'MALFORMED'].includes(deepCode), deepCode);
  // over the server's max_payload (1 MiB, the GCS's own limit too): the server refuses it, the client says so
  const hugeBytes = new Packr({ useRecords: false, moreTypes: false }).pack({ v: PROTOCOL_VERSION, t: 'register_actor', b: { actorId: 'authactor0000003', code: { moduleUrl: 'file:///x.mjs', className: 'C', args: ['x'.repeat(1_100_000)] }, namespace: 'default', options: {} } });
  const huge = await codeOf(sub.gcs('register_actor'), hugeBytes);
  assert.is(huge, 'TOO_LARGE');
  assert.is((await driver.actors()).length, before, 'nothing registered');
  assert.is((await driver.nodes()).filter((n) => n.state === 'ALIVE').length, 2, 'every raylet up');
});

s('observer: watches the inspection stream — the GCS and every raylet attach and answer it', async () => {
  const b = await bus('observer');
  const publishers = new Set<string>();
  const records: unknown[] = [];
  const sub$ = watchInspection(b, 'default', { onAck: (ack) => publishers.add(ack.publisher) }).subscribe((r) => records.push(r));
  try {
    // the GCS and two raylets (and their worker hosts) answer the watcher's announcement
    await until('the GCS and both raylets to attach', () => (publishers.size >= 3 ? true : undefined), 30_000);
    const observer = await client('observer');
    await observer.nodes();
    assert.ok(publishers.size >= 3, [...publishers].join(','));
  } finally {
    sub$.unsubscribe();
  }
});

s("node: a peer with node credentials that answers another node's create_actor first makes the actor neither fail nor run twice — it is ALIVE there once, no restart spent", async () => {
  const b = await bus('node');
  const target = (await local.cluster.nodes()).find((n) => n.name === 'a')!;
  const marker = join(dir, 'forged-create.log');
  // the peer answers the first two attempts at once, before the raylet's own answer (after a 300 ms
  // constructor): first with bytes that are no message (0xc1 is never used in msgpack), then with an
  // answer under another secret
  let forged = 0;
  const forger = b.subscribe(sub.raylet(target.nodeId, 'create_actor'), (m) => {
    if (forged >= 2) return;
    forged++;
    m.respond(forged === 1 ? new Uint8Array([0xc1]) : encodeOk({ secret: 'x'.repeat(32) }));
  });
  try {
    const actor = await local.cluster.actor(SlowStartActor).options({ labelSelector: { 'orrery.io/node-name': 'a' }, maxRestarts: 3 }).remote(marker, 300);
    await actor.ready({ timeoutMs: 60_000 });
    assert.is(forged, 2, 'the peer answered twice: the GCS asked again after its first forged answer');
    const info = (await local.cluster.actors()).find((a) => a.actorId === actor.actorId)!;
    assert.is(info.state, 'ALIVE');
    assert.is(info.nodeId, target.nodeId, 'created where it was sent');
    assert.is(info.numRestarts, 0, 'no restart spent on a forged answer');
    const starts = readFileSync(marker, 'utf8').split('\n').filter((l) => l.endsWith(' start'));
    assert.is(starts.length, 1, `the constructor ran once: ${starts.join(', ')}`);
    await actor.kill();
  } finally {
    forger.unsubscribe();
  }
});

s('node: a peer with node credentials cannot keep a SIGKILLed raylet ALIVE with heartbeats it forges', async () => {
  const b = await bus('node');
  const victim = (await local.cluster.nodes()).find((n) => n.name === 'b')!;
  await local.killNode(victim.nodeId);
  let forging = true;
  const answers: string[] = [];
  const forge = (async () => {
    for (let seq = 1; forging; seq++) {
      answers.push(await outcome(async () => decodeReply((await b.request(sub.gcs('heartbeat'), encode('heartbeat', { nodeId: victim.nodeId, seq, available: {}, secret: 'x'.repeat(32) }), { timeoutMs: 5000 })).data, { value: unknown() })));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    await until('the killed node to be DEAD', async () => ((await local.cluster.nodes()).find((n) => n.nodeId === victim.nodeId)?.state === 'DEAD' ? true : undefined), 60_000);
  } finally {
    forging = false;
    await forge;
  }
  assert.ok(answers.length > 0);
  assert.ok(answers.every((a) => a === 'NODE_NOT_OWNED' || a === 'ok'), answers.join(','));
  assert.ok(answers.includes('NODE_NOT_OWNED'), `forged beats were refused while the node was registered: ${answers.join(',')}`);
});

s('a driver of its own (orrery auth add) works once the server reloads, and it and the main driver cannot read each other\'s answers', async () => {
  const added = authAdd({ dir, role: 'driver', name: 'billing' });
  local.reloadNats!();
  const billing = await until('the reloaded server knows the new user', () => connect({ address: local.address, creds: added.creds }).catch(() => undefined), 30_000);
  clients.push(billing);
  const counter = await billing.actor(CounterActor).remote(5);
  await counter.ready({ timeoutMs: 30_000 });
  assert.is(await counter.call('add', 1), 6);
  const c = readCredentials(added.creds);
  assert.is(c.role, 'driver');
  assert.is(c.inboxPrefix, '_INBOX.default.driver.billing');
  const main = await rawAs('driver');
  assert.ok(await subscriptionRefused(main, `${c.inboxPrefix}.>`), "the main driver cannot read billing's answers");
  const own = await natsConnect({ servers: local.address, authenticator: nkeyAuthenticator(c.secret), inboxPrefix: c.inboxPrefix });
  raw.push(own);
  assert.ok(await subscriptionRefused(own, `${inboxPrefix('default', 'driver')}.>`), "nor billing the main driver's");
  assert.not.ok(await subscriptionRefused(own, `${c.inboxPrefix}.x`), 'its own inbox is allowed');
  await counter.kill();
});

s('the nats-server crashes and comes back after 1 s: every process presents its credentials again, and the roles hold as before', async () => {
  const driver = await client('driver');
  await local.restartNats!({ downMs: 1000 });
  // the raylet still up (a) registers or heartbeats again over the new connection, as the node role
  await until('node a ALIVE after the outage', async () => ((await driver.nodes()).find((n) => n.name === 'a')?.state === 'ALIVE' ? true : undefined), 60_000);
  const counter = await driver.actor(CounterActor).options({ maxTaskRetries: 3 }).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  assert.is(await counter.call('add', 1), 2, 'a driver creates and calls after the outage');
  // and a role is still held to its subjects on the new server process
  const b = await bus('driver');
  assert.is(await outcome(() => b.request(sub.gcs('heartbeat'), encode('heartbeat', { nodeId: 'x'.repeat(16), seq: 1, available: {} } as never), { timeoutMs: 10_000 })), 'PERMISSION_DENIED');
  await counter.kill();
});

s.run();
