// The seed scenarios end to end: actors created through the driver API, placed by the GCS, started
// by raylets in worker hosts, asserted by the real node id each ready actor reports. One table,
// run on the memory transport (spec/runtime/scenarios.spec.ts) and on real processes over NATS
// (spec/integration/scenarios.spec.ts), on three nodes with different labels, taints and resources.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  Exists, In, actorAffinity, affinity, antiAffinity, labelDoesNotExist, labelExists, labelIn, labelNotIn, nodeAffinity,
  nodeIdAffinity, nodeLabelStrategy,
} from '../../lib/index.ts';
import { ActorDiedError, RemoteError, type ActorHandle, type ActorOptions, type LocalCluster, type NodeSpec } from '../../runtime/index.ts';
import { ProbeActor, type Probe } from '../fixtures/scenarios/actors.ts';

export const SCENARIO_NODES: NodeSpec[] = [
  { name: 'us', labels: { region: 'us', instance: 'm6in.large', zone: 'us-east-1a' }, resources: { CPU: 4 } },
  {
    name: 'gpu',
    labels: { region: 'us', instance: 'p4d', zone: 'us-east-1b', gpu_type: 'A100', 'orrery.io/accelerator-type': 'nvidia-a100' },
    resources: { CPU: 4, GPU: 1, custom_resource: 1 },
    taints: { gpu_node: 'true' },
  },
  { name: 'eu', labels: { region: 'eu', instance: 'm6in.2xlarge', zone: 'eu-west-1a' }, resources: { CPU: 2, my_res: 2 } },
];

const READY = { timeoutMs: 30_000 };

export function scenarioSuite(name: string, start: () => Promise<LocalCluster>): ReturnType<typeof suite> {
  const s = suite(name);
  let local: LocalCluster;
  let nodeIds: Map<string, string>;
  const names = () => new Map([...nodeIds].map(([n, id]) => [id, n]));

  /** Creates an actor and returns the name of the node it became ALIVE on. */
  async function placed(opts: ActorOptions, tag = 'probe'): Promise<{ handle: ActorHandle<Probe>; node: string }> {
    // These scenarios are about placement. On a starved machine a raylet can fence itself for a
    // moment (its heartbeats late, docs/failover.md) and a call then meets no responder while the
    // GCS still says ALIVE; a few retries wait for it to answer again rather than fail the scenario.
    const handle = await local.cluster.actor(ProbeActor).options({ maxTaskRetries: 3, ...opts }).remote(tag);
    const info = await handle.ready(READY);
    const node = names().get(info.nodeId!)!;
    assert.is(await handle.call('node'), node, 'the actor runs where the GCS says it does');
    return { handle, node };
  }
  async function pending(opts: ActorOptions): Promise<{ handle: ActorHandle<Probe>; reason: string }> {
    const handle = await local.cluster.actor(ProbeActor).options(opts).remote();
    for (;;) {
      const info = await handle.info();
      if (info.pendingReason) return { handle, reason: info.pendingReason };
      assert.is(info.state, 'PENDING', 'stays pending');
      await new Promise((r) => setImmediate(r));
    }
  }

  s.before(async () => {
    local = await start();
    nodeIds = new Map((await local.cluster.nodes()).map((n) => [n.name, n.nodeId]));
    assert.equal([...nodeIds.keys()].sort(), ['eu', 'gpu', 'us']);
  });
  s.after(async () => {
    await local?.stop();
  });

  s('seed 000: affinity, affinity to either of two, anti-affinity, anti-affinity to two', async () => {
    const a0 = await placed({ labelSelector: { region: 'eu' } }, 'actor_0');
    assert.is(a0.node, 'eu');
    const a1 = await placed({ schedulingStrategy: actorAffinity(affinity(a0.handle)) }, 'actor_1');
    assert.is(a1.node, 'eu');
    const a2 = await placed({ schedulingStrategy: actorAffinity(affinity([a0.handle, a1.handle])) }, 'actor_2');
    assert.is(a2.node, 'eu');
    const a3 = await placed({ schedulingStrategy: actorAffinity(antiAffinity(a0.handle)) }, 'actor_3');
    assert.is(a3.node, 'us', 'not eu, and the tainted gpu node needs a toleration');
    const a4 = await pending({ schedulingStrategy: actorAffinity([antiAffinity(a0.handle), antiAffinity(a3.handle)]) });
    // reasons are tallied in sorted order, so the two actor ids appear sorted
    const anti = [a0, a3].map((a) => `1 node(s) didn't match actor anti-affinity orrery.io/actor-id notin (${a.handle.actorId})`).sort();
    assert.is(a4.reason, `0/3 nodes are available: ${anti.join(', ')}, 1 node(s) had untolerated taint {gpu_node: true}.`);
    const a5 = await placed({ tolerations: { gpu_node: Exists() }, schedulingStrategy: actorAffinity([antiAffinity(a0.handle), antiAffinity(a3.handle)]) });
    assert.is(a5.node, 'gpu');
    for (const a of [a0, a1, a2, a3, a5]) await a.handle.kill();
    await a4.handle.kill();
  });

  s('seed 000: affinity to an actor that is not placed yet waits, then lands with it', async () => {
    const peer = await pending({ numCpus: 2, labelSelector: { region: 'us' }, resources: { my_res: 1 } });
    const waiter = await pending({ schedulingStrategy: actorAffinity(affinity(peer.handle)) });
    assert.match(waiter.reason, /didn't match actor affinity orrery\.io\/actor-id in/);
    await peer.handle.kill();
    await waiter.handle.kill();
  });

  s('seed 001: the five node-affinity examples', async () => {
    assert.is((await placed({ schedulingStrategy: nodeAffinity(labelIn('instance', ['m6in.large'])) })).node, 'us');
    assert.is((await placed({ schedulingStrategy: nodeAffinity(labelNotIn('orrery.io/node-id', [nodeIds.get('us')!])), tolerations: { gpu_node: Exists() }, labelSelector: { region: 'us' } })).node, 'gpu');
    assert.is((await placed({ schedulingStrategy: nodeAffinity(labelDoesNotExist('gpu_type')), labelSelector: { region: 'eu' } })).node, 'eu');
    assert.is((await placed({ schedulingStrategy: nodeAffinity([labelIn('region', ['us']), labelIn('zone', ['us-east-1b'], true)]) })).node, 'us', 'the soft zone is on the tainted node; the hard term still holds');
    const gpu = await placed({ numGpus: 1, resources: { custom_resource: 1 }, tolerations: { gpu_node: Exists() }, schedulingStrategy: nodeAffinity([labelExists('gpu_type'), labelIn('gpu_type', ['A100', 'P100'], true)]) });
    assert.is(gpu.node, 'gpu');
    await gpu.handle.kill();
  });

  s('seed 001: a hard node-id affinity to a node that does not exist fails at the call', async () => {
    const err = await local.cluster.actor(ProbeActor).options({ schedulingStrategy: nodeIdAffinity('0000000000000000') }).remote().catch((e: unknown) => e);
    assert.is((err as { code?: string }).code, 'NODE_NOT_FOUND');
    assert.is((await placed({ schedulingStrategy: nodeIdAffinity(nodeIds.get('eu')!) })).node, 'eu');
  });

  s('seed 002: label selector operators and a fallback', async () => {
    assert.is((await placed({ labelSelector: { 'orrery.io/accelerator-type': 'nvidia-a100' }, tolerations: { gpu_node: Exists() } })).node, 'gpu');
    assert.is((await placed({ labelSelector: { region: '!us' } })).node, 'eu');
    assert.is((await placed({ labelSelector: { zone: 'in(eu-west-1a, ap-south-1a)' } })).node, 'eu');
    const fallback = await placed({ labelSelector: { instance: 'm5.16xlarge' }, fallbackStrategy: [{ labelSelector: { region: 'eu' } }] });
    assert.is(fallback.node, 'eu');
    const none = await pending({ labelSelector: { instance: 'm5.16xlarge' } });
    assert.is(none.reason, "0/3 nodes are available: 3 node(s) didn't match label selector instance in (m5.16xlarge), 1 node(s) had untolerated taint {gpu_node: true} (a node is counted under each reason it fails).");
    await none.handle.kill();
  });

  s('seed 003: the GPU node takes only work that tolerates its taint', async () => {
    const plain = await placed({ labelSelector: { region: 'us' } });
    assert.is(plain.node, 'us');
    const tolerant = await placed({ numGpus: 1, tolerations: { gpu_node: In('true') } });
    assert.is(tolerant.node, 'gpu');
    await tolerant.handle.kill();
  });

  s('node-label strategy, custom resources and SPREAD', async () => {
    assert.is((await placed({ schedulingStrategy: nodeLabelStrategy({ hard: { region: In('us') }, soft: { zone: In('us-east-1a') } }) })).node, 'us');
    assert.is((await placed({ resources: { my_res: 1 } })).node, 'eu');
    const spread = await Promise.all([1, 2, 3].map(() => placed({ schedulingStrategy: 'SPREAD', tolerations: { gpu_node: Exists() } })));
    assert.equal(spread.map((p) => p.node).sort(), ['eu', 'gpu', 'us']);
  });

  s('named actors, calls with arguments and results, remote errors, kill', async () => {
    const { handle } = await placed({ name: 'calc', namespace: 'scenarios' }, 'calc');
    const found = await local.cluster.getActor('calc', 'scenarios');
    assert.is(found.actorId, handle.actorId);
    assert.is(await handle.call('sum', 20, 22), 42);
    const err = await handle.call('boom', 'bad input').catch((e: unknown) => e);
    assert.instance(err, RemoteError);
    assert.is((err as RemoteError).message, 'calc: bad input');
    assert.is((err as RemoteError).remoteName, 'TypeError');
    await handle.kill();
    assert.instance(await handle.call('sum', 1, 1).catch((e: unknown) => e), ActorDiedError);
  });

  return s;
}
