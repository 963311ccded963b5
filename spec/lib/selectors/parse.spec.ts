import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidSelectorError, OrreryError } from '../../../lib/errors.ts';
import { expressionMatches, type MatchOperator } from '../../../lib/selectors/expression.ts';
import { formatSelectorValue, parseLabelSelector, parseSelectorValue } from '../../../lib/selectors/parse.ts';

function expectSelectorError(fn: () => unknown, want: { key: string; value: unknown; rule: string }): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, InvalidSelectorError);
    assert.instance(err, OrreryError);
    const e = err as InvalidSelectorError;
    assert.is(e.code, 'INVALID_SELECTOR');
    assert.equal({ key: e.key, value: e.value, rule: e.rule }, want);
    return;
  }
  assert.unreachable('expected an InvalidSelectorError');
}

const ok: { name: string; input: string; want: { operator: MatchOperator; values: string[] } }[] = [
  { name: 'seed 002 equals', input: 'value', want: { operator: 'IN', values: ['value'] } },
  { name: 'seed 002 not equals', input: '!value', want: { operator: 'NOT_IN', values: ['value'] } },
  { name: 'seed 002 in', input: 'in(val1,val2)', want: { operator: 'IN', values: ['val1', 'val2'] } },
  { name: 'seed 002 not in', input: '!in(val1,val2)', want: { operator: 'NOT_IN', values: ['val1', 'val2'] } },
  { name: 'seed 002 exists', input: 'exists()', want: { operator: 'EXISTS', values: [] } },
  { name: 'seed 002 does not exist', input: '!exists()', want: { operator: 'DOES_NOT_EXIST', values: [] } },
  { name: 'Kubernetes Gt', input: 'gt(4)', want: { operator: 'GT', values: ['4'] } },
  { name: 'Kubernetes Lt', input: 'lt(10)', want: { operator: 'LT', values: ['10'] } },
  { name: 'upper case IN', input: 'IN(a)', want: { operator: 'IN', values: ['a'] } },
  { name: 'mixed case Exists', input: 'Exists()', want: { operator: 'EXISTS', values: [] } },
  { name: 'upper case !EXISTS', input: '!EXISTS()', want: { operator: 'DOES_NOT_EXIST', values: [] } },
  { name: 'mixed case Gt', input: 'Gt(4)', want: { operator: 'GT', values: ['4'] } },
  { name: 'whitespace around an in() list', input: '  in( a , b ) ', want: { operator: 'IN', values: ['a', 'b'] } },
  { name: 'whitespace before the parenthesis', input: 'in (a)', want: { operator: 'IN', values: ['a'] } },
  { name: "whitespace after '!'", input: '! in(a)', want: { operator: 'NOT_IN', values: ['a'] } },
  { name: 'whitespace inside exists()', input: 'exists( )', want: { operator: 'EXISTS', values: [] } },
  { name: 'whitespace around a plain value', input: '  us-east-1 ', want: { operator: 'IN', values: ['us-east-1'] } },
  { name: 'the empty value', input: '', want: { operator: 'IN', values: [''] } },
  { name: "'!' alone: not the empty value", input: '!', want: { operator: 'NOT_IN', values: [''] } },
  { name: 'a gt() bound is written canonically', input: 'gt(007)', want: { operator: 'GT', values: ['7'] } },
  { name: 'a value that spells an operator', input: 'exists', want: { operator: 'IN', values: ['exists'] } },
];

for (const c of ok) {
  test(`parseSelectorValue: ${c.name}`, () => {
    const expr = parseSelectorValue('zone', c.input);
    assert.equal(expr, { key: 'zone', ...c.want, soft: false });
    assert.ok(Object.isFrozen(expr));
    assert.equal(parseSelectorValue('zone', formatSelectorValue(expr)), expr, 'round-trips through formatSelectorValue');
  });
}

test('parseSelectorValue accepts reserved keys', () => {
  const expr = parseSelectorValue('orrery.io/node-id', 'in(n1,n2)');
  assert.equal(expr, { key: 'orrery.io/node-id', operator: 'IN', values: ['n1', 'n2'], soft: false });
});

const PLAIN = (ch: string) => `a plain value may not contain '(', ')', ',' or '!' (found '${ch}'); list values with in(a,b)`;
const CHARS = "value may contain only alphanumerics, '-', '_' and '.'";
const ENDS = 'value must start and end with an alphanumeric character';
const long = 'a'.repeat(64);

const bad: { name: string; key?: unknown; input: unknown; wantKey?: string; rule: string }[] = [
  { name: 'in() without values', input: 'in()', rule: 'in() needs at least one value' },
  { name: '!in() with only blanks', input: '!in( )', rule: '!in() needs at least one value' },
  { name: 'a stray comma in in()', input: 'in(a,,b)', rule: "in() has an empty value (a stray ',')" },
  { name: 'a trailing comma in in()', input: 'in(a,)', rule: "in() has an empty value (a stray ',')" },
  { name: 'a space inside an in() value', input: 'in(a b)', rule: `value "a b": ${CHARS}` },
  { name: 'an in() value starting with a dash', input: 'in(x,-a)', rule: `value "-a": ${ENDS}` },
  { name: "'!' inside in()", input: 'in(!a)', rule: `value "!a": ${ENDS}` },
  { name: 'nested parentheses', input: 'in(a(b))', rule: `value "a(b)": ${ENDS}` },
  { name: 'parentheses inside a value', input: 'in(a(b)c)', rule: `value "a(b)c": ${CHARS}` },
  { name: 'exists() with a value', input: 'exists(x)', rule: 'exists() takes no values' },
  { name: '!exists() with a value', input: '!exists(x)', rule: '!exists() takes no values' },
  { name: 'gt() without a bound', input: 'gt()', rule: 'gt() needs one non-negative integer bound' },
  { name: 'gt() with a word', input: 'gt(four)', rule: 'gt() needs one non-negative integer bound' },
  { name: 'gt() with a fraction', input: 'gt(1.5)', rule: 'gt() needs one non-negative integer bound' },
  { name: 'gt() with a negative bound', input: 'gt(-1)', rule: 'gt() needs one non-negative integer bound' },
  { name: 'gt() with two bounds', input: 'gt(1,2)', rule: 'gt() needs one non-negative integer bound' },
  { name: 'lt() beyond safe integers', input: 'lt(99999999999999999999)', rule: 'lt() needs one non-negative integer bound' },
  { name: 'negated gt()', input: '!gt(3)', rule: "gt() cannot be negated with '!'" },
  { name: 'negated lt()', input: '!LT(3)', rule: "lt() cannot be negated with '!'" },
  { name: 'an unknown operator', input: 'foo(a)', rule: 'unknown operator "foo()"; expected in(), exists(), gt() or lt()' },
  { name: 'Kubernetes notin spelling', input: 'notin(a)', rule: 'unknown operator "notin()"; expected in(), exists(), gt() or lt()' },
  { name: 'a comma in a plain value', input: 'a,b', rule: PLAIN(',') },
  { name: 'an unclosed in(', input: 'in(a', rule: PLAIN('(') },
  { name: 'text after the closing parenthesis', input: 'in(a)b', rule: PLAIN('(') },
  { name: 'a lone closing parenthesis', input: 'a)', rule: PLAIN(')') },
  { name: 'a double negation', input: '!!a', rule: PLAIN('!') },
  { name: "'!' inside a plain value", input: 'a!b', rule: PLAIN('!') },
  { name: 'a space inside a plain value', input: 'a b', rule: `value "a b": ${CHARS}` },
  { name: 'a plain value of 64 characters', input: long, rule: `value "${long}": value must be 63 characters or less` },
  { name: 'a number', input: 4, rule: 'selector value must be a string (got number)' },
  { name: 'null', input: null, rule: 'selector value must be a string (got null)' },
  { name: 'an array', input: ['a'], rule: 'selector value must be a string (got array)' },
  { name: 'an invalid key', key: 'bad key', input: 'a', wantKey: 'bad key', rule: "key: name may contain only alphanumerics, '-', '_' and '.'" },
  { name: 'an empty key', key: '', input: 'a', wantKey: '', rule: 'key: key must not be empty' },
];

for (const c of bad) {
  test(`parseSelectorValue rejects ${c.name}`, () => {
    const key = (c.key ?? 'zone') as string;
    expectSelectorError(() => parseSelectorValue(key, c.input), { key: c.wantKey ?? 'zone', value: c.input, rule: c.rule });
  });
}

test('parseLabelSelector keeps the record order and parses every value', () => {
  const exprs = parseLabelSelector({ 'orrery.io/accelerator-type': 'nvidia-h100', region: '!in(eu,ap)', gpu: 'exists()' });
  assert.equal(exprs, [
    { key: 'orrery.io/accelerator-type', operator: 'IN', values: ['nvidia-h100'], soft: false },
    { key: 'region', operator: 'NOT_IN', values: ['eu', 'ap'], soft: false },
    { key: 'gpu', operator: 'EXISTS', values: [], soft: false },
  ]);
});

test('parseLabelSelector: an empty selector (seed 002 fallback) has no expressions', () => {
  assert.equal(parseLabelSelector({}), []);
});

test('parseLabelSelector names the key whose value is bad', () => {
  expectSelectorError(() => parseLabelSelector({ a: 'x', 'orrery.io/market-type': 'in()' }), {
    key: 'orrery.io/market-type',
    value: 'in()',
    rule: 'in() needs at least one value',
  });
  expectSelectorError(() => parseLabelSelector({ cores: 8 }), { key: 'cores', value: 8, rule: 'selector value must be a string (got number)' });
});

const notSelectors: { name: string; input: unknown; got: string }[] = [
  { name: 'null', input: null, got: 'null' },
  { name: 'a string', input: 'zone=us', got: 'string' },
  { name: 'an array', input: [{ zone: 'us' }], got: 'array' },
];
for (const c of notSelectors) {
  test(`parseLabelSelector rejects ${c.name}`, () => {
    expectSelectorError(() => parseLabelSelector(c.input), {
      key: '',
      value: c.input,
      rule: `label selector must be an object mapping label keys to selector values (got ${c.got})`,
    });
  });
}

const semantics: { name: string; selector: string; labels: Record<string, string>; want: boolean }[] = [
  { name: 'IN needs the key present', selector: 'in(us,eu)', labels: {}, want: false },
  { name: 'IN with a listed value', selector: 'in(us,eu)', labels: { region: 'eu' }, want: true },
  { name: 'NOT_IN also matches a node without the key', selector: '!us', labels: {}, want: true },
  { name: 'NOT_IN with the excluded value', selector: '!us', labels: { region: 'us' }, want: false },
  { name: '!exists() on a node with the key', selector: '!exists()', labels: { region: 'us' }, want: false },
];
for (const c of semantics) {
  test(`seed 002 semantics: ${c.name}`, () => {
    assert.is(expressionMatches(parseSelectorValue('region', c.selector), c.labels), c.want);
  });
}

// Several constraints on one key: a list of values, ANDed — Kubernetes' NodeSelectorTerm may repeat
// a key in matchExpressions (e.g. `gpu In [a,b,c]` and `gpu NotIn [b]`), and every one must hold.
const multi: { name: string; selector: Record<string, string | string[]>; labels: Record<string, string>; want: boolean }[] = [
  { name: 'in(a,b,c) and !b with a', selector: { gpu: ['in(a,b,c)', '!b'] }, labels: { gpu: 'a' }, want: true },
  { name: 'in(a,b,c) and !b with b', selector: { gpu: ['in(a,b,c)', '!b'] }, labels: { gpu: 'b' }, want: false },
  { name: 'in(a,b,c) and !b without the key', selector: { gpu: ['in(a,b,c)', '!b'] }, labels: {}, want: false },
  { name: 'gt(4) and lt(16): a range (Kubernetes Gt + Lt on one key)', selector: { cores: ['gt(4)', 'lt(16)'] }, labels: { cores: '8' }, want: true },
  { name: 'gt(4) and lt(16) above the range', selector: { cores: ['gt(4)', 'lt(16)'] }, labels: { cores: '16' }, want: false },
  { name: 'a one-value list is the value', selector: { gpu: ['a'] }, labels: { gpu: 'a' }, want: true },
  { name: 'lists AND with other keys', selector: { gpu: ['!b', '!c'], zone: 'us' }, labels: { gpu: 'a', zone: 'eu' }, want: false },
];
for (const c of multi) {
  test(`parseLabelSelector, several constraints on one key: ${c.name}`, () => {
    const exprs = parseLabelSelector(c.selector);
    assert.is(exprs.every((e) => expressionMatches(e, c.labels)), c.want);
  });
}

test('parseLabelSelector: a list gives one expression per value, in order', () => {
  assert.equal(parseLabelSelector({ gpu: ['in(a,b)', '!b'] }), [
    { key: 'gpu', operator: 'IN', values: ['a', 'b'], soft: false },
    { key: 'gpu', operator: 'NOT_IN', values: ['b'], soft: false },
  ]);
});

test('parseLabelSelector refuses an empty list and a bad value inside a list', () => {
  expectSelectorError(() => parseLabelSelector({ gpu: [] }), { key: 'gpu', value: [], rule: 'a list of selector values needs at least one value' });
  expectSelectorError(() => parseLabelSelector({ gpu: ['a', 3] }), { key: 'gpu', value: 3, rule: 'selector value must be a string (got number)' });
});

test.run();
