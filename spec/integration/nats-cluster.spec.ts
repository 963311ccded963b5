// orrery on a cluster of three nats-servers (routes on loopback, JetStream on each), every process
// given all three URLs: the GCS keeps its tables with three replicas (R3), raylets started with the
// CLI join through the list, and a driver creates and calls actors on them. Killing one server under
// it: nats-cluster-failover.spec.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Cluster } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { startNatsCluster, type NatsClusterHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';
import { orrery } from '../runtime/cli/process.ts';

const runDir = mkdtempSync(join(tmpdir(), 'orrery-nats-cluster-'));
let nats: NatsClusterHandle;
let gcs: RuntimeProcess | undefined;
let client: Cluster;
let env: NodeJS.ProcessEnv;

interface StreamDetail {
  name: string;
  config?: { num_replicas?: number };
  cluster?: { leader?: string; replicas?: { name: string }[] };
}

/** Every stream of the account as one server's /jsz reports it. */
async function streams(server: number): Promise<StreamDetail[]> {
  const body = (await (await fetch(`http://127.0.0.1:${nats.servers[server].monitorPort}/jsz?streams=true&config=true`)).json()) as { account_details?: { stream_detail?: StreamDetail[] }[] };
  return (body.account_details ?? []).flatMap((d) => d.stream_detail ?? []);
}

test.before(async () => {
  nats = await startNatsCluster({ monitor: true });
  env = { ORRERY_ADDRESS: nats.url, ORRERY_RUN_DIR: runDir };
  gcs = await spawnRuntimeProcess('gcs', ['--address', nats.url]);
  for (const name of ['node-b', 'node-c']) {
    const r = await orrery(['start', '--node-name', name, '--labels', `at=${name}`, '--num-cpus', '2'], env);
    assert.is(r.code, 0, r.stderr);
  }
  client = await connect({ address: nats.url });
});

test.after(async () => {
  await client?.close();
  await orrery(['stop'], env);
  await gcs?.stop();
  await nats?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

test('processes given the three URLs form one cluster: nodes register, actors run on both, calls answer', async () => {
  const nodes = await until('both nodes', async () => {
    const n = await client.nodes();
    return n.length === 2 ? n : undefined;
  });
  assert.equal(nodes.map((n) => `${n.name}:${n.state}`).sort(), ['node-b:ALIVE', 'node-c:ALIVE']);
  for (const at of ['node-b', 'node-c']) {
    const c = await client.actor(CounterActor).options({ name: `counter-${at}`, labelSelector: { at } }).remote(1);
    const info = await c.ready({ timeoutMs: 30_000 });
    assert.is(info.nodeId, nodes.find((n) => n.name === at)!.nodeId);
    assert.is(await c.call('add', 1), 2);
  }
});

test("the GCS's tables are JetStream KV buckets replicated on all three servers (R3)", async () => {
  const kv = await until('the GCS buckets on every server', async () => {
    const lists = await Promise.all([0, 1, 2].map(streams));
    const mine = lists.map((l) => l.filter((s) => s.name.startsWith('KV_orrery_default_')));
    return mine.every((m) => m.length > 0 && m.length === mine[0].length) ? mine : undefined;
  });
  for (const perServer of kv) {
    for (const s of perServer) {
      assert.is(s.config?.num_replicas, 3, `${s.name}: replicas`);
      // the leader and two other peers: every server holds a copy
      assert.is(1 + (s.cluster?.replicas?.length ?? 0), 3, `${s.name}: peers`);
    }
  }
  assert.ok(kv[0].some((s) => s.name === 'KV_orrery_default_actors'));
});

test.run();
