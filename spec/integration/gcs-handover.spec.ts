// A leader GCS stopped gracefully (SIGTERM: a rolling upgrade of the control plane) hands its lease
// over, on real processes (a nats-server with JetStream and two GCS processes): it stops serving,
// then writes the lease once more marked released, and the standby takes it at once with the next
// epoch instead of waiting out the lease's ttl. The ttl here (8 s) is longer than the standby's
// poll (2 s), and the standby says which way it took the lease, so the spec reads that rather than
// a time. A standby stopped gracefully leaves the lease alone.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Cluster } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const CLUSTER = 'handover';
let nats: NatsServerHandle;
let cluster: Cluster | undefined;
const gcses: RuntimeProcess[] = [];

const startGcs = async (): Promise<RuntimeProcess> => {
  const p = await spawnRuntimeProcess('gcs', ['--address', nats.url, '--cluster', CLUSTER, '--lease-ms', '8000', '--grace-ms', '100']);
  gcses.push(p);
  return p;
};

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
});

test.after(async () => {
  await cluster?.close().catch(() => undefined);
  for (const p of gcses) await p.stop();
  await nats?.stop();
});

test('a leader stopped with SIGTERM releases its lease and the standby takes it at once with the next epoch; a standby stopped leaves it alone', async () => {
  const leader = await startGcs();
  assert.is(leader.ready.epoch, 1);
  const standby = await startGcs();
  assert.is(standby.ready.standby, true);
  const spare = await startGcs();
  assert.is(spare.ready.standby, true);
  await spare.stop();
  assert.not.match(spare.recentOutput(), /leader lease: released/, 'a standby has nothing to release');

  await leader.stop();
  assert.match(leader.recentOutput(), /leader lease: released \(epoch 1\)/);
  await until('the standby leading', () => (/holding the leader lease with epoch 2/.test(standby.recentOutput()) ? true : undefined), 30_000);
  assert.match(standby.recentOutput(), /leader lease: \S+ released it \(epoch 1\); taken at once/, 'taken because it was released, not because it expired');
  cluster = await connect({ address: nats.url, cluster: CLUSTER });
  assert.equal(await cluster.nodes(), [], 'the new leader serves');
  assert.is((await cluster.gcsStatus()).epoch, 2);
});

test.run();
