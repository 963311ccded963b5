// Builders for OR'ed terms, weighted preferred terms and topology keys, validated as Kubernetes
// validates NodeAffinity (weight 1-100 on preferred terms, non-empty terms) and pod affinity
// (topologyKey a label key).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { actorAffinity, labelExists, labelIn, nodeAffinity } from '../../../lib/selectors/builders.ts';
import { anyOf, preferred, validateAnyOf, withTopologyKey } from '../../../lib/selectors/terms.ts';
import { compileRequest } from '../../../lib/scheduling/request.ts';

test('anyOf keeps its terms, hard by default', () => {
  assert.equal(anyOf([labelIn('gpu', ['a100'])], [labelIn('gpu', ['h100']), labelExists('nvlink')]), {
    anyOf: [
      [{ key: 'gpu', operator: 'IN', values: ['a100'], soft: false }],
      [{ key: 'gpu', operator: 'IN', values: ['h100'], soft: false }, { key: 'nvlink', operator: 'EXISTS', values: [], soft: false }],
    ],
    soft: false,
  });
});

test('preferred makes a soft, weighted copy of an expression or a group', () => {
  assert.equal(preferred(labelIn('zone', ['a']), 80), { key: 'zone', operator: 'IN', values: ['a'], soft: true, weight: 80 });
  assert.equal(preferred(anyOf([labelExists('ssd')]), 20), { anyOf: [[{ key: 'ssd', operator: 'EXISTS', values: [], soft: false }]], soft: true, weight: 20 });
  assert.equal(preferred(labelExists('ssd')).weight, 1, 'weight 1 by default');
});

test('withTopologyKey sets the domain label', () => {
  assert.is(withTopologyKey(labelIn('app', ['web']), 'zone').topologyKey, 'zone');
});

const refused: { name: string; make: () => unknown; code: string; rule: RegExp }[] = [
  { name: 'anyOf with no terms', make: () => anyOf(), code: 'INVALID_OPTION', rule: /at least one term/ },
  { name: 'anyOf with an empty term', make: () => anyOf([]), code: 'INVALID_OPTION', rule: /non-empty list/ },
  { name: 'a soft expression inside anyOf', make: () => anyOf([labelIn('a', ['b'], true)]), code: 'INVALID_SELECTOR', rule: /inside anyOf are hard/ },
  { name: 'an unknown field on a hand-built group', make: () => validateAnyOf({ anyOf: [[labelExists('a')]], wieght: 3 }), code: 'INVALID_OPTION', rule: /unknown field/ },
  // Kubernetes: "weight must be in the range 1-100"
  { name: 'weight 0', make: () => preferred(labelExists('a'), 0), code: 'INVALID_SELECTOR', rule: /from 1 to 100/ },
  { name: 'weight 101', make: () => preferred(labelExists('a'), 101), code: 'INVALID_SELECTOR', rule: /from 1 to 100/ },
  { name: 'weight 2.5', make: () => preferred(labelExists('a'), 2.5), code: 'INVALID_SELECTOR', rule: /from 1 to 100/ },
  { name: 'group weight 0', make: () => preferred(anyOf([labelExists('a')]), 0), code: 'INVALID_OPTION', rule: /from 1 to 100/ },
  { name: 'a weight on a hard expression', make: () => nodeAffinity([{ ...labelExists('a'), weight: 5 }]), code: 'INVALID_SELECTOR', rule: /only to a soft/ },
  { name: 'a bad topology key', make: () => withTopologyKey(labelIn('app', ['web']), 'no spaces'), code: 'INVALID_SELECTOR', rule: /topologyKey/ },
  { name: 'a topology key in node affinity', make: () => nodeAffinity([withTopologyKey(labelExists('a'), 'zone')]), code: 'INVALID_SELECTOR', rule: /only to actor affinity/ },
  { name: 'a hand-built strategy with a bad group reaches compileRequest', make: () => compileRequest({ schedulingStrategy: { type: 'NODE_AFFINITY', expressions: [{ anyOf: [] } as never] } }, { namespace: 'd' }), code: 'INVALID_OPTION', rule: /at least one term/ },
];

for (const c of refused) {
  test(`refused: ${c.name}`, () => {
    try {
      c.make();
      assert.unreachable('should throw');
    } catch (err) {
      assert.instance(err, OrreryError);
      assert.is((err as OrreryError).code, c.code);
      assert.match((err as Error).message, c.rule);
    }
  });
}

test('compileRequest splits expressions and groups, and keeps topology keys in actor affinity', () => {
  const group = anyOf([labelExists('a')]);
  const req = compileRequest({ schedulingStrategy: nodeAffinity([labelExists('b'), group]) }, { namespace: 'd' });
  assert.equal(req.nodeAffinity, [labelExists('b')]);
  assert.equal(req.nodeAffinityAnyOf, [group]);
  const actors = compileRequest({ schedulingStrategy: actorAffinity(withTopologyKey(labelIn('app', ['web']), 'zone')) }, { namespace: 'd' });
  assert.is(actors.actorAffinity[0].topologyKey, 'zone');
});

test.run();
