import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKeyValue, type KeyValue, type KvBucket } from '../../../runtime/bus/kv.ts';
import { KvStore } from '../../../runtime/gcs/kv-store.ts';
import type { ActorRecord, NodeRecord } from '../../../runtime/gcs/store.ts';

// The GCS's tables in key-value buckets (MemoryKeyValue here; spec/integration/kv.spec.ts runs the
// JetStream buckets on a real nats-server): write-behind with one put per key per turn, durable(),
// loading what an earlier store wrote, refusing records that do not validate, retrying failed puts,
// writes held while the GCS's lease has lapsed, and a store closed after it lost the lease writing nothing more.

/** A KeyValue whose buckets count puts and can fail the next N of them. */
class Counting implements KeyValue {
  readonly inner = new MemoryKeyValue();
  puts = 0;
  failNext = 0;

  async bucket(name: string): Promise<KvBucket> {
    const b = await this.inner.bucket(name);
    return {
      name,
      put: async (key, value) => {
        if (this.failNext > 0) {
          this.failNext--;
          throw new Error('server away');
        }
        this.puts++;
        return b.put(key, value);
      },
      create: (k, v) => b.create(k, v),
      update: (k, v, r) => b.update(k, v, r),
      get: (k) => b.get(k),
      delete: (k) => b.delete(k),
      entries: () => b.entries(),
    };
  }
}

const log = (): void => {};

function actor(actorId: string, state: ActorRecord['info']['state'], incarnation = 0): ActorRecord {
  return {
    registration: { actorId, code: { moduleUrl: 'file:///a.ts', className: 'A', args: [1, 'two'] }, namespace: 'default', options: {} },
    info: { actorId, namespace: 'default', className: 'A', state, numRestarts: incarnation, labels: { 'orrery.io/actor-id': actorId }, ...(state === 'ALIVE' ? { nodeId: 'n1' } : {}) },
    incarnation,
  };
}

const node: NodeRecord = {
  registration: { nodeId: 'n1', name: 'one', labels: {}, taints: {}, resources: { total: { CPU: 40000 }, available: { CPU: 40000 } }, address: { ip: '10.0.0.1', hostname: 'h', pid: 7 } },
  info: { nodeId: 'n1', name: 'one', state: 'ALIVE', labels: {}, taints: {}, resources: { total: { CPU: 40000 }, available: { CPU: 30000 } } },
  registeredAt: 1,
};

test('changes of one turn are one put per key; durable() resolves once they are stored; a new store loads them', async () => {
  const kv = new Counting();
  const store = await KvStore.open(kv, { cluster: 'c', log });
  store.putNode(node);
  store.putActor(actor('a1', 'PENDING'));
  store.putActor(actor('a1', 'SCHEDULED'));
  store.putActor(actor('a1', 'ALIVE'));
  store.putActor(actor('a2', 'ALIVE', 2));
  store.putMeta('eventSeq', 41);
  assert.is(store.getActor('a1')?.info.state, 'ALIVE', 'reads see the change at once');
  await store.durable();
  assert.is(kv.puts, 4, 'a node, two actors and the seq: a1 written once');
  const again = await KvStore.open(kv, { cluster: 'c', log });
  assert.equal(again.getActor('a1'), actor('a1', 'ALIVE'));
  assert.is(again.getActor('a2')?.incarnation, 2);
  assert.equal(again.getNode('n1'), node);
  assert.is(again.getMeta('eventSeq'), 41);
  assert.equal(again.counts(), { nodes: 1, actors: 2 });
  assert.is(again.persistent, true);
});

test('a deleted actor is gone for the next store too', async () => {
  const kv = new Counting();
  const store = await KvStore.open(kv, { cluster: 'c', log });
  store.putActor(actor('a1', 'DEAD'));
  await store.durable();
  store.deleteActor('a1');
  await store.durable();
  assert.is((await KvStore.open(kv, { cluster: 'c', log })).getActor('a1'), undefined);
});

test('a record that does not validate is left out and counted, never trusted', async () => {
  const kv = new Counting();
  const bucket = await kv.bucket('orrery_c_actors');
  await bucket.put('evil', new TextEncoder().encode('{"actorId":"x"}'));
  const store = await KvStore.open(kv, { cluster: 'c', log });
  assert.is(store.refused, 1);
  assert.equal(store.actors(), []);
});

test('a put that fails is tried again; durable() waits until it is stored', async () => {
  const kv = new Counting();
  const store = await KvStore.open(kv, { cluster: 'c', log, retryMs: 5 });
  kv.failNext = 2;
  store.putActor(actor('a1', 'ALIVE'));
  await store.durable();
  const again = await KvStore.open(kv, { cluster: 'c', log });
  assert.is(again.getActor('a1')?.info.state, 'ALIVE');
});

test('after a failed put taken up by a later flush, a durable() with nothing dirty still resolves once stored', async () => {
  // the GCS stall of issue 15: kill_actor's durable() comes after its write left, and a retry that
  // waited on a chain holding itself made every such durable() hang for good
  const kv = new Counting();
  const store = await KvStore.open(kv, { cluster: 'c', log, retryMs: 20 });
  kv.failNext = 1;
  store.putActor(actor('a1', 'ALIVE'));
  await new Promise((r) => setImmediate(r)); // a1's put goes out and fails
  await new Promise((r) => setImmediate(r));
  store.putActor(actor('a2', 'ALIVE')); // the next flush takes a1 along
  await store.durable();
  await store.durable(); // nothing dirty now
  const again = await KvStore.open(kv, { cluster: 'c', log });
  assert.equal(again.actors().map((a) => a.info.actorId).sort(), ['a1', 'a2']);
});

/** A store whose a1 is stored ALIVE, then — the leader lease lapsed — set DEAD and not yet written. */
async function lapsedWithOneWrite() {
  const kv = new Counting();
  const lease = { valid: true };
  const store = await KvStore.open(kv, { cluster: 'c', log, valid: () => lease.valid, retryMs: 5 });
  store.putActor(actor('a1', 'ALIVE'));
  await store.durable();
  lease.valid = false;
  store.putActor(actor('a1', 'DEAD'));
  return { kv, lease, store };
}

test('while the lease has lapsed writes wait, and go out once it is valid again', async () => {
  const { kv, lease, store } = await lapsedWithOneWrite();
  let stored = false;
  const waiting = store.durable().then(() => (stored = true));
  await new Promise((r) => setTimeout(r, 30));
  assert.is(stored, false, 'durable() waits while the lease is not valid');
  assert.is((await KvStore.open(kv, { cluster: 'c', log })).getActor('a1')?.info.state, 'ALIVE', 'nothing written meanwhile');
  lease.valid = true;
  await waiting;
  assert.is((await KvStore.open(kv, { cluster: 'c', log })).getActor('a1')?.info.state, 'DEAD');
});

test('a store closed after its GCS lost the lease drops what is unwritten and writes nothing more', async () => {
  const { kv, lease, store } = await lapsedWithOneWrite();
  const waiting = store.durable();
  await store.close();
  await waiting;
  store.putActor(actor('a2', 'ALIVE'));
  lease.valid = true;
  await store.durable();
  const again = await KvStore.open(kv, { cluster: 'c', log });
  assert.is(again.getActor('a1')?.info.state, 'ALIVE');
  assert.is(again.getActor('a2'), undefined);
});

test('clusters keep their tables apart', async () => {
  const kv = new Counting();
  const a = await KvStore.open(kv, { cluster: 'a', log });
  a.putActor(actor('x', 'ALIVE'));
  await a.durable();
  assert.equal((await KvStore.open(kv, { cluster: 'b', log })).actors(), []);
});

test.run();
