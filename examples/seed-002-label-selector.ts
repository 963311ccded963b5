// Seed 002: label selectors and fallbackStrategy — prefer an m5.16xlarge, else any node.
import { ServiceActor } from './actors.ts';
import { exampleCluster, report } from './support/cluster.ts';
import { EXAMPLE_NODES } from './support/nodes.ts';

const { cluster, names, stop } = await exampleCluster(EXAMPLE_NODES['label-selector']);
try {
  for (const [label, labelSelector] of [
    ['accelerator = nvidia-h100', { 'orrery.io/accelerator-type': 'nvidia-h100' }],
    ['accelerator != nvidia-h100', { 'orrery.io/accelerator-type': '!nvidia-h100' }],
    ['market-type in (spot, on-demand)', { 'orrery.io/market-type': 'in(spot,on-demand)' }],
    ['market-type !exists()', { 'orrery.io/market-type': '!exists()' }],
  ] as const) {
    await report(label, await cluster.actor(ServiceActor).options({ labelSelector }).remote(label), names);
  }
  const soft = await cluster.actor(ServiceActor).options({ labelSelector: { instance_type: 'm5.16xlarge' }, fallbackStrategy: [{ labelSelector: {} }] }).remote('soft');
  await report('m5.16xlarge, fallback: anything', soft, names);
  const hard = await cluster.actor(ServiceActor).options({ labelSelector: { instance_type: 'm5.16xlarge' } }).remote('hard');
  await report('m5.16xlarge, no fallback', hard, names, 1_000);
} finally {
  await stop();
}
