// Seed 002: label selectors and fallbackStrategy — prefer an m5.16xlarge, else any node.
import { ServiceActor } from './actors.ts';
import { exampleCluster, report } from './support/cluster.ts';

const { cluster, names, stop } = await exampleCluster([
  { name: 'h100-spot', labels: { 'orrery.io/accelerator-type': 'nvidia-h100', 'orrery.io/market-type': 'spot' }, resources: { CPU: 4 } },
  { name: 'a100', labels: { 'orrery.io/accelerator-type': 'nvidia-a100', 'orrery.io/market-type': 'on-demand' }, resources: { CPU: 4 } },
  { name: 'cpu', labels: { instance_type: 'm5.large' }, resources: { CPU: 4 } },
]);
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
