// Where a driver's job heartbeat runs (runtime/client/job-session.ts): on NATS a thread of its own
// beats once it is connected, and the event loop beats until then — and for good when the thread
// cannot connect. Here the thread is given an address where nothing listens, beside an embedded
// cluster (memory transport) whose GCS ends a job after 600 ms without a heartbeat: the job must
// outlive several timeouts on the loop's beats alone. (The thread beating while the loop is held is
// spec/integration/jobs.spec.ts, on real processes.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connectMemoryBus } from '../../../runtime/bus/memory.ts';
import { GcsClient } from '../../../runtime/client/gcs-client.ts';
import { JobSession } from '../../../runtime/client/job-session.ts';
import { lookupMemoryBroker } from '../../../runtime/client/memory-registry.ts';
import { startLocalCluster, type LocalCluster } from '../../../runtime/index.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { until } from '../../helpers/until.ts';

const JOB_TIMEOUT_MS = 600;
let local: LocalCluster;

test.before(async () => {
  local = await startLocalCluster({ transport: 'memory', nodes: [{ name: 'js1', resources: { CPU: 1 } }], jobTimeoutMs: JOB_TIMEOUT_MS });
});
test.after(async () => {
  await local?.stop();
});

test('a heartbeat thread that cannot connect: the event loop beats on, and the job lives past several timeouts', async () => {
  const bus = connectMemoryBus(lookupMemoryBroker(local.address)!);
  const gcs = new GcsClient(bus, subjects(local.cluster.name), { address: local.address, timeoutMs: 5_000 });
  const session = new JobSession(gcs, { namespace: 'default', name: 'no-thread', thread: { servers: 'nats://127.0.0.1:1', connectTimeoutMs: 200 } });
  session.start();
  const jobId = await session.ownerId();
  const started = performance.now();
  try {
    await until(`job ${jobId} RUNNING for three job timeouts`, async () => {
      const job = (await local.cluster.jobs()).find((j) => j.jobId === jobId);
      assert.is(job?.state, 'RUNNING', `the job: ${JSON.stringify(job)}`);
      return performance.now() - started > 3 * JOB_TIMEOUT_MS ? true : undefined;
    });
    assert.is(session.heartbeat, 'loop');
  } finally {
    await session.close();
    await bus.close();
  }
  assert.is((await local.cluster.jobs()).find((j) => j.jobId === jobId)?.endReason, 'closed');
});

test.run();
