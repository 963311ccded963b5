// The GCS's fenced bus (runtime/gcs/fenced-bus.ts) on the memory transport, under a lease the spec
// turns valid and not: while it is not, nothing goes out and nothing is handled; what came meanwhile
// is handled, in the order it came, if the lease is valid again soon enough, and never otherwise.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Bus, BusMsg, BusStatus } from '../../../runtime/bus/bus.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { fencedBus, type Validity } from '../../../runtime/gcs/fenced-bus.ts';
import { until } from '../../helpers/until.ts';

/** A lease the spec sets; like leader.ts it reports changes (not every expiry by the clock: `silently`). */
function lease(): Validity & { set(valid: boolean, opts?: { silently?: boolean }): void } {
  let valid = true;
  const listeners = new Set<(valid: boolean) => void>();
  return {
    valid: () => valid,
    onValidityChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(next, opts = {}) {
      valid = next;
      if (!opts.silently) for (const l of listeners) l(next);
    },
  };
}

const text = (msg: BusMsg): string => new TextDecoder().decode(msg.data);
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

function setUp(holdMs?: number) {
  const broker = new MemoryBroker();
  const peer = connectMemoryBus(broker);
  const l = lease();
  const gcs = fencedBus(connectMemoryBus(broker), l, holdMs === undefined ? {} : { holdMs });
  const handled: string[] = [];
  gcs.subscribe('gcs.verb', (msg) => {
    handled.push(text(msg));
    msg.respond(bytes(`re:${text(msg)}`));
  });
  return { peer, lease: l, gcs, handled };
}

test('requests that come while the lease is lapsed are answered once it is valid again, in the order they came, before later ones', async () => {
  const { peer, lease: l, handled } = setUp();
  l.set(false);
  const answers = ['a', 'b'].map((m) => peer.request('gcs.verb', bytes(m), { timeoutMs: 5_000 }));
  await new Promise((resolve) => setImmediate(resolve)); // the memory broker has delivered them
  assert.equal(handled, [], 'nothing handled while lapsed');
  l.set(true, { silently: true }); // valid again by the clock, before any change is reported
  const later = peer.request('gcs.verb', bytes('c'), { timeoutMs: 5_000 });
  assert.equal((await Promise.all([...answers, later])).map(text), ['re:a', 're:b', 're:c']);
  assert.equal(handled, ['a', 'b', 'c']);
});

test('held requests are handled when the renewal is reported, with nothing else coming', async () => {
  const { peer, lease: l, handled } = setUp();
  l.set(false);
  const answer = peer.request('gcs.verb', bytes('x'), { timeoutMs: 5_000 });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(handled, []);
  l.set(true);
  assert.is(text(await answer), 're:x');
});

test('a lease that does not come back within the hold drops what came: never handled, never answered', async () => {
  const { peer, lease: l, handled } = setUp(100);
  l.set(false);
  const answer = peer.request('gcs.verb', bytes('late'), { timeoutMs: 400 }).catch((err: unknown) => err);
  const failed = await answer;
  assert.is((failed as { code?: string }).code, 'TIMEOUT');
  l.set(true);
  const fresh = await peer.request('gcs.verb', bytes('fresh'), { timeoutMs: 5_000 });
  assert.is(text(fresh), 're:fresh');
  assert.equal(handled, ['fresh'], 'the held request went when its hold ran out');
});

test('an answer is dropped when the lease lapsed while the handler worked; nothing is published while lapsed', async () => {
  const broker = new MemoryBroker();
  const peer = connectMemoryBus(broker);
  const l = lease();
  const gcs = fencedBus(connectMemoryBus(broker), l);
  const seen: string[] = [];
  peer.subscribe('events.x', (msg) => void seen.push(text(msg)));
  gcs.subscribe('gcs.slow', (msg) => {
    l.set(false);
    msg.respond(bytes('too late'));
  });
  const answer = await peer.request('gcs.slow', bytes('q'), { timeoutMs: 200 }).catch((err: unknown) => err);
  assert.is((answer as { code?: string }).code, 'TIMEOUT');
  gcs.publish('events.x', bytes('dropped'));
  l.set(true);
  gcs.publish('events.x', bytes('sent'));
  await until('the event', () => (seen.length > 0 ? true : undefined));
  assert.equal(seen, ['sent']);
});

test("onStatus says what went silent — the lease ('lease') or the connection ('connection') — and coming back says it again", () => {
  const broker = new MemoryBroker();
  const inner = connectMemoryBus(broker);
  const connection = new Set<(status: BusStatus) => void>();
  // the memory bus never drops: this one's connection reports what the spec says
  const onStatus: Bus['onStatus'] = (l) => (connection.add(l), () => void connection.delete(l));
  const bus = new Proxy(inner, { get: (target, key) => (key === 'onStatus' ? onStatus : (Reflect.get(target, key) as unknown)) }) as Bus;
  const drop = (status: BusStatus) => connection.forEach((l) => l(status));
  const l = lease();
  const seen: string[] = [];
  const off = fencedBus(bus, l).onStatus((status, cause) => void seen.push(`${status} ${cause}`));
  l.set(false);
  l.set(true);
  assert.equal(seen.splice(0), ['disconnected lease', 'reconnected lease'], 'a lapse under a good connection');
  drop('disconnected');
  l.set(false);
  drop('reconnected');
  assert.equal(seen.splice(0), ['disconnected connection'], 'silent while either is down; back only once both are');
  l.set(true);
  assert.equal(seen.splice(0), ['reconnected connection'], 'the silence that began with the connection ends as one');
  off();
  drop('disconnected');
  assert.equal(seen, [], 'no longer told');
});

test.run();
