// Tasks on real processes: a nats-server, a GCS and three raylet processes with forked task hosts.
// The shared table (spec/fixtures/tasks/scenarios.ts), plus what only real processes can show: a
// task host that dies mid-task, and raylets that refuse malformed submissions and go on serving.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { encode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { decode } from '../../protocols/codec.ts';
import { subjects } from '../../protocols/subjects.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startLocalCluster, TaskWorkerDiedError } from '../../runtime/index.ts';
import { CrashOnce, Where } from '../fixtures/tasks/tasks.ts';
import { TASK_NODES, taskSuite } from '../fixtures/tasks/scenarios.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

let server: NatsServerHandle | undefined;
const s = taskSuite(
  'tasks (nats-server, GCS and three raylet processes)',
  async () => {
    server = await startNatsServer();
    return startLocalCluster({ transport: 'nats', address: server.url, nodes: TASK_NODES });
  },
  (s, world) => {
    s('a task whose worker host dies is run again; with maxRetries 0 it fails with TaskWorkerDiedError', async () => {
      const { local, dir } = world();
      const marker = join(dir, 'crash-once');
      const r = await local.cluster.task(CrashOnce).remoteWithInfo(marker);
      assert.ok(existsSync(marker), 'the first run happened, and killed its host');
      assert.is(r.attempts, 2);
      assert.is(r.value, r.nodeId);
      const never = join(dir, 'crash-never-retried');
      const err = await local.cluster.task(CrashOnce).options({ maxRetries: 0, numCpus: 0.5 }).remote(never).catch((e: unknown) => e);
      assert.instance(err, TaskWorkerDiedError);
      assert.is((err as TaskWorkerDiedError).code, 'TASK_WORKER_DIED');
    });

    s('malformed submit_task messages get their wire error; the raylet goes on serving', async () => {
      const { local, ids } = world();
      const bus = await connectNatsBus({ servers: local.address });
      try {
        const subject = subjects('default').raylet(ids.get('us')!, 'submit_task');
        const ask = async (data: Uint8Array) => decode((await bus.request(subject, data, { timeoutMs: 5000 })).data, { registry: { reply: messages.reply } }).body;
        const good = { taskId: 'abcdef0123456789', code: { moduleUrl: 'file:///x.ts', functionName: 'f', args: [] }, namespace: 'default', options: {}, hops: 0, attempt: 0 };
        const cases: [string, Uint8Array][] = [
          ['MALFORMED', new Uint8Array([0xc1, 0x00])],
          ['UNKNOWN_TYPE', encode('actor_call', { method: 'x', args: [] })],
          ['INVALID_MESSAGE', encode('submit_task', { ...good, hops: -1 })],
          ['INVALID_MESSAGE', encode('submit_task', { ...good, code: { moduleUrl: '', functionName: 'f', args: [] } })],
          ['INVALID_MESSAGE', encode('submit_task', { ...good, options: 'fast' } as never)],
          ['INVALID_OPTION', encode('submit_task', { ...good, options: { numCpus: 'many' } })],
        ];
        for (const [code, data] of cases) {
          const body = await ask(data);
          assert.is(body.ok ? 'ok' : body.error.code, code);
        }
        bus.publish(subject, new Uint8Array([0xc1]));
        await bus.flush();
        const pinned = await local.cluster.task(Where).options({ schedulingStrategy: { type: 'NODE_ID_AFFINITY', nodeId: ids.get('us')!, soft: false, spillOnUnavailable: false, failOnUnavailable: false } }).remote();
        assert.is(pinned.nodeName, 'us', 'the raylet still serves tasks');
      } finally {
        await bus.close();
      }
    });
  },
);
s.after(async () => {
  await server?.stop();
});
s.run();
