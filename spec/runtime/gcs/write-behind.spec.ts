import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { seededRng } from '../../../lib/random.ts';
import type { KvBucket } from '../../../runtime/bus/kv.ts';
import { WriteBehind } from '../../../runtime/gcs/write-behind.ts';

// WriteBehind's promise, checked against a model: durable() never resolves before every write made
// before it is stored (or a newer write of its key is), and resolves as soon as the keys written
// before it hold nothing unstored. (Between the two it may wait: a key stored up to one write and
// written again counts as unstored from the write after the stored one, which it does not track.)
// The puts are held by the test and completed (or failed) in a random order, so writes of many keys
// are stored out of order, coalesced, failed and tried again.

interface HeldPut {
  readonly key: string;
  /** The sequence of the write whose value this put carries (the test's own numbering, in the bytes). */
  readonly seq: number;
  settle(ok: boolean): void;
}

/** A bucket whose puts wait until the test settles them. */
function heldBucket(held: HeldPut[]): KvBucket {
  const refuse = (): never => {
    throw new Error('not used');
  };
  return {
    name: 'b',
    put: (key, value) =>
      new Promise<number>((resolve, reject) => {
        const seq = new DataView(value.buffer, value.byteOffset, value.byteLength).getUint32(0);
        held.push({ key, seq, settle: (ok) => (ok ? resolve(seq) : reject(new Error('server away'))) });
      }),
    create: refuse,
    update: refuse,
    get: refuse,
    delete: refuse,
    entries: refuse,
  };
}

/** Lets every ready microtask, immediate and short timer run. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 2));

async function run(seed: number, keys: number, steps: number): Promise<{ durables: number; puts: number; failed: number }> {
  const rnd = seededRng(seed); // a failure names a seed that repeats it
  const held: HeldPut[] = [];
  const bucket = heldBucket(held);
  const wb = new WriteBehind({ log: () => {}, retryMs: 1 });
  let seq = 0;
  /** Every write made: its key and sequence. */
  const writes: { key: string; seq: number }[] = [];
  /** The newest sequence stored per key. */
  const stored = new Map<string, number>();
  const durables: { upTo: number; resolved: boolean }[] = [];
  let puts = 0;
  let failed = 0;

  const latest = new Map<string, number>();
  /** Every write up to `upTo` is stored, or a newer one of its key is. */
  const due = (upTo: number): boolean => writes.every((w) => w.seq > upTo || (stored.get(w.key) ?? 0) >= w.seq);
  /** Every key written up to `upTo` has its latest write stored. */
  const clean = (upTo: number): boolean => writes.every((w) => w.seq > upTo || (stored.get(w.key) ?? 0) >= latest.get(w.key)!);
  const check = (when: string): void => {
    for (const d of durables) {
      if (d.resolved) assert.ok(due(d.upTo), `seed ${seed}, ${when}: durable() after write ${d.upTo} resolved before its writes were stored`);
      else assert.not.ok(clean(d.upTo), `seed ${seed}, ${when}: durable() after write ${d.upTo} still waits, though its keys hold nothing unstored`);
    }
  };

  for (let step = 0; step < steps; step++) {
    const r = rnd();
    if (r < 0.45) {
      const key = `k${Math.floor(rnd() * keys)}`;
      const s = ++seq;
      writes.push({ key, seq: s });
      latest.set(key, s);
      const bytes = new Uint8Array(4);
      new DataView(bytes.buffer).setUint32(0, s);
      wb.write(bucket, key, () => bytes);
    } else if (r < 0.65) {
      const d = { upTo: seq, resolved: false };
      durables.push(d);
      void wb.durable().then(() => (d.resolved = true));
    } else if (held.length > 0) {
      const put = held.splice(Math.floor(rnd() * held.length), 1)[0];
      const ok = rnd() < 0.85;
      if (ok) {
        puts++;
        stored.set(put.key, Math.max(stored.get(put.key) ?? 0, put.seq));
      } else failed++;
      put.settle(ok);
    }
    await settle();
    check(`step ${step}`);
  }
  // everything stored in the end: each durable() resolves
  while (held.length > 0 || durables.some((d) => !d.resolved)) {
    for (const put of held.splice(0)) {
      puts++;
      stored.set(put.key, Math.max(stored.get(put.key) ?? 0, put.seq));
      put.settle(true);
    }
    await settle();
    check('draining');
  }
  await wb.close();
  return { durables: durables.length, puts, failed };
}

test('durable() never resolves before the writes made before it are stored, and does once their keys hold nothing unstored: puts completed out of order, some failed and tried again (3 seeds)', async () => {
  for (const seed of [1, 2, 3]) {
    const { durables, puts, failed } = await run(seed, 12, 400);
    assert.ok(durables > 40 && puts > 40 && failed > 3, `seed ${seed} exercised little: ${durables} durable(), ${puts} puts, ${failed} failed`);
  }
});

test('durable() with nothing unstored resolves at once; a write makes the next one wait for its put', async () => {
  const held: HeldPut[] = [];
  const bucket = heldBucket(held);
  const wb = new WriteBehind({ log: () => {} });
  let first = false;
  void wb.durable().then(() => (first = true));
  await settle();
  assert.ok(first);
  const bytes = new Uint8Array(4);
  wb.write(bucket, 'a', () => bytes);
  let second = false;
  void wb.durable().then(() => (second = true));
  await settle();
  assert.is(held.length, 1);
  assert.not.ok(second);
  held[0].settle(true);
  await settle();
  assert.ok(second);
  await wb.close();
});

test('many keys and waiters: a store completing the oldest write releases exactly the waiters before the next unstored one', async () => {
  const held: HeldPut[] = [];
  const bucket = heldBucket(held);
  const wb = new WriteBehind({ log: () => {} });
  const n = 3000;
  const resolved: boolean[] = [];
  for (let i = 1; i <= n; i++) {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setUint32(0, i);
    wb.write(bucket, `k${i}`, () => bytes);
    const at = resolved.push(false) - 1;
    void wb.durable().then(() => (resolved[at] = true));
  }
  await settle();
  assert.is(held.length, n);
  // stored newest first: nobody is released until the oldest is stored, then everyone
  for (let i = n - 1; i >= 1; i--) held[i].settle(true);
  await settle();
  assert.is(resolved.filter(Boolean).length, 0);
  held[0].settle(true);
  await settle();
  assert.is(resolved.filter(Boolean).length, n);
  await wb.close();
});

test.run();
