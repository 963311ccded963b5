// A raylet running 30,000 actors through GCS restarts, on real processes (a nats-server with
// JetStream, a GCS process, one raylet process, the actors in its worker host). A raylet that
// registers again lists every actor incarnation and bundle it runs; 30,000 actors are ~1.2 MB, more
// than the bus's 1 MiB. Before, the GCS refused that register_node as TOO_LARGE: the raylet stopped,
// the node was declared DEAD and all 30,000 actors were lost. Now the list goes ahead in parts
// (gcs.register_running) and the GCS reconciles against the whole of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { subjects } from '../../protocols/subjects.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connect, type ActorHandle, type Cluster, type ClusterEvent } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { CounterActor, type Counter } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const CLUSTER = 'parts';
const ACTORS = 30_000;
const WAIT_MS = 180_000;

let nats: NatsServerHandle;
let gcs: RuntimeProcess;
let raylet: RuntimeProcess;
let cluster: Cluster;
/** A plain connection of the spec's own: it sees the registration's parts go by. */
let watcher: Bus;
const parts: number[] = [];
/** A GCS to SIGKILL the moment the next part is on the bus (from the watcher's own callback: no await between). */
let killOnPart: number | undefined;
const trouble: ClusterEvent[] = [];
let handles: ActorHandle<Counter>[] = [];

const startGcs = (): Promise<RuntimeProcess> => spawnRuntimeProcess('gcs', ['--address', nats.url, '--cluster', CLUSTER, '--grace-ms', '30000']);

/** Every actor ALIVE on the one node, never restarted. */
async function allKeptOn(nodeId: string): Promise<void> {
  await until(
    `all ${ACTORS.toLocaleString('en-US')} actors ALIVE on their node, not restarted`,
    async () => {
      const actors = await cluster.actors();
      return actors.length === ACTORS && actors.every((a) => a.state === 'ALIVE' && a.nodeId === nodeId && a.numRestarts === 0) ? true : undefined;
    },
    WAIT_MS,
  );
}

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
  gcs = await startGcs();
  raylet = await spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', 'crowded', '--num-cpus', '2']);
  cluster = await connect({ address: nats.url, cluster: CLUSTER });
  watcher = await connectNatsBus({ servers: nats.url, connectTimeoutMs: 5000 });
  watcher.subscribe(subjects(CLUSTER).gcs('register_running'), () => {
    parts.push(Date.now());
    if (killOnPart !== undefined) process.kill(killOnPart, 'SIGKILL');
    killOnPart = undefined;
  });
  cluster.events$.subscribe((e) => {
    if (e.type === 'node_dead') trouble.push(e);
  });
  for (let i = 0; i < ACTORS; i += 1_000) {
    const batch = Array.from({ length: 1_000 }, (_, j) => cluster.actor(CounterActor).options({ numCpus: 0 }).remote(i + j));
    handles.push(...((await Promise.all(batch)) as ActorHandle<Counter>[]));
  }
  await Promise.all(handles.map((h) => h.ready({ timeoutMs: WAIT_MS })));
});

test.after(async () => {
  handles = [];
  await watcher?.close().catch(() => undefined);
  await cluster?.close().catch(() => undefined);
  await raylet?.stop();
  await gcs?.stop();
  await nats?.stop();
});

test(`a GCS killed and started again keeps all ${ACTORS.toLocaleString('en-US')} actors of a node where they run, with their state: the raylet registers again in parts`, async () => {
  const [node] = await cluster.nodes();
  assert.is(await handles[ACTORS - 1]!.call('add', 1), ACTORS);
  await gcs.crash();
  gcs = await startGcs();
  await allKeptOn(node!.nodeId);
  assert.ok(parts.length >= 2, `the registration went in parts (${parts.length} seen)`);
  // kept, not recreated: the state is the one before the restart
  assert.equal(await Promise.all([0, 12_345, ACTORS - 1].map((i) => handles[i]!.call('add', 1))), [1, 12_346, ACTORS + 1]);
  assert.equal((await cluster.nodes()).map((n) => [n.nodeId, n.state]), [[node!.nodeId, 'ALIVE']]);
  assert.equal(trouble, [], 'the node was never declared dead');
});

test('a GCS SIGKILLed the moment the first part of a registration reaches it: the next GCS gets every part again and keeps every actor', async () => {
  const [node] = await cluster.nodes();
  parts.length = 0;
  await gcs.crash();
  // it starts as a standby (the killed one's lease runs out first), so its pid is known before it takes over
  const doomed = await startGcs();
  killOnPart = doomed.pid;
  await doomed.exited;
  const seenByTheDoomed = parts.length;
  assert.ok(seenByTheDoomed >= 1);
  gcs = await startGcs();
  await allKeptOn(node!.nodeId);
  assert.ok(parts.length > seenByTheDoomed, 'the parts were sent again to the next GCS');
  assert.is(await handles[0]!.call('add', 1), 2, 'state kept through both restarts (1 after the first)');
  assert.equal(trouble, [], 'the node was never declared dead');
});

test.run();
