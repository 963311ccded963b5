import { NodeNotFoundError, OrreryError } from '../../lib/errors.ts';
import type { Bus } from '../bus/bus.ts';
import { MemoryBroker, connectMemoryBus } from '../bus/memory.ts';
import { connect } from '../client/connect.ts';
import type { NodeInfo } from '../client/cluster-info.types.ts';
import { registerMemoryBroker } from '../client/memory-registry.ts';
import type { LocalCluster, LocalClusterOptions, NodeSpec } from './local-cluster.types.ts';
import { resolveNodeSpec } from './node-spec.ts';

interface RunningRaylet {
  readonly nodeId: string;
  stop(): Promise<void>;
  crash(): Promise<void>;
}

/**
 * The whole cluster in this process: one MemoryBroker, the GCS service and one raylet service per
 * node (worker hosts inline), each on its own connection to the broker, and a client on another.
 */
export async function startMemoryCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const specs = opts.nodes.map((spec, i) => resolveNodeSpec(spec, `node-${i + 1}`));
  const clusterName = opts.cluster ?? 'default';
  // Loaded on demand, so a driver that only connects to a NATS cluster does not load GCS and raylet code.
  const [{ GcsService }, { RayletService }, { rayletConfig }, { InspectPublisher }] = await Promise.all([
    import('../gcs/service.ts'),
    import('../raylet/service.ts'),
    import('../raylet/config.ts'),
    import('../inspect/publisher.ts'),
  ]);
  const broker = new MemoryBroker();
  const registration = registerMemoryBroker(broker);
  const raylets = new Map<string, RunningRaylet>();
  const buses: Bus[] = [];
  const bus = (): Bus => {
    const b = connectMemoryBus(broker);
    buses.push(b);
    return b;
  };
  let gcs: { stop(): Promise<void> } | undefined;
  // One inspection publisher for the whole in-process cluster (docs/inspection.md): it inspects the
  // GCS's actor system and every raylet's, while someone watches.
  const inspection = new InspectPublisher({ bus: bus(), cluster: clusterName, name: `local:${process.pid}` });
  let client: Awaited<ReturnType<typeof connect>> | undefined;
  let added = specs.length;

  const startNode = async (spec: ReturnType<typeof resolveNodeSpec>): Promise<RunningRaylet> => {
    // Built here rather than with startRaylet so the machine's actor system reaches the inspection publisher.
    const config = rayletConfig({ cluster: clusterName, nodeName: spec.name, labels: spec.labels, taints: spec.taints, resources: spec.resources });
    let forget: () => void = () => {};
    const raylet = new RayletService({ bus: bus(), config, hosts: { mode: 'inline' }, log: () => {}, onActorSystem: (system) => (forget = inspection.add(system)) });
    await raylet.start();
    const running = {
      nodeId: raylet.nodeId,
      stop: () => raylet.stop().finally(forget),
      crash: () => raylet.crash().finally(forget),
    };
    raylets.set(raylet.nodeId, running);
    return running;
  };

  const stop = async (): Promise<void> => {
    await client?.close();
    await Promise.allSettled([...raylets.values()].map((r) => r.stop()));
    raylets.clear();
    await gcs?.stop();
    inspection.stop();
    await Promise.allSettled(buses.map((b) => b.close()));
    registration.unregister();
  };

  try {
    await inspection.start();
    const service = new GcsService({ bus: bus(), cluster: clusterName, rareResources: opts.rareResources, ...(opts.jobTimeoutMs === undefined ? {} : { jobTimeoutMs: opts.jobTimeoutMs }) });
    inspection.add(service.actor.system);
    await service.start();
    gcs = service;
    await Promise.all(specs.map(startNode));
    client = await connect({ address: registration.address, cluster: clusterName });
  } catch (err) {
    await stop();
    throw err;
  }
  const cluster = client;
  return {
    cluster,
    address: registration.address,
    transport: 'memory',
    addNode: async (spec: NodeSpec): Promise<NodeInfo> => {
      const running = await startNode(resolveNodeSpec(spec, `node-${++added}`));
      return nodeInfoOf(await cluster.nodes(), running.nodeId);
    },
    killNode: async (nodeId: string): Promise<void> => {
      const raylet = raylets.get(nodeId);
      if (!raylet) throw new NodeNotFoundError(nodeId);
      raylets.delete(nodeId);
      await raylet.crash();
    },
    stop,
  };
}

export function nodeInfoOf(nodes: NodeInfo[], nodeId: string): NodeInfo {
  const node = nodes.find((n) => n.nodeId === nodeId);
  if (!node) throw new OrreryError('NODE_NOT_FOUND', `node ${nodeId} registered but the GCS does not list it`, { detail: { nodeId } });
  return node;
}
