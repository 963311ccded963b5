import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidResourceError, OrreryError } from '../../../lib/errors.ts';
import {
  addResources,
  fits,
  formatResources,
  isEmptyResources,
  parseResources,
  resourcesEqual,
  shortOf,
  subtractResources,
  type ResourceSet,
} from '../../../lib/resources/resource-set.ts';

function expectResourceError(fn: () => unknown, want: { resource: string; value: unknown; rule: string }): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, InvalidResourceError);
    assert.instance(err, OrreryError);
    const e = err as InvalidResourceError;
    assert.is(e.code, 'INVALID_RESOURCE');
    assert.equal({ resource: e.resource, value: e.value, rule: e.rule }, want);
    return;
  }
  assert.unreachable('expected an InvalidResourceError');
}

const NAME_RULE = 'resource names start with a letter or _ and use letters, digits, _ . - /';
const SHAPE_RULE = 'expected an object of resource name to quantity';

// ---- parseResources ----

const parsed: { name: string; input: Record<string, number>; want: ResourceSet }[] = [
  { name: 'empty', input: {}, want: {} },
  { name: 'CPU and a fractional GPU', input: { CPU: 1, GPU: 0.5 }, want: { CPU: 10_000, GPU: 5_000 } },
  { name: 'zeros are dropped', input: { CPU: 2, GPU: 0, my_res: 0 }, want: { CPU: 20_000 } },
  { name: 'only zeros give an empty set', input: { CPU: 0 }, want: {} },
  { name: 'memory in whole bytes', input: { memory: 2 ** 30, object_store_memory: 5 }, want: { memory: 2 ** 30, object_store_memory: 5 } },
  { name: 'custom names with _ . - /', input: { _private: 1, 'accel.v2': 2, 'a-b': 3, 'vendor/thing': 4 }, want: { _private: 10_000, 'accel.v2': 20_000, 'a-b': 30_000, 'vendor/thing': 40_000 } },
  { name: 'a name of 128 characters', input: { ['r' + 'x'.repeat(127)]: 1 }, want: { ['r' + 'x'.repeat(127)]: 10_000 } },
  { name: 'bundle resource names', input: { CPU_group_0_pg1: 1, CPU_group_pg1: 1 }, want: { CPU_group_0_pg1: 10_000, CPU_group_pg1: 10_000 } },
];

for (const c of parsed) {
  test(`parseResources: ${c.name}`, () => {
    assert.equal(parseResources(c.input), c.want);
  });
}

const badShapes: { name: string; input: unknown; what?: string }[] = [
  { name: 'null', input: null },
  { name: 'a string', input: 'CPU' },
  { name: 'a number', input: 4 },
  { name: 'an array', input: [{ CPU: 1 }] },
  { name: 'undefined, named by the caller', input: undefined, what: 'bundles[0]' },
];

for (const c of badShapes) {
  test(`parseResources rejects the shape: ${c.name}`, () => {
    expectResourceError(() => parseResources(c.input, c.what), { resource: c.what ?? 'resources', value: c.input, rule: SHAPE_RULE });
  });
}

const badNames: { name: string; input: Record<string, unknown>; resource: string; value: unknown }[] = [
  { name: 'empty name', input: { '': 1 }, resource: '', value: 1 },
  { name: 'starts with a digit', input: { '1cpu': 1 }, resource: '1cpu', value: 1 },
  { name: 'contains a space', input: { 'my res': 1 }, resource: 'my res', value: 1 },
  { name: 'contains *', input: { 'a*b': 2 }, resource: 'a*b', value: 2 },
  { name: 'starts with a dash', input: { '-x': 1 }, resource: '-x', value: 1 },
  { name: 'too long (129 characters)', input: { ['r' + 'x'.repeat(128)]: 1 }, resource: 'r' + 'x'.repeat(128), value: 1 },
  { name: '__proto__ (as JSON.parse makes it)', input: JSON.parse('{"__proto__": 1}'), resource: '__proto__', value: 1 },
  { name: 'constructor', input: { constructor: 1 }, resource: 'constructor', value: 1 },
  { name: 'prototype', input: { prototype: 1 }, resource: 'prototype', value: 1 },
  // Names inherited from Object.prototype would be read through the prototype by fits/add/subtract
  // (an absent `toString` is a function, not 0), so a set could never hold them safely.
  { name: 'toString', input: { toString: 1 }, resource: 'toString', value: 1 },
  { name: 'valueOf', input: { valueOf: 1 }, resource: 'valueOf', value: 1 },
  { name: 'hasOwnProperty', input: { hasOwnProperty: 1 }, resource: 'hasOwnProperty', value: 1 },
];

for (const c of badNames) {
  test(`parseResources rejects the name: ${c.name}`, () => {
    expectResourceError(() => parseResources(c.input), { resource: c.resource, value: c.value, rule: NAME_RULE });
  });
}

const badAmounts: { name: string; input: Record<string, unknown>; resource: string; value: unknown; rule: string }[] = [
  { name: 'negative CPU', input: { CPU: -1 }, resource: 'CPU', value: -1, rule: 'quantity must not be negative' },
  { name: 'NaN GPU', input: { CPU: 1, GPU: NaN }, resource: 'GPU', value: NaN, rule: 'quantity must be a finite number' },
  { name: 'string amount', input: { my_res: '2' }, resource: 'my_res', value: '2', rule: 'quantity must be a finite number' },
  { name: 'fractional memory', input: { memory: 10.5 }, resource: 'memory', value: 10.5, rule: 'quantity is a count of bytes and must be a whole number' },
];

for (const c of badAmounts) {
  test(`parseResources rejects the amount: ${c.name}`, () => {
    expectResourceError(() => parseResources(c.input), { resource: c.resource, value: c.value, rule: c.rule });
  });
}

test('formatResources gives user-facing quantities in name order', () => {
  const out = formatResources({ memory: 1024, GPU: 5_000, CPU: 3_333, my_res: 1 });
  assert.equal(out, { CPU: 0.3333, GPU: 0.5, memory: 1024, my_res: 0.0001 });
  assert.equal(Object.keys(out), ['CPU', 'GPU', 'memory', 'my_res']);
});

test('formatResources(parseResources(x)) is x without its zeros', () => {
  const input = { CPU: 0.25, GPU: 2, memory: 4096, slots: 0, my_res: 1.0001 };
  assert.equal(formatResources(parseResources(input)), { CPU: 0.25, GPU: 2, memory: 4096, my_res: 1.0001 });
});

// ---- fits / shortOf ----

const fitCases: { name: string; have: ResourceSet; need: ResourceSet; fits: boolean; short: string[] }[] = [
  { name: 'nothing needed', have: {}, need: {}, fits: true, short: [] },
  { name: 'exactly enough', have: { CPU: 10_000 }, need: { CPU: 10_000 }, fits: true, short: [] },
  { name: 'more than enough', have: { CPU: 40_000, GPU: 10_000 }, need: { CPU: 5_000 }, fits: true, short: [] },
  { name: 'one unit short', have: { CPU: 9_999 }, need: { CPU: 10_000 }, fits: false, short: ['CPU'] },
  { name: 'resource absent from have', have: { CPU: 10_000 }, need: { GPU: 1 }, fits: false, short: ['GPU'] },
  { name: 'several short, sorted', have: { CPU: 1 }, need: { my_res: 1, GPU: 1, CPU: 2 }, fits: false, short: ['CPU', 'GPU', 'my_res'] },
  { name: 'a zero entry in need always fits', have: {}, need: { GPU: 0 }, fits: true, short: [] },
  { name: 'an explicit zero in have is short', have: { GPU: 0 }, need: { GPU: 1 }, fits: false, short: ['GPU'] },
];

for (const c of fitCases) {
  test(`fits/shortOf: ${c.name}`, () => {
    assert.is(fits(c.have, c.need), c.fits);
    assert.equal(shortOf(c.have, c.need), c.short);
  });
}

// ---- add / subtract ----

const addCases: { name: string; a: ResourceSet; b: ResourceSet; want: ResourceSet }[] = [
  { name: 'disjoint names', a: { CPU: 1 }, b: { GPU: 2 }, want: { CPU: 1, GPU: 2 } },
  { name: 'shared names', a: { CPU: 10_000, GPU: 1 }, b: { CPU: 5_000 }, want: { CPU: 15_000, GPU: 1 } },
  { name: 'empty plus a set', a: {}, b: { memory: 1024 }, want: { memory: 1024 } },
];

for (const c of addCases) {
  test(`addResources: ${c.name}`, () => {
    const a = { ...c.a };
    const b = { ...c.b };
    assert.equal(addResources(a, b), c.want);
    assert.equal(a, c.a, 'a is not changed');
    assert.equal(b, c.b, 'b is not changed');
  });
}

const subtractCases: { name: string; a: ResourceSet; b: ResourceSet; want: ResourceSet }[] = [
  { name: 'part of one resource', a: { CPU: 40_000, GPU: 10_000 }, b: { CPU: 5_000 }, want: { CPU: 35_000, GPU: 10_000 } },
  { name: 'all of it leaves a zero', a: { CPU: 10_000 }, b: { CPU: 10_000 }, want: { CPU: 0 } },
  { name: 'nothing', a: { CPU: 1 }, b: {}, want: { CPU: 1 } },
];

for (const c of subtractCases) {
  test(`subtractResources: ${c.name}`, () => {
    const a = { ...c.a };
    assert.equal(subtractResources(a, c.b), c.want);
    assert.equal(a, c.a, 'a is not changed');
  });
}

const overdrawn: { name: string; a: ResourceSet; b: ResourceSet; resource: string; value: number; rule: string }[] = [
  { name: 'below zero', a: { GPU: 10_000 }, b: { GPU: 20_000 }, resource: 'GPU', value: 2, rule: 'cannot take more than the 1 held' },
  { name: 'one unit below zero', a: { CPU: 3_333 }, b: { CPU: 3_334 }, resource: 'CPU', value: 0.3334, rule: 'cannot take more than the 0.3333 held' },
  { name: 'a resource not held at all', a: { CPU: 10_000 }, b: { my_res: 5_000 }, resource: 'my_res', value: 0.5, rule: 'cannot take more than the 0 held' },
  { name: 'bytes are reported as bytes', a: { memory: 100 }, b: { memory: 101 }, resource: 'memory', value: 101, rule: 'cannot take more than the 100 held' },
  { name: 'the first short name in order', a: { CPU: 1, GPU: 1 }, b: { GPU: 2, CPU: 2 }, resource: 'CPU', value: 0.0002, rule: 'cannot take more than the 0.0001 held' },
];

for (const c of overdrawn) {
  test(`subtractResources throws: ${c.name}`, () => {
    const a = { ...c.a };
    expectResourceError(() => subtractResources(a, c.b), { resource: c.resource, value: c.value, rule: c.rule });
    assert.equal(a, c.a, 'a is not changed');
  });
}

// ---- emptiness and equality ----

const emptyCases: { name: string; input: ResourceSet; want: boolean }[] = [
  { name: 'no names', input: {}, want: true },
  { name: 'only zeros', input: { CPU: 0, GPU: 0 }, want: true },
  { name: 'one unit', input: { CPU: 0, GPU: 1 }, want: false },
];

for (const c of emptyCases) {
  test(`isEmptyResources: ${c.name}`, () => {
    assert.is(isEmptyResources(c.input), c.want);
  });
}

const equalCases: { name: string; a: ResourceSet; b: ResourceSet; want: boolean }[] = [
  { name: 'same entries', a: { CPU: 1, GPU: 2 }, b: { GPU: 2, CPU: 1 }, want: true },
  { name: 'an absent name equals zero', a: { CPU: 1, GPU: 0 }, b: { CPU: 1 }, want: true },
  { name: 'both empty', a: {}, b: {}, want: true },
  { name: 'different amounts', a: { CPU: 1 }, b: { CPU: 2 }, want: false },
  { name: 'an extra name on the right', a: { CPU: 1 }, b: { CPU: 1, GPU: 1 }, want: false },
];

for (const c of equalCases) {
  test(`resourcesEqual: ${c.name}`, () => {
    assert.is(resourcesEqual(c.a, c.b), c.want);
    assert.is(resourcesEqual(c.b, c.a), c.want, 'symmetric');
  });
}

test.run();
