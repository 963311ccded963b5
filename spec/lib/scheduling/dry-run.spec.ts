// The dry run (lib/scheduling/dry-run.ts) answers what `schedule` then does on the same state — on
// every kind of constraint and for placement groups — and changes nothing on the way.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  actorAffinity, affinity, antiAffinity, anyOf, compilePlacementGroup, compileRequest, dryRun, dryRunPlacementGroup, Exists, labelIn, nodeAffinity,
  nodeIdAffinity, scheduleBundles, schedule, seededRng, withTopologyKey, type PlacementOptions,
} from '../../../lib/index.ts';
import type { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import { cluster, placeActor } from '../../support/cluster.ts';

/** A cluster with something for every constraint to bite on. */
function world(): ClusterState {
  const s = cluster([
    { id: 'n1', cpu: 4, labels: { zone: 'a', disk: 'ssd', rack: 'r1' } },
    { id: 'n2', cpu: 8, labels: { zone: 'a', disk: 'hdd', rack: 'r2' } },
    { id: 'n3', cpu: 2, labels: { zone: 'b', disk: 'ssd', rack: 'r3' }, taints: { spot: 'true:PreferNoSchedule' } },
    { id: 'g1', cpu: 8, gpu: 2, labels: { zone: 'b', accel: 'a100' }, taints: { gpu: 'true:NoSchedule' } },
  ]);
  placeActor(s, 'n1', 'db', { cpu: 2, labels: { app: 'db' } });
  placeActor(s, 'n2', 'web', { cpu: 1, labels: { app: 'web' } });
  return s;
}

/** What a dry run must not touch: every node's available resources, its actors, and the spread cursor. */
function picture(s: ClusterState): string {
  return JSON.stringify({ cursor: s.spreadCursor, nodes: [...s.nodes.values()].map((n) => [n.id, n.available, [...n.actors.keys()]]) });
}

const cases: [string, PlacementOptions][] = [
  ['resources only', { numCpus: 3 }],
  ['resources nothing has', { numCpus: 64 }],
  ['label selector equals', { labelSelector: { disk: 'ssd' } }],
  ['label selector !v', { labelSelector: { disk: '!ssd' } }],
  ['label selector in()', { labelSelector: { zone: 'in(b,c)' } }],
  ['label selector !in()', { labelSelector: { zone: '!in(a)' } }],
  ['label selector exists()', { labelSelector: { accel: 'exists()' } }],
  ['label selector nothing matches', { labelSelector: { zone: 'mars' } }],
  ['fallbackStrategy to the second tier', { labelSelector: { zone: 'mars' }, fallbackStrategy: [{ labelSelector: { disk: 'hdd' } }] }],
  ['node affinity hard', { schedulingStrategy: nodeAffinity(labelIn('rack', ['r2'])) }],
  ['node affinity soft', { schedulingStrategy: nodeAffinity(labelIn('rack', ['r3'], true)) }],
  ['node affinity anyOf', { schedulingStrategy: nodeAffinity(anyOf([labelIn('zone', ['b'])], [labelIn('disk', ['hdd'])])) }],
  ['node affinity weighted soft terms', { schedulingStrategy: nodeAffinity([{ ...labelIn('zone', ['a'], true), weight: 10 }, { ...labelIn('disk', ['ssd'], true), weight: 90 }]) }],
  ['node-id affinity hard', { schedulingStrategy: nodeIdAffinity('n2') }],
  ['node-id affinity to an unknown node', { schedulingStrategy: nodeIdAffinity('zz') }],
  ['actor affinity', { schedulingStrategy: actorAffinity(affinity('db')) }],
  ['actor anti-affinity', { schedulingStrategy: actorAffinity(antiAffinity(['db', 'web'])) }],
  ['actor affinity soft', { schedulingStrategy: actorAffinity(affinity('web', true)) }],
  ['actor affinity by zone (topologyKey)', { schedulingStrategy: actorAffinity(withTopologyKey(affinity('db'), 'zone')) }],
  ['actor anti-affinity by zone (topologyKey)', { schedulingStrategy: actorAffinity(withTopologyKey(antiAffinity('db'), 'zone')) }],
  ['an untolerated NoSchedule taint', { labelSelector: { accel: 'a100' } }],
  ['a toleration', { labelSelector: { accel: 'a100' }, tolerations: { gpu: Exists() } }],
  ['PreferNoSchedule ranks last', { labelSelector: { zone: 'b' }, tolerations: { gpu: Exists() } }],
  ['GPUs', { numGpus: 1, tolerations: { gpu: Exists() } }],
  ['SPREAD', { schedulingStrategy: 'SPREAD' }],
];

for (const [name, options] of cases) {
  test(`dry run = schedule, and nothing changes: ${name}`, () => {
    for (const seed of [1, 2, 3, 7]) {
      const s = world();
      const req = compileRequest(options, { namespace: 'default' });
      const before = picture(s);
      const dry = dryRun(s, req, { rng: seededRng(seed) });
      assert.is(picture(s), before, 'the dry run took nothing and left the spread cursor');
      const real = schedule(s, req, { rng: seededRng(seed) });
      assert.is(dry.decision, real.status);
      if (real.status === 'placed') {
        assert.is(dry.nodeId, real.nodeId, `seed ${seed}`);
        assert.is(dry.tier, real.tier);
        assert.ok(dry.nodes.find((n) => n.nodeId === real.nodeId)?.fits, 'the chosen node is among those that fit');
      } else if (real.status === 'unschedulable') {
        assert.is(dry.failure?.message, real.failure.message);
        assert.is(dry.failure?.reason, real.failure.reason);
        assert.is(dry.failure?.code, real.failure.code);
        assert.ok(dry.nodes.every((n) => !n.fits || n.reasons.length === 0));
      } else {
        assert.is(dry.error?.code, real.error.code);
      }
    }
  });
}

test('the per-node words: which nodes fit and why the others do not', () => {
  const s = world();
  const dry = dryRun(s, compileRequest({ numCpus: 3, labelSelector: { disk: 'ssd' } }, { namespace: 'default' }), { rng: seededRng(1) });
  assert.is(dry.decision, 'unschedulable');
  // n1 has 2 of 4 CPUs left; n3 has 2 CPUs in all; n2 and g1 have no ssd label (g1 is also tainted)
  assert.equal(Object.fromEntries(dry.nodes.map((n) => [n.nodeId, n.reasons])), {
    g1: ["didn't match label selector disk in (ssd)", 'had untolerated taint {gpu: true}'],
    n1: ['had insufficient CPU'],
    n2: ["didn't match label selector disk in (ssd)"],
    n3: ['had less total CPU than requested'],
  });
  assert.match(dry.failure!.message, /^0\/4 nodes are available: /);
});

test('soft terms say which held on the chosen node', () => {
  const s = world();
  const req = compileRequest({ schedulingStrategy: nodeAffinity([labelIn('disk', ['ssd'], true), labelIn('zone', ['z9'], true)]) }, { namespace: 'default' });
  const dry = dryRun(s, req, { rng: seededRng(4) });
  assert.is(dry.decision, 'placed');
  assert.equal(dry.softTerms.map((t) => [t.term, t.held]), [
    ['node disk in (ssd)', true],
    ['node zone in (z9)', false],
  ]);
  assert.ok(['n1', 'n3'].includes(dry.nodeId!));
});

const groups: [string, Parameters<typeof compilePlacementGroup>[0]][] = [
  ['PACK', { bundles: [{ CPU: 1 }, { CPU: 1 }], strategy: 'PACK' }],
  ['SPREAD', { bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'SPREAD' }],
  ['STRICT_PACK', { bundles: [{ CPU: 2 }, { CPU: 2 }], strategy: 'STRICT_PACK' }],
  ['STRICT_SPREAD', { bundles: [{ CPU: 1 }, { CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' }],
  ['STRICT_SPREAD over more nodes than fit', { bundles: Array.from({ length: 5 }, () => ({ CPU: 1 })), strategy: 'STRICT_SPREAD' }],
  ['per-bundle selectors', { bundles: [{ CPU: 1 }, { CPU: 1 }], bundleLabelSelector: [{ zone: 'a' }, { zone: 'b' }], strategy: 'SPREAD' }],
  ['bundles that cannot fit', { bundles: [{ CPU: 100 }], strategy: 'PACK' }],
];

for (const [name, options] of groups) {
  test(`placement-group dry run = scheduleBundles, and nothing changes: ${name}`, () => {
    for (const seed of [1, 5]) {
      const s = world();
      const req = compilePlacementGroup(options, { id: 'pg1' });
      const before = picture(s);
      const dry = dryRunPlacementGroup(s, req, { rng: seededRng(seed) });
      assert.is(picture(s), before);
      const real = scheduleBundles(s, req, { rng: seededRng(seed) });
      assert.is(dry.decision, real.status);
      if (real.status === 'placed') {
        assert.equal(dry.bundles?.map((b) => b.nodeId), [...real.nodeIds]);
        assert.is(dry.tier, real.tier);
      } else {
        assert.is(dry.failure?.message, real.failure.message);
      }
    }
  });
}

test.run();
