// OR'ed node-affinity terms, with cases from Kubernetes' NodeAffinity plugin (nodeSelectorTerms are
// ORed, the matchExpressions of one term ANDed; a node with none of the keys matches no term).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { anyOf, labelExists, labelIn, labelNotIn, nodeAffinity } from '../../../../lib/index.ts';
import { baseAttempt } from '../../../../lib/scheduling/attempts.ts';
import { nodeAffinityAnyOf } from '../../../../lib/scheduling/filters/node-affinity-any-of.ts';
import { compileRequest } from '../../../../lib/scheduling/request.ts';
import type { LabelMatchAnyOf } from '../../../../lib/selectors/expression.ts';
import { cluster, decide, failureOf, landings } from '../../../support/cluster.ts';

const gpu = anyOf([labelIn('gpu', ['a100'])], [labelIn('gpu', ['h100']), labelExists('nvlink')]);

const cases: { name: string; group: LabelMatchAnyOf; labels: Record<string, string>; want: boolean }[] = [
  { name: 'the first term matches', group: gpu, labels: { gpu: 'a100' }, want: true },
  { name: 'the second term matches (all its expressions)', group: gpu, labels: { gpu: 'h100', nvlink: 'yes' }, want: true },
  { name: 'the second term half matches', group: gpu, labels: { gpu: 'h100' }, want: false },
  { name: 'no term matches', group: gpu, labels: { gpu: 't4' }, want: false },
  { name: 'a node without the keys', group: gpu, labels: {}, want: false },
  { name: 'a NotIn term matches a node without the key', group: anyOf([labelNotIn('zone', ['a'])]), labels: {}, want: true },
  { name: 'one term: plain AND', group: anyOf([labelIn('zone', ['a']), labelExists('ssd')]), labels: { zone: 'a' }, want: false },
];

for (const c of cases) {
  test(`nodeAffinityAnyOf: ${c.name}`, () => {
    const state = cluster([{ id: 'n1', labels: c.labels }]);
    const req = compileRequest({ schedulingStrategy: nodeAffinity([c.group]) }, { namespace: 'default' });
    const got = nodeAffinityAnyOf.check(state.nodes.get('n1')!, baseAttempt(req, 0), state);
    assert.is(got === undefined, c.want);
    if (!c.want) assert.is(got!.code, 'infeasible');
  });
}

test('the pipeline places on either kind of node, and ANDs a group with plain expressions', () => {
  const state = cluster([
    { id: 'a', labels: { gpu: 'a100', zone: 'x' } },
    { id: 'b', labels: { gpu: 'h100', nvlink: 'yes', zone: 'y' } },
    { id: 'c', labels: { gpu: 'h100', zone: 'x' } },
  ]);
  const admits = (strategy: ReturnType<typeof nodeAffinity>) =>
    ['a', 'b', 'c'].filter((id) => decide(state, { labelSelector: { 'orrery.io/node-id': id }, schedulingStrategy: strategy }).status === 'placed');
  assert.equal(admits(nodeAffinity([gpu])), ['a', 'b']);
  assert.equal(admits(nodeAffinity([gpu, labelIn('zone', ['y'])])), ['b']);
  assert.equal(landings(state, { schedulingStrategy: nodeAffinity([gpu, labelIn('zone', ['y'])]) }), ['b']);
});

test('a failed OR reads as the terms joined by "or"', () => {
  const state = cluster([{ id: 'n1', labels: { gpu: 't4' } }, { id: 'n2' }]);
  const f = failureOf(decide(state, { schedulingStrategy: nodeAffinity([gpu]) }));
  assert.is(f.message, "0/2 nodes are available: 2 node(s) didn't match node affinity (gpu in (a100)) or (gpu in (h100), nvlink exists).");
  assert.is(f.code, 'infeasible');
});

test.run();
