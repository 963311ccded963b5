import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { seededRng, type Rng } from '../../lib/random.ts';
import { packAfter, unpackFrom } from '../../protocols/codec.ts';
import { NOT_SMALL, packSmallAfter, readSmallFrom } from '../../protocols/small-values.ts';

// small-values.ts packs and reads without msgpackr what most calls carry; it promises msgpackr's
// bytes (with codec.ts's options) and msgpackr's results, or to leave the value alone. Every case
// compares it with codec.ts's packAfter / unpackFrom, which are msgpackr.
const HEAD = Uint8Array.of(0x83, 0xa1, 0x76, 0x05);
const MAX = 1024 * 1024;
const show = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)).slice(0, 30);
const hex = (b: Uint8Array | undefined) => (b === undefined ? 'undefined' : Buffer.from(b).toString('hex'));

const NUMBERS = [0, -0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, 0.5, -1.5, 1e300, 2 ** 53 - 1, -(2 ** 53), Number.MAX_VALUE, Number.MIN_VALUE, Infinity, -Infinity, NaN];
const KEYS = ['a', 'b', 'id', 'value', 'x'.repeat(40), '0', '7', '10', 'nested', 'k'];
const STRINGS = ['', 'x', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(100), 'x'.repeat(255), 'x'.repeat(256), 'y'.repeat(65535), '\u0000\u007f~ !'];

function randomValue(rng: Rng, depth: number): unknown {
  const pick = Math.floor(rng() * (depth < 4 ? 8 : 5));
  switch (pick) {
    case 0:
      return NUMBERS[Math.floor(rng() * NUMBERS.length)];
    case 1:
      return Math.floor((rng() - 0.5) * 2 ** Math.floor(rng() * 40));
    case 2:
      return String.fromCharCode(...Array.from({ length: Math.floor(rng() ** 3 * 300) }, () => 32 + Math.floor(rng() * 95)));
    case 3:
      return rng() < 0.5;
    case 4:
      return null;
    case 5:
    case 6:
      return Array.from({ length: Math.floor(rng() * 16) }, () => randomValue(rng, depth + 1));
    default: {
      const record: Record<string, unknown> = {};
      for (let n = Math.floor(rng() * 17); n > 0; n--) record[KEYS[Math.floor(rng() * KEYS.length)]!] = rng() < 0.1 ? undefined : randomValue(rng, depth + 1);
      return record;
    }
  }
}

test('packs what msgpackr packs, byte for byte, and reads it back as msgpackr does: boundaries of every header', () => {
  for (const value of [...NUMBERS, ...STRINGS, true, false, null, [], [1, 'a', [null, [true]]], Array.from({ length: 15 }, (_, i) => i), {}, { a: 1, b: 'two', c: [3] }, { b: 1, a: 2, 10: 'x', 2: 'y' }, { kept: 1, dropped: undefined }, Object.assign(Object.create(null), { bare: true }), { x: { y: { z: null } } }]) {
    const small = packSmallAfter(HEAD, value, MAX);
    const general = packAfter(HEAD, value, MAX);
    assert.ok(small !== undefined, `taken: ${show(value)}`);
    assert.is(hex(small), hex(general), `bytes of ${typeof value} ${show(value)}`);
    const read = readSmallFrom(general!, HEAD.length);
    assert.ok(Object.is(read, unpackFrom(general!, HEAD.length)) || (typeof read === 'object' && read !== null), `read back ${show(value)}`);
    assert.equal(read, unpackFrom(general!, HEAD.length));
  }
});

test('a random corpus of 5,000 values: the same bytes and the same values as msgpackr', () => {
  const rng = seededRng(18);
  for (let i = 0; i < 5000; i++) {
    const value = randomValue(rng, 0);
    const general = packAfter(HEAD, value, MAX)!;
    const small = packSmallAfter(HEAD, value, MAX);
    if (small !== undefined) assert.is(hex(small), hex(general), `value ${i}`);
    const read = readSmallFrom(general, HEAD.length);
    if (read !== NOT_SMALL) assert.equal(read, unpackFrom(general, HEAD.length), `value ${i}`);
    if (small !== undefined) assert.ok(read !== NOT_SMALL, `value ${i}: what it packs, it reads`);
  }
});

test('leaves alone what it does not know, for msgpackr to carry whole', () => {
  // long strings are checked by a faster path than short ones: non-ASCII text at both lengths, at either end
  const longNonAscii = ['x'.repeat(40) + 'ü', 'ü' + 'x'.repeat(40), 'x'.repeat(30) + '\ud800' + 'x'.repeat(5), '\u00ff'.repeat(20), 'x'.repeat(20) + '☃'];
  const others: unknown[] = ['zürich', '☃', ...longNonAscii, 'x'.repeat(65536), { 'schlüssel': 1 }, [{ a: 1n }], JSON.parse('{"__proto__": 1}'), Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, i])), new Map(), new Uint8Array([1]), [undefined], undefined, 10n, Array.from({ length: 16 }, () => 0), [[[[['deep']]]]], new Date(0), new (class Sub extends Array {})()];
  for (const value of others) {
    assert.is(packSmallAfter(HEAD, value, MAX), undefined, `not taken: ${Object.prototype.toString.call(value)}`);
  }
  // and reading: maps, bin, ext, str32, float32, 64-bit integers, arrays past 15, non-ASCII text
  for (const value of ['zürich', ...longNonAscii, { ü: 1 }, JSON.parse('{"__proto__": 1}'), Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, i])), new Uint8Array([1]), Array.from({ length: 16 }, () => 0), 2n ** 40n]) {
    const bytes = packAfter(HEAD, value, MAX)!;
    assert.is(readSmallFrom(bytes, HEAD.length), NOT_SMALL, `not read: ${Object.prototype.toString.call(value)}`);
  }
});

test('each packed message keeps its own bytes, however many are packed after it', () => {
  const values = Array.from({ length: 3_000 }, (_, i) => [i, 'v'.repeat(i % 90), { n: i }]);
  const packed = values.map((v) => packSmallAfter(HEAD, v, MAX)!);
  values.forEach((v, i) => assert.is(hex(packed[i]!), hex(packAfter(HEAD, v, MAX)!), `message ${i}`));
});

test('over the size limit it packs nothing; truncated or trailing bytes are not read', () => {
  assert.is(packSmallAfter(HEAD, 'x'.repeat(100), HEAD.length + 101), undefined);
  assert.ok(packSmallAfter(HEAD, 'x'.repeat(100), HEAD.length + 102) !== undefined);
  const whole = packAfter(HEAD, ['abc', 300, -5000, 1.5], MAX)!;
  for (let cut = HEAD.length; cut < whole.length; cut++) assert.is(readSmallFrom(whole.subarray(0, cut), HEAD.length), NOT_SMALL, `cut at ${cut}`);
  assert.is(readSmallFrom(Uint8Array.from([...whole, 0x01]), HEAD.length), NOT_SMALL, 'a trailing byte');
  assert.equal(readSmallFrom(whole, HEAD.length), ['abc', 300, -5000, 1.5]);
});

test.run();
