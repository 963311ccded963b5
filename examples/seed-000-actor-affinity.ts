// Seed 000's four actor-affinity examples, and an affinity to an actor that is not placed yet.
import { actorAffinity, affinity, antiAffinity } from 'orrery';
import { ServiceActor } from './actors.ts';
import { exampleCluster, report } from './support/cluster.ts';
import { EXAMPLE_NODES } from './support/nodes.ts';

const { cluster, names, stop } = await exampleCluster(EXAMPLE_NODES['actor-affinity']);
try {
  const actor0 = await cluster.actor(ServiceActor).remote('actor_0');
  await report('actor_0', actor0, names);
  const actor1 = await cluster.actor(ServiceActor).options({ schedulingStrategy: actorAffinity(affinity(actor0)) }).remote('actor_1');
  await report('actor_1: affinity to actor_0', actor1, names);
  const actor2 = await cluster.actor(ServiceActor).options({ schedulingStrategy: actorAffinity(affinity([actor0, actor1])) }).remote('actor_2');
  await report('actor_2: affinity to actor_0 or actor_1', actor2, names);
  const actor3 = await cluster.actor(ServiceActor).options({ schedulingStrategy: actorAffinity(antiAffinity(actor0)) }).remote('actor_3');
  await report('actor_3: anti-affinity to actor_0', actor3, names);
  const actor4 = await cluster.actor(ServiceActor).options({ schedulingStrategy: actorAffinity([antiAffinity(actor0), antiAffinity(actor3)]) }).remote('actor_4');
  await report('actor_4: anti-affinity to actor_0, actor_3', actor4, names);
  // an affinity to an actor that does not exist yet waits, then lands with it
  const later = await cluster.actor(ServiceActor).options({ name: 'late-peer-waiter', schedulingStrategy: actorAffinity(affinity('0123456789abcdef')) }).remote('waiter');
  console.log(`  waiter: affinity to an actor not placed yet → ${(await later.info()).state}: ${(await later.info()).pendingReason ?? ''}`);
} finally {
  await stop();
}
