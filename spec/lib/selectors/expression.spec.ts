import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { conditionMatches, describeExpression, expressionMatches, type LabelMatchExpression } from '../../../lib/selectors/expression.ts';

const cases: { name: string; op: LabelMatchExpression['operator']; values: string[]; value: string | undefined; want: boolean }[] = [
  { name: 'IN with a listed value', op: 'IN', values: ['a', 'b'], value: 'b', want: true },
  { name: 'IN with another value', op: 'IN', values: ['a', 'b'], value: 'c', want: false },
  { name: 'IN needs the key present', op: 'IN', values: ['a'], value: undefined, want: false },
  { name: 'NOT_IN with a listed value', op: 'NOT_IN', values: ['a'], value: 'a', want: false },
  { name: 'NOT_IN with another value', op: 'NOT_IN', values: ['a'], value: 'z', want: true },
  { name: 'NOT_IN also matches an absent key', op: 'NOT_IN', values: ['a'], value: undefined, want: true },
  { name: 'EXISTS with any value', op: 'EXISTS', values: [], value: '', want: true },
  { name: 'EXISTS without the key', op: 'EXISTS', values: [], value: undefined, want: false },
  { name: 'DOES_NOT_EXIST without the key', op: 'DOES_NOT_EXIST', values: [], value: undefined, want: true },
  { name: 'DOES_NOT_EXIST with the key', op: 'DOES_NOT_EXIST', values: [], value: 'x', want: false },
  { name: 'GT above the bound', op: 'GT', values: ['4'], value: '8', want: true },
  { name: 'GT at the bound', op: 'GT', values: ['4'], value: '4', want: false },
  { name: 'GT on a non-integer value', op: 'GT', values: ['4'], value: '8x', want: false },
  { name: 'LT below the bound', op: 'LT', values: ['4'], value: '-1', want: true },
  { name: 'LT without the key', op: 'LT', values: ['4'], value: undefined, want: false },
];

for (const c of cases) {
  test(`condition: ${c.name}`, () => {
    assert.is(conditionMatches({ operator: c.op, values: c.values }, c.value), c.want);
  });
}

test('expressionMatches reads the key from a label map, ignoring inherited properties', () => {
  const expr: LabelMatchExpression = { key: 'constructor', operator: 'EXISTS', values: [], soft: false };
  assert.is(expressionMatches(expr, {}), false);
  assert.is(expressionMatches({ ...expr, key: 'zone' }, { zone: 'a' }), true);
});

test('describeExpression renders each operator', () => {
  assert.is(describeExpression({ key: 'region', operator: 'IN', values: ['us', 'eu'] }), 'region in (us,eu)');
  assert.is(describeExpression({ key: 'region', operator: 'NOT_IN', values: ['us'] }), 'region notin (us)');
  assert.is(describeExpression({ key: 'gpu', operator: 'EXISTS', values: [] }), 'gpu exists');
  assert.is(describeExpression({ key: 'gpu', operator: 'DOES_NOT_EXIST', values: [] }), 'gpu does not exist');
  assert.is(describeExpression({ key: 'cores', operator: 'GT', values: ['4'] }), 'cores gt 4');
  assert.is(describeExpression({ key: 'cores', operator: 'LT', values: ['4'] }), 'cores lt 4');
});

test.run();
