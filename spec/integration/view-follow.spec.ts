// Raylets follow the cluster view only while they have task work (runtime/raylet/raylet-tasks.ts,
// "Following the view"), on real processes: a nats-server, a GCS process and two raylet processes.
// The GCS is frozen (SIGSTOP) when a raylet that never had a task gets its first: the task waits for
// the view's snapshot only the request timeout, then runs on the raylet's own node, which the
// raylet always knows. Once the GCS runs again, the raylet reads the view and spills a task that
// does not fit it to the node that view describes. Malformed bytes published on gcs.view meanwhile
// change none of that. Then the GCS is killed outright as a new raylet asks for its first snapshot:
// the request fails at once, a task that fits the raylet's own node runs, and one that fits no node
// it knows waits until a new GCS leads and its view says where to spill it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { subjects } from '../../protocols/subjects.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { frozen } from '../helpers/frozen.ts';
import { gcsPid as findGcsPid } from '../helpers/gcs-pid.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

const FIXTURES = new URL('../fixtures/tasks/tasks.ts', import.meta.url).href;
const s = subjects('default');

let server: NatsServerHandle;
let local: LocalCluster;
let bus: Bus;
let gcsPid: number | undefined;

test.before(async () => {
  server = await startNatsServer({ jetstream: true });
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'small', resources: { CPU: 1 } }, { name: 'big', resources: { CPU: 4 } }] });
  bus = await connectNatsBus({ servers: server.url });
  gcsPid = findGcsPid();
});
test.after(async () => {
  if (gcsPid !== undefined) process.kill(gcsPid, 'SIGCONT'); // never leave it frozen, whatever failed
  await bus?.close();
  await local?.stop();
  await server?.stop();
});

const submit = async (nodeId: string, body: object) => {
  const msg = await bus.request(s.raylet(nodeId, 'submit_task'), encode('submit_task', body as never), { timeoutMs: 30_000 });
  const reply = decode(msg.data, { registry: { reply: messages.reply } }).body;
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.value as { kind: string; value?: unknown; nodeId?: string };
};

test('a first task while the GCS is frozen runs on its own node after the snapshot wait; once the GCS is back the raylet reads the view and spills', async () => {
  assert.ok(gcsPid !== undefined, 'found the GCS process');
  const nodes = await local.cluster.nodes();
  const small = nodes.find((n) => n.name === 'small')!;
  const big = nodes.find((n) => n.name === 'big')!;

  process.kill(gcsPid!, 'SIGSTOP');
  const task = { taskId: 'f0110f0110f01101', code: { moduleUrl: FIXTURES, functionName: 'add', args: [20, 22] }, namespace: 'default', options: {}, hops: 0, attempt: 0 };
  try {
    const frozenAt = await new Promise<number>((resolve) => {
      const poll = (): void => (frozen(gcsPid!) ? resolve(performance.now()) : void setTimeout(poll, 5));
      poll();
    });
    // a hostile or broken peer publishes on gcs.view meanwhile: the decisions below are as the view says
    bus.publish(s.view(), new Uint8Array([0xc1, 0x00]));
    const answer = await submit(small.nodeId, task);
    assert.equal(answer, { kind: 'done', value: 42 }, 'run here: it fits this node');
    assert.ok(performance.now() - frozenAt >= 1_000, 'it waited for the view first (the request timeout is 2 s)');
  } finally {
    process.kill(gcsPid!, 'SIGCONT');
  }

  // 2 CPUs do not fit `small`: decided on the view the raylet reads now that the GCS answers
  const spilled = await submit(small.nodeId, { ...task, taskId: 'f0110f0110f01102', options: { numCpus: 2 } });
  assert.equal(spilled, { kind: 'spillback', nodeId: big.nodeId });
  const ran = await submit(big.nodeId, { ...task, taskId: 'f0110f0110f01102', options: { numCpus: 2 }, hops: 1 });
  assert.equal(ran, { kind: 'done', value: 42 });
});

test('the GCS killed (SIGKILL) as a raylet asks for its first snapshot: a task that fits runs at once; one that fits no node it knows waits, and is spilled once a new GCS leads', async () => {
  const fresh = await local.addNode({ name: 'fresh', resources: { CPU: 1 } });
  const big = (await local.cluster.nodes()).find((n) => n.name === 'big')!;
  await local.killLeaderGcs!();
  gcsPid = undefined; // nothing left to SIGCONT
  const task = { taskId: 'f0110f0110f01103', code: { moduleUrl: FIXTURES, functionName: 'add', args: [20, 22] }, namespace: 'default', options: {}, hops: 0, attempt: 0 };
  // nothing subscribes the GCS's subjects: the snapshot request fails at once, and the raylet decides on its own node
  assert.equal(await submit(fresh.nodeId, task), { kind: 'done', value: 42 }, 'run here: it fits this node');
  // 2 CPUs fit no node this raylet knows yet: it waits for the view, which comes once a GCS leads again
  const waiting = submit(fresh.nodeId, { ...task, taskId: 'f0110f0110f01104', options: { numCpus: 2 } });
  await local.startGcs!();
  assert.equal(await waiting, { kind: 'spillback', nodeId: big.nodeId }, 'spilled to the node the new GCS\'s view describes');
});

test.run();
