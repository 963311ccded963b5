// What task arguments and results may hold: what msgpack carries without losing anything.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { plainDataProblem } from '../../../protocols/plain-data.ts';

const cyclic = (): object => {
  const o: Record<string, unknown> = { a: 1 };
  o.self = { back: o };
  return o;
};
const shared = { x: 1 };
let deep: unknown = 'leaf';
for (let i = 0; i < 600; i++) deep = [deep];

const ok: [string, unknown][] = [
  ['null', null], ['undefined', undefined], ['boolean', true], ['number', 1.5], ['NaN', NaN], ['string', 'x'], ['bigint', 10n], ['the largest u64', 2n ** 64n - 1n], ['the smallest i64', -(2n ** 63n)],
  ['Uint8Array', new Uint8Array([1])], ['Buffer', Buffer.from('x')], ['Date', new Date()], ['nested', { a: [1, { b: 'c' }], d: null }],
  ['object without prototype', Object.assign(Object.create(null) as object, { a: 1 })], ['the same object twice', [shared, shared]],
];
for (const [name, value] of ok) test(`sends ${name}`, () => assert.is(plainDataProblem(value), undefined));

const refused: [string, unknown, string, RegExp][] = [
  ['a function', () => 1, '', /a function cannot be sent/],
  ['a named function deep inside', { a: [1, { cb: function onDone() {} }] }, 'a[1].cb', /a function \(onDone\)/],
  ['a symbol', Symbol('s'), '', /a symbol/],
  ['a Map', new Map(), '', /a Map cannot be sent/],
  ['a Set', { s: new Set() }, 's', /a Set/],
  ['an Error', [new Error('x')], '[0]', /an Error/],
  ['a class instance', new (class Point { x = 1 })(), '', /an instance of Point/],
  ['a Float64Array', new Float64Array(2), '', /a Float64Array \(only Uint8Array/],
  ['a cycle', cyclic(), 'self.back', /a cycle/],
  ['a bigint beyond 64 bits', { id: 2n ** 64n }, 'id', /a bigint beyond 64 bits/],
  ['a negative bigint beyond 64 bits', -(2n ** 63n) - 1n, '', /a bigint beyond 64 bits/],
  ['nesting past 512 levels', deep, '', /nested deeper than 512/],
];
for (const [name, value, path, problem] of refused) {
  test(`refuses ${name}`, () => {
    const found = plainDataProblem(value);
    assert.ok(found, 'refused');
    if (path) assert.is(found!.path, path);
    assert.match(found!.problem, problem);
  });
}

test.run();
