// The scheduling core alone, no cluster: orrery's scheduler on a simulated four-node cluster. Each request below uses one of
// the scheduling options from the seeds; the program prints where it landed or, when nothing can
// take it, the explanation a user would see ("0/4 nodes are available: …").
//
//   npm run example:scheduling
import {
  ClusterState, NODE_ID_LABEL, Exists, actorAffinity, affinity, antiAffinity, compilePlacementGroup, compileRequest,
  labelIn, nodeAffinity, parseResources, parseTaints, scheduleBundles, schedule, seededRng, type PlacementOptions,
} from 'orrery';

const cluster = new ClusterState();
const nodes: { nodeId: string; labels: Record<string, string>; cpu: number; gpu?: number; taints?: Record<string, string> }[] = [
  { nodeId: 'node-1', labels: { region: 'us', zone: 'us-east-1a' }, cpu: 8 },
  { nodeId: 'node-2', labels: { region: 'us', zone: 'us-east-1b' }, cpu: 8 },
  { nodeId: 'node-3', labels: { region: 'eu', zone: 'eu-west-1a' }, cpu: 4 },
  { nodeId: 'gpu-1', labels: { region: 'us', 'orrery.io/accelerator-type': 'nvidia-h100' }, cpu: 16, gpu: 2, taints: { gpu_node: 'true' } },
];
for (const n of nodes) {
  cluster.addNode({
    nodeId: n.nodeId,
    labels: { ...n.labels, [NODE_ID_LABEL]: n.nodeId },
    taints: parseTaints(n.taints ?? {}),
    total: parseResources({ CPU: n.cpu, ...(n.gpu ? { GPU: n.gpu } : {}) }),
  });
}

const rng = seededRng(2026);
const rows: string[][] = [];
function place(actorId: string, what: string, opts: PlacementOptions): void {
  const req = compileRequest(opts, { namespace: 'default', target: { kind: 'actor', id: actorId } });
  const d = schedule(cluster, req, { rng });
  if (d.status === 'placed') {
    cluster.allocate(d.nodeId, req.resources);
    cluster.addActor(d.nodeId, { actorId, namespace: 'default' });
    rows.push([actorId, what, d.nodeId + (d.tier ? ` (fallback ${d.tier})` : '')]);
  } else if (d.status === 'unschedulable') {
    rows.push([actorId, what, `pending — ${d.failure.message}`]);
  } else {
    rows.push([actorId, what, `error ${d.error.code}: ${d.error.message}`]);
  }
}

place('web', 'labelSelector region=us', { numCpus: 2, labelSelector: { region: 'us' } });
place('cache', 'affinity to web', { numCpus: 1, schedulingStrategy: actorAffinity(affinity('web')) });
place('replica', 'anti-affinity to web', { numCpus: 2, schedulingStrategy: actorAffinity(antiAffinity('web')) });
place('eu-svc', 'nodeAffinity region in (eu)', { numCpus: 1, schedulingStrategy: nodeAffinity(labelIn('region', ['eu'])) });
place('trainer', 'GPU, tolerates gpu_node', { numGpus: 1, tolerations: { gpu_node: Exists() } });
place('no-gpu', 'GPU without toleration', { numGpus: 1 });
place('ap-svc', 'region=ap, fallback any', { numCpus: 1, labelSelector: { region: 'ap' }, fallbackStrategy: [{ labelSelector: {} }] });
place('huge', '64 CPUs', { numCpus: 64 });

const pg = compilePlacementGroup({ bundles: [{ CPU: 2 }, { CPU: 2 }, { CPU: 2 }], strategy: 'STRICT_SPREAD' }, { id: 'pg-1' });
const group = scheduleBundles(cluster, pg, { rng });
rows.push(['pg-1', 'placement group 3×{CPU:2} STRICT_SPREAD', group.status === 'placed' ? group.nodeIds.join(', ') : group.failure.message]);

const width = [0, 1].map((i) => Math.max(...rows.map((r) => r[i].length)));
console.log(`orrery quickstart — ${nodes.length} simulated nodes\n`);
for (const r of rows) console.log(`  ${r[0].padEnd(width[0])}  ${r[1].padEnd(width[1])}  → ${r[2]}`);
console.log('\nThe GCS and raylets make these same decisions for real actors: see npm start.');
