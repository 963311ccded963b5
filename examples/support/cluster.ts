// Shared by the examples: connect to the cluster at ORRERY_ADDRESS, or start a local one with the
// nodes the example describes — real processes on a nats-server when the binary is installed,
// otherwise the whole cluster inside this process — and say which.
import { connect, startLocalCluster, type ActorHandle, type Cluster, type NodeSpec } from 'orrery';

export interface ExampleCluster {
  cluster: Cluster;
  /** Node id → node name, for printing placements. */
  names: Map<string, string>;
  stop(): Promise<void>;
}

export async function exampleCluster(nodes: NodeSpec[]): Promise<ExampleCluster> {
  let cluster: Cluster;
  let stop: () => Promise<void>;
  if (process.env.ORRERY_ADDRESS) {
    cluster = await connect();
    stop = () => cluster.close();
    console.log(`connected to ${process.env.ORRERY_ADDRESS}`);
  } else {
    const local = await startLocalCluster({ nodes });
    cluster = local.cluster;
    stop = () => local.stop();
    console.log(
      local.transport === 'nats'
        ? `started a local cluster on nats-server ${local.address}: a GCS and ${nodes.length} raylet processes`
        : `nats-server is not installed: started the embedded cluster (${nodes.length} nodes in this process)`,
    );
  }
  const names = new Map((await cluster.nodes()).map((n) => [n.nodeId, n.name]));
  return { cluster, names, stop };
}

/** Waits for an actor and prints where it landed, or why it is still pending. */
export async function report(label: string, handle: ActorHandle<unknown>, names: Map<string, string>, timeoutMs = 15_000): Promise<string | undefined> {
  try {
    const info = await handle.ready({ timeoutMs });
    const name = names.get(info.nodeId!) ?? info.nodeId!;
    console.log(`  ${label.padEnd(34)} → ${name}`);
    return name;
  } catch {
    const info = await handle.info();
    console.log(`  ${label.padEnd(34)} → ${info.state}: ${info.pendingReason ?? info.deathCause ?? ''}`);
    // waiting is what some examples show; an actor that died (its code failed to load, its node went)
    // is a failed run, and the exit code says so
    if (info.state === 'DEAD') process.exitCode = 1;
    return undefined;
  }
}
