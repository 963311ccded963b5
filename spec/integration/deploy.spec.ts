// docs/deploy.md, section 2, as written: on a cluster of three nats-servers, `orrery start --gcs`
// twice (the first leads, the second is a hot standby), `orrery start --address … --labels zone=a
// --num-cpus 2` for a node, a driver on ORRERY_ADDRESS, `orrery status`. Then the leading GCS is
// killed (SIGKILL): the standby takes over — the node stays ALIVE, the actor keeps answering, and a
// new actor is created and placed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Cluster } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { runOrrery } from '../helpers/orrery-cli.ts';
import { startNatsCluster, type NatsClusterHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const runDir = mkdtempSync(join(tmpdir(), 'orrery-deploy-'));
let nats: NatsClusterHandle;
let addr: string;
let env: NodeJS.ProcessEnv;
let client: Cluster | undefined;

test.before(async () => {
  nats = await startNatsCluster();
  addr = nats.servers.map((s) => s.url).join(',');
  env = { ORRERY_RUN_DIR: runDir, ORRERY_ADDRESS: '' };
});

test.after(async () => {
  await client?.close().catch(() => undefined);
  await runOrrery(['stop'], env);
  await nats?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

const pidIn = (line: string): number => Number(/\(pid (\d+)\)/.exec(line)?.[1]);

test('the commands of docs/deploy.md: a leader and a standby GCS, a node, a driver, status; the leader killed, the standby serves', async () => {
  const leader = await runOrrery(['start', '--gcs', '--address', addr], env);
  assert.is(leader.code, 0, leader.stderr);
  assert.match(leader.stdout, /: the leader/);
  const standby = await runOrrery(['start', '--gcs', '--address', addr], env);
  assert.is(standby.code, 0, standby.stderr);
  assert.match(standby.stdout, /a standby/);
  const node = await runOrrery(['start', '--address', addr, '--labels', 'zone=a', '--num-cpus', '2'], env);
  assert.is(node.code, 0, node.stderr);

  client = await connect({ address: addr });
  const counter = await client.actor(CounterActor).options({ labelSelector: { zone: 'a' } }).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  assert.is(await counter.call('add', 1), 2);
  const status = await runOrrery(['status', '--address', addr], env);
  assert.is(status.code, 0, status.stderr);
  assert.match(status.stdout, /^Nodes: 1\b/m);

  process.kill(pidIn(leader.stdout), 'SIGKILL');
  // the standby takes the lease and serves: a new actor is created and placed
  const second = await until(
    'an actor created through the standby',
    async () => {
      const h = await client!.actor(CounterActor).options({ labelSelector: { zone: 'a' } }).remote(10);
      await h.ready({ timeoutMs: 10_000 });
      return h;
    },
    60_000,
  );
  assert.is(await second.call('add', 1), 11);
  assert.is(await counter.call('add', 1), 3, 'the first actor kept its state: it was never restarted');
  const nodes = await client.nodes();
  assert.equal(nodes.map((n) => n.state), ['ALIVE']);
  assert.is((await counter.info()).numRestarts, 0);
});

test.run();
