import { pack, unpack } from 'msgpackr';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { seededRng } from '../../lib/random.ts';
import { decode, DEFAULT_MAX_BYTES, encode, PROTOCOL_VERSION } from '../../protocols/codec.ts';
import { ProtocolError, type ProtocolErrorCode } from '../../protocols/errors.ts';
import type { RegisterNode } from '../../protocols/messages/node.ts';
import { num, object } from '../../protocols/validate.ts';

const node: RegisterNode = {
  nodeId: 'n1',
  name: 'worker-1',
  labels: { 'orrery.io/zone': 'us-east-1a', gpu: 'a100' },
  taints: { dedicated: 'ml:NoSchedule' },
  resources: { total: { CPU: 80_000, memory: 2 ** 40 }, available: { CPU: 40_000, memory: 2 ** 39 } },
  address: { ip: '10.0.0.7', hostname: 'w1', pid: 4242 },
};

function decodeError(bytes: Uint8Array, opts: Parameters<typeof decode>[1] = {}): ProtocolError {
  try {
    decode(bytes, opts);
  } catch (err) {
    assert.instance(err, ProtocolError, `threw ${String(err)}`);
    return err as ProtocolError;
  }
  throw new Error('expected decode to fail');
}

/** Forges an envelope by hand, bypassing encode(). */
const forged = (fields: unknown): Uint8Array => pack(fields);
const good = encode('register_node', node);

test('a valid message round-trips, in the documented envelope of plain msgpack', () => {
  assert.equal(decode(good), { type: 'register_node', body: node });
  assert.equal(unpack(good), { v: PROTOCOL_VERSION, t: 'register_node', b: node });
  assert.is(good[0], 0x83, 'a fixmap of three entries, not a msgpackr record');
});

test('undefined fields are left out rather than sent as msgpack extensions', () => {
  const bytes = encode('heartbeat', { nodeId: 'n1', seq: 3, available: {}, extra: undefined } as never);
  assert.equal(unpack(bytes), { v: PROTOCOL_VERSION, t: 'heartbeat', b: { nodeId: 'n1', seq: 3, available: {} } });
});

const bad: { name: string; bytes: Uint8Array; code: ProtocolErrorCode; detail?: Record<string, unknown> }[] = [
  { name: 'text that is not msgpack', bytes: new TextEncoder().encode('{"v":1}'), code: 'MALFORMED' },
  { name: 'a reserved msgpack byte', bytes: new Uint8Array([0xc1]), code: 'MALFORMED' },
  { name: 'empty bytes', bytes: new Uint8Array(0), code: 'MALFORMED', detail: { reason: 'truncated', size: 0 } },
  { name: 'a truncated message', bytes: good.subarray(0, good.length - 5), code: 'MALFORMED', detail: { reason: 'truncated', size: good.length - 5 } },
  { name: 'a map claiming 2^32 entries', bytes: new Uint8Array([0xdf, 0xff, 0xff, 0xff, 0xff]), code: 'MALFORMED' },
  { name: 'trailing bytes after the message', bytes: new Uint8Array([...good, 0x01]), code: 'MALFORMED' },
  { name: 'an unknown msgpack extension', bytes: new Uint8Array([0xd4, 0x05, 0x00]), code: 'MALFORMED' },
  { name: 'an array instead of a map', bytes: forged([1, 'register_node', node]), code: 'MALFORMED', detail: { reason: 'not_a_map' } },
  { name: 'a bare string', bytes: forged('register_node'), code: 'MALFORMED', detail: { reason: 'not_a_map' } },
  { name: 'no version', bytes: forged({ t: 'register_node', b: node }), code: 'VERSION_MISMATCH', detail: { received: null, expected: PROTOCOL_VERSION } },
  { name: 'another version', bytes: forged({ v: PROTOCOL_VERSION + 1, t: 'register_node', b: node }), code: 'VERSION_MISMATCH', detail: { received: PROTOCOL_VERSION + 1, expected: PROTOCOL_VERSION } },
  { name: 'a version as a string', bytes: forged({ v: '1', t: 'register_node', b: node }), code: 'VERSION_MISMATCH' },
  // a u64 decodes as a bigint: once a TypeError from describing it, and a stack trace logged per message
  { name: 'a u64 version', bytes: forged({ v: 18446744073709551615n, t: 'register_node', b: node }), code: 'VERSION_MISMATCH' },
  { name: 'no type', bytes: forged({ v: PROTOCOL_VERSION, b: node }), code: 'MALFORMED', detail: { reason: 'no_type' } },
  { name: 'an unknown type', bytes: forged({ v: PROTOCOL_VERSION, t: 'launch_rockets', b: {} }), code: 'UNKNOWN_TYPE', detail: { type: 'launch_rockets' } },
  { name: 'an inherited property as type', bytes: forged({ v: PROTOCOL_VERSION, t: 'toString', b: {} }), code: 'UNKNOWN_TYPE' },
  { name: 'a missing body', bytes: forged({ v: PROTOCOL_VERSION, t: 'heartbeat' }), code: 'INVALID_MESSAGE' },
];

for (const c of bad) {
  test(`decode refuses ${c.name} with ${c.code}`, () => {
    const err = decodeError(c.bytes);
    assert.is(err.code, c.code);
    if (c.detail) assert.equal(err.detail, c.detail);
  });
}

const invalid: { name: string; body: unknown; message: string }[] = [
  { name: 'a missing field', body: { ...node, nodeId: undefined }, message: 'invalid register_node: nodeId: expected a string' },
  { name: 'an ill-typed nested field', body: { ...node, address: { ...node.address, pid: '42' } }, message: 'invalid register_node: address.pid: expected a number' },
  {
    name: 'a fractional resource unit',
    body: { ...node, resources: { ...node.resources, total: { CPU: 0.5 } } },
    message: 'invalid register_node: resources.total.CPU: expected an integer',
  },
  { name: 'a label of the wrong type', body: { ...node, labels: { 'orrery.io/zone': 7 } }, message: 'invalid register_node: labels["orrery.io/zone"]: expected a string' },
  { name: 'a constructor label', body: { ...node, labels: { constructor: 'x' } }, message: 'invalid register_node: labels.constructor: forbidden key' },
  { name: 'a 64-bit integer beyond 2^53', body: { ...node, address: { ...node.address, pid: 2n ** 60n } }, message: 'invalid register_node: address.pid: expected a number' },
];

for (const c of invalid) {
  test(`decode refuses ${c.name} with INVALID_MESSAGE and the field path`, () => {
    const err = decodeError(forged({ v: PROTOCOL_VERSION, t: 'register_node', b: c.body }));
    assert.is(err.code, 'INVALID_MESSAGE');
    assert.is(err.message, c.message);
    assert.is(err.detail.type, 'register_node');
  });
}

test('a __proto__ key never reaches a prototype and is refused', () => {
  const raw = forged({ v: PROTOCOL_VERSION, t: 'register_node', b: { ...node, labels: JSON.parse('{"__proto__":{"polluted":"yes"}}') } });
  const err = decodeError(raw);
  assert.is(err.code, 'INVALID_MESSAGE');
  assert.match(err.message, /labels\.__proto_: /);
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

test('size is checked before unpacking, with a configurable limit', () => {
  const garbage = new Uint8Array(DEFAULT_MAX_BYTES + 1).fill(0xc1);
  const err = decodeError(garbage);
  assert.is(err.code, 'TOO_LARGE');
  assert.equal(err.detail, { size: DEFAULT_MAX_BYTES + 1, maxBytes: DEFAULT_MAX_BYTES });
  assert.is(decodeError(good, { maxBytes: 16 }).code, 'TOO_LARGE');
  assert.equal(decode(good, { maxBytes: good.length }).type, 'register_node');
});

test('encode refuses what it cannot send', () => {
  const big = { nodeId: 'n', seq: 1, available: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`r${i}`, i])) };
  const tooLarge = (() => {
    try {
      encode('heartbeat', big, { maxBytes: 512 });
    } catch (err) {
      return err as ProtocolError;
    }
  })();
  assert.is(tooLarge?.code, 'TOO_LARGE');
  const unencodable = (() => {
    try {
      encode('heartbeat', { nodeId: Symbol('n') } as never);
    } catch (err) {
      return err as ProtocolError;
    }
  })();
  assert.instance(unencodable, ProtocolError);
  assert.is(unencodable?.code, 'INVALID_MESSAGE');
});

test('a custom registry narrows what is accepted', () => {
  const registry = { ping: object({ n: num({ int: true }) }) };
  const decoded = decode(encode('ping', { n: 3 }), { registry });
  assert.equal(decoded, { type: 'ping', body: { n: 3 } });
  assert.is(decodeError(good, { registry }).code, 'UNKNOWN_TYPE');
});

test('random and mutated bytes only ever raise ProtocolError', () => {
  const rng = seededRng(7);
  for (let i = 0; i < 2000; i++) {
    const bytes = i % 2 === 0 ? new Uint8Array(Math.floor(rng() * 64)).map(() => Math.floor(rng() * 256)) : good.slice();
    if (i % 2 === 1) for (let k = 0; k < 3; k++) bytes[Math.floor(rng() * bytes.length)] = Math.floor(rng() * 256);
    try {
      decode(bytes);
    } catch (err) {
      assert.instance(err, ProtocolError, `bytes ${[...bytes].join(',')} threw ${String(err)}`);
    }
  }
});

test.run();
