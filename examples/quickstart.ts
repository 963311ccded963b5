// Quickstart: a four-node cluster, actors placed with label selectors, affinity, anti-affinity and
// a GPU taint, each printing where it landed — and one that cannot be placed, with the reason.
//
//   npm start                                (a local cluster)
//   ORRERY_ADDRESS=nats://host:4222 npm start  (your cluster; labels as below)
import { Exists, actorAffinity, affinity, antiAffinity, labelIn, nodeAffinity } from 'orrery';
import { ServiceActor } from './actors.ts';
import { exampleCluster, report } from './support/cluster.ts';
import { EXAMPLE_NODES } from './support/nodes.ts';

const { cluster, names, stop } = await exampleCluster(EXAMPLE_NODES.quickstart);
try {
  console.log('\nplacements:');
  const web = await cluster.actor(ServiceActor).options({ name: 'web', labelSelector: { region: 'us' } }).remote('web');
  await report("web: labelSelector region=us", web, names);
  const cache = await cluster.actor(ServiceActor).options({ schedulingStrategy: actorAffinity(affinity(web)) }).remote('cache');
  await report('cache: affinity to web', cache, names);
  const replica = await cluster.actor(ServiceActor).options({ schedulingStrategy: actorAffinity(antiAffinity(web)) }).remote('replica');
  await report('replica: anti-affinity to web', replica, names);
  const eu = await cluster.actor(ServiceActor).options({ schedulingStrategy: nodeAffinity(labelIn('region', ['eu'])) }).remote('eu');
  await report('eu: node affinity region in (eu)', eu, names);
  const trainer = await cluster.actor(ServiceActor).options({ numGpus: 1, tolerations: { gpu_node: Exists() } }).remote('trainer');
  await report('trainer: 1 GPU, tolerates gpu_node', trainer, names);
  const huge = await cluster.actor(ServiceActor).options({ numCpus: 64 }).remote('huge');
  await report('huge: 64 CPUs', huge, names, 1_000);
  console.log(`\n${await web.call('ping')}`);
} finally {
  await stop();
}
