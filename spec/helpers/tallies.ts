// One Tally actor pinned to each node of a cluster, ALIVE: the freeze specs call them across a fault.
import { nodeIdAffinity } from '../../lib/index.ts';
import type { Cluster } from '../../runtime/index.ts';
import { TallyActor } from '../fixtures/handles/actors.ts';

/** A Tally (counting from 0, one restart allowed) on each node, in the order nodes() lists them. */
export async function tallyPerNode(cluster: Cluster) {
  const nodes = await cluster.nodes();
  return Promise.all(
    nodes.map(async (n) => {
      const h = await cluster.actor(TallyActor).options({ maxRestarts: 1, schedulingStrategy: nodeIdAffinity(n.nodeId) }).remote(0);
      await h.ready({ timeoutMs: 60_000 });
      return h;
    }),
  );
}
