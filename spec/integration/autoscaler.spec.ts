// The autoscaler on real parts: a nats-server this spec starts, a GCS process and one fixed node
// (startLocalCluster), and the autoscaler's `local` provider launching raylet processes. Each test
// runs its own Autoscaler, drives it by rounds (never by time) and takes its nodes down at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { actorAffinity, affinity, Exists, labelNotIn } from '../../lib/index.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { Autoscaler, CommandProvider, LocalProvider, autoscalerGcs, parseAutoscalerConfig, type NodeProvider } from '../../runtime/autoscaler/index.ts';
import type { AutoscalerEvent } from '../../protocols/messages/autoscaling.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

let server: NatsServerHandle;
let local: LocalCluster;
let bus: Bus;
const runDir = mkdtempSync(join(tmpdir(), 'orrery-autoscaler-spec-'));
const env = { ...process.env, ORRERY_RUN_DIR: runDir };

test.before(async () => {
  server = await startNatsServer();
  // one fixed node the autoscaler did not launch: it must never be drained or terminated
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'fixed', resources: { CPU: 1 }, labels: { type: 'fixed' } }] });
  bus = await connectNatsBus({ servers: server.url, name: 'autoscaler-spec' });
});

test.after(async () => {
  await bus?.close();
  await local?.stop();
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

const CONFIG = `
cluster: default
provider: { type: local }
idleTimeoutSeconds: 3600
maxConcurrentLaunches: 5
updateIntervalSeconds: 0.2
nodeTypes:
  cpu: { resources: { CPU: 1 }, labels: { type: cpu }, minWorkers: 0, maxWorkers: 5 }
  gpu: { resources: { CPU: 1, GPU: 1 }, labels: { type: gpu, orrery.io/accelerator-type: A100 }, taints: { gpu_node: "true" }, minWorkers: 0, maxWorkers: 2 }
`;

/** An autoscaler whose every event is kept; `rounds(n)` waits for n more rounds. */
function autoscaler(yaml: string, provider?: NodeProvider) {
  const config = parseAutoscalerConfig(yaml);
  const events: AutoscalerEvent[] = [];
  const gcs = autoscalerGcs(bus, { cluster: config.cluster, address: server.url });
  const a = new Autoscaler({
    config,
    gcs: { ...gcs, autoscalerReport: async (status, evs) => void (events.push(...evs), await gcs.autoscalerReport(status, evs)) },
    provider: provider ?? new LocalProvider({ cluster: config.cluster, env }),
    address: server.url,
  });
  a.start();
  return { a, events, launched: (type: string) => events.filter((e) => e.type === 'node_launch_requested' && e.nodeType === type).length };
}

async function nodesOfType(type: string) {
  return (await local.cluster.nodes()).filter((n) => n.state === 'ALIVE' && n.labels['orrery.io/node-group'] === type);
}

test('an actor selecting the gpu type with a toleration launches exactly one gpu node and becomes ALIVE on it; a plain actor never launches a gpu node', async () => {
  const { a, launched } = autoscaler(CONFIG);
  try {
    const trainer = await local.cluster.actor(CounterActor).options({ numCpus: 1, numGpus: 1, labelSelector: { type: 'gpu' }, tolerations: { gpu_node: Exists() } }).remote(0);
    const info = await trainer.ready({ timeoutMs: 60_000 });
    const gpuNodes = await nodesOfType('gpu');
    assert.is(gpuNodes.length, 1);
    assert.is(info.nodeId, gpuNodes[0].nodeId);
    assert.is(gpuNodes[0].labels['orrery.io/accelerator-type'], 'A100');
    assert.equal(gpuNodes[0].taints, { gpu_node: 'true' });
    // the fixed node is full of nothing but takes 1 CPU: two plain actors need one more node, never a gpu one
    const plain = await Promise.all([0, 1].map(() => local.cluster.actor(CounterActor).options({ numCpus: 1 }).remote(0)));
    await Promise.all(plain.map((p) => p.ready({ timeoutMs: 60_000 })));
    await a.nextRound();
    assert.is(launched('gpu'), 1, 'one gpu launch in all');
    assert.ok(launched('cpu') >= 1, 'the plain actors launched a cpu node');
    for (const p of [...plain, trainer]) await p.kill();
  } finally {
    await a.stop();
    await a.down();
  }
});

test('five actors anti-affine to each other launch nodes until they are spread', async () => {
  const { a } = autoscaler(CONFIG);
  try {
    const spread = actorAffinity(labelNotIn('app', ['web']));
    const web = await Promise.all([0, 1, 2, 3, 4].map(() => local.cluster.actor(CounterActor).options({ numCpus: 0.1, labels: { app: 'web' }, schedulingStrategy: spread }).remote(0)));
    const infos = await Promise.all(web.map((w) => w.ready({ timeoutMs: 90_000 })));
    assert.is(new Set(infos.map((i) => i.nodeId)).size, 5, 'one per node');
    // the fixed node took one; four cpu nodes were launched for the rest
    assert.is((await nodesOfType('cpu')).length, 4);
    for (const w of web) await w.kill();
  } finally {
    await a.stop();
    await a.down();
  }
});

test('an actor with hard affinity to an actor on a full node launches nothing and says why', async () => {
  const { a, events } = autoscaler(CONFIG);
  const db = await local.cluster.actor(CounterActor).options({ numCpus: 1, labelSelector: { type: 'fixed' } }).remote(0);
  try {
    const dbInfo = await db.ready({ timeoutMs: 30_000 });
    const near = await local.cluster.actor(CounterActor).options({ numCpus: 1, schedulingStrategy: actorAffinity(affinity(db)) }).remote(0);
    const status = await until('a status naming the demand', async () => {
      await a.nextRound();
      const s = a.status;
      return s?.demands.find((d) => /ACTOR_AFFINITY/.test(d.description) && /waiting/.test(d.description)) ? s : undefined;
    });
    const demand = status.demands.find((d) => /ACTOR_AFFINITY/.test(d.description))!;
    assert.match(demand.description, /only nodes already in the cluster can take it/);
    assert.is(demand.launch, undefined);
    assert.is(events.filter((e) => e.type === 'node_launch_requested').length, 0);
    assert.is((await near.info()).state, 'PENDING');
    assert.is(dbInfo.nodeId, (await local.cluster.nodes()).find((n) => n.name === 'fixed')!.nodeId);
    await near.kill();
  } finally {
    await db.kill();
    await a.stop();
    await a.down();
  }
});

test('idle nodes are drained and terminated after the timeout; minWorkers are kept and the fixed node is never touched', async () => {
  const yaml = CONFIG.replace('idleTimeoutSeconds: 3600', 'idleTimeoutSeconds: 1').replace('minWorkers: 0, maxWorkers: 5', 'minWorkers: 1, maxWorkers: 5');
  const { a, events } = autoscaler(yaml);
  try {
    const two = await Promise.all([0, 1, 2].map(() => local.cluster.actor(CounterActor).options({ numCpus: 1, labelSelector: { type: 'cpu' } }).remote(0)));
    await Promise.all(two.map((w) => w.ready({ timeoutMs: 90_000 })));
    assert.ok((await nodesOfType('cpu')).length >= 3);
    for (const w of two) await w.kill();
    await until('the idle cpu nodes terminated down to minWorkers', async () => ((await nodesOfType('cpu')).length === 1 && events.filter((e) => e.type === 'node_terminated').length >= 2 ? true : undefined), 90_000);
    const drained = events.filter((e) => e.type === 'node_drained').map((e) => e.nodeName);
    const terminated = events.filter((e) => e.type === 'node_terminated').map((e) => e.nodeName);
    assert.equal([...drained].sort(), [...terminated].sort(), 'every terminated node was drained first');
    assert.ok(terminated.every((n) => n?.startsWith('default-cpu-')));
    const fixed = (await local.cluster.nodes()).find((n) => n.name === 'fixed')!;
    assert.is(fixed.state, 'ALIVE');
    // rounds go on and the last cpu node stays (minWorkers: 1)
    await a.nextRound();
    await a.nextRound();
    assert.is((await nodesOfType('cpu')).length, 1);
  } finally {
    await a.stop();
    await a.down();
  }
});

test('a command provider whose launch command fails is backed off and reported', async () => {
  const failing = new CommandProvider({ launch: 'echo "no capacity in zone-a" >&2; exit 3', terminate: 'true', timeoutSeconds: 10, address: server.url, cluster: 'default', env });
  const yaml = CONFIG.replace('provider: { type: local }', 'provider: { type: command, launch: "exit 3", terminate: "true" }');
  const { a, events } = autoscaler(yaml, failing);
  const pending = await local.cluster.actor(CounterActor).options({ numCpus: 1, labelSelector: { type: 'cpu' } }).remote(0);
  try {
    const failures = await until('two launch failures', () => {
      const f = events.filter((e) => e.type === 'node_launch_failed');
      return f.length >= 2 ? f : undefined;
    }, 60_000);
    assert.match(failures[0].message, /the launch command exited with code 3: no capacity in zone-a/);
    assert.match(failures[0].message, /retrying cpu in 2 s/);
    assert.match(failures[1].message, /retrying cpu in 4 s/);
    const requested = events.filter((e) => e.type === 'node_launch_requested');
    assert.ok(requested[1].time - failures[0].time >= 2000, 'the second launch waited out the backoff');
    assert.ok(a.status!.failures.length >= 2 && a.status!.failures.every((f) => f.retryAt! > f.time));
    assert.is((await pending.info()).state, 'PENDING');
  } finally {
    await pending.kill();
    await a.stop();
  }
});

test.run();
