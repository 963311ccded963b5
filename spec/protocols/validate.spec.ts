import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ProtocolError } from '../../protocols/errors.ts';
import { array, bool, bytes, check, literal, num, object, optional, record, str, unknown, type Validator } from '../../protocols/validate.ts';

function failure(validator: Validator<unknown>, value: unknown): ProtocolError {
  try {
    check(validator, value);
  } catch (err) {
    assert.instance(err, ProtocolError);
    assert.is((err as ProtocolError).code, 'INVALID_MESSAGE');
    return err as ProtocolError;
  }
  throw new Error(`expected ${JSON.stringify(value)} to be refused`);
}

const bundle = object({ index: num({ int: true, min: 0 }), resources: record(num({ min: 0 })) });
const request = object({
  name: str({ min: 1, max: 8 }),
  bundles: array(bundle, { max: 3 }),
  strategy: literal('PACK', 'SPREAD'),
  detached: optional(bool()),
  labels: optional(record(str())),
});

const refused: { name: string; value: unknown; message: string }[] = [
  { name: 'a non-object', value: [1], message: '(root): expected an object' },
  { name: 'a missing field', value: { bundles: [], strategy: 'PACK' }, message: 'name: expected a string' },
  { name: 'a too short string', value: { name: '', bundles: [], strategy: 'PACK' }, message: 'name: expected at least 1 character(s)' },
  { name: 'a too long string', value: { name: 'ninechars', bundles: [], strategy: 'PACK' }, message: 'name: expected at most 8 character(s)' },
  { name: 'an unknown literal', value: { name: 'pg', bundles: [], strategy: 'pack' }, message: 'strategy: expected "PACK" or "SPREAD"' },
  {
    name: 'a deep ill-typed field',
    value: { name: 'pg', strategy: 'PACK', bundles: [{ index: 0, resources: {} }, { index: 1, resources: {} }, { index: 2, resources: { CPU: 'x' } }] },
    message: 'bundles[2].resources.CPU: expected a number',
  },
  { name: 'too many items', value: { name: 'pg', strategy: 'PACK', bundles: [0, 1, 2, 3] }, message: 'bundles: expected at most 3 item(s)' },
  { name: 'a fraction for an integer', value: { name: 'pg', strategy: 'PACK', bundles: [{ index: 0.5, resources: {} }] }, message: 'bundles[0].index: expected an integer' },
  { name: 'a value under the minimum', value: { name: 'pg', strategy: 'PACK', bundles: [{ index: -1, resources: {} }] }, message: 'bundles[0].index: expected a number >= 0' },
  { name: 'NaN', value: { name: 'pg', strategy: 'PACK', bundles: [{ index: Number.NaN, resources: {} }] }, message: 'bundles[0].index: expected a number' },
  { name: 'a bigint', value: { name: 'pg', strategy: 'PACK', bundles: [{ index: 2n ** 60n, resources: {} }] }, message: 'bundles[0].index: expected a number' },
  { name: 'a wrong optional', value: { name: 'pg', strategy: 'PACK', bundles: [], detached: 'yes' }, message: 'detached: expected a boolean' },
  { name: 'a key that is not an identifier', value: { name: 'pg', strategy: 'PACK', bundles: [], labels: { 'orrery.io/zone': 1 } }, message: 'labels["orrery.io/zone"]: expected a string' },
  { name: 'a Date where an object belongs', value: { name: 'pg', strategy: 'PACK', bundles: [], labels: new Date(0) }, message: 'labels: expected an object' },
];

for (const c of refused) {
  test(`refuses ${c.name}, naming the path`, () => {
    const err = failure(request, c.value);
    assert.is(err.message, c.message);
    assert.is(err.detail.path, c.message.slice(0, c.message.indexOf(':')).replace('(root)', ''));
  });
}

test('returns a fresh typed value: unknown fields dropped, absent optionals left out', () => {
  const input = { name: 'pg', strategy: 'SPREAD', bundles: [{ index: 0, resources: { CPU: 1 }, extra: true }], future: 1, detached: null };
  const value = check(request, input);
  assert.equal(value, { name: 'pg', bundles: [{ index: 0, resources: { CPU: 1 } }], strategy: 'SPREAD' });
  assert.is.not(value.bundles, input.bundles);
  assert.not.ok('detached' in value);
});

for (const key of ['__proto__', 'constructor', 'prototype']) {
  test(`a record refuses the key ${key}`, () => {
    const value = JSON.parse(`{"name":"pg","strategy":"PACK","bundles":[],"labels":{"${key}":"x"}}`);
    const err = failure(request, value);
    assert.is(err.message, `labels.${key}: forbidden key`);
    assert.is(({} as Record<string, unknown>).x, undefined);
  });
}

test('an object field is read only from own properties', () => {
  const shape = object({ constructor: optional(str()) });
  assert.equal(check(shape, {}), {});
});

test('record key validator and key limit', () => {
  const limited = record(num(), { maxKeys: 1, key: str({ pattern: /^[a-z]+$/ }) });
  assert.equal(check(limited, { a: 1 }), { a: 1 });
  assert.is(failure(limited, { a: 1, b: 2 }).message, '(root): expected at most 1 key(s)');
  assert.is(failure(limited, { A: 1 }).message, 'A: expected to match /^[a-z]+$/');
});

test('bytes, unknown and num bounds', () => {
  assert.equal([...check(bytes({ max: 2 }), new Uint8Array([1, 2]))], [1, 2]);
  assert.is(failure(bytes({ max: 2 }), new Uint8Array(3)).message, '(root): expected at most 2 byte(s)');
  assert.is(failure(bytes(), 'ab').message, '(root): expected bytes');
  assert.equal(check(unknown(), { any: ['thing'] }), { any: ['thing'] });
  assert.is(failure(num({ max: 1 }), 2).message, '(root): expected a number <= 1');
  assert.is(failure(num(), Infinity).message, '(root): expected a number');
});

test.run();
