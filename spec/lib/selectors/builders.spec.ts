import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidOptionError, InvalidSelectorError, OrreryError } from '../../../lib/errors.ts';
import { NODE_ID_LABEL, NODE_IP_LABEL } from '../../../lib/labels/builtin.ts';
import {
  DoesNotExist, Exists, Gt, In, Lt, NotIn, actorAffinity, affinity, antiAffinity, labelDoesNotExist, labelExists, labelGt,
  labelIn, labelLt, labelNotIn, nodeAffinity, nodeIdAffinity, nodeLabelStrategy, placementGroupStrategy, validateCondition,
  validateExpression, type ActorRefLike,
} from '../../../lib/selectors/builders.ts';
import type { LabelMatchExpression } from '../../../lib/selectors/expression.ts';

type ErrorClass = typeof InvalidSelectorError | typeof InvalidOptionError;

/** fn must throw `cls` with `code` and these structured fields. */
function expectError(fn: () => unknown, cls: ErrorClass, fields: Record<string, unknown>): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, cls);
    assert.instance(err, OrreryError);
    assert.is((err as OrreryError).code, cls === InvalidSelectorError ? 'INVALID_SELECTOR' : 'INVALID_OPTION');
    const got = Object.fromEntries(Object.keys(fields).map((k) => [k, (err as unknown as Record<string, unknown>)[k]]));
    assert.equal(got, fields);
    return;
  }
  assert.unreachable(`expected ${cls.name}`);
}

const expr = (key: string, operator: LabelMatchExpression['operator'], values: string[], soft = false) => ({ key, operator, values, soft });

const built: { name: string; input: () => unknown; want: unknown }[] = [
  { name: 'labelIn', input: () => labelIn('gpu_type', ['A100', 'P100']), want: expr('gpu_type', 'IN', ['A100', 'P100']) },
  { name: 'labelIn soft', input: () => labelIn('gpu_type', ['A100'], true), want: expr('gpu_type', 'IN', ['A100'], true) },
  { name: 'labelNotIn', input: () => labelNotIn('zone', ['a']), want: expr('zone', 'NOT_IN', ['a']) },
  { name: 'labelExists', input: () => labelExists('gpu_type'), want: expr('gpu_type', 'EXISTS', []) },
  { name: 'labelDoesNotExist soft', input: () => labelDoesNotExist('gpu_type', true), want: expr('gpu_type', 'DOES_NOT_EXIST', [], true) },
  { name: 'labelGt', input: () => labelGt('cores', 4), want: expr('cores', 'GT', ['4']) },
  { name: 'labelLt soft', input: () => labelLt('cores', 64, true), want: expr('cores', 'LT', ['64'], true) },
  { name: 'a reserved key', input: () => labelIn(NODE_ID_LABEL, ['n1']), want: expr(NODE_ID_LABEL, 'IN', ['n1']) },
  { name: 'In', input: () => In('a', 'b'), want: { operator: 'IN', values: ['a', 'b'] } },
  { name: 'NotIn', input: () => NotIn('A100', 'T100'), want: { operator: 'NOT_IN', values: ['A100', 'T100'] } },
  { name: 'Exists', input: () => Exists(), want: { operator: 'EXISTS', values: [] } },
  { name: 'DoesNotExist', input: () => DoesNotExist(), want: { operator: 'DOES_NOT_EXIST', values: [] } },
  { name: 'Gt', input: () => Gt(4), want: { operator: 'GT', values: ['4'] } },
  { name: 'Lt', input: () => Lt(8), want: { operator: 'LT', values: ['8'] } },
];
for (const c of built) {
  test(`builder: ${c.name}`, () => {
    const out = c.input();
    assert.equal(out, c.want);
    assert.ok(Object.isFrozen(out));
  });
}

const badExprs: { name: string; input: () => unknown; key: string; value: unknown; rule: string }[] = [
  { name: 'labelIn with no values', input: () => labelIn('k', []), key: 'k', value: expr('k', 'IN', []), rule: 'IN needs at least one value' },
  { name: 'labelNotIn with a bad value', input: () => labelNotIn('k', ['a b']), key: 'k', value: expr('k', 'NOT_IN', ['a b']), rule: `value "a b": value may contain only alphanumerics, '-', '_' and '.'` },
  { name: 'labelIn with a bad key', input: () => labelIn('-k', ['a']), key: '-k', value: expr('-k', 'IN', ['a']), rule: 'key: name must start and end with an alphanumeric character' },
  { name: 'labelIn with a string for values', input: () => labelIn('k', 'a' as unknown as string[]), key: 'k', value: { key: 'k', operator: 'IN', values: 'a', soft: false }, rule: 'values must be an array of strings (got string)' },
  { name: 'labelExists soft as a string', input: () => labelExists('k', 'yes' as unknown as boolean), key: 'k', value: { key: 'k', operator: 'EXISTS', values: [], soft: 'yes' }, rule: 'soft must be a boolean' },
  { name: 'labelGt with a fraction', input: () => labelGt('cores', 4.5), key: 'cores', value: expr('cores', 'GT', ['4.5']), rule: 'GT bound must be a non-negative integer' },
  { name: 'labelLt with a negative bound', input: () => labelLt('cores', -1), key: 'cores', value: expr('cores', 'LT', ['-1']), rule: 'LT bound must be a non-negative integer' },
  { name: 'labelGt with NaN', input: () => labelGt('cores', NaN), key: 'cores', value: expr('cores', 'GT', ['NaN']), rule: 'GT bound must be a non-negative integer' },
];
for (const c of badExprs) {
  test(`builder rejects ${c.name}`, () => expectError(c.input, InvalidSelectorError, { key: c.key, value: c.value, rule: c.rule }));
}

const conditions: { name: string; cond: unknown; rule: string }[] = [
  { name: 'IN without values', cond: In(), rule: 'IN needs at least one value' },
  { name: 'EXISTS with a value', cond: { operator: 'EXISTS', values: ['a'] }, rule: 'EXISTS takes no values' },
  { name: 'GT with two values', cond: { operator: 'GT', values: ['1', '2'] }, rule: 'GT needs exactly one value' },
  { name: 'GT with a word', cond: { operator: 'GT', values: ['x'] }, rule: 'GT bound must be a non-negative integer' },
  { name: 'an unknown operator', cond: { operator: 'EQ', values: ['a'] }, rule: 'unknown operator "EQ"; expected one of IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT' },
  { name: 'a non-string value', cond: { operator: 'IN', values: [4] }, rule: 'value 4: value must be a string (got number)' },
  { name: 'missing values', cond: { operator: 'EXISTS' }, rule: 'values must be an array of strings (got undefined)' },
  { name: 'a bare string', cond: 'A100', rule: 'condition must be an object {operator, values} (got string)' },
];
for (const c of conditions) {
  test(`validateCondition rejects ${c.name}`, () => {
    expectError(() => validateCondition('gpu', c.cond), InvalidSelectorError, { key: 'gpu', value: c.cond, rule: c.rule });
  });
}

test('validateCondition returns a frozen copy', () => {
  const cond = { operator: 'IN' as const, values: ['a'] };
  const out = validateCondition('orrery.io/node-group', cond);
  assert.equal(out, cond);
  assert.is.not(out, cond);
  assert.ok(Object.isFrozen(out) && Object.isFrozen(out.values));
});

test('validateExpression copies a hand-built expression, defaulting soft and dropping extras', () => {
  const hand = { key: 'zone', operator: 'IN', values: ['a'], extra: 1 };
  assert.equal(validateExpression(hand), expr('zone', 'IN', ['a']));
});

const badShapes: { name: string; input: unknown; key: string; rule: string }[] = [
  { name: 'null', input: null, key: '', rule: 'expression must be an object {key, operator, values, soft} (got null)' },
  { name: 'an empty namespace', input: { ...expr('k', 'EXISTS', []), namespace: '' }, key: 'k', rule: 'namespace must be a non-empty string' },
  { name: 'a missing key', input: { operator: 'EXISTS', values: [] }, key: '', rule: 'key: key must be a string (got undefined)' },
];
for (const c of badShapes) {
  test(`validateExpression rejects ${c.name}`, () => {
    expectError(() => validateExpression(c.input), InvalidSelectorError, { key: c.key, value: c.input, rule: c.rule });
  });
}

// Seed 001's five examples, written with the builders.
const seed001: { name: string; input: () => unknown; want: unknown }[] = [
  {
    name: '1. affinity to nodes of an instance type',
    input: () => nodeAffinity(labelIn('instance', ['m6in.large'], false)),
    want: { type: 'NODE_AFFINITY', expressions: [expr('instance', 'IN', ['m6in.large'])] },
  },
  {
    name: '2. anti-affinity to some node ids',
    input: () => nodeAffinity(labelNotIn(NODE_ID_LABEL, ['xxxxx', 'aaaaa'], false)),
    want: { type: 'NODE_AFFINITY', expressions: [expr(NODE_ID_LABEL, 'NOT_IN', ['xxxxx', 'aaaaa'])] },
  },
  {
    name: '3. anti-affinity to nodes with a GPU',
    input: () => nodeAffinity(labelDoesNotExist('gpu_type', false)),
    want: { type: 'NODE_AFFINITY', expressions: [expr('gpu_type', 'DOES_NOT_EXIST', [])] },
  },
  {
    name: '4. region china required, zone china-east-1 preferred',
    input: () => nodeAffinity([labelIn('region', ['china'], false), labelIn('zone', ['china-east-1'], true)]),
    want: { type: 'NODE_AFFINITY', expressions: [expr('region', 'IN', ['china']), expr('zone', 'IN', ['china-east-1'], true)] },
  },
  {
    name: '5. a GPU required, A100/P100 preferred',
    input: () => nodeAffinity([labelExists('gpu_type', false), labelIn('gpu_type', ['A100', 'P100'], true)]),
    want: { type: 'NODE_AFFINITY', expressions: [expr('gpu_type', 'EXISTS', []), expr('gpu_type', 'IN', ['A100', 'P100'], true)] },
  },
  {
    name: 'scheduling to a node with a given ip',
    input: () => nodeAffinity(labelIn(NODE_IP_LABEL, ['10.0.0.12'])),
    want: { type: 'NODE_AFFINITY', expressions: [expr(NODE_IP_LABEL, 'IN', ['10.0.0.12'])] },
  },
];
for (const c of seed001) {
  test(`seed 001: ${c.name}`, () => {
    const out = c.input();
    assert.equal(out, c.want);
    assert.ok(Object.isFrozen(out));
  });
}

const ACTOR = 'orrery.io/actor-id';
const actors: { name: string; input: () => unknown; want: unknown }[] = [
  { name: 'an actor id', input: () => affinity('a1'), want: expr(ACTOR, 'IN', ['a1']) },
  { name: 'a handle, soft', input: () => affinity({ actorId: 'a1' }, true), want: expr(ACTOR, 'IN', ['a1'], true) },
  {
    name: 'handles of one namespace',
    input: () => affinity([{ actorId: 'a1', namespace: 'jobs' }, { actorId: 'a2', namespace: 'jobs' }]),
    want: { ...expr(ACTOR, 'IN', ['a1', 'a2']), namespace: 'jobs' },
  },
  { name: 'anti-affinity to ids', input: () => antiAffinity(['a1', 'a2']), want: expr(ACTOR, 'NOT_IN', ['a1', 'a2']) },
  {
    name: 'actorAffinity with a list',
    input: () => actorAffinity([affinity('a1'), antiAffinity('a2', true)]),
    want: { type: 'ACTOR_AFFINITY', expressions: [expr(ACTOR, 'IN', ['a1']), expr(ACTOR, 'NOT_IN', ['a2'], true)] },
  },
  {
    name: 'actorAffinity on actor labels',
    input: () => actorAffinity(labelIn('role', ['ps'])),
    want: { type: 'ACTOR_AFFINITY', expressions: [expr('role', 'IN', ['ps'])] },
  },
];
for (const c of actors) {
  test(`actor affinity: ${c.name}`, () => assert.equal(c.input(), c.want));
}

const badActors: { name: string; input: () => unknown; cls: ErrorClass; fields: Record<string, unknown> }[] = [
  {
    name: 'mixed namespaces',
    input: () => affinity([{ actorId: 'a', namespace: 'x' }, { actorId: 'b', namespace: 'y' }]),
    cls: InvalidOptionError,
    fields: { option: 'affinity', value: [{ actorId: 'a', namespace: 'x' }, { actorId: 'b', namespace: 'y' }], rule: 'all actors must share one namespace (got "x", "y")' },
  },
  {
    name: 'an id mixed with a namespaced handle',
    input: () => antiAffinity(['a', { actorId: 'b', namespace: 'y' }]),
    cls: InvalidOptionError,
    fields: { option: 'antiAffinity', value: ['a', { actorId: 'b', namespace: 'y' }], rule: 'all actors must share one namespace (got (none), "y")' },
  },
  { name: 'no actors', input: () => affinity([]), cls: InvalidOptionError, fields: { option: 'affinity', value: [], rule: 'needs at least one actor' } },
  {
    name: 'an empty id',
    input: () => affinity(''),
    cls: InvalidOptionError,
    fields: { option: 'affinity', value: '', rule: 'each actor must be a non-empty actor id or a handle with one' },
  },
  {
    name: 'an object without an actorId',
    input: () => affinity({ id: 'a' } as unknown as ActorRefLike),
    cls: InvalidOptionError,
    fields: { option: 'affinity', value: { id: 'a' }, rule: 'each actor must be a non-empty actor id or a handle with one' },
  },
  { name: 'an empty actorAffinity', input: () => actorAffinity([]), cls: InvalidOptionError, fields: { option: 'actorAffinity', value: [], rule: 'needs at least one expression' } },
  {
    name: 'a hand-built expression with a bad operator',
    input: () => actorAffinity({ key: 'role', operator: 'EQ', values: ['a'], soft: false } as unknown as LabelMatchExpression),
    cls: InvalidSelectorError,
    fields: { key: 'role', value: { key: 'role', operator: 'EQ', values: ['a'], soft: false }, rule: 'unknown operator "EQ"; expected one of IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT' },
  },
  { name: 'an empty nodeAffinity', input: () => nodeAffinity([]), cls: InvalidOptionError, fields: { option: 'nodeAffinity', value: [], rule: 'needs at least one expression' } },
  {
    name: 'a namespace in nodeAffinity',
    input: () => nodeAffinity(affinity({ actorId: 'a', namespace: 'x' })),
    cls: InvalidSelectorError,
    fields: { key: ACTOR, value: { ...expr(ACTOR, 'IN', ['a']), namespace: 'x' }, rule: 'namespace applies only to actor affinity' },
  },
];
for (const c of badActors) {
  test(`affinity builders reject ${c.name}`, () => expectError(c.input, c.cls, c.fields));
}

const nodeIds: { name: string; opts?: Parameters<typeof nodeIdAffinity>[1]; want: Record<string, boolean> }[] = [
  { name: 'hard by default', want: { soft: false, spillOnUnavailable: false, failOnUnavailable: false } },
  { name: 'soft', opts: { soft: true }, want: { soft: true, spillOnUnavailable: false, failOnUnavailable: false } },
  { name: 'soft, spilling', opts: { soft: true, spillOnUnavailable: true }, want: { soft: true, spillOnUnavailable: true, failOnUnavailable: false } },
  { name: 'hard, failing fast', opts: { failOnUnavailable: true }, want: { soft: false, spillOnUnavailable: false, failOnUnavailable: true } },
];
for (const c of nodeIds) {
  test(`nodeIdAffinity: ${c.name}`, () => assert.equal(nodeIdAffinity('n1', c.opts), { type: 'NODE_ID_AFFINITY', nodeId: 'n1', ...c.want }));
}

const badNodeIds: { name: string; nodeId: string; opts?: Parameters<typeof nodeIdAffinity>[1]; fields: Record<string, unknown> }[] = [
  { name: 'an empty node id', nodeId: '', fields: { option: 'nodeId', value: '', rule: 'must be a non-empty string' } },
  { name: 'spilling from a hard affinity', nodeId: 'n1', opts: { spillOnUnavailable: true }, fields: { option: 'spillOnUnavailable', value: true, rule: 'applies only to a soft affinity (soft: true)' } },
  { name: 'failing fast from a soft affinity', nodeId: 'n1', opts: { soft: true, failOnUnavailable: true }, fields: { option: 'failOnUnavailable', value: true, rule: 'applies only to a hard affinity (soft: false)' } },
  { name: 'a non-boolean soft', nodeId: 'n1', opts: { soft: 'yes' as unknown as boolean }, fields: { option: 'soft', value: 'yes', rule: 'must be a boolean' } },
];
for (const c of badNodeIds) {
  test(`nodeIdAffinity rejects ${c.name}`, () => expectError(() => nodeIdAffinity(c.nodeId, c.opts), InvalidOptionError, c.fields));
}

test('nodeLabelStrategy: seed 002 hard and soft conditions', () => {
  const out = nodeLabelStrategy({ hard: { 'orrery.io/accelerator-type': NotIn('A100', 'T100'), other_key: DoesNotExist() }, soft: { zone: In('us') } });
  assert.equal(out, {
    type: 'NODE_LABEL',
    hard: { 'orrery.io/accelerator-type': { operator: 'NOT_IN', values: ['A100', 'T100'] }, other_key: { operator: 'DOES_NOT_EXIST', values: [] } },
    soft: { zone: { operator: 'IN', values: ['us'] } },
  });
  assert.equal(nodeLabelStrategy({ soft: { cores: Gt(4) } }).hard, {});
});

const badLabelStrategies: { name: string; opts: unknown; cls: ErrorClass; fields: Record<string, unknown> }[] = [
  { name: 'no conditions', opts: {}, cls: InvalidOptionError, fields: { option: 'nodeLabelStrategy', value: {}, rule: 'needs at least one hard or soft condition' } },
  { name: 'empty hard and soft', opts: { hard: {}, soft: {} }, cls: InvalidOptionError, fields: { option: 'nodeLabelStrategy', value: { hard: {}, soft: {} }, rule: 'needs at least one hard or soft condition' } },
  { name: 'hard as an array', opts: { hard: [In('a')] }, cls: InvalidOptionError, fields: { option: 'nodeLabelStrategy.hard', value: [In('a')], rule: 'must be an object mapping label keys to conditions' } },
  { name: 'a bad key', opts: { hard: { 'a b': Exists() } }, cls: InvalidSelectorError, fields: { key: 'a b', value: Exists(), rule: "key: name may contain only alphanumerics, '-', '_' and '.'" } },
  { name: 'a string instead of a condition', opts: { soft: { gpu: 'A100' } }, cls: InvalidSelectorError, fields: { key: 'gpu', value: 'A100', rule: 'condition must be an object {operator, values} (got string)' } },
  { name: 'In() without values', opts: { hard: { gpu: In() } }, cls: InvalidSelectorError, fields: { key: 'gpu', value: In(), rule: 'IN needs at least one value' } },
  { name: 'Lt with a fraction', opts: { hard: { cores: Lt(0.5) } }, cls: InvalidSelectorError, fields: { key: 'cores', value: Lt(0.5), rule: 'LT bound must be a non-negative integer' } },
  { name: 'not an object', opts: null, cls: InvalidOptionError, fields: { option: 'nodeLabelStrategy', value: null, rule: 'expects { hard?, soft? }' } },
];
for (const c of badLabelStrategies) {
  test(`nodeLabelStrategy rejects ${c.name}`, () => {
    expectError(() => nodeLabelStrategy(c.opts as Parameters<typeof nodeLabelStrategy>[0]), c.cls, c.fields);
  });
}

test('placementGroupStrategy: any bundle by default, or one bundle', () => {
  assert.equal(placementGroupStrategy({ id: 'pg1' }), { type: 'PLACEMENT_GROUP', placementGroupId: 'pg1', bundleIndex: -1 });
  assert.equal(placementGroupStrategy({ id: 'pg1' }, 2), { type: 'PLACEMENT_GROUP', placementGroupId: 'pg1', bundleIndex: 2 });
});

const badPgs: { name: string; pg: unknown; index?: number; fields: Record<string, unknown> }[] = [
  { name: 'an index below -1', pg: { id: 'pg1' }, index: -2, fields: { option: 'bundleIndex', value: -2, rule: 'must be an integer, -1 (any bundle) or more' } },
  { name: 'a fractional index', pg: { id: 'pg1' }, index: 1.5, fields: { option: 'bundleIndex', value: 1.5, rule: 'must be an integer, -1 (any bundle) or more' } },
  { name: 'a group without an id', pg: {}, fields: { option: 'placementGroup', value: {}, rule: 'must be a placement group (an object with a non-empty id)' } },
  { name: 'a bare string', pg: 'pg1', fields: { option: 'placementGroup', value: 'pg1', rule: 'must be a placement group (an object with a non-empty id)' } },
];
for (const c of badPgs) {
  test(`placementGroupStrategy rejects ${c.name}`, () => {
    expectError(() => placementGroupStrategy(c.pg as { id: string }, c.index), InvalidOptionError, c.fields);
  });
}

test.run();
