// Seed 001's five node-affinity examples, on nodes labelled by instance type, region and GPU type.
import { labelDoesNotExist, labelExists, labelIn, labelNotIn, nodeAffinity, type ActorOptions } from 'orrery';
import { ServiceActor } from './actors.ts';
import { exampleCluster, report } from './support/cluster.ts';
import { EXAMPLE_NODES } from './support/nodes.ts';

const { cluster, names, stop } = await exampleCluster(EXAMPLE_NODES['node-affinity']);
const nodeId = (name: string) => [...names].find(([, n]) => n === name)![0];
try {
  const place = (label: string, opts: ActorOptions) => cluster.actor(ServiceActor).options(opts).remote(label).then((h) => report(label, h, names));
  await place('1. instance in (m6in.large)', { schedulingStrategy: nodeAffinity(labelIn('instance', ['m6in.large'])) });
  await place('2. node id not in (big, v100)', { schedulingStrategy: nodeAffinity(labelNotIn('orrery.io/node-id', [nodeId('big'), nodeId('v100')])) });
  await place('3. gpu_type does not exist', { schedulingStrategy: nodeAffinity(labelDoesNotExist('gpu_type')) });
  await place('4. region china, prefer china-east-1', { schedulingStrategy: nodeAffinity([labelIn('region', ['china']), labelIn('zone', ['china-east-1'], true)]) });
  await place('5. 1 GPU + custom, prefer A100/P100', {
    numGpus: 1,
    resources: { custom_resource: 1 },
    schedulingStrategy: nodeAffinity([labelExists('gpu_type'), labelIn('gpu_type', ['A100', 'P100'], true)]),
  });
} finally {
  await stop();
}
