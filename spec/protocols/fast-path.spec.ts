import { pack } from 'msgpackr';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomInt, seededRng } from '../../lib/random.ts';
import { decode, encode, PROTOCOL_VERSION } from '../../protocols/codec.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import { NOT_FAST, decodeCall, decodeCallOrCancel, decodeOkFast, encodeCall, encodeOkFast, isCancelCall } from '../../protocols/fast-path.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { decodeReply, encodeOk, encodeReply } from '../../protocols/reply.ts';
import { unknown } from '../../protocols/validate.ts';

// The fast paths promise the general codec's bytes and results; every case compares the two.
const CALL_ONLY = { registry: { actor_call: messages.actor_call } };
const MAX = 1024 * 1024;

const values: [string, unknown][] = [
  ['a short string', 'x'],
  ['a 100-byte string', 'x'.repeat(100)],
  ['unicode', 'zürich ☃ 東京'],
  ['null', null],
  ['zero', 0],
  ['a negative float', -1.5],
  ['a large integer', 2 ** 53 - 1],
  ['booleans', [true, false]],
  ['bytes', new Uint8Array([1, 2, 3])],
  ['a nested object', { a: 1, b: { c: ['d', { e: null }] } }],
  ['an object with an undefined field', { kept: 1, dropped: undefined }],
  ['an empty array', []],
  ['an empty object', {}],
  ['a long array', Array.from({ length: 300 }, (_, i) => i)],
];

const methods = ['echo', 'm', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(256), 'grüß', 'get_value', '$weird.name'];

for (const method of methods) {
  test(`encodeCall makes encode()'s bytes, and decodeCall reads them as decode() does: method ${JSON.stringify(method.length > 40 ? `${method.slice(0, 8)}…(${method.length})` : method)}`, () => {
    for (const [what, value] of values) {
      const args = [value, 'second'];
      const fast = encodeCall(method, args);
      const general = encode('actor_call', { method, args });
      assert.equal(Array.from(fast), Array.from(general), `${what}: bytes`);
      assert.equal(decodeCall(fast), decode(general, CALL_ONLY).body, `${what}: decoded`);
    }
  });
}

test('encodeOk makes the general bytes (fast or not) and decodeReply reads them back, for every value', () => {
  for (const [what, value] of [...values, ['undefined', undefined] as [string, unknown]]) {
    const general = encodeReply({ ok: true, value });
    assert.equal(Array.from(encodeOk(value)), Array.from(general), `${what}: bytes`);
    const generalValue = (decode(general).body as { value?: unknown }).value;
    assert.equal(decodeReply(encodeOk(value), { value: unknown() }), generalValue, `${what}: decoded`);
  }
  assert.is(encodeOkFast(undefined, MAX), undefined, 'undefined is a field left out: the general path makes it');
});

test('method names of one length, and more names than are kept, are each read as themselves', () => {
  // names the fast path keeps (recent) and names past its bound (made anew each time), read in turns
  const names = [...Array.from({ length: 100 }, (_, i) => `m${String(i).padStart(3, '0')}`), 'ping', 'pong', 'p\u00fcng'];
  for (let round = 0; round < 3; round++) {
    for (const method of names) {
      const general = encode('actor_call', { method, args: [method] });
      assert.equal(Array.from(encodeCall(method, [method])), Array.from(general), `${method}: bytes`);
      assert.equal(decodeCall(general), { method, args: [method] }, `${method}: decoded`);
    }
  }
});

test('random arguments: the fast and general call bytes agree (seeded, 500 cases)', () => {
  const rng = seededRng(7);
  const int = (n: number): number => randomInt(rng, n);
  const leaf = (): unknown => [int(1000), `s${int(1e6)}`, null, rng() < 0.5, rng() * 1e6][int(5)];
  const valueOf = (depth: number): unknown => {
    if (depth === 0 || rng() < 0.4) return leaf();
    if (rng() < 0.5) return Array.from({ length: int(6) }, () => valueOf(depth - 1));
    return Object.fromEntries(Array.from({ length: int(6) }, (_, i) => [`k${i}`, valueOf(depth - 1)]));
  };
  for (let i = 0; i < 500; i++) {
    const args = Array.from({ length: int(5) }, () => valueOf(3));
    const fast = encodeCall('method', args);
    assert.equal(Array.from(fast), Array.from(encode('actor_call', { method: 'method', args })), `case ${i}`);
    assert.equal(decodeCall(fast), { method: 'method', args }, `case ${i}: round trip`);
  }
});

/** The error `run` throws, which must be a ProtocolError. */
function errorOf(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (err) {
    assert.instance(err, ProtocolError, String(err));
    return err as ProtocolError;
  }
  throw new Error('expected it to throw');
}

test('a call the fast path cannot read fails as decode() fails: same code, same message', () => {
  const good = encodeCall('echo', ['x']);
  const cases: [string, Uint8Array][] = [
    ['truncated', good.subarray(0, good.length - 1)],
    ['trailing bytes', Uint8Array.from([...good, 0xc0])],
    ['args not an array', pack({ v: PROTOCOL_VERSION, t: 'actor_call', b: { method: 'echo', args: 'x' } })],
    ['empty method', pack({ v: PROTOCOL_VERSION, t: 'actor_call', b: { method: '', args: [] } })],
    ['wrong version', pack({ v: PROTOCOL_VERSION + 1, t: 'actor_call', b: { method: 'echo', args: [] } })],
    ['another type', encode('reply', { ok: true, value: 1 })],
    ['garbage', Uint8Array.of(0xc1, 0xff, 0x00)],
    ['empty', new Uint8Array(0)],
    ['oversized', new Uint8Array(MAX + 1)],
  ];
  for (const [what, bytes] of cases) {
    const general = errorOf(() => decode(bytes, CALL_ONLY));
    const fast = errorOf(() => decodeCall(bytes));
    assert.is(fast.code, general.code, what);
    assert.is(fast.message, general.message, what);
  }
});

test('a call laid out otherwise (keys in another order, extra fields) is read by the general path, as decode() reads it', () => {
  const reordered = pack({ t: 'actor_call', v: PROTOCOL_VERSION, b: { args: [1, 2], method: 'add' } });
  assert.equal(decodeCall(reordered), { method: 'add', args: [1, 2] });
  const extra = pack({ v: PROTOCOL_VERSION, t: 'actor_call', b: { method: 'add', args: [1], future: true } });
  assert.equal(decodeCall(extra), { method: 'add', args: [1] });
});

test('a call that can be cancelled is encode()d as is, and decodeCallOrCancel reads it, a cancel_call, or fails as decode() does', () => {
  const cancel = { callId: 'fedcba9876543210fedcba9876543210', cancelKey: '0123456789abcdef0123456789abcdef' };
  const both = { registry: { actor_call: messages.actor_call, cancel_call: messages.cancel_call } };
  for (const method of methods) {
    for (const [what, value] of values) {
      const keyed = encodeCall(method, [value], cancel);
      assert.equal(Array.from(keyed), Array.from(encode('actor_call', { method, ...cancel, args: [value] })), `${method}, ${what}: encode()'s bytes`);
      const call = decodeCallOrCancel(keyed);
      assert.not.ok(isCancelCall(call));
      assert.equal(call, decode(keyed, both).body, `${method}, ${what}: decoded as decode() does`);
    }
  }
  const keyed = encodeCall('echo', ['x'], cancel);
  assert.equal(decodeCallOrCancel(keyed), { method: 'echo', args: ['x'], ...cancel });
  // keys that are not 32 lowercase hex go the general way, and are refused where decode() refuses them
  const upper = encodeCall('echo', ['x'], { ...cancel, cancelKey: cancel.cancelKey.toUpperCase() });
  assert.equal(Array.from(upper), Array.from(encode('actor_call', { method: 'echo', ...cancel, cancelKey: cancel.cancelKey.toUpperCase(), args: ['x'] })));
  assert.is(errorOf(() => decodeCallOrCancel(upper)).code, 'INVALID_MESSAGE');
  // a layout damaged anywhere reads as decode() reads it
  for (let cut = 1; cut < keyed.length; cut += 7) {
    const truncated = keyed.subarray(0, cut);
    assert.is(errorOf(() => decodeCallOrCancel(truncated)).code, errorOf(() => decode(truncated, both)).code, `cut at ${cut}`);
  }
  for (let at = 0; at < keyed.length; at++) {
    const changed = Uint8Array.from(keyed);
    changed[at] = 0x47; // 'G': not hex, and no header byte here
    let fast: unknown;
    let general: unknown;
    try {
      fast = decodeCallOrCancel(changed);
    } catch (err) {
      fast = (err as ProtocolError).code;
    }
    try {
      general = decode(changed, both).body;
    } catch (err) {
      general = (err as ProtocolError).code;
    }
    assert.equal(fast, general, `byte ${at} changed`);
  }
  assert.equal(decodeCallOrCancel(encodeCall('echo', ['x'])), { method: 'echo', args: ['x'] }, 'a plain call, on the fast path');
  const cancelled = decodeCallOrCancel(encode('cancel_call', cancel));
  assert.ok(isCancelCall(cancelled));
  assert.equal(cancelled, cancel);
  for (const bytes of [encode('reply', { ok: true, value: 1 }), encode('cancel_call', { ...cancel, cancelKey: 'short' }), Uint8Array.of(0xc1)]) {
    const general = errorOf(() => decode(bytes, both));
    const fast = errorOf(() => decodeCallOrCancel(bytes));
    assert.is(fast.code, general.code);
    assert.is(fast.message, general.message);
  }
});

test('decodeOkFast takes only successful replies laid out as encodeOk lays them out', () => {
  assert.is(decodeOkFast(encodeOk('hi'), MAX), 'hi');
  assert.is(decodeOkFast(encodeReply({ ok: false, error: { code: 'X', message: 'no' } }), MAX), NOT_FAST, 'an error reply');
  assert.is(decodeOkFast(pack({ v: PROTOCOL_VERSION, t: 'reply', b: { value: 'hi', ok: true } }), MAX), NOT_FAST, 'another key order');
  assert.is(decodeOkFast(encodeOk('hi').subarray(0, 10), MAX), NOT_FAST, 'truncated');
  assert.is(decodeOkFast(encodeOk('x'.repeat(100)), 50), NOT_FAST, 'over the size limit');
  // and the general path still reads what the fast one passes over, with the same results
  assert.is(decodeReply(pack({ v: PROTOCOL_VERSION, t: 'reply', b: { value: 'hi', ok: true } }), { value: unknown() }), 'hi');
  assert.is(errorOf(() => decodeReply(encodeOk('x'.repeat(100)), { value: unknown(), maxBytes: 50 })).code, 'TOO_LARGE');
  assert.is(errorOf(() => decodeReply(encodeOk('hi').subarray(0, 10), { value: unknown() })).code, 'MALFORMED');
});

test('encodeOk over the size limit fails as the general path does', () => {
  const general = errorOf(() => encodeReply({ ok: true, value: 'x'.repeat(100) }, { maxBytes: 50 }));
  const fast = errorOf(() => encodeOk('x'.repeat(100), { maxBytes: 50 }));
  assert.is(fast.code, 'TOO_LARGE');
  assert.is(fast.message, general.message);
});

test('a call whose arguments msgpack cannot carry fails as encode() does', () => {
  const args = [Symbol('not msgpack')];
  const general = errorOf(() => encode('actor_call', { method: 'f', args }));
  const fast = errorOf(() => encodeCall('f', args));
  assert.is(fast.code, general.code);
  assert.is(fast.message, general.message);
});

test.run();
