import { parseArgs } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import type { PlacementGroupInfo } from '../../client/cluster-info.types.ts';
import type { Cluster } from '../../client/cluster.ts';
import { extraLabels, pairs, placementGroupStatus, resourceUse } from '../format.ts';
import type { CliIo } from '../io.ts';

const FLAGS = { address: 'string', cluster: 'string' } as const;

/**
 * `orrery status`: nodes with labels, taints and resource use; pending actors and why they wait;
 * placement groups per state, and why those not created wait.
 */
export async function status(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('status', argv, FLAGS);
  const address = addressOf('status', args, io.env)!;
  const cluster = clusterOf('status', args, io.env);
  await withCluster(address, cluster, async (client) => {
    const [nodes, actors, groups] = await Promise.all([client.nodes(), client.actors(), placementGroupsOf(client)]);
    const alive = nodes.filter((n) => n.state === 'ALIVE').length;
    io.out(`cluster ${JSON.stringify(cluster)} at ${address}`);
    io.out(`Nodes: ${nodes.length} (${alive} alive)`);
    for (const n of nodes) {
      io.out(`  ${n.name}  ${n.nodeId}  ${n.state}`);
      io.out(`    resources: ${resourceUse(n)}`);
      io.out(`    labels: ${pairs(extraLabels(n))}`);
      io.out(`    taints: ${pairs(n.taints)}`);
    }
    const byState = new Map<string, number>();
    for (const a of actors) byState.set(a.state, (byState.get(a.state) ?? 0) + 1);
    const counts = [...byState].map(([s, k]) => `${k} ${s}`).join(', ');
    io.out(`Actors: ${actors.length}${counts ? ` (${counts})` : ''}`);
    const pending = actors.filter((a) => a.state === 'PENDING');
    if (pending.length > 0) {
      io.out('Pending actors:');
      for (const a of pending) {
        const who = `${a.className} ${a.actorId}${a.name ? ` (${a.namespace}/${a.name})` : ''}`;
        io.out(`  ${who}: ${a.pendingReason ?? 'waiting to be scheduled'}`);
      }
    }
    if (groups === undefined) io.out('Placement groups: not supported by this GCS');
    else for (const line of placementGroupStatus(groups)) io.out(line);
  });
  return 0;
}

/** The cluster's placement groups; undefined from a GCS that does not serve them (UNKNOWN_TYPE). */
async function placementGroupsOf(client: Cluster): Promise<PlacementGroupInfo[] | undefined> {
  try {
    return await client.placementGroups();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UNKNOWN_TYPE') return undefined;
    throw err;
  }
}
