// Preference levels: weighted soft terms (Kubernetes' NodeAffinity and InterPodAffinity Score: the
// sum of the weights of the preferred terms a node meets) and PreferNoSchedule taints ranked by how
// many are untolerated (Kubernetes' TaintToleration Score: fewer is better).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  actorAffinity, anyOf, Exists, labelExists, labelIn, nodeAffinity, nodeLabelStrategy, preferred, In, type PlacementOptions,
} from '../../../lib/index.ts';
import { attemptsFor, scoreLevels } from '../../../lib/scheduling/attempts.ts';
import type { SoftTerm } from '../../../lib/scheduling/filters/preferred-terms.ts';
import { compileRequest } from '../../../lib/scheduling/request.ts';
import { cluster, decide, placeActor, placedOn, type NodeFixture } from '../../support/cluster.ts';

const w = (...weights: number[]): SoftTerm[] => weights.map((weight) => ({ kind: 'node', term: labelExists('k', true), weight }));

const levels: { name: string; soft: SoftTerm[]; want: number[] }[] = [
  { name: 'no soft terms: one level', soft: [], want: [0] },
  { name: 'one term', soft: w(1), want: [1, 0] },
  { name: 'two unweighted terms: 2, 1, 0', soft: w(1, 1), want: [2, 1, 0] },
  { name: '80 and 20', soft: w(80, 20), want: [100, 80, 20, 0] },
  { name: 'equal sums from different subsets are one level', soft: w(1, 2, 3), want: [6, 5, 4, 3, 2, 1, 0] },
];
for (const c of levels) test(`scoreLevels: ${c.name}`, () => assert.equal(scoreLevels(c.soft), c.want));

const PNS2 = { maintenance: 'true:PreferNoSchedule', pressure: 'high:PreferNoSchedule' };
const PNS1 = { maintenance: 'true:PreferNoSchedule' };
const zoneA = preferred(labelIn('zone', ['a']), 80);
const ssd = preferred(labelExists('ssd'), 20);

// Small clusters: the window is one node, so the first node of the best level in id order is chosen.
const picks: { name: string; nodes: NodeFixture[]; options: PlacementOptions; want: string }[] = [
  { name: 'both preferred terms beat one', nodes: [{ id: 'n1', labels: { zone: 'a' } }, { id: 'n2', labels: { zone: 'a', ssd: 'y' } }], options: { schedulingStrategy: nodeAffinity([zoneA, ssd]) }, want: 'n2' },
  { name: 'the heavier term beats the lighter', nodes: [{ id: 'n1', labels: { ssd: 'y' } }, { id: 'n2', labels: { zone: 'a' } }], options: { schedulingStrategy: nodeAffinity([zoneA, ssd]) }, want: 'n2' },
  { name: 'a lighter term beats none', nodes: [{ id: 'n1' }, { id: 'n2', labels: { ssd: 'y' } }], options: { schedulingStrategy: nodeAffinity([zoneA, ssd]) }, want: 'n2' },
  { name: 'meeting 1 of 2 unweighted soft terms beats none', nodes: [{ id: 'n1' }, { id: 'n2', labels: { zone: 'a' } }], options: { schedulingStrategy: nodeAffinity([labelIn('zone', ['a'], true), labelExists('ssd', true)]) }, want: 'n2' },
  { name: 'two light terms beat one heavier (10+10 > 15)', nodes: [{ id: 'n1', labels: { zone: 'a' } }, { id: 'n2', labels: { ssd: 'y', gpu: 'y' } }], options: { schedulingStrategy: nodeAffinity([preferred(labelIn('zone', ['a']), 15), preferred(labelExists('ssd'), 10), preferred(labelExists('gpu'), 10)]) }, want: 'n2' },
  { name: 'nodeLabelStrategy soft conditions count 1 each', nodes: [{ id: 'n1' }, { id: 'n2', labels: { zone: 'a' } }], options: { schedulingStrategy: nodeLabelStrategy({ soft: { zone: In('a'), ssd: Exists() } }) }, want: 'n2' },
  { name: 'a preferred anyOf group weighs as one term', nodes: [{ id: 'n1', labels: { ssd: 'y' } }, { id: 'n2', labels: { gpu: 'h100' } }], options: { schedulingStrategy: nodeAffinity([preferred(anyOf([labelIn('gpu', ['a100'])], [labelIn('gpu', ['h100'])]), 50), ssd]) }, want: 'n2' },
  { name: 'no node meets a term: the hard constraints decide', nodes: [{ id: 'n1' }, { id: 'n2' }], options: { schedulingStrategy: nodeAffinity([zoneA]) }, want: 'n1' },
  { name: 'a hard term still filters under soft ones', nodes: [{ id: 'n1', labels: { zone: 'a', ssd: 'y' } }, { id: 'n2', labels: { hdd: 'y' } }], options: { schedulingStrategy: nodeAffinity([zoneA, labelExists('hdd')]) }, want: 'n2' },
  // TaintToleration score: fewer untolerated PreferNoSchedule taints first
  { name: 'no PreferNoSchedule taint beats one', nodes: [{ id: 'n1', taints: PNS1 }, { id: 'n2' }], options: {}, want: 'n2' },
  { name: 'one beats two', nodes: [{ id: 'n1', taints: PNS2 }, { id: 'n2', taints: PNS1 }], options: {}, want: 'n2' },
  { name: 'a tolerated taint does not count', nodes: [{ id: 'n1', taints: PNS2 }, { id: 'n2', taints: PNS1 }], options: { tolerations: { pressure: Exists() } }, want: 'n1' },
  { name: 'every node tainted alike: the hybrid order decides', nodes: [{ id: 'n1', taints: PNS2 }, { id: 'n2', taints: PNS2 }], options: {}, want: 'n1' },
  // orrery ranks soft terms before PreferNoSchedule (Kubernetes adds the two normalised scores)
  { name: 'soft terms come before PreferNoSchedule', nodes: [{ id: 'n1' }, { id: 'n2', labels: { zone: 'a' }, taints: PNS2 }], options: { schedulingStrategy: nodeAffinity([zoneA]) }, want: 'n2' },
];

for (const c of picks) {
  test(`pick: ${c.name}`, () => assert.is(placedOn(decide(cluster(c.nodes), c.options)), c.want));
}

test('weighted preferred actor affinity (InterPodAffinity preferred terms)', () => {
  const state = cluster([{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }]);
  placeActor(state, 'n2', 'cache', { labels: { app: 'cache' } });
  placeActor(state, 'n3', 'db', { labels: { app: 'db' } });
  const strategy = actorAffinity([preferred(labelIn('app', ['cache']), 10), preferred(labelIn('app', ['db']), 90)]);
  assert.is(placedOn(decide(state, { schedulingStrategy: strategy })), 'n3');
});

test('attempts: one level per score and PreferNoSchedule count, the hard-only attempt last', () => {
  const state = cluster([{ id: 'n1', taints: PNS2 }]);
  const req = compileRequest({ schedulingStrategy: nodeAffinity([zoneA, ssd, labelExists('hdd')]) }, { namespace: 'default' });
  const attempts = attemptsFor(state, req, 0);
  assert.equal(attempts.map((a) => [a.nodeAffinity.length, a.preferred?.min ?? 0, a.maxPreferTaints]), [
    [3, 0, 0], [3, 0, 1], [3, 0, Infinity], // 100: both required
    [2, 0, 0], [2, 0, 1], [2, 0, Infinity], // 80: zone required, ssd optional
    [1, 20, 0], [1, 20, 1], [1, 20, Infinity], // 20: either term reaches it
    [1, 0, 0], [1, 0, 1], [1, 0, Infinity], // 0: the hard term only
  ]);
  assert.equal(attempts.at(-1)!.preferred, undefined);
});

test.run();
