// A secured cluster started the way docs/security.md says, with the orrery command: a head with
// --auth-dir runs its GCS and raylet with gcs.creds and node.creds on a nats-server that runs the
// configuration `orrery auth init` wrote; a node joins with --creds node.creds; an observer reads;
// a command without credentials is refused in one line; `orrery stop` ends it all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { authInit, CONFIG_FILE, credsFile } from '../../runtime/auth/init.ts';
import type { NodeInfo } from '../../runtime/index.ts';
import { runOrrery, type CliResult } from '../helpers/orrery-cli.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

const runDir = mkdtempSync(join(tmpdir(), 'orrery-cli-auth-run-'));
const authDir = join(mkdtempSync(join(tmpdir(), 'orrery-cli-auth-')), 'keys');

function orrery(args: string[]): Promise<CliResult> {
  return runOrrery(args, { ORRERY_ADDRESS: '', ORRERY_CREDS: '', ORRERY_RUN_DIR: runDir });
}

let server: NatsServerHandle | undefined;
test.after(async () => {
  await orrery(['stop']);
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
  rmSync(authDir, { recursive: true, force: true });
});

test('start --head --auth-dir and start --creds node.creds make a secured cluster; observers read it; no credentials, no access', async () => {
  authInit({ dir: authDir });
  server = await startNatsServer({ config: join(authDir, CONFIG_FILE) });
  const head = await orrery(['start', '--head', '--auth-dir', authDir, '--address', server.url, '--node-name', 'head', '--num-cpus', '1']);
  assert.is(head.code, 0, head.stderr);
  assert.match(head.stdout, /Started the head of cluster "default"/);
  const worker = await orrery(['start', '--address', server.url, '--creds', credsFile(authDir, 'node'), '--node-name', 'w1', '--num-cpus', '1']);
  assert.is(worker.code, 0, worker.stderr);

  const list = await orrery(['list', 'nodes', '--json', '--address', server.url, '--creds', credsFile(authDir, 'observer')]);
  assert.is(list.code, 0, list.stderr);
  const nodes = JSON.parse(list.stdout) as NodeInfo[];
  assert.equal(nodes.map((n) => `${n.name}:${n.state}`).sort(), ['head:ALIVE', 'w1:ALIVE']);

  const anonymous = await orrery(['status', '--address', server.url]);
  assert.is(anonymous.code, 1);
  assert.is(anonymous.stderr.trim().split('\n').length, 1, anonymous.stderr);
  assert.match(anonymous.stderr, /--creds FILE or ORRERY_CREDS/);

  const observerWrites = await orrery(['label', '--node-name', 'w1', '--set', 'team=ml', '--address', server.url, '--creds', credsFile(authDir, 'observer')]);
  assert.is(observerWrites.code, 1, 'an observer labels nothing');
  assert.match(observerWrites.stderr, /PERMISSION_DENIED|does not let these credentials/);
  const adminWrites = await orrery(['label', '--node-name', 'w1', '--set', 'team=ml', '--address', server.url, '--creds', credsFile(authDir, 'admin')]);
  assert.is(adminWrites.code, 0, adminWrites.stderr);

  const stop = await orrery(['stop']);
  assert.is(stop.code, 0, stop.stderr);
  assert.is(stop.stdout.split('\n').filter((l) => l.startsWith('stopped')).length, 3, stop.stdout);
});

test.run();
