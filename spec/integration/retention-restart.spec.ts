// The bounds on what a GCS keeps of things that are gone — dead nodes, removed placement groups —
// across a GCS killed with SIGKILL, on real processes: a nats-server with JetStream, GCS processes,
// raylet processes that stop (and so unregister their nodes). A GCS started again with tighter
// bounds takes them up from its JetStream tables and forgets the oldest, while the live node and its
// actor stay as they were. Every wait is on a condition, bounded.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Cluster } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';
import { CounterActor } from '../fixtures/client/actors.ts';

process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '1500';
const CLUSTER = 'retention';
const WAIT_MS = 30_000;

let nats: NatsServerHandle;
let gcs: RuntimeProcess | undefined;
const raylets: RuntimeProcess[] = [];
let cluster: Cluster | undefined;

const startGcs = (...bounds: string[]): Promise<RuntimeProcess> => spawnRuntimeProcess('gcs', ['--address', nats.url, '--cluster', CLUSTER, '--grace-ms', '500', ...bounds]);
const raylet = (name: string): Promise<RuntimeProcess> => spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', name, '--num-cpus', '4']);

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
});

test.after(async () => {
  await cluster?.close().catch(() => undefined);
  for (const r of raylets) await r.stop();
  await gcs?.stop();
  await nats?.stop();
});

test('a GCS killed and started with tighter bounds forgets the oldest dead nodes and removed groups from its tables; the live node and its actor stay', async () => {
  gcs = await startGcs();
  const keeps = await raylet('keeps');
  raylets.push(keeps);
  cluster = await connect({ address: nats.url, cluster: CLUSTER });
  const c = cluster;
  for (const name of ['gone1', 'gone2', 'gone3']) {
    const r = await raylet(name);
    await until(`${name} ALIVE`, async () => ((await c.nodes()).some((n) => n.name === name && n.state === 'ALIVE') ? true : undefined), WAIT_MS);
    await r.stop(); // unregisters: DEAD at once
    await until(`${name} DEAD`, async () => ((await c.nodes()).some((n) => n.name === name && n.state === 'DEAD') ? true : undefined), WAIT_MS);
  }
  const actor = await c.actor(CounterActor).remote(7);
  const alive = await actor.ready({ timeoutMs: WAIT_MS });
  const removed: string[] = [];
  for (let i = 0; i < 3; i++) {
    const pg = await c.placementGroup({ bundles: [{ CPU: 1 }] });
    await pg.ready({ timeoutMs: WAIT_MS });
    await pg.remove();
    removed.push(pg.id);
  }
  assert.is((await c.nodes()).filter((n) => n.state === 'DEAD').length, 3, 'the default bounds keep all three');
  assert.is((await c.placementGroups()).filter((g) => g.state === 'REMOVED').length, 3);

  await gcs.crash();
  gcs = await startGcs('--max-dead-nodes', '1', '--max-removed-groups', '1');

  await until('the bounds taken up', async () => {
    const dead = (await c.nodes()).filter((n) => n.state === 'DEAD');
    const groups = (await c.placementGroups()).filter((g) => g.state === 'REMOVED');
    return dead.length === 1 && groups.length === 1 ? { dead, groups } : undefined;
  }, WAIT_MS);
  const nodes = await c.nodes();
  assert.equal(nodes.filter((n) => n.state === 'DEAD').map((n) => n.name), ['gone3'], 'the newest death is the one kept');
  assert.equal((await c.placementGroups()).map((g) => g.id), [removed[2]], 'the newest removal is the one kept');
  assert.equal(nodes.filter((n) => n.state === 'ALIVE').map((n) => n.name), ['keeps']);
  const info = (await c.actors()).find((a) => a.actorId === actor.actorId)!;
  assert.equal([info.state, info.nodeId, info.numRestarts], ['ALIVE', alive.nodeId, 0], 'the actor was not touched');
  assert.is(await actor.call('add', 1), 8);
});

test.run();
