import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidLabelError, OrreryError } from '../../../lib/errors.ts';
import { validateLabelKey, validateLabelValue, validateLabels } from '../../../lib/labels/validate.ts';

/** Runs fn, which must throw an InvalidLabelError with these fields. */
function expectLabelError(fn: () => unknown, want: { key: string; value: string | undefined; rule: string }): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, InvalidLabelError);
    assert.instance(err, OrreryError);
    const e = err as InvalidLabelError;
    assert.is(e.code, 'INVALID_LABEL');
    assert.equal({ key: e.key, value: e.value, rule: e.rule }, want);
    return;
  }
  assert.unreachable('expected an InvalidLabelError');
}

const R = {
  prefixSyntax:
    "prefix must be a DNS subdomain: lowercase alphanumerics, '-' and '.', each dot-separated part starting and ending with an alphanumeric character",
  nameEnds: 'name must start and end with an alphanumeric character',
  nameChars: "name may contain only alphanumerics, '-', '_' and '.'",
  valueEnds: 'value must start and end with an alphanumeric character',
  valueChars: "value may contain only alphanumerics, '-', '_' and '.'",
  reserved: 'prefix orrery.io/ is reserved for built-in labels (users may set only orrery.io/accelerator-type, market-type, node-group, availability-zone and availability-region)',
};
const name63 = 'a' + 'b'.repeat(61) + 'c';
const prefix253 = Array.from({ length: 4 }, () => 'p'.repeat(62)).join('.') + '.q'; // 4*62 + 3 dots + 2 = 253

const validKeys: { name: string; input: string; reserved?: boolean }[] = [
  { name: 'one letter', input: 'a' },
  { name: 'one digit', input: '0' },
  { name: 'upper case name', input: 'GPU' },
  { name: 'underscores, dots and dashes inside', input: 'gpu_type.v-2' },
  { name: 'name of 63 characters', input: name63 },
  { name: 'DNS prefix', input: 'example.com/zone' },
  { name: 'single-part prefix', input: 'a/b' },
  { name: 'prefix of 253 characters', input: `${prefix253}/x` },
  { name: 'look-alike of the reserved prefix', input: 'myorrery.io/x' },
  { name: 'reserved name as a domain further up', input: 'orrery.io.example.com/x' },
  { name: 'orrery.io as a name (no prefix)', input: 'orrery.io' },
  { name: 'reserved prefix when allowed', input: 'orrery.io/node-id', reserved: true },
  // what only the machine's operator knows (seed 002 sets ray.io/accelerator-type with --labels)
  { name: 'settable built-in: accelerator type', input: 'orrery.io/accelerator-type' },
  { name: 'settable built-in: market type', input: 'orrery.io/market-type' },
  { name: 'settable built-in: node group', input: 'orrery.io/node-group' },
  { name: 'settable built-in: availability zone', input: 'orrery.io/availability-zone' },
  { name: 'settable built-in: availability region', input: 'orrery.io/availability-region' },
  { name: 'reserved subdomain when allowed', input: 'x.orrery.io/y', reserved: true },
];

for (const c of validKeys) {
  test(`key ok: ${c.name}`, () => {
    assert.is(validateLabelKey(c.input, { allowReserved: c.reserved }), c.input);
  });
}

const invalidKeys: { name: string; input: unknown; key: string; want: string; reserved?: boolean }[] = [
  { name: 'empty', input: '', key: '', want: 'key must not be empty' },
  { name: 'two slashes', input: 'a/b/c', key: 'a/b/c', want: "key must contain at most one '/' (prefix/name)" },
  { name: 'empty prefix', input: '/name', key: '/name', want: "prefix before '/' must not be empty" },
  { name: 'empty name after a prefix', input: 'example.com/', key: 'example.com/', want: 'name must not be empty' },
  { name: 'name of 64 characters', input: name63 + 'd', key: name63 + 'd', want: 'name must be 63 characters or less' },
  { name: 'name starting with a dash', input: '-abc', key: '-abc', want: R.nameEnds },
  { name: 'name ending with a dot', input: 'abc.', key: 'abc.', want: R.nameEnds },
  { name: 'name starting with an underscore', input: '_a', key: '_a', want: R.nameEnds },
  { name: 'name starting with a non-ASCII letter', input: 'ümlaut', key: 'ümlaut', want: R.nameEnds },
  { name: 'space inside the name', input: 'a b', key: 'a b', want: R.nameChars },
  { name: 'equals sign inside the name', input: 'a=b', key: 'a=b', want: R.nameChars },
  { name: 'non-ASCII letter inside the name', input: 'aüb', key: 'aüb', want: R.nameChars },
  { name: 'upper case prefix', input: 'Example.com/a', key: 'Example.com/a', want: R.prefixSyntax },
  { name: 'underscore in the prefix', input: 'ex_ample.com/a', key: 'ex_ample.com/a', want: R.prefixSyntax },
  { name: 'prefix part starting with a dash', input: '-ex.com/a', key: '-ex.com/a', want: R.prefixSyntax },
  { name: 'empty prefix part', input: 'ex..com/a', key: 'ex..com/a', want: R.prefixSyntax },
  { name: 'prefix part ending with a dash', input: 'ex.com-/a', key: 'ex.com-/a', want: R.prefixSyntax },
  { name: 'prefix of 254 characters', input: `${prefix253}q/x`, key: `${prefix253}q/x`, want: 'prefix must be 253 characters or less' },
  { name: 'reserved prefix', input: 'orrery.io/node-id', key: 'orrery.io/node-id', want: R.reserved },
  { name: 'reserved: the node name the raylet owns', input: 'orrery.io/node-name', key: 'orrery.io/node-name', want: R.reserved },
  { name: 'reserved: the node ip the raylet owns', input: 'orrery.io/node-ip', key: 'orrery.io/node-ip', want: R.reserved },
  { name: 'reserved: an actor id', input: 'orrery.io/actor-id', key: 'orrery.io/actor-id', want: R.reserved },
  { name: 'reserved subdomain', input: 'x.orrery.io/y', key: 'x.orrery.io/y', want: R.reserved },
  { name: 'syntax is checked before the reservation', input: 'orrery.io/-x', key: 'orrery.io/-x', want: R.nameEnds, reserved: true },
  { name: 'a number', input: 5, key: '(number)', want: 'key must be a string (got number)' },
  { name: 'undefined', input: undefined, key: '(undefined)', want: 'key must be a string (got undefined)' },
];

for (const c of invalidKeys) {
  test(`key rejected: ${c.name}`, () => {
    expectLabelError(() => validateLabelKey(c.input, { allowReserved: c.reserved }), { key: c.key, value: undefined, rule: c.want });
  });
}

const validValues = ['', 'v', 'A100', 'm6in.2xlarge', 'china-east-1', 'a_b', '10.0.0.1', name63];
for (const v of validValues) {
  test(`value ok: ${JSON.stringify(v)}`, () => {
    assert.is(validateLabelValue('k', v), v);
  });
}

const invalidValues: { name: string; input: unknown; value: string; want: string }[] = [
  { name: '64 characters', input: name63 + 'd', value: name63 + 'd', want: 'value must be 63 characters or less' },
  { name: 'leading dash', input: '-a', value: '-a', want: R.valueEnds },
  { name: 'trailing dot', input: 'a.', value: 'a.', want: R.valueEnds },
  { name: 'only a space', input: ' ', value: ' ', want: R.valueEnds },
  { name: 'space inside', input: 'a b', value: 'a b', want: R.valueChars },
  { name: 'equals sign inside', input: 'a=b', value: 'a=b', want: R.valueChars },
  { name: 'slash inside', input: 'a/b', value: 'a/b', want: R.valueChars },
  { name: 'IPv6 address', input: 'fe80::1', value: 'fe80::1', want: R.valueChars },
  { name: 'a number', input: 4, value: '4', want: 'value must be a string (got number)' },
  { name: 'a boolean', input: true, value: 'true', want: 'value must be a string (got boolean)' },
  { name: 'null', input: null, value: 'null', want: 'value must be a string (got null)' },
  { name: 'an array', input: ['a'], value: '["a"]', want: 'value must be a string (got array)' },
];

for (const c of invalidValues) {
  test(`value rejected: ${c.name}`, () => {
    expectLabelError(() => validateLabelValue('zone', c.input), { key: 'zone', value: c.value, rule: c.want });
  });
}

test('validateLabels returns a frozen copy of the own entries', () => {
  const input = Object.assign(Object.create({ inherited: 'x' }), { zone: 'us-east-1', gpu: '' });
  const out = validateLabels(input);
  assert.equal(out, { zone: 'us-east-1', gpu: '' });
  assert.ok(Object.isFrozen(out));
  assert.is.not(out, input);
});

test('validateLabels rejects reserved keys unless allowed', () => {
  expectLabelError(() => validateLabels({ 'orrery.io/node-id': 'n1' }), { key: 'orrery.io/node-id', value: undefined, rule: R.reserved });
  assert.equal(validateLabels({ 'orrery.io/node-id': 'n1' }, { allowReserved: true }), { 'orrery.io/node-id': 'n1' });
});

test('validateLabels names the key whose value is not a string', () => {
  expectLabelError(() => validateLabels({ ok: 'a', cores: 8 }), { key: 'cores', value: '8', rule: 'value must be a string (got number)' });
});

const notRecords: { name: string; input: unknown; value: string; got: string }[] = [
  { name: 'null', input: null, value: 'null', got: 'null' },
  { name: 'a string', input: 'a=b', value: 'a=b', got: 'string' },
  { name: 'an array', input: [['a', 'b']], value: '[["a","b"]]', got: 'array' },
];
for (const c of notRecords) {
  test(`validateLabels rejects ${c.name}`, () => {
    expectLabelError(() => validateLabels(c.input), {
      key: '',
      value: c.value,
      rule: `labels must be an object mapping keys to string values (got ${c.got})`,
    });
  });
}

test.run();
