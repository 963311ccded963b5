import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BusMsg } from '../../../runtime/bus/bus.ts';
import { MemoryBroker, MemoryBus } from '../../../runtime/bus/memory.ts';
import { runBusConformance } from './conformance.ts';

const broker = new MemoryBroker();
runBusConformance('memory', { connect: async () => new MemoryBus(broker) });

const bytes = (...values: number[]) => new Uint8Array(values);

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}

test('delivery happens after publish() returns, never inside it', async () => {
  const bus = new MemoryBus();
  const seen: number[] = [];
  bus.subscribe('a', (m) => seen.push(m.data[0]));
  bus.publish('a', bytes(1));
  assert.equal(seen, []);
  await bus.flush();
  assert.equal(seen, [1]);
  await bus.close();
});

test('close() hands messages still queued for this connection to their handlers', async () => {
  const bus = new MemoryBus();
  const seen: number[] = [];
  const sub = bus.subscribe('q', (m) => seen.push(m.data[0]));
  for (let i = 0; i < 5; i++) bus.publish('q', bytes(i));
  assert.equal(seen, []);
  await bus.close();
  assert.equal(seen, [0, 1, 2, 3, 4]);
  await sub.closed;
});

test('a payload is copied at publish, so reusing the sender buffer changes nothing in flight', async () => {
  const bus = new MemoryBus();
  const got: BusMsg[] = [];
  bus.subscribe('copy', (m) => got.push(m));
  const buffer = bytes(1, 2, 3);
  bus.publish('copy', buffer);
  buffer[0] = 9;
  await bus.flush();
  assert.equal([...got[0].data], [1, 2, 3]);
  await bus.close();
});

test('a throwing or rejecting handler is reported and the subscription keeps going', async () => {
  const errors: unknown[] = [];
  const bus = new MemoryBus(new MemoryBroker(), { onHandlerError: (err) => errors.push(err) });
  const seen: number[] = [];
  bus.subscribe('boom', (m) => {
    seen.push(m.data[0]);
    if (m.data[0] === 0) throw new Error('sync');
    if (m.data[0] === 1) return Promise.reject(new Error('async'));
  });
  for (let i = 0; i < 3; i++) bus.publish('boom', bytes(i));
  await bus.flush();
  await bus.flush();
  assert.equal(seen, [0, 1, 2]);
  assert.equal(errors.map((e) => (e as Error).message), ['sync', 'async']);
  await bus.close();
});

test('connections of one broker talk; separate brokers do not', async () => {
  const shared = new MemoryBroker();
  const [a, b, stranger] = [new MemoryBus(shared), new MemoryBus(shared), new MemoryBus()];
  const seen: string[] = [];
  b.subscribe('x', () => seen.push('b'));
  stranger.subscribe('x', () => seen.push('stranger'));
  a.publish('x', bytes());
  await a.flush();
  assert.equal(seen, ['b']);
  await Promise.all([a.close(), b.close(), stranger.close()]);
});

test('invalid subjects and queue names are refused with INVALID_SUBJECT', async () => {
  const bus = new MemoryBus();
  const noop = () => {};
  assert.is(codeOf(() => bus.publish('', bytes())), 'INVALID_SUBJECT');
  assert.is(codeOf(() => bus.publish('a..b', bytes())), 'INVALID_SUBJECT');
  assert.is(codeOf(() => bus.publish('a.*', bytes())), 'INVALID_SUBJECT');
  assert.is(codeOf(() => bus.publish('a b', bytes())), 'INVALID_SUBJECT');
  assert.is(codeOf(() => bus.subscribe('a.>.b', noop)), 'INVALID_SUBJECT');
  assert.is(codeOf(() => bus.subscribe('a.', noop)), 'INVALID_SUBJECT');
  assert.is(codeOf(() => bus.subscribe('a', noop, { queue: 'two words' })), 'INVALID_SUBJECT');
  assert.is(codeOf(() => bus.subscribe('a*.b', noop)), undefined, "'a*' is a literal token");
  assert.is(codeOf(() => bus.publish('.a', bytes())), 'INVALID_SUBJECT', 'an empty first token');
  assert.is(codeOf(() => bus.publish('a.>', bytes())), 'INVALID_SUBJECT', "a publish cannot end in '>'");
  assert.is(codeOf(() => bus.subscribe('>.a', noop)), 'INVALID_SUBJECT', "'>' first but not last");
  assert.is(codeOf(() => bus.subscribe('*.a.>', noop)), undefined, "'*' anywhere and '>' last subscribe fine");
  assert.is(codeOf(() => bus.publish('a.b>.c*', bytes())), undefined, "'b>' and 'c*' are literal tokens");
  await bus.close();
});

test('after close() nothing new is accepted, and a pending request fails with BUS_CLOSED', async () => {
  const shared = new MemoryBroker();
  const [client, server] = [new MemoryBus(shared), new MemoryBus(shared)];
  server.subscribe('slow', () => {});
  const pending = client.request('slow', bytes(), { timeoutMs: 60_000 });
  const closing = client.close();
  const requestErr = await pending.then(() => undefined, (err) => err);
  await closing;
  assert.is(requestErr.code, 'BUS_CLOSED');
  assert.is(codeOf(() => client.subscribe('x', () => {})), 'BUS_CLOSED');
  const late = await client.request('slow', bytes(), { timeoutMs: 10 }).then(() => undefined, (err) => err);
  assert.is(late.code, 'BUS_CLOSED');
  await server.close();
});

test('ten thousand raylet subscriptions: one publish reaches exactly its raylet', async () => {
  const shared = new MemoryBroker();
  const bus = new MemoryBus(shared);
  const hits = new Map<number, number>();
  for (let i = 0; i < 10_000; i++) bus.subscribe(`orrery.c.raylet.n${i}.*`, () => hits.set(i, (hits.get(i) ?? 0) + 1));
  bus.subscribe('orrery.c.>', () => hits.set(-1, (hits.get(-1) ?? 0) + 1));
  assert.is(shared.subscriptions, 10_001);
  bus.publish('orrery.c.raylet.n4242.lease', bytes());
  bus.publish('orrery.c.raylet.n4242', bytes());
  await bus.flush();
  assert.equal([...hits.entries()].sort(), [[-1, 2], [4242, 1]]);
  await bus.close();
  assert.is(shared.subscriptions, 0);
});

test.run();
