// Seed 003: a tainted GPU node keeps ordinary work off; a toleration lets GPU work on.
import { Exists } from 'orrery';
import { ServiceActor } from './actors.ts';
import { exampleCluster, report } from './support/cluster.ts';
import { EXAMPLE_NODES } from './support/nodes.ts';

const { cluster, names, stop } = await exampleCluster(EXAMPLE_NODES['gpu-taint']);
try {
  // numCpus: 1 is held while the actor lives (without it an actor needs a free CPU only to be placed, as in Ray)
  await report('plain actor, numCpus 1', await cluster.actor(ServiceActor).options({ numCpus: 1 }).remote('plain'), names);
  await report('second plain actor (no CPU left)', await cluster.actor(ServiceActor).options({ numCpus: 1 }).remote('plain-2'), names, 1_000);
  await report('GPU actor, tolerates gpu_node', await cluster.actor(ServiceActor).options({ numGpus: 1, tolerations: { gpu_node: Exists() } }).remote('gpu'), names);
} finally {
  await stop();
}
