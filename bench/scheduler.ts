/**
 * Scheduler decisions per second: orrery's indexed schedule() / scheduleBundles() against the plain
 * reference (lib/scheduling/reference.ts, used as is) on the same seeded clusters, in one run.
 *
 *   npm run bench:scheduler [-- --json] [-- --quick]
 *
 * For 50, 500 and 5,000 nodes and each workload, both schedulers start from the same cluster
 * (bench/support/random-cluster.ts, same seed) and see the same request stream. Every placed
 * decision is committed (allocate; addActor for actors) and the oldest live placements are
 * released whenever CPU utilization passes 0.5, the spread threshold, so the cluster stays in a
 * steady state where some nodes pack (score 0) and others spread. Only the scheduler call is timed;
 * generating requests and committing them is not.
 *
 * Targets (never lowered): ≥ 20,000 decisions/s at 5,000 nodes for every workload; orrery ≥ 10× the
 * reference at 5,000 nodes; µs/decision at 5,000 nodes ≤ 3× that at 50.
 */
import { performance } from 'node:perf_hooks';
import {
  Exists, In, NotIn, actorAffinity, affinity, antiAffinity, compilePlacementGroup, compileRequest, labelExists, labelIn, nodeAffinity, preferred, withTopologyKey,
  nodeLabelStrategy, referenceSchedule, referenceScheduleBundles, schedule, scheduleBundles, seededRng,
  type PlacementGroupRequest, type PlacementOptions, type Rng, type SchedulingRequest,
} from '../lib/index.ts';
import {
  APPS, GPU_TYPES, INSTANCE_TYPES, REGIONS, RandomCluster, chance, pick, randomActorLabels, zonesOf, type Allocation, type ClusterShape,
} from './support/random-cluster.ts';
import { formatNumber, formatTable, parseBenchArgs, printJsonLast, targetRow, verdict, type Goal, type Row } from './support/report.ts';

const SIZES = [50, 500, 5_000];
const UTILIZATION = 0.5;
const TARGETS = { rate: 20_000, speedup: 10, growth: 3 };
const GiB = 2 ** 30;

type Job =
  | { readonly kind: 'task'; readonly request: SchedulingRequest; readonly actor?: { actorId: string; namespace: string; labels: Record<string, string> } }
  | { readonly kind: 'group'; readonly group: PlacementGroupRequest };

interface Workload {
  readonly name: string;
  readonly shape: Partial<ClusterShape>;
  next(cluster: RandomCluster, rng: Rng): Job;
}

const small = (rng: Rng): PlacementOptions => ({ numCpus: pick(rng, [0.5, 1, 1, 2, 4]), ...(chance(rng, 0.5) ? { memory: pick(rng, [1, 2, 4]) * GiB } : {}) });
const task = (cluster: RandomCluster, options: PlacementOptions): Job => ({
  kind: 'task',
  request: compileRequest(options, { namespace: 'default', target: { kind: 'task', id: cluster.nextId('task') } }),
});
const actor = (cluster: RandomCluster, rng: Rng, options: PlacementOptions): Job => {
  const actorId = cluster.nextId('actor');
  const request = compileRequest(options, { namespace: 'default', target: { kind: 'actor', id: actorId } });
  return { kind: 'task', request, actor: { actorId, namespace: 'default', labels: randomActorLabels(rng) } };
};
const liveActorIds = (cluster: RandomCluster, n: number): string[] =>
  Array.from({ length: n }, () => cluster.randomActor()?.actorId ?? 'actor-none');

const WORKLOADS: Workload[] = [
  { name: 'plain', shape: { taintedFraction: 0 }, next: (c, rng) => task(c, small(rng)) },
  {
    name: 'label selector',
    shape: { taintedFraction: 0 },
    next(c, rng) {
      const region = pick(rng, REGIONS);
      // GPU requests are 1%: about what keeps the A100/H100 GPUs near half used while CPU is.
      if (chance(rng, 0.01)) return task(c, { ...small(rng), labelSelector: { 'gpu-type': `in(${GPU_TYPES.slice(0, 2).join(',')})` }, numGpus: 1 });
      const selectors: PlacementOptions[] = [
        { labelSelector: { region } },
        { labelSelector: { zone: `in(${zonesOf(region).slice(0, 2).join(',')})` } },
        { labelSelector: { 'instance-type': `!in(${INSTANCE_TYPES.slice(0, 2).join(',')})` } },
        { labelSelector: { region, cores: 'gt(16)' } },
      ];
      return task(c, { ...small(rng), ...pick(rng, selectors) });
    },
  },
  {
    name: 'node affinity',
    shape: { taintedFraction: 0 },
    next(c, rng) {
      const regions = [pick(rng, REGIONS), pick(rng, REGIONS)];
      const strategy = chance(rng, 0.5)
        ? nodeAffinity([labelIn('region', regions), labelIn('instance-type', INSTANCE_TYPES.slice(0, 3), true)])
        : nodeLabelStrategy({ hard: { zone: NotIn(pick(rng, zonesOf(regions[0]))) }, soft: { spot: Exists() } });
      return task(c, { ...small(rng), schedulingStrategy: strategy });
    },
  },
  {
    name: 'actor affinity',
    shape: { taintedFraction: 0 },
    next: (c, rng) => actor(c, rng, { numCpus: pick(rng, [0.5, 1]), schedulingStrategy: actorAffinity(affinity(liveActorIds(c, 1))) }),
  },
  {
    name: 'anti-affinity',
    shape: { taintedFraction: 0 },
    next: (c, rng) => actor(c, rng, { ...small(rng), schedulingStrategy: actorAffinity(antiAffinity(liveActorIds(c, 3))) }),
  },
  {
    name: 'taints',
    shape: { taintedFraction: 0.25 },
    next(c, rng) {
      const tolerations = pick<PlacementOptions['tolerations']>(rng, [undefined, undefined, { dedicated: In('ml') }, { dedicated: Exists(), maintenance: Exists() }, { 'spot-reclaim': Exists() }]);
      return task(c, { ...small(rng), ...(tolerations ? { tolerations } : {}) });
    },
  },
  {
    name: 'placement group ×4',
    shape: { taintedFraction: 0 },
    next(c, rng) {
      const cpus = pick(rng, [1, 2]);
      const strategy = pick(rng, ['PACK', 'SPREAD', 'STRICT_PACK', 'STRICT_SPREAD'] as const);
      return { kind: 'group', group: compilePlacementGroup({ bundles: Array.from({ length: 4 }, () => ({ CPU: cpus })), strategy }, { id: c.nextId('pg') }) };
    },
  },
  {
    // Kubernetes' InterPodAffinity with topologyKey: next to a live actor's zone, or away from it,
    // or next to an app somewhere in the zone (12 zones)
    name: 'topology affinity',
    shape: { taintedFraction: 0 },
    next(c, rng) {
      const exprs = [
        () => withTopologyKey(affinity(liveActorIds(c, 1)), 'zone'),
        () => withTopologyKey(antiAffinity(liveActorIds(c, 1)), 'zone'),
        () => withTopologyKey(labelIn('app', [pick(rng, APPS)]), 'zone'),
      ];
      return actor(c, rng, { numCpus: pick(rng, [0.5, 1]), schedulingStrategy: actorAffinity(pick(rng, exprs)()) });
    },
  },
  {
    // Kubernetes' preferred node-affinity terms with weights: a zone (80), instance types (20), spot (10)
    name: 'weighted preference',
    shape: { taintedFraction: 0 },
    next(c, rng) {
      const region = pick(rng, REGIONS);
      const terms = [
        preferred(labelIn('zone', [pick(rng, zonesOf(region))]), 80),
        preferred(labelIn('instance-type', INSTANCE_TYPES.slice(0, 3)), 20),
        preferred(labelExists('spot'), 10),
      ];
      return task(c, { ...small(rng), schedulingStrategy: nodeAffinity(chance(rng, 0.5) ? terms : [labelIn('region', [region]), ...terms]) });
    },
  },
];

interface Engine {
  readonly name: 'orrery' | 'reference';
  /** Decides one job; returns what to commit, or undefined when it was not placed. */
  decide(cluster: RandomCluster, job: Job, rng: Rng): readonly Allocation[] | undefined;
}

const ORRERY: Engine = {
  name: 'orrery',
  decide(cluster, job, rng) {
    if (job.kind === 'group') {
      const d = scheduleBundles(cluster.state, job.group, { rng });
      return d.status === 'placed' ? d.nodeIds.map((nodeId, i) => ({ nodeId, resources: job.group.tiers[d.tier][i].resources })) : undefined;
    }
    const d = schedule(cluster.state, job.request, { rng });
    return d.status === 'placed' ? [{ nodeId: d.nodeId, resources: job.request.resources }] : undefined;
  },
};

const REFERENCE: Engine = {
  name: 'reference',
  decide(cluster, job, rng) {
    if (job.kind === 'group') {
      const d = referenceScheduleBundles(cluster.state, job.group, rng);
      return d.status === 'placed' ? d.nodeIds.map((nodeId, i) => ({ nodeId, resources: job.group.tiers[d.tier][i].resources })) : undefined;
    }
    const d = referenceSchedule(cluster.state, job.request, rng).decision;
    return d.status === 'placed' ? [{ nodeId: d.nodeId, resources: job.request.resources }] : undefined;
  },
};

interface Budget {
  /** Untimed orrery decisions that bring the cluster to its steady state: this many × nodes… */
  readonly settlePerNode: number;
  /** …but at most this long. */
  readonly settleSeconds: number;
  /** Untimed decisions of the measured engine, for the JIT. */
  readonly warmupDecisions: number;
  readonly warmupSeconds: number;
  /** Stop once both are reached (or at maxWallSeconds). */
  readonly minSeconds: number;
  readonly minDecisions: number;
  readonly maxWallSeconds: number;
}

interface Measurement {
  readonly decisions: number;
  readonly placed: number;
  /** Seconds inside the scheduler: all decisions, and those that placed nothing. */
  readonly seconds: number;
  readonly unplacedSeconds: number;
  readonly utilization: number;
}

const perSecond = (m: Measurement): number => m.decisions / m.seconds;
const microsEach = (m: Measurement): number => (m.seconds * 1e6) / m.decisions;
const microsUnplaced = (m: Measurement): number =>
  m.decisions === m.placed ? NaN : (m.unplacedSeconds * 1e6) / (m.decisions - m.placed);
const microsPlaced = (m: Measurement): number => (m.placed === 0 ? NaN : ((m.seconds - m.unplacedSeconds) * 1e6) / m.placed);
const cell = (n: number): string => (Number.isNaN(n) ? '—' : formatNumber(n));

/**
 * Measures one engine on a fresh cluster. The cluster is first brought to its steady state with
 * orrery's decisions (the same for both engines: it only shapes the cluster), then the engine warms
 * up untimed, then its decisions are timed.
 */
function measure(size: number, workload: Workload, engine: Engine, budget: Budget, seed: number): Measurement {
  const cluster = new RandomCluster(seededRng(seed), { nodes: size, gpuFraction: 0.1, load: UTILIZATION - 0.05, ...workload.shape });
  const jobs = seededRng(seed + 1);
  const rng = seededRng(seed + 2);
  let decisions = 0;
  let placed = 0;
  let timed = 0;
  let unplaced = 0;
  const step = (by: Engine): void => {
    const job = workload.next(cluster, jobs);
    const t0 = performance.now();
    const allocations = by.decide(cluster, job, rng);
    const dt = performance.now() - t0;
    timed += dt;
    decisions++;
    if (allocations) {
      placed++;
      cluster.commit(allocations, job.kind === 'task' ? job.actor : undefined);
      cluster.settle(UTILIZATION);
    } else {
      unplaced += dt;
    }
  };
  const until = (limit: { decisions: number; seconds: number }, by: Engine): void => {
    const start = performance.now();
    decisions = 0;
    while (decisions < limit.decisions && performance.now() - start < limit.seconds * 1000) step(by);
  };
  until({ decisions: Math.max(500, budget.settlePerNode * size), seconds: budget.settleSeconds }, ORRERY);
  until({ decisions: budget.warmupDecisions, seconds: budget.warmupSeconds }, engine);
  decisions = placed = timed = unplaced = 0;
  const start = performance.now();
  while ((timed < budget.minSeconds * 1000 || decisions < budget.minDecisions) && performance.now() - start < budget.maxWallSeconds * 1000) step(engine);
  return { decisions, placed, seconds: timed / 1000, unplacedSeconds: unplaced / 1000, utilization: cluster.utilization };
}

function main(): void {
  const args = parseBenchArgs();
  const settle = args.quick ? { settlePerNode: 1, settleSeconds: 0.3 } : { settlePerNode: 4, settleSeconds: 2 };
  const orreryBudget: Budget = args.quick
    ? { ...settle, warmupDecisions: 2_000, warmupSeconds: 0.05, minSeconds: 0.1, minDecisions: 100, maxWallSeconds: 1 }
    : { ...settle, warmupDecisions: 20_000, warmupSeconds: 0.2, minSeconds: 0.6, minDecisions: 1_000, maxWallSeconds: 8 };
  const referenceBudget: Budget = args.quick
    ? { ...settle, warmupDecisions: 5, warmupSeconds: 0.05, minSeconds: 0.1, minDecisions: 20, maxWallSeconds: 2 }
    : { ...settle, warmupDecisions: 20, warmupSeconds: 0.3, minSeconds: 0.5, minDecisions: 200, maxWallSeconds: 12 };
  const rows: Row[] = [];
  const micros = new Map<string, Map<number, number>>();
  const targets: string[] = [];
  const note = (label: string, value: number, target: number, goal: Goal, unit: string) =>
    targets.push(`  ${label}: ${formatNumber(value)}${unit} (target ${goal === 'atLeast' ? '≥' : '≤'} ${formatNumber(target)}${unit}) — ${verdict(value, target, goal)}`);

  console.log(`scheduler bench${args.quick ? ' (--quick: short time boxes, not for publishing)' : ''}: node ${process.version}, ${new Date().toISOString()}`);
  for (const size of SIZES) {
    const table: string[][] = [];
    WORKLOADS.forEach((workload, w) => {
      const seed = size * 100 + w;
      const o = measure(size, workload, ORRERY, orreryBudget, seed);
      const r = measure(size, workload, REFERENCE, referenceBudget, seed);
      const rate = perSecond(o);
      const refRate = perSecond(r);
      const ratio = rate / refRate;
      if (!micros.has(workload.name)) micros.set(workload.name, new Map());
      micros.get(workload.name)!.set(size, microsEach(o));
      const name = `${workload.name} @ ${size} nodes: orrery decisions/s`;
      const row = { name, value: rate, unit: 'decisions/s', reference: refRate, ratio };
      rows.push(size === 5_000 ? targetRow(row, TARGETS.rate, 'atLeast') : row);
      if (size === 5_000) {
        rows.push(targetRow({ name: `${workload.name} @ ${size} nodes: orrery ÷ reference`, value: ratio, unit: '×' }, TARGETS.speedup, 'atLeast'));
        note(`${workload.name}: orrery decisions/s at 5,000 nodes`, rate, TARGETS.rate, 'atLeast', '/s');
        note(`${workload.name}: orrery ÷ reference at 5,000 nodes`, ratio, TARGETS.speedup, 'atLeast', '×');
      }
      table.push([
        workload.name, formatNumber(rate), formatNumber(refRate), `${formatNumber(ratio)}×`, formatNumber(microsEach(o)), formatNumber(microsEach(r)),
        `${formatNumber((100 * o.placed) / o.decisions)}%`, cell(microsPlaced(o)), cell(microsUnplaced(o)), formatNumber(o.utilization),
        formatNumber(o.decisions), formatNumber(r.decisions),
      ]);
    });
    console.log(`\n${size.toLocaleString('en-US')} nodes`);
    console.log(
      formatTable(['workload', 'orrery/s', 'reference/s', 'ratio', 'orrery µs', 'ref µs', 'placed', 'µs placed', 'µs unplaced', 'CPU util', 'orrery n', 'ref n'], table),
    );
  }

  const growth: string[][] = [];
  for (const [name, bySize] of micros) {
    const g = bySize.get(5_000)! / bySize.get(50)!;
    growth.push([name, formatNumber(bySize.get(50)!), formatNumber(bySize.get(500)!), formatNumber(bySize.get(5_000)!), `${formatNumber(g)}×`]);
    rows.push(targetRow({ name: `${name}: orrery µs/decision at 5,000 ÷ at 50 nodes (at most)`, value: g, unit: '×' }, TARGETS.growth, 'atMost'));
    note(`${name}: cost at 5,000 ÷ cost at 50`, g, TARGETS.growth, 'atMost', '×');
  }
  console.log('\norrery cost per decision (µs) by cluster size');
  console.log(formatTable(['workload', '50', '500', '5,000', '5,000 ÷ 50'], growth));
  console.log('\ntargets');
  console.log(targets.join('\n'));
  const missed = rows.filter((r) => r.met === false).length;
  console.log(`\n${rows.filter((r) => r.met !== undefined).length - missed} targets met, ${missed} missed`);
  printJsonLast(args, rows);
}

main();
