// A secured cluster over TLS, on real processes: a CA and a server certificate made here with
// openssl, a nats-server configured with them and with orrery auth init's users, a GCS and a raylet
// started with --creds and --tls-ca (the raylet's worker host connects the same way), and a driver
// with connect({ creds, tls }). A client that does not trust the CA is refused, and says so.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { authInit, type AuthFiles } from '../../runtime/auth/init.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { connect, type Cluster } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import type { ConnectionFailedError } from '../../runtime/bus/errors.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const s = suite('TLS and credentials (openssl certificates, nats-server, GCS and raylet processes)');
let dir: string;
let files: AuthFiles;
let server: NatsServerHandle;
let ca: string;
const procs: RuntimeProcess[] = [];
let driver: Cluster | undefined;

const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orrery-tls-'));
  // a CA, and a server certificate it signs for 127.0.0.1 (nats.js checks an IP address's
  // certificate under the name localhost, so the certificate names both)
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=orrery spec CA', '-keyout', 'ca-key.pem', '-out', 'ca.pem');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server-key.pem', '-out', 'server.csr');
  appendFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.pem');
  ca = join(dir, 'ca.pem');
  files = authInit({ dir: join(dir, 'auth'), cluster: 'default' });
  appendFileSync(files.config, `tls {\n  cert_file: ${JSON.stringify(join(dir, 'server.pem'))}\n  key_file: ${JSON.stringify(join(dir, 'server-key.pem'))}\n}\n`);
  server = await startNatsServer({ config: files.config });
  const common = ['--address', server.url, '--cluster', 'default', '--tls-ca', ca];
  procs.push(await spawnRuntimeProcess('gcs', [...common, '--creds', files.creds.gcs]));
  procs.push(await spawnRuntimeProcess('raylet', [...common, '--creds', files.creds.node, '--node-name', 'tls-node', '--num-cpus', '2']));
});

s.after(async () => {
  await driver?.close();
  for (const p of procs.reverse()) await p.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

s('a driver with the CA and its credentials creates an actor (its worker host connected over TLS) and calls it', async () => {
  driver = await connect({ address: server.url, creds: files.creds.driver, tls: { ca } });
  await until('the raylet to register over TLS', async () => ((await driver!.nodes()).some((n) => n.name === 'tls-node' && n.state === 'ALIVE') ? true : undefined));
  const counter = await driver.actor(CounterActor).remote(40);
  await counter.ready({ timeoutMs: 30_000 });
  assert.is(await counter.call('add', 2), 42);
  await counter.kill();
});

s('a client that does not trust the server\'s certificate is refused, naming the address', async () => {
  const err = await connectNatsBus({ servers: server.url, creds: files.creds.driver, connectTimeoutMs: 5000 }).then(
    () => undefined,
    (e: Error & { code?: string }) => e,
  );
  assert.ok(err, 'refused');
  assert.is(err!.code, 'CONNECTION_FAILED');
  assert.ok(err!.message.includes(server.url), err!.message);
  assert.is((err as ConnectionFailedError).transient, false, `a certificate not trusted is not waited out (--connect-wait): ${err!.message}`);
});

s('the right CA without credentials is refused too: TLS is not authentication', async () => {
  const err = await connectNatsBus({ servers: server.url, tls: { ca }, connectTimeoutMs: 5000 }).then(
    () => undefined,
    (e: Error & { code?: string }) => e,
  );
  assert.ok(err);
  assert.match(err!.message, /requires credentials/);
});

s.run();
