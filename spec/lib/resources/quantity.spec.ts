import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidResourceError, OrreryError } from '../../../lib/errors.ts';
import { seededRng } from '../../../lib/random.ts';
import { MAX_UNITS, UNITS_PER_WHOLE, fromUnits, toUnits, unitScale } from '../../../lib/resources/quantity.ts';

/** Runs fn, which must throw an InvalidResourceError naming this resource, value and rule. */
function expectResourceError(fn: () => unknown, want: { resource: string; value: unknown; rule: string }): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, InvalidResourceError);
    assert.instance(err, OrreryError);
    const e = err as InvalidResourceError;
    assert.is(e.code, 'INVALID_RESOURCE');
    assert.equal({ resource: e.resource, value: e.value, rule: e.rule }, want);
    assert.equal(e.detail, want);
    return;
  }
  assert.unreachable('expected an InvalidResourceError');
}

const FINITE = 'quantity must be a finite number';
const NEGATIVE = 'quantity must not be negative';
const WHOLE = 'quantity is a count of bytes and must be a whole number';
const SMALLEST = 'quantity must be 0 or at least 0.0001';

test('unit scales: 4 decimals for most resources, whole bytes for memory', () => {
  assert.is(UNITS_PER_WHOLE, 10_000);
  assert.is(MAX_UNITS, Number.MAX_SAFE_INTEGER);
  const cases: { name: string; input: string; want: number }[] = [
    { name: 'CPU', input: 'CPU', want: 10_000 },
    { name: 'GPU', input: 'GPU', want: 10_000 },
    { name: 'a custom resource', input: 'my_res', want: 10_000 },
    { name: 'memory', input: 'memory', want: 1 },
    { name: 'object_store_memory', input: 'object_store_memory', want: 1 },
    { name: 'a name that only starts like memory', input: 'memory_fast', want: 10_000 },
    // Placement-group bundles turn each reserved resource into <name>_group_<pg> and
    // <name>_group_<i>_<pg> with the same units (lib/scheduling/bundle-resources.ts).
    { name: "a bundle's memory (any bundle)", input: 'memory_group_pg1', want: 1 },
    { name: "a bundle's memory (bundle 2)", input: 'memory_group_2_pg1', want: 1 },
    { name: "a bundle's object store memory", input: 'object_store_memory_group_0_pg-7', want: 1 },
    { name: "a bundle's CPU", input: 'CPU_group_0_pg1', want: 10_000 },
  ];
  for (const c of cases) assert.is(unitScale(c.input), c.want, c.name);
});

const toUnitCases: { name: string; resource: string; input: number; want: number }[] = [
  { name: 'one CPU', resource: 'CPU', input: 1, want: 10_000 },
  { name: 'zero', resource: 'CPU', input: 0, want: 0 },
  { name: 'half a GPU', resource: 'GPU', input: 0.5, want: 5_000 },
  { name: 'a tenth', resource: 'CPU', input: 0.1, want: 1_000 },
  { name: 'the smallest step', resource: 'CPU', input: 0.0001, want: 1 },
  { name: 'a third, rounded to 4 decimals', resource: 'CPU', input: 1 / 3, want: 3_333 },
  { name: 'two thirds, rounded to 4 decimals', resource: 'CPU', input: 2 / 3, want: 6_667 },
  { name: 'a fifth decimal rounds', resource: 'my_res', input: 1.23456, want: 12_346 },
  { name: 'a float product that is not exact (0.7 × 10⁴ = 7000.000000000001)', resource: 'CPU', input: 0.7, want: 7_000 },
  { name: 'a large custom count', resource: 'slots', input: 9e11, want: 9e15 },
  { name: 'memory counts bytes', resource: 'memory', input: 1024, want: 1024 },
  { name: 'memory of 2 TiB is exact', resource: 'memory', input: 2 ** 41, want: 2 ** 41 },
  { name: 'object store bytes', resource: 'object_store_memory', input: 1e9, want: 1e9 },
  { name: 'memory up to 2^53 - 1 bytes', resource: 'memory', input: Number.MAX_SAFE_INTEGER, want: Number.MAX_SAFE_INTEGER },
];

for (const c of toUnitCases) {
  test(`toUnits: ${c.name}`, () => {
    assert.is(toUnits(c.resource, c.input), c.want);
  });
}

const badQuantities: { name: string; resource: string; input: unknown; rule: string }[] = [
  { name: 'negative', resource: 'CPU', input: -1, rule: NEGATIVE },
  { name: 'negative smallest step', resource: 'GPU', input: -0.0001, rule: NEGATIVE },
  { name: 'negative bytes', resource: 'memory', input: -1024, rule: NEGATIVE },
  { name: 'NaN', resource: 'CPU', input: NaN, rule: FINITE },
  { name: 'Infinity', resource: 'CPU', input: Infinity, rule: FINITE },
  { name: '-Infinity', resource: 'memory', input: -Infinity, rule: FINITE },
  { name: 'a numeric string', resource: 'CPU', input: '1', rule: FINITE },
  { name: 'null', resource: 'CPU', input: null, rule: FINITE },
  { name: 'undefined', resource: 'CPU', input: undefined, rule: FINITE },
  { name: 'a boolean', resource: 'GPU', input: true, rule: FINITE },
  { name: 'a bigint', resource: 'GPU', input: 1n, rule: FINITE },
  { name: 'an object', resource: 'my_res', input: { n: 1 }, rule: FINITE },
  { name: 'fractional bytes of memory', resource: 'memory', input: 1.5, rule: WHOLE },
  { name: 'half a byte', resource: 'memory', input: 0.5, rule: WHOLE },
  { name: 'fractional object store bytes', resource: 'object_store_memory', input: 10.25, rule: WHOLE },
  { name: 'more CPU than units can count', resource: 'CPU', input: 1e12, rule: `quantity must be at most ${MAX_UNITS / UNITS_PER_WHOLE}` },
  { name: 'more bytes than a double counts exactly', resource: 'memory', input: 2 ** 53, rule: `quantity must be at most ${MAX_UNITS}` },
  { name: 'a positive amount below the smallest step', resource: 'CPU', input: 0.00001, rule: SMALLEST },
  { name: 'a positive GPU amount that would round to nothing', resource: 'GPU', input: 0.00004, rule: SMALLEST },
];

for (const c of badQuantities) {
  test(`toUnits rejects: ${c.name}`, () => {
    expectResourceError(() => toUnits(c.resource, c.input), { resource: c.resource, value: c.input, rule: c.rule });
  });
}

const fromUnitCases: { name: string; resource: string; input: number; want: number }[] = [
  { name: 'one CPU', resource: 'CPU', input: 10_000, want: 1 },
  { name: 'the smallest step', resource: 'CPU', input: 1, want: 0.0001 },
  { name: 'a third as stored', resource: 'CPU', input: 3_333, want: 0.3333 },
  { name: 'two and a half of a custom resource', resource: 'my_res', input: 25_000, want: 2.5 },
  { name: 'zero', resource: 'GPU', input: 0, want: 0 },
  { name: 'bytes stay bytes', resource: 'memory', input: 1024, want: 1024 },
  { name: 'object store bytes', resource: 'object_store_memory', input: 7, want: 7 },
  { name: "a bundle's memory stays in bytes", resource: 'memory_group_0_pg1', input: 2 ** 30, want: 2 ** 30 },
  { name: "a bundle's GPU in fourths of a unit", resource: 'GPU_group_pg1', input: 2_500, want: 0.25 },
];

for (const c of fromUnitCases) {
  test(`fromUnits: ${c.name}`, () => {
    assert.is(fromUnits(c.resource, c.input), c.want);
  });
}

test('fromUnits(toUnits(x)) is x for every amount with at most 4 decimals (10,000 seeded samples)', () => {
  const rng = seededRng(42);
  for (let i = 0; i < 10_000; i++) {
    const units = Math.floor(rng() * 1e12);
    const amount = units / UNITS_PER_WHOLE;
    assert.is(toUnits('CPU', amount), units, `amount ${amount}`);
    assert.is(fromUnits('CPU', toUnits('CPU', amount)), amount, `amount ${amount}`);
  }
});

test('toUnits returns whole numbers of units for fractional amounts', () => {
  for (const amount of [0.1, 0.2, 0.3, 0.7, 1.1, 2.675, 1 / 3, 1 / 7, Math.PI]) {
    const units = toUnits('CPU', amount);
    assert.ok(Number.isInteger(units), `${amount} → ${units}`);
    assert.ok(Math.abs(units / UNITS_PER_WHOLE - amount) <= 0.00005 + 1e-12, `${amount} → ${units}`);
  }
});

test.run();
