import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidLabelError, OrreryError } from '../../../lib/errors.ts';
import { composeLabels, parseLabelsFlag, parseLabelsYaml } from '../../../lib/labels/parse.ts';

type Want = { key: string; value?: string; rule: string | RegExp };

function expectLabelError(fn: () => unknown, want: Want): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, InvalidLabelError);
    assert.instance(err, OrreryError);
    const e = err as InvalidLabelError;
    assert.is(e.code, 'INVALID_LABEL');
    assert.is(e.key, want.key);
    assert.is(e.value, want.value);
    if (typeof want.rule === 'string') assert.is(e.rule, want.rule);
    else assert.match(e.rule, want.rule);
    return;
  }
  assert.unreachable('expected an InvalidLabelError');
}

const CHARS = "value may contain only alphanumerics, '-', '_' and '.'";

const flags: { name: string; input: string; want: Record<string, string> }[] = [
  { name: 'empty string', input: '', want: {} },
  { name: 'blank string', input: '   ', want: {} },
  { name: 'one pair', input: 'a=b', want: { a: 'b' } },
  { name: 'seed 002 form', input: 'key1=val1,key2=val2', want: { key1: 'val1', key2: 'val2' } },
  { name: 'whitespace around pairs', input: '  zone=us , rack=r1  ', want: { zone: 'us', rack: 'r1' } },
  { name: "whitespace around '='", input: 'zone = us', want: { zone: 'us' } },
  { name: 'empty value', input: 'gpu=', want: { gpu: '' } },
  { name: 'prefixed key', input: 'example.com/zone=us-east-1', want: { 'example.com/zone': 'us-east-1' } },
];
for (const c of flags) {
  test(`parseLabelsFlag: ${c.name}`, () => {
    const out = parseLabelsFlag(c.input);
    assert.equal(out, c.want);
    assert.ok(Object.isFrozen(out));
  });
}

const badFlags: { name: string; input: unknown; want: Want }[] = [
  { name: 'pair without =', input: 'a=b,oops', want: { key: 'oops', rule: "expected key=value (no '=' in this pair)" } },
  { name: 'empty pair', input: 'a=b,,c=d', want: { key: 'a=b,,c=d', rule: "empty key=value pair (a stray ',')" } },
  { name: 'trailing comma', input: 'a=b,', want: { key: 'a=b,', rule: "empty key=value pair (a stray ',')" } },
  { name: 'empty key', input: '=v', want: { key: '', rule: 'key must not be empty' } },
  { name: 'duplicate key', input: 'a=1,b=2,a=3', want: { key: 'a', value: '3', rule: 'duplicate key' } },
  { name: "'=' inside the value", input: 'a=b=c', want: { key: 'a', value: 'b=c', rule: CHARS } },
  { name: 'space inside the key', input: 'a b=c', want: { key: 'a b', rule: "name may contain only alphanumerics, '-', '_' and '.'" } },
  { name: 'reserved key', input: 'orrery.io/node-id=x', want: { key: 'orrery.io/node-id', rule: 'prefix orrery.io/ is reserved for built-in labels (users may set only orrery.io/accelerator-type, market-type, node-group, availability-zone and availability-region)' } },
  { name: 'not a string', input: 5, want: { key: '', rule: 'labels must be given as a string of key=value pairs (got number)' } },
];
for (const c of badFlags) {
  test(`parseLabelsFlag rejects ${c.name}`, () => expectLabelError(() => parseLabelsFlag(c.input), c.want));
}

const files: { name: string; input: string; want: Record<string, string> }[] = [
  { name: 'strings', input: 'zone: us-west4-a\nrack: "r1"\n', want: { zone: 'us-west4-a', rack: 'r1' } },
  { name: 'an integer', input: 'gpus: 4', want: { gpus: '4' } },
  { name: 'a number keeps its written form', input: 'version: 1.10\nrack: 007', want: { version: '1.10', rack: '007' } },
  { name: 'booleans', input: 'spot: true\npreemptible: False', want: { spot: 'true', preemptible: 'False' } },
  { name: 'null and missing values', input: 'a:\nb: ~\nc: null', want: { a: '', b: '', c: '' } },
  { name: 'an empty file', input: '', want: {} },
  { name: 'only comments', input: '# no labels yet\n', want: {} },
  { name: 'an alias', input: 'a: &z us-east\nb: *z', want: { a: 'us-east', b: 'us-east' } },
  { name: 'a numeric key', input: '1: one', want: { '1': 'one' } },
  { name: 'prefixed keys', input: 'example.com/team: infra', want: { 'example.com/team': 'infra' } },
  { name: 'a flow mapping', input: '{a: b, c: d}', want: { a: 'b', c: 'd' } },
];
for (const c of files) {
  test(`parseLabelsYaml: ${c.name}`, () => {
    const out = parseLabelsYaml(c.input);
    assert.equal(out, c.want);
    assert.ok(Object.isFrozen(out));
  });
}

const badFiles: { name: string; input: unknown; want: Want }[] = [
  { name: 'a syntax error', input: 'a: [1\nb: 2', want: { key: '', rule: /^YAML: Flow sequence .* at line 2, column 1:$/ } },
  { name: 'a duplicate key', input: 'a: 1\na: 2', want: { key: '', rule: /^YAML: Map keys must be unique/ } },
  { name: 'keys equal as text', input: '1: a\n"1": b', want: { key: '1', value: 'b', rule: 'duplicate key' } },
  { name: 'several documents', input: 'a: 1\n---\nb: 2', want: { key: '', rule: /^YAML: Source contains multiple documents/ } },
  { name: 'a list document', input: '- a\n- b', want: { key: '', rule: 'labels file must be a mapping of keys to values, not a list' } },
  { name: 'a scalar document', input: 'just text', want: { key: '', rule: 'labels file must be a mapping of keys to values, not a scalar' } },
  { name: 'a nested mapping', input: 'a:\n  b: c', want: { key: 'a', rule: 'value must be a scalar, not a mapping' } },
  { name: 'a list value', input: 'a: [1, 2]', want: { key: 'a', rule: 'value must be a scalar, not a list' } },
  { name: 'a list key', input: '? [a]\n: b', want: { key: '', rule: 'key must be a scalar, not a list' } },
  { name: 'a reserved key', input: 'orrery.io/zone: x', want: { key: 'orrery.io/zone', rule: 'prefix orrery.io/ is reserved for built-in labels (users may set only orrery.io/accelerator-type, market-type, node-group, availability-zone and availability-region)' } },
  { name: 'an invalid value', input: 'a: b c', want: { key: 'a', value: 'b c', rule: CHARS } },
  { name: 'infinity', input: 'a: .inf', want: { key: 'a', value: '.inf', rule: 'value must start and end with an alphanumeric character' } },
  { name: 'not text', input: null, want: { key: '', rule: 'labels file must be text (got null)' } },
];
for (const c of badFiles) {
  test(`parseLabelsYaml rejects ${c.name}`, () => expectLabelError(() => parseLabelsYaml(c.input), c.want));
}

test('seed 002: --labels-file composes with --labels, the flag winning a conflict', () => {
  const file = parseLabelsYaml('region: us\nzone: us-west4-a\nteam: infra\n');
  const flag = parseLabelsFlag('zone=us-west4-b,spot=true');
  assert.equal(composeLabels(file, flag), { region: 'us', zone: 'us-west4-b', team: 'infra', spot: 'true' });
});

const precedence: { name: string; file?: Record<string, string>; env?: Record<string, string>; flag?: Record<string, string>; want: Record<string, string> }[] = [
  { name: 'file alone', file: { z: 'f' }, want: { z: 'f' } },
  { name: 'env over file', file: { z: 'f', a: '1' }, env: { z: 'e' }, want: { z: 'e', a: '1' } },
  { name: 'flag over env and file', file: { z: 'f' }, env: { z: 'e' }, flag: { z: 'x' }, want: { z: 'x' } },
  { name: 'nothing at all', want: {} },
];
for (const c of precedence) {
  test(`composeLabels precedence file < env < flag: ${c.name}`, () => {
    const out = composeLabels(c.file, c.flag, c.env);
    assert.equal(out, c.want);
    assert.ok(Object.isFrozen(out));
  });
}

test('composeLabels validates every source as user labels', () => {
  expectLabelError(() => composeLabels({ 'orrery.io/node-id': 'x' }, {}), {
    key: 'orrery.io/node-id',
    rule: 'prefix orrery.io/ is reserved for built-in labels (users may set only orrery.io/accelerator-type, market-type, node-group, availability-zone and availability-region)',
  });
  expectLabelError(() => composeLabels({}, {}, { zone: 'a b' }), { key: 'zone', value: 'a b', rule: CHARS });
});

test.run();
