import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import type { NodeState } from '../../../lib/cluster/sched-node.ts';
import { InvalidLabelError, InvalidOptionError, InvalidResourceError, InvalidSelectorError, OrreryError } from '../../../lib/errors.ts';
import { seededRng, type Rng } from '../../../lib/random.ts';
import { addResources, fits, parseResources, type ResourceSet } from '../../../lib/resources/resource-set.ts';
import {
  compilePlacementGroup,
  referenceScheduleBundles,
  scheduleBundles,
  type BundleDecision,
  type BundleStrategy,
  type PlacementGroupOptions,
  type PlacementGroupRequest,
} from '../../../lib/scheduling/bundles/index.ts';
import type { ScheduleFailure } from '../../../lib/scheduling/explain.ts';
import { firstUntoleratedTaint, parseTaints } from '../../../lib/scheduling/taints.ts';
import { Exists, In } from '../../../lib/selectors/builders.ts';
import { expressionMatches } from '../../../lib/selectors/expression.ts';

// ---- helpers ----

interface NodeSpec {
  id: string;
  res: Record<string, number>;
  labels?: Record<string, string>;
  taints?: Record<string, string>;
  used?: Record<string, number>;
  state?: NodeState;
}

function cluster(nodes: NodeSpec[]): ClusterState {
  const state = new ClusterState();
  for (const n of nodes) addNode(state, n);
  return state;
}

function addNode(state: ClusterState, n: NodeSpec): void {
  state.addNode({ nodeId: n.id, labels: n.labels, taints: parseTaints(n.taints ?? {}), total: parseResources(n.res), state: n.state });
  if (n.used) state.allocate(n.id, parseResources(n.used));
}

/** Everything a decision must leave as it found it. */
function snapshot(state: ClusterState): unknown {
  return {
    nodes: [...state.nodes.values()].map((n) => ({ id: n.id, total: { ...n.total }, available: { ...n.available }, score: n.score })),
    order: Array.from({ length: state.order.size }, (_, i) => state.order.at(i).id),
    ids: [...state.ids],
    cursor: state.spreadCursor,
  };
}

/**
 * Decides with scheduleBundles and with referenceScheduleBundles, checking that neither changes the
 * state and that they agree on status and tier — and on everything when the cluster has fewer than
 * 10 nodes (then the best window holds one node and both choices are deterministic).
 */
function decide(state: ClusterState, req: PlacementGroupRequest, seed = 1): BundleDecision {
  const before = snapshot(state);
  const got = scheduleBundles(state, req, { rng: seededRng(seed) });
  assert.equal(snapshot(state), before, 'scheduleBundles left the state as it found it');
  const ref = referenceScheduleBundles(state, req, seededRng(seed));
  assert.equal(snapshot(state), before, 'referenceScheduleBundles left the state as it found it');
  assert.is(ref.status, got.status, 'reference agrees on the status');
  if (got.status === 'placed' && ref.status === 'placed') assert.is(ref.tier, got.tier, 'reference agrees on the tier');
  if (state.nodes.size < 10) assert.equal(ref, got, 'reference agrees on the whole decision');
  if (got.status === 'placed') assertValid(state, req, got);
  return got;
}

/** A placed group must be a whole, valid assignment of its tier as the cluster stands. */
function assertValid(state: ClusterState, req: PlacementGroupRequest, d: Extract<BundleDecision, { status: 'placed' }>): void {
  const bundles = req.tiers[d.tier];
  assert.is(d.nodeIds.length, bundles.length, 'one node per bundle');
  const load = new Map<string, ResourceSet>();
  bundles.forEach((b, i) => {
    const node = state.node(d.nodeIds[i]);
    assert.ok(node, `bundle ${i} is on a known node`);
    assert.is(node!.state, 'ALIVE', `bundle ${i} is on a live node`);
    assert.ok(b.selector.every((e) => expressionMatches(e, node!.labels)), `bundle ${i} matches its selector`);
    assert.is(firstUntoleratedTaint(node!.taints, req.tolerations), undefined, `bundle ${i} tolerates its node`);
    load.set(node!.id, addResources(load.get(node!.id) ?? {}, b.resources));
  });
  for (const [id, need] of load) assert.ok(fits(state.node(id)!.available, need), `node ${id} has room for all its bundles`);
  if (req.strategy === 'STRICT_PACK') assert.is(new Set(d.nodeIds).size, 1, 'STRICT_PACK: one node');
  if (req.strategy === 'STRICT_SPREAD') assert.is(new Set(d.nodeIds).size, d.nodeIds.length, 'STRICT_SPREAD: all distinct');
}

function failureOf(d: BundleDecision): ScheduleFailure {
  if (d.status !== 'unschedulable') assert.unreachable(`expected unschedulable, got ${JSON.stringify(d)}`);
  return (d as Extract<BundleDecision, { status: 'unschedulable' }>).failure;
}

const cpu = (n: number) => ({ CPU: n });
const times = <T>(n: number, x: T): T[] => Array.from({ length: n }, () => x);
const ACC = 'orrery.io/accelerator-type';

// ---- every strategy × fits / does not fit ----

type Want =
  | { nodeIds: string[]; tier?: number }
  | { failure: Pick<ScheduleFailure, 'code' | 'reason' | 'message'> };

const strategyCases: { name: string; nodes: NodeSpec[]; pg: PlacementGroupOptions; want: Want }[] = [
  // PACK
  {
    name: 'PACK: the whole group on the first node that holds it',
    nodes: [{ id: 'n1', res: cpu(4) }, { id: 'n2', res: cpu(4) }],
    pg: { strategy: 'PACK', bundles: times(3, cpu(1)) },
    want: { nodeIds: ['n1', 'n1', 'n1'] },
  },
  {
    name: 'PACK is the default strategy',
    nodes: [{ id: 'n1', res: cpu(4) }, { id: 'n2', res: cpu(4) }],
    pg: { bundles: times(2, cpu(1)) },
    want: { nodeIds: ['n1', 'n1'] },
  },
  {
    name: 'PACK: a node too small for the group is passed over for one that holds it all',
    nodes: [{ id: 'n1', res: cpu(2) }, { id: 'n2', res: cpu(4) }, { id: 'n3', res: cpu(4) }],
    pg: { strategy: 'PACK', bundles: times(3, cpu(1)) },
    want: { nodeIds: ['n2', 'n2', 'n2'] },
  },
  {
    name: 'PACK: no node holds it all, so it uses the fewest nodes',
    nodes: [{ id: 'n1', res: cpu(2) }, { id: 'n2', res: cpu(2) }, { id: 'n3', res: cpu(2) }],
    pg: { strategy: 'PACK', bundles: times(4, cpu(1)) },
    want: { nodeIds: ['n1', 'n1', 'n2', 'n2'] },
  },
  {
    name: 'PACK does not fit: the cluster has too little CPU in all',
    nodes: [{ id: 'n1', res: cpu(1) }, { id: 'n2', res: cpu(1) }],
    pg: { strategy: 'PACK', bundles: times(3, cpu(1)) },
    want: { failure: { code: 'infeasible', reason: 'resources', message: '0/2 nodes are available for bundle 2: 2 node(s) had insufficient CPU.' } },
  },
  // STRICT_PACK
  {
    name: 'STRICT_PACK: the one node that holds the sum',
    nodes: [{ id: 'n1', res: cpu(2) }, { id: 'n2', res: cpu(4) }],
    pg: { strategy: 'STRICT_PACK', bundles: times(3, cpu(1)) },
    want: { nodeIds: ['n2', 'n2', 'n2'] },
  },
  {
    name: 'STRICT_PACK: mixed bundles summed on one node',
    nodes: [{ id: 'cpu', res: cpu(8) }, { id: 'gpu', res: { CPU: 4, GPU: 2 } }],
    pg: { strategy: 'STRICT_PACK', bundles: [{ CPU: 2 }, { GPU: 1 }, { CPU: 1, GPU: 1 }] },
    want: { nodeIds: ['gpu', 'gpu', 'gpu'] },
  },
  {
    name: 'STRICT_PACK does not fit although the cluster as a whole has room',
    nodes: [{ id: 'n1', res: cpu(2) }, { id: 'n2', res: cpu(2) }],
    pg: { strategy: 'STRICT_PACK', bundles: times(3, cpu(1)) },
    want: { failure: { code: 'infeasible', reason: 'resources', message: '0/2 nodes are available for the whole group (STRICT_PACK): 2 node(s) had less total CPU than requested.' } },
  },
  {
    name: 'STRICT_PACK waits for a busy node big enough',
    nodes: [{ id: 'n1', res: cpu(2) }, { id: 'n2', res: cpu(4), used: cpu(2) }],
    pg: { strategy: 'STRICT_PACK', bundles: times(3, cpu(1)) },
    want: { failure: { code: 'unschedulable', reason: 'resources', message: '0/2 nodes are available for the whole group (STRICT_PACK): 1 node(s) had insufficient CPU, 1 node(s) had less total CPU than requested.' } },
  },
  // STRICT_SPREAD
  {
    name: 'STRICT_SPREAD: one bundle per node',
    nodes: [{ id: 'n1', res: cpu(4) }, { id: 'n2', res: cpu(4) }, { id: 'n3', res: cpu(4) }],
    pg: { strategy: 'STRICT_SPREAD', bundles: times(3, cpu(1)) },
    want: { nodeIds: ['n1', 'n2', 'n3'] },
  },
  {
    name: 'STRICT_SPREAD: the only distinct assignment',
    nodes: [{ id: 'n1', res: cpu(1) }, { id: 'n2', res: { CPU: 1, GPU: 1 } }, { id: 'n3', res: cpu(1) }],
    pg: { strategy: 'STRICT_SPREAD', bundles: [{ CPU: 1 }, { GPU: 1 }] },
    want: { nodeIds: ['n1', 'n2'] },
  },
  {
    name: 'STRICT_SPREAD does not fit: more bundles than nodes',
    nodes: [{ id: 'n1', res: cpu(4) }, { id: 'n2', res: cpu(4) }],
    pg: { strategy: 'STRICT_SPREAD', bundles: times(3, cpu(1)) },
    want: { failure: { code: 'infeasible', reason: 'constraints', message: '0/2 nodes are available for bundle 2: 2 node(s) already held another bundle of the group.' } },
  },
  {
    name: 'STRICT_SPREAD waits when the second node is busy',
    nodes: [{ id: 'n1', res: cpu(4) }, { id: 'n2', res: cpu(4), used: cpu(4) }],
    pg: { strategy: 'STRICT_SPREAD', bundles: times(2, cpu(1)) },
    want: { failure: { code: 'unschedulable', reason: 'resources', message: '0/2 nodes are available for bundle 1: 1 node(s) already held another bundle of the group, 1 node(s) had insufficient CPU.' } },
  },
  // SPREAD
  {
    name: 'SPREAD: distinct nodes when there are enough',
    nodes: [{ id: 'n1', res: cpu(4) }, { id: 'n2', res: cpu(4) }, { id: 'n3', res: cpu(4) }],
    pg: { strategy: 'SPREAD', bundles: times(3, cpu(1)) },
    want: { nodeIds: ['n1', 'n2', 'n3'] },
  },
  {
    name: 'SPREAD: shares nodes when there are too few',
    nodes: [{ id: 'n1', res: cpu(4) }, { id: 'n2', res: cpu(4) }],
    pg: { strategy: 'SPREAD', bundles: times(3, cpu(1)) },
    want: { nodeIds: ['n1', 'n2', 'n1'] },
  },
  {
    name: 'SPREAD: more bundles than nodes share them evenly',
    nodes: [{ id: 'n1', res: cpu(8) }, { id: 'n2', res: cpu(8) }],
    pg: { strategy: 'SPREAD', bundles: times(6, cpu(1)) },
    want: { nodeIds: ['n1', 'n2', 'n1', 'n2', 'n1', 'n2'] },
  },
  {
    name: 'SPREAD: a node that is full takes no more; the others share the rest evenly',
    nodes: [{ id: 'n1', res: cpu(1) }, { id: 'n2', res: cpu(8) }, { id: 'n3', res: cpu(8) }],
    pg: { strategy: 'SPREAD', bundles: times(7, cpu(1)) },
    want: { nodeIds: ['n1', 'n2', 'n3', 'n2', 'n3', 'n2', 'n3'] },
  },
  {
    name: 'SPREAD does not fit: too little CPU in all',
    nodes: [{ id: 'n1', res: cpu(1) }, { id: 'n2', res: cpu(1) }],
    pg: { strategy: 'SPREAD', bundles: times(3, cpu(1)) },
    want: { failure: { code: 'infeasible', reason: 'resources', message: '0/2 nodes are available for bundle 2: 2 node(s) had insufficient CPU.' } },
  },
  // labels, taints and node state
  {
    name: 'bundleLabelSelector maps 1:1: different bundles needing different labels',
    nodes: [
      { id: 'a100', res: { CPU: 8, GPU: 4 }, labels: { [ACC]: 'nvidia-a100' } },
      { id: 'h100', res: { CPU: 8, GPU: 4 }, labels: { [ACC]: 'nvidia-h100' } },
      { id: 'spot', res: { CPU: 8 }, labels: { 'orrery.io/market-type': 'spot' } },
    ],
    pg: {
      strategy: 'PACK',
      bundles: [{ CPU: 1 }, { GPU: 1 }, { GPU: 1 }],
      bundleLabelSelector: [{ 'orrery.io/market-type': 'spot' }, { [ACC]: 'nvidia-h100' }, { [ACC]: 'nvidia-h100' }],
    },
    want: { nodeIds: ['spot', 'h100', 'h100'] },
  },
  {
    name: 'the same selector on every bundle (seed 002: all in one zone)',
    nodes: [
      { id: 'w1', res: { GPU: 1 }, labels: { 'orrery.io/availability-zone': 'us-west4-b' } },
      { id: 'w2', res: { GPU: 1 }, labels: { 'orrery.io/availability-zone': 'us-west4-a' } },
      { id: 'w3', res: { GPU: 1 }, labels: { 'orrery.io/availability-zone': 'us-west4-a' } },
    ],
    pg: { strategy: 'SPREAD', bundles: times(2, { GPU: 1 }), bundleLabelSelector: times(2, { 'orrery.io/availability-zone': 'us-west4-a' }) },
    want: { nodeIds: ['w2', 'w3'] },
  },
  {
    name: 'STRICT_PACK needs one node matching every bundle selector',
    nodes: [
      { id: 'n1', res: cpu(8), labels: { zone: 'a' } },
      { id: 'n2', res: cpu(8), labels: { zone: 'a', ssd: 'true' } },
    ],
    pg: { strategy: 'STRICT_PACK', bundles: times(2, cpu(1)), bundleLabelSelector: [{ zone: 'a' }, { ssd: 'true' }] },
    want: { nodeIds: ['n2', 'n2'] },
  },
  {
    name: 'selectors no node matches',
    nodes: [
      { id: 'n1', res: cpu(8), labels: { zone: 'a' } },
      { id: 'n2', res: cpu(8), labels: { zone: 'b' } },
    ],
    pg: { strategy: 'PACK', bundles: times(2, cpu(1)), bundleLabelSelector: [{ zone: 'a' }, { zone: 'c' }] },
    want: { failure: { code: 'infeasible', reason: 'constraints', message: '0/2 nodes are available for bundle 1: 2 node(s) didn\'t match label selector zone in (c).' } },
  },
  {
    name: 'constraints and resources: the matching node is too small, the big one does not match',
    nodes: [
      { id: 'n1', res: cpu(1), labels: { zone: 'a' } },
      { id: 'n2', res: cpu(8), labels: { zone: 'b' } },
    ],
    pg: { strategy: 'PACK', bundles: [cpu(2)], bundleLabelSelector: [{ zone: 'a' }] },
    want: { failure: { code: 'infeasible', reason: 'resources', message: "0/2 nodes are available for bundle 0: 1 node(s) didn't match label selector zone in (a), 1 node(s) had less total CPU than requested." } },
  },
  {
    name: 'constraints_and_resources: no node passes the rules and none has the resources',
    nodes: [
      { id: 'n1', res: cpu(1), labels: { zone: 'b' } },
      { id: 'n2', res: cpu(1), labels: { zone: 'c' } },
    ],
    pg: { strategy: 'PACK', bundles: [cpu(2)], bundleLabelSelector: [{ zone: 'a' }] },
    want: {
      failure: {
        code: 'infeasible',
        reason: 'constraints_and_resources',
        message: "0/2 nodes are available for bundle 0: 2 node(s) didn't match label selector zone in (a), 2 node(s) had less total CPU than requested (a node is counted under each reason it fails).",
      },
    },
  },
  {
    name: 'an empty cluster',
    nodes: [],
    pg: { bundles: [{ GPU: 1 }] },
    want: { failure: { code: 'infeasible', reason: 'constraints_and_resources', message: '0/0 nodes are available for bundle 0: the cluster has no nodes.' } },
  },
  {
    name: 'draining and dead nodes take no bundles',
    nodes: [
      { id: 'n1', res: cpu(4), state: 'DRAINING' },
      { id: 'n2', res: cpu(4), state: 'DEAD' },
      { id: 'n3', res: cpu(4) },
    ],
    pg: { strategy: 'SPREAD', bundles: times(2, cpu(1)) },
    want: { nodeIds: ['n3', 'n3'] },
  },
  {
    name: 'a draining node is reported, a dead one is not counted',
    nodes: [
      { id: 'n1', res: cpu(4), state: 'DRAINING' },
      { id: 'n2', res: cpu(4), state: 'DEAD' },
    ],
    pg: { bundles: [cpu(1)] },
    want: { failure: { code: 'infeasible', reason: 'constraints', message: '0/1 nodes are available for bundle 0: 1 node(s) were draining.' } },
  },
  {
    name: 'seed 003 §4: without a toleration the group stays off the tainted GPU node',
    nodes: [{ id: 'gpu', res: { CPU: 4, GPU: 1 }, taints: { gpu_node: 'true' } }],
    pg: { bundles: [{ GPU: 1 }] },
    want: { failure: { code: 'infeasible', reason: 'constraints', message: '0/1 nodes are available for bundle 0: 1 node(s) had untolerated taint {gpu_node: true}.' } },
  },
  {
    name: 'seed 003 §4: tolerations { gpu_node: Exists() } let it use the tainted node',
    nodes: [{ id: 'gpu', res: { CPU: 4, GPU: 1 }, taints: { gpu_node: 'true' } }],
    pg: { bundles: [{ GPU: 1 }], tolerations: { gpu_node: Exists() } },
    want: { nodeIds: ['gpu'] },
  },
  {
    name: 'seed 003: a CPU group lands on the untainted node even when the tainted one comes first',
    nodes: [
      { id: 'a-gpu', res: { CPU: 8, GPU: 1 }, taints: { gpu_node: 'true' } },
      { id: 'b-cpu', res: { CPU: 8 } },
    ],
    pg: { strategy: 'STRICT_PACK', bundles: [{ CPU: 1 }] },
    want: { nodeIds: ['b-cpu'] },
  },
  {
    name: 'a toleration for another value does not help',
    nodes: [{ id: 'gpu', res: { GPU: 1 }, taints: { gpu_type: 'A100' } }],
    pg: { bundles: [{ GPU: 1 }], tolerations: { gpu_type: In('H100') } },
    want: { failure: { code: 'infeasible', reason: 'constraints', message: '0/1 nodes are available for bundle 0: 1 node(s) had untolerated taint {gpu_type: A100}.' } },
  },
  {
    name: 'a tolerated NoExecute taint and an ignored PreferNoSchedule taint',
    nodes: [
      { id: 'n1', res: cpu(2), taints: { drain: 'soon:NoExecute' } },
      { id: 'n2', res: cpu(2), taints: { pressure: 'high:PreferNoSchedule' } },
    ],
    pg: { strategy: 'STRICT_SPREAD', bundles: times(2, cpu(1)), tolerations: { drain: Exists() } },
    want: { nodeIds: ['n1', 'n2'] },
  },
  {
    name: 'the 4-node explanation: every node with its own reasons, tallied',
    nodes: [
      { id: 'n1', res: cpu(4), labels: { zone: 'a' } },
      { id: 'n2', res: cpu(4), labels: { zone: 'a' }, used: cpu(4) },
      { id: 'n3', res: cpu(1), labels: { zone: 'b' } },
      { id: 'n4', res: cpu(4), labels: { zone: 'b' }, taints: { gpu_node: 'true' } },
    ],
    pg: { strategy: 'PACK', bundles: [cpu(1), cpu(2)], bundleLabelSelector: [{ zone: 'a' }, { zone: 'b' }] },
    want: {
      failure: {
        code: 'infeasible',
        reason: 'resources',
        message:
          "0/4 nodes are available for bundle 1: 2 node(s) didn't match label selector zone in (b), 1 node(s) had insufficient CPU, 1 node(s) had less total CPU than requested, 1 node(s) had untolerated taint {gpu_node: true} (a node is counted under each reason it fails).",
      },
    },
  },
];

for (const c of strategyCases) {
  test(`bundles: ${c.name}`, () => {
    const state = cluster(c.nodes);
    const d = decide(state, compilePlacementGroup(c.pg));
    if ('nodeIds' in c.want) {
      assert.equal(d, { status: 'placed', nodeIds: c.want.nodeIds, tier: c.want.tier ?? 0 });
    } else {
      const f = failureOf(d);
      assert.equal({ code: f.code, reason: f.reason, message: f.message }, c.want.failure);
    }
  });
}

test('bundles: a failure lists every live node with its reasons, by id', () => {
  const state = cluster([
    { id: 'n2', res: cpu(1), labels: { zone: 'b' } },
    { id: 'n1', res: cpu(8), labels: { zone: 'a' }, used: cpu(8) },
    { id: 'n3', res: cpu(8), state: 'DEAD' },
  ]);
  const f = failureOf(decide(state, compilePlacementGroup({ bundles: [cpu(2)], bundleLabelSelector: [{ zone: 'a' }] })));
  assert.equal(f.nodes, [
    { nodeId: 'n1', reasons: ['had insufficient CPU'] },
    { nodeId: 'n2', reasons: ["didn't match label selector zone in (a)", 'had less total CPU than requested'] },
  ]);
  assert.is(f.code, 'unschedulable');
  assert.is(f.reason, 'resources');
});

test('bundles: a failure for bundle 1 reports the node holding bundle 0 as short, not as free', () => {
  const state = cluster([{ id: 'n1', res: cpu(1) }, { id: 'n2', res: cpu(1), used: cpu(1) }]);
  const f = failureOf(decide(state, compilePlacementGroup({ strategy: 'PACK', bundles: times(2, cpu(1)) })));
  assert.is(f.message, '0/2 nodes are available for bundle 1: 2 node(s) had insufficient CPU.');
  assert.equal(f.nodes, [
    { nodeId: 'n1', reasons: ['had insufficient CPU'] },
    { nodeId: 'n2', reasons: ['had insufficient CPU'] },
  ]);
  assert.is(f.code, 'unschedulable', 'n2 may free up');
});

// ---- properties over random seeds where the choice is random ----

const bigCluster = (n: number, res: Record<string, number>): NodeSpec[] =>
  Array.from({ length: n }, (_, i) => ({ id: `node-${String(i).padStart(2, '0')}`, res }));

const propertyCases: { name: string; strategy: BundleStrategy; bundles: number; nodes: NodeSpec[]; check: (ids: readonly string[]) => void }[] = [
  {
    name: 'STRICT_SPREAD on 30 nodes: all distinct',
    strategy: 'STRICT_SPREAD',
    bundles: 12,
    nodes: bigCluster(30, cpu(2)),
    check: (ids) => assert.is(new Set(ids).size, ids.length),
  },
  {
    name: 'STRICT_PACK on 30 nodes: all on one node',
    strategy: 'STRICT_PACK',
    bundles: 6,
    nodes: bigCluster(30, cpu(8)),
    check: (ids) => assert.is(new Set(ids).size, 1),
  },
  {
    name: 'PACK on 30 nodes, each holding the whole group: one node',
    strategy: 'PACK',
    bundles: 4,
    nodes: bigCluster(30, cpu(4)),
    check: (ids) => assert.is(new Set(ids).size, 1),
  },
  {
    name: 'PACK on 30 nodes of 2 CPUs, 6 bundles of 1: the fewest nodes, 3',
    strategy: 'PACK',
    bundles: 6,
    nodes: bigCluster(30, cpu(2)),
    check: (ids) => assert.is(new Set(ids).size, 3),
  },
  {
    name: 'SPREAD on 30 nodes, 10 bundles: all distinct',
    strategy: 'SPREAD',
    bundles: 10,
    nodes: bigCluster(30, cpu(4)),
    check: (ids) => assert.is(new Set(ids).size, ids.length),
  },
  {
    name: 'SPREAD on 12 nodes, 20 bundles: shared, but every node used',
    strategy: 'SPREAD',
    bundles: 20,
    nodes: bigCluster(12, cpu(4)),
    check: (ids) => assert.is(new Set(ids).size, 12),
  },
  {
    name: 'SPREAD on 12 nodes, 40 bundles: every node holds 3 or 4',
    strategy: 'SPREAD',
    bundles: 40,
    nodes: bigCluster(12, cpu(8)),
    check: (ids) => {
      const counts = [...ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>()).values()];
      assert.is(counts.length, 12);
      assert.ok(counts.every((n) => n === 3 || n === 4), counts.join(','));
    },
  },
];

for (const c of propertyCases) {
  test(`bundles: ${c.name} (20 seeds)`, () => {
    const state = cluster(c.nodes);
    const req = compilePlacementGroup({ strategy: c.strategy, bundles: times(c.bundles, cpu(1)) });
    for (let seed = 1; seed <= 20; seed++) {
      const d = decide(state, req, seed);
      if (d.status !== 'placed') assert.unreachable(`seed ${seed}: ${JSON.stringify(d)}`);
      else c.check(d.nodeIds);
    }
  });
}

// ---- exact search where greedy choice would fail ----

test('bundles: STRICT_SPREAD where greedy choice fails but a matching exists (bundle 0 → {A,B}, bundle 1 → {A})', () => {
  const state = cluster([
    { id: 'A', res: cpu(4), labels: { zone: 'a' } },
    { id: 'B', res: cpu(4), labels: { zone: 'b' } },
  ]);
  const req = compilePlacementGroup({ strategy: 'STRICT_SPREAD', bundles: times(2, cpu(1)), bundleLabelSelector: [{ zone: 'in(a,b)' }, { zone: 'a' }] });
  assert.equal(decide(state, req), { status: 'placed', nodeIds: ['B', 'A'], tier: 0 });
});

test('bundles: STRICT_SPREAD matching over a longer chain (each bundle one node further along)', () => {
  const state = cluster(['n1', 'n2', 'n3', 'n4'].map((id) => ({ id, res: cpu(1), labels: { slot: id } })));
  const req = compilePlacementGroup({
    strategy: 'STRICT_SPREAD',
    bundles: times(4, cpu(1)),
    bundleLabelSelector: [{ slot: 'in(n1,n2,n3,n4)' }, { slot: 'in(n1,n2,n3)' }, { slot: 'in(n1,n2)' }, { slot: 'n1' }],
  });
  assert.equal(decide(state, req), { status: 'placed', nodeIds: ['n4', 'n3', 'n2', 'n1'], tier: 0 });
});

for (const strategy of ['PACK', 'SPREAD'] as const) {
  test(`bundles: ${strategy} where the first bundle would take the only node the second can use`, () => {
    // Bundle 0 (2 CPUs, any node) goes first by weight; greedily it takes n2, the only zone-a node,
    // leaving bundle 1 nowhere. A placement exists: bundle 0 on n3, bundle 1 on n2.
    const state = cluster([
      { id: 'n1', res: cpu(1), labels: { zone: 'b' } },
      { id: 'n2', res: cpu(2), labels: { zone: 'a' } },
      { id: 'n3', res: cpu(2), labels: { zone: 'b' } },
    ]);
    const req = compilePlacementGroup({ strategy, bundles: [cpu(2), cpu(1)], bundleLabelSelector: [{}, { zone: 'a' }], fallbackStrategy: [{ bundles: [cpu(1)] }] });
    assert.equal(decide(state, req), { status: 'placed', nodeIds: ['n3', 'n2'], tier: 0 });
  });
}

// ---- fallbackStrategy (seed 002) ----

test('fallbackStrategy, seed 002: prefer 2 H100s, else 4 A100s, else 8 V100s — each tier in turn as nodes join', () => {
  const req = compilePlacementGroup({
    bundles: times(2, { GPU: 1 }),
    bundleLabelSelector: times(2, { [ACC]: 'nvidia-h100' }),
    fallbackStrategy: [
      { bundles: times(4, { GPU: 1 }), bundleLabelSelector: times(4, { [ACC]: 'nvidia-a100' }) },
      { bundles: times(8, { GPU: 1 }), bundleLabelSelector: times(8, { [ACC]: 'nvidia-v100' }) },
    ],
  });
  assert.is(req.tiers.length, 3);
  const state = cluster([{ id: 'cpu', res: cpu(16) }]);

  const none = failureOf(decide(state, req));
  assert.is(none.code, 'infeasible');
  assert.is(none.reason, 'constraints_and_resources');
  assert.is(none.message, "0/1 nodes are available for bundle 0: 1 node(s) didn't match label selector orrery.io/accelerator-type in (nvidia-h100), 1 node(s) had less total GPU than requested (a node is counted under each reason it fails).");

  addNode(state, { id: 'v100', res: { CPU: 16, GPU: 8 }, labels: { [ACC]: 'nvidia-v100' } });
  assert.equal(decide(state, req), { status: 'placed', nodeIds: times(8, 'v100'), tier: 2 });

  addNode(state, { id: 'a100', res: { CPU: 16, GPU: 4 }, labels: { [ACC]: 'nvidia-a100' } });
  assert.equal(decide(state, req), { status: 'placed', nodeIds: times(4, 'a100'), tier: 1 });

  addNode(state, { id: 'h100', res: { CPU: 16, GPU: 2 }, labels: { [ACC]: 'nvidia-h100' } });
  assert.equal(decide(state, req), { status: 'placed', nodeIds: times(2, 'h100'), tier: 0 });
});

test('fallbackStrategy: a tier that is feasible but busy makes the group wait instead of falling back', () => {
  const req = compilePlacementGroup({
    bundles: times(2, { GPU: 1 }),
    bundleLabelSelector: times(2, { [ACC]: 'nvidia-h100' }),
    fallbackStrategy: [{ bundles: times(4, { GPU: 1 }), bundleLabelSelector: times(4, { [ACC]: 'nvidia-a100' }) }],
  });
  const state = cluster([
    { id: 'a100', res: { GPU: 4 }, labels: { [ACC]: 'nvidia-a100' } },
    { id: 'h100', res: { GPU: 2 }, labels: { [ACC]: 'nvidia-h100' }, used: { GPU: 1 } },
  ]);
  const f = failureOf(decide(state, req));
  assert.equal(
    { code: f.code, reason: f.reason, message: f.message },
    {
      code: 'unschedulable',
      reason: 'resources',
      message: "0/2 nodes are available for bundle 1: 1 node(s) didn't match label selector orrery.io/accelerator-type in (nvidia-h100), 1 node(s) had insufficient GPU.",
    },
  );
  state.release('h100', parseResources({ GPU: 1 }));
  assert.equal(decide(state, req), { status: 'placed', nodeIds: ['h100', 'h100'], tier: 0 });
});

test('fallbackStrategy: a preferred tier that can never fit falls back even when the fallback must wait', () => {
  const req = compilePlacementGroup({
    strategy: 'STRICT_SPREAD',
    bundles: times(3, { GPU: 1 }),
    bundleLabelSelector: times(3, { [ACC]: 'nvidia-h100' }),
    fallbackStrategy: [{ bundles: times(2, { GPU: 1 }) }],
  });
  const state = cluster([
    { id: 'h1', res: { GPU: 1 }, labels: { [ACC]: 'nvidia-h100' } },
    { id: 'h2', res: { GPU: 1 }, labels: { [ACC]: 'nvidia-h100' } },
    { id: 'x', res: { GPU: 1 }, used: { GPU: 1 } },
  ]);
  assert.equal(decide(state, req), { status: 'placed', nodeIds: ['h1', 'h2'], tier: 1 });
  state.allocate('h2', parseResources({ GPU: 1 }));
  const f = failureOf(decide(state, req));
  assert.is(f.code, 'unschedulable', 'tier 1 fits once a GPU frees up');
  assert.is(f.message, '0/3 nodes are available for bundle 1: 1 node(s) already held another bundle of the group, 2 node(s) had insufficient GPU.');
});

test('fallbackStrategy: when no tier can ever fit, the explanation is the first tier\'s', () => {
  const req = compilePlacementGroup({
    bundles: [{ GPU: 1 }],
    bundleLabelSelector: [{ [ACC]: 'nvidia-h100' }],
    fallbackStrategy: [{ bundles: [{ GPU: 8 }] }],
  });
  const state = cluster([{ id: 'n1', res: { GPU: 1 } }]);
  const f = failureOf(decide(state, req));
  assert.is(f.code, 'infeasible');
  assert.is(f.reason, 'constraints');
  assert.is(f.message, "0/1 nodes are available for bundle 0: 1 node(s) didn't match label selector orrery.io/accelerator-type in (nvidia-h100).");
});

// ---- compilePlacementGroup ----

test('compilePlacementGroup: tiers, selectors, defaults', () => {
  const req = compilePlacementGroup(
    {
      name: 'from-options',
      bundles: [{ CPU: 1 }, { GPU: 0.5, memory: 1024 }],
      bundleLabelSelector: [{ zone: 'a' }, {}],
      fallbackStrategy: [{ bundles: [{ CPU: 2 }] }],
    },
    { id: 'pg1', name: 'from-context' },
  );
  assert.equal(req, {
    target: { kind: 'placement_group', id: 'pg1', name: 'from-context' },
    strategy: 'PACK',
    tiers: [
      [
        { resources: { CPU: 10_000 }, selector: [{ key: 'zone', operator: 'IN', values: ['a'], soft: false }] },
        { resources: { GPU: 5_000, memory: 1024 }, selector: [] },
      ],
      [{ resources: { CPU: 20_000 }, selector: [] }],
    ],
    tolerations: {},
  });
  assert.equal(compilePlacementGroup({ name: 'x', bundles: [{ CPU: 1 }] }, { id: 'pg2' }).target, { kind: 'placement_group', id: 'pg2', name: 'x' });
  assert.is(compilePlacementGroup({ bundles: [{ CPU: 1 }] }).target, undefined);
});

test('compilePlacementGroup: tolerations, and rare-resource tolerations from any tier', () => {
  const req = compilePlacementGroup(
    { bundles: [{ CPU: 1 }], fallbackStrategy: [{ bundles: [{ GPU: 1 }] }], tolerations: { gpu_node: Exists() } },
    { rareResources: ['GPU'] },
  );
  assert.equal(req.tolerations, { 'orrery.io/rare-gpu': { operator: 'EXISTS', values: [] }, gpu_node: { operator: 'EXISTS', values: [] } });
  assert.equal(compilePlacementGroup({ bundles: [{ CPU: 1 }] }, { rareResources: ['GPU'] }).tolerations, {});
});

type ErrorClass = typeof InvalidOptionError | typeof InvalidResourceError | typeof InvalidSelectorError | typeof InvalidLabelError;
const CODES = new Map<ErrorClass, string>([
  [InvalidOptionError, 'INVALID_OPTION'],
  [InvalidResourceError, 'INVALID_RESOURCE'],
  [InvalidSelectorError, 'INVALID_SELECTOR'],
  [InvalidLabelError, 'INVALID_LABEL'],
]);

const badGroups: { name: string; input: unknown; cls: ErrorClass; detail: Record<string, unknown> }[] = [
  { name: 'options not an object', input: null, cls: InvalidOptionError, detail: { option: 'placementGroup', value: null } },
  { name: 'no bundles', input: {}, cls: InvalidOptionError, detail: { option: 'bundles', value: undefined, rule: 'expected a non-empty array of bundles' } },
  { name: 'an empty bundle list', input: { bundles: [] }, cls: InvalidOptionError, detail: { option: 'bundles', value: [], rule: 'expected a non-empty array of bundles' } },
  { name: 'bundles not an array', input: { bundles: { CPU: 1 } }, cls: InvalidOptionError, detail: { option: 'bundles', value: { CPU: 1 } } },
  { name: 'a zero resource', input: { bundles: [{ CPU: 1 }, { CPU: 0 }] }, cls: InvalidOptionError, detail: { option: 'bundles[1].CPU', value: 0, rule: 'bundle resources must be positive' } },
  { name: 'a zero beside a positive one', input: { bundles: [{ CPU: 1, GPU: 0 }] }, cls: InvalidOptionError, detail: { option: 'bundles[0].GPU', value: 0, rule: 'bundle resources must be positive' } },
  { name: 'a negative resource', input: { bundles: [{ GPU: -1 }] }, cls: InvalidOptionError, detail: { option: 'bundles[0].GPU', value: -1, rule: 'bundle resources must be positive' } },
  { name: 'an empty bundle', input: { bundles: [{}] }, cls: InvalidOptionError, detail: { option: 'bundles[0]', value: {}, rule: 'a bundle must reserve at least one resource' } },
  { name: 'a null bundle', input: { bundles: [{ CPU: 1 }, null] }, cls: InvalidOptionError, detail: { option: 'bundles[1]', value: null, rule: 'expected an object of resource name to quantity' } },
  { name: 'an array bundle', input: { bundles: [[1]] }, cls: InvalidOptionError, detail: { option: 'bundles[0]', value: [1] } },
  { name: 'a NaN resource', input: { bundles: [{ CPU: NaN }] }, cls: InvalidResourceError, detail: { resource: 'CPU', value: NaN, rule: 'quantity must be a finite number' } },
  { name: 'a string amount', input: { bundles: [{ CPU: '1' }] }, cls: InvalidResourceError, detail: { resource: 'CPU', value: '1' } },
  { name: 'a bad resource name', input: { bundles: [{ 'my res': 1 }] }, cls: InvalidResourceError, detail: { resource: 'my res', value: 1 } },
  { name: 'fractional memory', input: { bundles: [{ memory: 0.5 }] }, cls: InvalidResourceError, detail: { resource: 'memory', value: 0.5, rule: 'quantity is a count of bytes and must be a whole number' } },
  { name: 'an amount below the smallest unit', input: { bundles: [{ CPU: 0.00001 }] }, cls: InvalidResourceError, detail: { resource: 'CPU', value: 0.00001 } },
  {
    name: 'fewer selectors than bundles',
    input: { bundles: [{ CPU: 1 }, { CPU: 1 }], bundleLabelSelector: [{ zone: 'a' }] },
    cls: InvalidOptionError,
    detail: { option: 'bundleLabelSelector', value: [{ zone: 'a' }], rule: 'expected one selector per bundle (2)' },
  },
  {
    name: 'more selectors than bundles',
    input: { bundles: [{ CPU: 1 }], bundleLabelSelector: [{}, {}] },
    cls: InvalidOptionError,
    detail: { option: 'bundleLabelSelector', value: [{}, {}], rule: 'expected one selector per bundle (1)' },
  },
  { name: 'bundleLabelSelector not an array', input: { bundles: [{ CPU: 1 }], bundleLabelSelector: { zone: 'a' } }, cls: InvalidOptionError, detail: { option: 'bundleLabelSelector', value: { zone: 'a' } } },
  { name: 'a malformed bundle selector', input: { bundles: [{ CPU: 1 }], bundleLabelSelector: [{ zone: 'in()' }] }, cls: InvalidSelectorError, detail: { key: 'zone', value: 'in()', rule: 'in() needs at least one value' } },
  { name: 'an unknown strategy', input: { bundles: [{ CPU: 1 }], strategy: 'BALANCED' }, cls: InvalidOptionError, detail: { option: 'strategy', value: 'BALANCED', rule: 'expected one of PACK, SPREAD, STRICT_PACK, STRICT_SPREAD' } },
  { name: 'a lower-case strategy', input: { bundles: [{ CPU: 1 }], strategy: 'pack' }, cls: InvalidOptionError, detail: { option: 'strategy', value: 'pack' } },
  { name: 'fallbackStrategy not an array', input: { bundles: [{ CPU: 1 }], fallbackStrategy: { bundles: [{ CPU: 1 }] } }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy', value: { bundles: [{ CPU: 1 }] } } },
  { name: 'a fallback with no bundles', input: { bundles: [{ CPU: 1 }], fallbackStrategy: [{ bundles: [] }] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[0].bundles', value: [] } },
  { name: 'a fallback with an unknown key', input: { bundles: [{ CPU: 1 }], fallbackStrategy: [{ bundles: [{ CPU: 1 }], labelSelector: {} } as never] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[0].labelSelector', value: {} } },
  { name: 'an empty fallback {}', input: { bundles: [{ CPU: 1 }], fallbackStrategy: [{} as never] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[0].bundles', value: undefined } },
  { name: 'a null fallback', input: { bundles: [{ CPU: 1 }], fallbackStrategy: [null] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[0]', value: null } },
  {
    name: 'a fallback bundle with a zero',
    input: { bundles: [{ CPU: 1 }], fallbackStrategy: [{ bundles: [{ CPU: 1 }] }, { bundles: [{ GPU: 0 }] }] },
    cls: InvalidOptionError,
    detail: { option: 'fallbackStrategy[1].bundles[0].GPU', value: 0 },
  },
  {
    name: 'a fallback selector list of the wrong length',
    input: { bundles: [{ CPU: 1 }], fallbackStrategy: [{ bundles: [{ CPU: 1 }, { CPU: 1 }], bundleLabelSelector: [{}] }] },
    cls: InvalidOptionError,
    detail: { option: 'fallbackStrategy[0].bundleLabelSelector', value: [{}], rule: 'expected one selector per bundle (2)' },
  },
  { name: 'tolerations as a string', input: { bundles: [{ CPU: 1 }], tolerations: 'gpu_node' }, cls: InvalidOptionError, detail: { option: 'tolerations', value: 'gpu_node' } },
  { name: 'null tolerations', input: { bundles: [{ CPU: 1 }], tolerations: null }, cls: InvalidOptionError, detail: { option: 'tolerations', value: null } },
  { name: 'tolerations as an array', input: { bundles: [{ CPU: 1 }], tolerations: [Exists()] }, cls: InvalidOptionError, detail: { option: 'tolerations', value: [Exists()] } },
  { name: 'a bad toleration key', input: { bundles: [{ CPU: 1 }], tolerations: { 'a/b/c': Exists() } }, cls: InvalidLabelError, detail: { key: 'a/b/c' } },
  { name: 'a bad toleration condition', input: { bundles: [{ CPU: 1 }], tolerations: { gpu_node: { operator: 'IN', values: [] } } }, cls: InvalidSelectorError, detail: { key: 'gpu_node', rule: 'IN needs at least one value' } },
];

for (const c of badGroups) {
  test(`compilePlacementGroup rejects: ${c.name}`, () => {
    try {
      compilePlacementGroup(c.input as PlacementGroupOptions);
    } catch (err) {
      assert.instance(err, c.cls);
      assert.instance(err, OrreryError);
      const e = err as OrreryError;
      assert.is(e.code, CODES.get(c.cls));
      const got: Record<string, unknown> = {};
      for (const k of Object.keys(c.detail)) got[k] = e.detail[k];
      assert.equal(got, c.detail);
      return;
    }
    assert.unreachable(`expected ${c.cls.name}`);
  });
}

// ---- random clusters: scheduleBundles, the reference and an exhaustive search agree ----

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];

function randomCase(rng: Rng): { state: ClusterState; opts: PlacementGroupOptions } {
  const nodes: NodeSpec[] = [];
  for (let i = 0, n = 1 + Math.floor(rng() * 6); i < n; i++) {
    const res = { CPU: pick(rng, [1, 2, 4]), GPU: pick(rng, [0, 0, 1, 2]) };
    nodes.push({
      id: `n${i}`,
      res,
      labels: { zone: pick(rng, ['a', 'b', 'c']) },
      taints: rng() < 0.2 ? { gpu_node: 'true' } : {},
      used: rng() < 0.4 ? { CPU: res.CPU / 2 } : undefined,
      state: rng() < 0.1 ? 'DRAINING' : 'ALIVE',
    });
  }
  const tier = () => {
    const bundles: Record<string, number>[] = Array.from({ length: 1 + Math.floor(rng() * 4) }, (): Record<string, number> => (rng() < 0.3 ? { GPU: 1 } : { CPU: pick(rng, [0.5, 1, 2]) }));
    const bundleLabelSelector: Record<string, string>[] | undefined =
      rng() < 0.5 ? bundles.map((): Record<string, string> => (rng() < 0.5 ? {} : { zone: pick(rng, ['a', 'b', 'in(a,b)', '!c']) })) : undefined;
    return { bundles, bundleLabelSelector };
  };
  const opts: PlacementGroupOptions = {
    ...tier(),
    strategy: pick(rng, ['PACK', 'SPREAD', 'STRICT_PACK', 'STRICT_SPREAD'] as const),
    fallbackStrategy: rng() < 0.5 ? [tier()] : undefined,
    tolerations: rng() < 0.3 ? { gpu_node: Exists() } : undefined,
  };
  return { state: cluster(nodes), opts };
}

/** Is there any valid assignment of the tier, on available (now) or total (idle) resources? */
function assignmentExists(state: ClusterState, req: PlacementGroupRequest, tier: number, idle: boolean): boolean {
  const bundles = req.tiers[tier];
  const room = (id: string) => (idle ? state.node(id)!.total : state.node(id)!.available);
  const candidates = bundles.map((b) =>
    [...state.nodes.values()]
      .filter((n) => n.state === 'ALIVE' && b.selector.every((e) => expressionMatches(e, n.labels)) && !firstUntoleratedTaint(n.taints, req.tolerations))
      .map((n) => n.id),
  );
  const assign: string[] = [];
  const search = (i: number): boolean => {
    if (i === bundles.length) {
      if (req.strategy === 'STRICT_SPREAD' && new Set(assign).size !== assign.length) return false;
      if (req.strategy === 'STRICT_PACK' && new Set(assign).size !== 1) return false;
      const load = new Map<string, ResourceSet>();
      assign.forEach((id, j) => load.set(id, addResources(load.get(id) ?? {}, bundles[j].resources)));
      return [...load].every(([id, need]) => fits(room(id), need));
    }
    for (const id of candidates[i]) {
      assign.push(id);
      if (search(i + 1)) return true;
      assign.pop();
    }
    return false;
  };
  return search(0);
}

test('bundles: 1,500 random small clusters — placed at the first tier that fits now, waiting on one that fits when idle', () => {
  for (let seed = 0; seed < 1500; seed++) {
    const { state, opts } = randomCase(seededRng(seed));
    const req = compilePlacementGroup(opts);
    let want: { status: string; tier?: number; code?: string } = { status: 'unschedulable', code: 'infeasible' };
    for (let tier = 0; tier < req.tiers.length; tier++) {
      if (assignmentExists(state, req, tier, false)) {
        want = { status: 'placed', tier };
        break;
      }
      if (assignmentExists(state, req, tier, true)) {
        want = { status: 'unschedulable', code: 'unschedulable' };
        break;
      }
    }
    const d = decide(state, req, seed);
    const got = d.status === 'placed' ? { status: 'placed', tier: d.tier } : { status: 'unschedulable', code: d.failure.code };
    assert.equal(got, want, `seed ${seed}: ${JSON.stringify(opts)}`);
  }
});

test.run();

// ---- rescheduling lost bundles beside the ones that survived (req.placed) ----

test('bundles: rescheduling under STRICT_SPREAD keeps the lost bundle off nodes holding the others', () => {
  const state = cluster(['A', 'B', 'C'].map((id) => ({ id, res: cpu(4) })));
  const req = { ...compilePlacementGroup({ strategy: 'STRICT_SPREAD', bundles: [cpu(1)] }), placed: ['A', 'B'] };
  for (let seed = 1; seed <= 10; seed++) assert.equal(scheduleBundles(state, req, { rng: seededRng(seed) }), { status: 'placed', nodeIds: ['C'], tier: 0 });
});

test('bundles: rescheduling under STRICT_SPREAD with every other node taken is unschedulable', () => {
  const state = cluster(['A', 'B'].map((id) => ({ id, res: cpu(4) })));
  const req = { ...compilePlacementGroup({ strategy: 'STRICT_SPREAD', bundles: [cpu(1)] }), placed: ['A', 'B'] };
  const got = scheduleBundles(state, req, { rng: seededRng(1) });
  assert.is(got.status, 'unschedulable');
});

test('bundles: rescheduling under PACK prefers a node that holds the surviving bundles', () => {
  const state = cluster([
    { id: 'A', res: cpu(8) },
    { id: 'B', res: cpu(8), used: cpu(6) },
  ]);
  const req = { ...compilePlacementGroup({ strategy: 'PACK', bundles: [cpu(1), cpu(1)] }), placed: ['B'] };
  for (let seed = 1; seed <= 10; seed++) assert.equal(scheduleBundles(state, req, { rng: seededRng(seed) }), { status: 'placed', nodeIds: ['B', 'B'], tier: 0 });
});

test('bundles: rescheduling under SPREAD uses a node without the group first', () => {
  const state = cluster(['A', 'B'].map((id) => ({ id, res: cpu(4) })));
  const req = { ...compilePlacementGroup({ strategy: 'SPREAD', bundles: [cpu(1)] }), placed: ['A'] };
  for (let seed = 1; seed <= 10; seed++) assert.equal(scheduleBundles(state, req, { rng: seededRng(seed) }), { status: 'placed', nodeIds: ['B'], tier: 0 });
});
