// The nodes each example describes: what `exampleCluster` starts when no ORRERY_ADDRESS is set, and
// what a cluster started with the CLI should have for the example to show what it shows
// (spec/integration/examples-cli.spec.ts starts exactly these with `orrery start`).
import type { NodeSpec } from 'orrery';

export type ExampleName = 'quickstart' | 'actor-affinity' | 'node-affinity' | 'label-selector' | 'gpu-taint' | 'parameter-server' | 'pipeline';

const cpus = (names: string[], CPU: number): NodeSpec[] => names.map((name) => ({ name, resources: { CPU } }));

export const EXAMPLE_NODES: Readonly<Record<ExampleName, NodeSpec[]>> = {
  quickstart: [
    { name: 'us-1', labels: { region: 'us', zone: 'us-east-1a' }, resources: { CPU: 4 } },
    { name: 'us-2', labels: { region: 'us', zone: 'us-east-1b' }, resources: { CPU: 4 } },
    { name: 'eu-1', labels: { region: 'eu', zone: 'eu-west-1a' }, resources: { CPU: 2 } },
    { name: 'gpu-1', labels: { region: 'us', 'orrery.io/accelerator-type': 'nvidia-h100' }, resources: { CPU: 8, GPU: 2 }, taints: { gpu_node: 'true' } },
  ],
  'actor-affinity': cpus(['n1', 'n2', 'n3', 'n4'], 4),
  'node-affinity': [
    { name: 'big', labels: { instance: 'm6in.2xlarge', region: 'china', zone: 'china-east-1' }, resources: { CPU: 8 } },
    { name: 'small', labels: { instance: 'm6in.large', region: 'china', zone: 'china-north-1' }, resources: { CPU: 2 } },
    { name: 'v100', labels: { instance: 'p3.2xlarge', region: 'us', gpu_type: 'V100' }, resources: { CPU: 8, GPU: 1, custom_resource: 1 } },
    { name: 'a100', labels: { instance: 'p4d', region: 'us', gpu_type: 'A100' }, resources: { CPU: 8, GPU: 2, custom_resource: 2 } },
  ],
  'label-selector': [
    { name: 'h100-spot', labels: { 'orrery.io/accelerator-type': 'nvidia-h100', 'orrery.io/market-type': 'spot' }, resources: { CPU: 4 } },
    { name: 'a100', labels: { 'orrery.io/accelerator-type': 'nvidia-a100', 'orrery.io/market-type': 'on-demand' }, resources: { CPU: 4 } },
    { name: 'cpu', labels: { instance_type: 'm5.large' }, resources: { CPU: 4 } },
  ],
  'gpu-taint': [
    { name: 'gpu-node', resources: { CPU: 8, GPU: 1 }, taints: { gpu_node: 'true' } },
    { name: 'cpu-node', resources: { CPU: 1 } },
  ],
  'parameter-server': cpus(['ps-1', 'ps-2', 'ps-3', 'ps-4'], 2),
  pipeline: cpus(['p-1', 'p-2', 'p-3'], 2),
};
