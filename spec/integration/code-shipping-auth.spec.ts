// Shipped code on a secured cluster (docs/security.md, "Shipped code"): the driver's credentials may
// write the code store and the node's may only read it — a raylet fetches and runs what a driver
// shipped, while a node-role connection cannot add an object, and an observer cannot read one.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { codeBucketName } from '../../protocols/code-store.ts';
import { credsFile } from '../../runtime/auth/init.ts';
import type { Role } from '../../runtime/auth/roles.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { connect, defineActor, startLocalCluster, type Cluster, type LocalCluster } from '../../runtime/index.ts';

const s = suite('shipped code with roles (nats-server with orrery auth init, GCS and raylet processes)');

const work = mkdtempSync(join(tmpdir(), 'orrery-shipping-auth-'));
let local: LocalCluster;
let driver: Cluster;
const buses: Bus[] = [];

const bus = async (role: Role): Promise<Bus> => {
  const b = await connectNatsBus({ servers: local.address, creds: credsFile(local.authDir!, role), connectTimeoutMs: 5000 });
  buses.push(b);
  return b;
};

s.before(async () => {
  mkdirSync(join(work, 'lib'));
  writeFileSync(join(work, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(work, 'lib', 'greeting.ts'), `export const greeting = (who: string): string => 'shipped hello, ' + who;\n`);
  writeFileSync(join(work, 'greeter.ts'), `import { greeting } from './lib/greeting.ts';\nexport class SecureGreeter { greet(who: string): string { return greeting(who); } }\n`);
  local = await startLocalCluster({ transport: 'nats', auth: true, nodes: [{ name: 'a', resources: { CPU: 2 } }] });
  driver = await connect({ address: local.address, creds: credsFile(local.authDir!, 'driver') });
});

s.after(async () => {
  await driver?.close();
  for (const b of buses) await b.close().catch(() => undefined);
  await local?.stop();
  rmSync(work, { recursive: true, force: true });
});

let hash = '';

s('a driver ships a module; the node, reading the store with its own credentials, runs it', async () => {
  const url = pathToFileURL(join(work, 'greeter.ts')).href;
  const { SecureGreeter } = (await import(url)) as { SecureGreeter: new () => { greet(who: string): string } };
  const g = await driver.actor(defineActor(url, SecureGreeter)).remote();
  const info = await g.ready({ timeoutMs: 60_000 });
  assert.is(info.state, 'ALIVE', info.deathCause);
  assert.is(await g.call('greet', 'node'), 'shipped hello, node');
  // the driver's upload went through its permissions: one bundle in the store
  const store = await (await bus('driver')).objectBucket!(codeBucketName('default'), { create: false });
  assert.ok(store);
  const hashes = await listHashes();
  assert.is(hashes.length, 1, hashes.join(', '));
  hash = hashes[0];
  assert.match(hash, /^[0-9a-f]{64}$/);
  assert.ok(await store!.has(hash));
});

s('a node-role connection may read the store but not write it', async () => {
  const node = await (await bus('node')).objectBucket!(codeBucketName('default'), { create: false });
  assert.ok(await node!.has(hash), 'the node reads');
  const wrote = await node!.put('f'.repeat(64), new Uint8Array([1, 2, 3])).then(
    () => 'ok',
    (err: Error) => err.message,
  );
  assert.match(wrote, /permission/i);
  const created = await (await bus('node')).objectBucket!('orrery-code-default', { create: true })!.then((b) => b!.put('e'.repeat(64), new Uint8Array([1]))).then(
    () => 'ok',
    (err: Error) => err.message,
  );
  assert.is.not(created, 'ok');
  const reader = await (await bus('driver')).objectBucket!(codeBucketName('default'), { create: false });
  assert.not.ok(await reader!.has('f'.repeat(64)), 'nothing was added');
  assert.not.ok(await reader!.has('e'.repeat(64)), 'nothing was added');
});

s('an observer cannot read the store', async () => {
  const observer = await (await bus('observer')).objectBucket!(codeBucketName('default'), { create: false });
  const read = await observer!.get(hash).then(
    () => 'ok',
    (err: Error) => err.message,
  );
  assert.is.not(read, 'ok');
});

s('the GCS’s credentials may sweep the store (runtime/gcs/code-sweep.ts): chunks a driver left unnamed are listed and removed; a node’s may not remove them', async () => {
  await asDriver(async (nc) => {
    const { jetstream } = await import('@nats-io/jetstream');
    const js = jetstream(nc);
    for (let i = 0; i < 2; i++) await js.publish(`$O.${codeBucketName('default')}.C.authorphan`, new Uint8Array([i]));
  });
  const node = await (await bus('node')).objectBucket!(codeBucketName('default'), { create: false });
  const refused = await node!.removeChunks!(['authorphan']).then(
    (n) => `removed ${n}`,
    (err: Error) => err.message,
  );
  assert.match(refused, /permission/i);
  const gcs = await (await bus('gcs')).objectBucket!(codeBucketName('default'), { create: false });
  const unnamed = await gcs!.unnamedChunks!();
  assert.equal([...unnamed], [['authorphan', 2]], 'the orphan, and not the shipped bundle');
  assert.is(await gcs!.removeChunks!(['authorphan']), 2);
  assert.equal([...(await gcs!.unnamedChunks!())], []);
  assert.equal(await listHashes(), [hash], 'the shipped bundle stays');
});

/** Runs `fn` on a raw nats.js connection with the driver's credentials. */
async function asDriver<T>(fn: (nc: import('@nats-io/transport-node').NatsConnection) => Promise<T>): Promise<T> {
  const { connect: natsConnect, nkeyAuthenticator } = await import('@nats-io/transport-node');
  const { readCredentials } = await import('../../runtime/auth/credentials.ts');
  const c = readCredentials(credsFile(local.authDir!, 'driver'));
  const nc = await natsConnect({ servers: local.address, authenticator: nkeyAuthenticator(c.secret), inboxPrefix: c.inboxPrefix });
  try {
    return await fn(nc);
  } finally {
    await nc.close();
  }
}

/** The hashes of the code store, read with the driver's credentials. */
async function listHashes(): Promise<string[]> {
  const { Objm } = await import('@nats-io/obj');
  return asDriver(async (nc) => (await (await new Objm(nc).open(codeBucketName('default'))).list()).map((o) => o.name));
}

s.run();
