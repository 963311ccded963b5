// The key-value buckets on a real nats-server with JetStream (runtime/bus/nats-kv.ts): what the
// GCS's tables and its leader lease rely on — compare-and-set that refuses a stale revision or an
// existing key with KvConflictError, every key's latest value read back (deletes left out), and no
// buckets at all on a server without JetStream.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { KvConflictError, type KvBucket } from '../../runtime/bus/kv.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';

let nats: NatsServerHandle;
let bus: Bus;
let bucket: KvBucket;
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
  bus = await connectNatsBus({ servers: nats.url });
  bucket = await (await bus.keyValue!())!.bucket('orrery_spec_table');
});
test.after(async () => {
  await bus?.close();
  await nats?.stop();
});

test('an empty bucket has no entries; puts are read back, latest value per key, deletes left out', async () => {
  assert.equal(await bucket.entries(), new Map());
  await bucket.put('a', bytes('1'));
  await bucket.put('b', bytes('1'));
  await bucket.put('a', bytes('2'));
  await bucket.put('c', bytes('1'));
  await bucket.delete('c');
  const all = await bucket.entries();
  assert.equal([...all.keys()].sort(), ['a', 'b']);
  assert.is(text(all.get('a')?.value), '2');
  assert.is(await bucket.get('c'), undefined);
});

test('create refuses an existing key; update refuses a stale revision; both with KvConflictError', async () => {
  const r1 = await bucket.create('lease', bytes('x'));
  const err1 = await bucket.create('lease', bytes('y')).catch((e: unknown) => e);
  assert.instance(err1, KvConflictError);
  const r2 = await bucket.update('lease', bytes('x2'), r1);
  assert.ok(r2 > r1);
  const err2 = await bucket.update('lease', bytes('z'), r1).catch((e: unknown) => e);
  assert.instance(err2, KvConflictError);
  assert.is(text((await bucket.get('lease'))?.value), 'x2');
});

test("a put answers the revision it stored (update() takes it); a put whose bucket's stream is gone is KV_UNAVAILABLE, and nothing is stored", async () => {
  const r1 = await bucket.put('rev', bytes('1'));
  const r2 = await bucket.put('rev', bytes('2'));
  assert.ok(r2 > r1, `revisions grow (${r1} then ${r2})`);
  assert.is((await bucket.get('rev'))?.revision, r2);
  const r3 = await bucket.update('rev', bytes('3'), r2);
  assert.is(text((await bucket.get('rev'))?.value), '3');
  assert.ok(r3 > r2);
  const gone = await (await bus.keyValue!())!.bucket('orrery_spec_gone');
  await gone.put('k', bytes('1'));
  const nc: NatsConnection = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  assert.ok(await jsm.streams.delete('KV_orrery_spec_gone'));
  const err = await gone.put('k', bytes('2')).catch((e: unknown) => e);
  assert.instance(err, OrreryError);
  assert.is((err as OrreryError).code, 'KV_UNAVAILABLE');
  await nc.close();
});

test('many entries come back whole (the watcher reads until the last value present)', async () => {
  const many = await (await bus.keyValue!())!.bucket('orrery_spec_many');
  await Promise.all(Array.from({ length: 2000 }, (_, i) => many.put(`k${i}`, bytes(String(i)))));
  const all = await many.entries();
  assert.is(all.size, 2000);
  assert.is(text(all.get('k1999')?.value), '1999');
});

test('a server without JetStream has no key-value buckets', async () => {
  const plain = await startNatsServer();
  const other = await connectNatsBus({ servers: plain.url });
  try {
    assert.is(await other.keyValue!(), undefined);
  } finally {
    await other.close();
    await plain.stop();
  }
});

test.run();
