// The autoscaler (docs/autoscaling.md): pending work launches nodes of the right type, actors land
// on them, and idle nodes are drained and terminated. One command:
//
//   npm run example:autoscaling                 a local cluster of its own (needs nats-server)
//   ORRERY_ADDRESS=nats://… npm run example:autoscaling   against a running GCS
//
// The autoscaler runs inside this process with the `local` provider: its "machines" are raylet
// processes on this one. `orrery up cluster.yaml` runs the same thing as a process of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Exists, actorAffinity, connect, labelNotIn, startLocalCluster, type ActorHandle, type Cluster } from 'orrery';
import { Autoscaler, LocalProvider, connectAutoscalerGcs, parseAutoscalerConfig } from 'orrery/autoscaler';
import { ServiceActor } from './actors.ts';

const CONFIG = `
cluster: default
provider: { type: local }
idleTimeoutSeconds: 3
maxConcurrentLaunches: 4
updateIntervalSeconds: 0.5
nodeTypes:
  cpu: { resources: { CPU: 2 }, labels: { type: cpu }, minWorkers: 0, maxWorkers: 3 }
  gpu: { resources: { CPU: 2, GPU: 1 }, labels: { type: gpu, orrery.io/accelerator-type: A100 }, taints: { gpu_node: "true" }, maxWorkers: 1 }
`;

let cluster: Cluster;
let address: string;
let stopCluster: () => Promise<void>;
if (process.env.ORRERY_ADDRESS) {
  address = process.env.ORRERY_ADDRESS;
  cluster = await connect();
  stopCluster = () => cluster.close();
  console.log(`connected to ${address}`);
} else {
  const local = await startLocalCluster({ nodes: [] });
  if (local.transport !== 'nats') {
    await local.stop();
    console.error('this example launches raylet processes, which need a nats-server: install it (apt install nats-server) or set ORRERY_ADDRESS');
    process.exit(1);
  }
  ({ cluster, address } = local);
  stopCluster = () => local.stop();
  console.log(`started a GCS on nats-server ${address}, with no nodes`);
}

const runDir = mkdtempSync(join(tmpdir(), 'orrery-example-autoscaling-'));
const config = parseAutoscalerConfig(CONFIG);
const gcs = await connectAutoscalerGcs({ address, cluster: config.cluster });
const autoscaler = new Autoscaler({
  config,
  gcs: {
    ...gcs,
    // print the autoscaler's events as it reports them (the GCS publishes them too: orrery events)
    autoscalerReport: async (status, events) => {
      for (const e of events) console.log(`  [autoscaler] ${e.type.padEnd(21)} ${e.message}`);
      await gcs.autoscalerReport(status, events);
    },
  },
  provider: new LocalProvider({ cluster: config.cluster, env: { ...process.env, ORRERY_RUN_DIR: runDir } }),
  address,
});
const sub = cluster.events$.subscribe((e) => {
  if (e.type === 'actor_state' && (e.actor.state === 'ALIVE' || e.actor.state === 'DEAD')) console.log(`  [cluster]    ${e.actor.name ?? e.actor.actorId} ${e.actor.state}`);
});
const names = new Map<string, string>();
const nodeName = async (id: string) => names.get(id) ?? (await cluster.nodes()).find((n) => n.nodeId === id)?.name ?? id;

let failed = false;
const actors: ActorHandle<unknown>[] = [];
try {
  autoscaler.start();
  console.log('\n1. demand appears: three web actors that must not share a node, a GPU trainer, and a request no node type can serve');
  for (let i = 0; i < 3; i++) {
    actors.push(await cluster.actor(ServiceActor).options({ name: `web-${i}`, numCpus: 1, labels: { app: 'web' }, schedulingStrategy: actorAffinity(labelNotIn('app', ['web'])) }).remote('web'));
  }
  actors.push(await cluster.actor(ServiceActor).options({ name: 'trainer', numGpus: 1, labelSelector: { type: 'gpu' }, tolerations: { gpu_node: Exists() } }).remote('trainer'));
  const tpu = await cluster.actor(ServiceActor).options({ name: 'tpu-job', numCpus: 1, labelSelector: { 'orrery.io/accelerator-type': 'TPU' } }).remote('tpu');

  console.log('\n2. nodes launch and the actors land on them');
  for (const a of actors) {
    const info = await a.ready({ timeoutMs: 120_000 });
    for (const n of await cluster.nodes()) names.set(n.nodeId, n.name);
    console.log(`  ${String(info.name).padEnd(8)} → ${await nodeName(info.nodeId!)}`);
  }
  await autoscaler.nextRound();
  const infeasible = autoscaler.status?.infeasible ?? [];
  for (const i of infeasible) console.log(`  not launched for: ${i.description}\n    because ${i.reason}`);
  console.log(`  tpu-job stays ${(await tpu.info()).state}`);
  await tpu.kill();

  console.log('\n3. the work ends; idle nodes are drained and terminated after idleTimeoutSeconds (3 s)');
  for (const a of actors) await a.kill();
  for (;;) {
    const left = (await cluster.nodes()).filter((n) => n.state !== 'DEAD' && n.labels['orrery.io/node-group'] !== undefined);
    if (left.length === 0) break;
    await autoscaler.nextRound();
  }
  console.log('  every launched node is gone');
} catch (err) {
  failed = true;
  console.error(`example failed: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  sub.unsubscribe();
  await autoscaler.stop();
  await autoscaler.down();
  await gcs.close();
  await stopCluster();
  rmSync(runDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
