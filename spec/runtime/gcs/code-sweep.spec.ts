// The code store's sweep (runtime/gcs/code-sweep.ts) against a bucket held in memory, on a clock the
// spec moves: a chunk set goes only once it has stayed unnamed with the same chunk count for the
// grace; one that grows (an upload running) or gets its name (an upload finished) stays; nothing is
// removed while the GCS does not hold its lease; a store that fails is one log line, not a throw.
// spec/integration/code-shipping.spec.ts runs it against a real nats-server's object store.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import type { ObjectBucket } from '../../../runtime/bus/objects.ts';
import { CodeStoreSweeper, sweepIntervalMs } from '../../../runtime/gcs/code-sweep.ts';
import { until } from '../../helpers/until.ts';

/** Chunk sets by id, with the ids an object names; removeChunks skips named ones, as the real bucket does. */
class MemoryChunks implements ObjectBucket {
  readonly name = 'orrery-code-spec';
  readonly sets = new Map<string, number>();
  readonly named = new Set<string>();
  readonly removed: string[] = [];
  failWith: Error | undefined;
  has = async (): Promise<boolean> => false;
  put = async (): Promise<void> => undefined;
  get = async (): Promise<Uint8Array | undefined> => undefined;
  async unnamedChunks(): Promise<Map<string, number>> {
    if (this.failWith) throw this.failWith;
    return new Map([...this.sets].filter(([id]) => !this.named.has(id)));
  }
  /** Runs before each set is removed: a spec's way to act in the middle of a removal. */
  beforeEach: (() => void) | undefined;
  async removeChunks(ids: readonly string[], keepGoing?: () => boolean): Promise<number> {
    let n = 0;
    for (const id of ids) {
      this.beforeEach?.();
      if (keepGoing !== undefined && !keepGoing()) break;
      if (this.named.has(id) || !this.sets.has(id)) continue;
      n += this.sets.get(id)!;
      this.sets.delete(id);
      this.removed.push(id);
    }
    return n;
  }
}

function sweeper(bucket: ObjectBucket | undefined, opts: { graceMs?: number; valid?: () => boolean } = {}) {
  const clock = { t: 0 };
  const lines: string[] = [];
  const s = new CodeStoreSweeper({ bucket: async () => bucket, graceMs: opts.graceMs ?? 1000, ...(opts.valid ? { valid: opts.valid } : {}), log: (l) => lines.push(l), now: () => clock.t });
  return { s, clock, lines };
}

test('a chunk set unnamed and unchanged for the grace is removed at the first look past it, not before', async () => {
  const bucket = new MemoryChunks();
  bucket.sets.set('cut-off', 7);
  const { s, clock, lines } = sweeper(bucket);
  assert.equal(await s.sweep(), { unnamed: 1, removedSets: 0, removedChunks: 0 });
  clock.t = 999;
  assert.equal(await s.sweep(), { unnamed: 1, removedSets: 0, removedChunks: 0 }, 'one ms short of the grace');
  clock.t = 1000;
  assert.equal(await s.sweep(), { unnamed: 1, removedSets: 1, removedChunks: 7 });
  assert.equal(bucket.removed, ['cut-off']);
  assert.equal(lines, ['code store orrery-code-spec: removed 7 chunk(s) of 1 upload(s) that never finished']);
  assert.equal(await s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
});

test('a chunk set that grows between looks (an upload running) starts its grace again each time', async () => {
  const bucket = new MemoryChunks();
  bucket.sets.set('uploading', 1);
  const { s, clock } = sweeper(bucket);
  await s.sweep();
  for (let chunks = 2; chunks <= 5; chunks++) {
    clock.t += 900;
    bucket.sets.set('uploading', chunks);
    assert.is((await s.sweep()).removedSets, 0, `at ${chunks} chunks`);
  }
  // then it stops growing without a name: the grace counts from its last change
  clock.t += 999;
  assert.is((await s.sweep()).removedSets, 0);
  clock.t += 1;
  assert.equal(await s.sweep(), { unnamed: 1, removedSets: 1, removedChunks: 5 });
});

test('a chunk set that gets its name (the upload finished) is never removed', async () => {
  const bucket = new MemoryChunks();
  bucket.sets.set('finished', 3);
  const { s, clock } = sweeper(bucket);
  await s.sweep();
  bucket.named.add('finished');
  clock.t = 5000;
  assert.equal(await s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
  assert.is(bucket.sets.get('finished'), 3);
});

test('named between the look and the removal: the bucket skips it', async () => {
  const bucket = new MemoryChunks();
  bucket.sets.set('late-name', 2);
  bucket.sets.set('orphan', 4);
  const { s, clock } = sweeper(bucket);
  await s.sweep();
  clock.t = 1000;
  const listed = bucket.unnamedChunks.bind(bucket);
  bucket.unnamedChunks = async () => {
    const found = await listed();
    bucket.named.add('late-name'); // its name lands right after the listing
    return found;
  };
  assert.equal(await s.sweep(), { unnamed: 2, removedSets: 2, removedChunks: 4 });
  assert.equal(bucket.removed, ['orphan']);
  assert.is(bucket.sets.get('late-name'), 2);
});

test('nothing is removed while the GCS does not hold its lease; once it does again, the grace it saw counts', async () => {
  const bucket = new MemoryChunks();
  bucket.sets.set('cut-off', 1);
  let valid = true;
  const { s, clock } = sweeper(bucket, { valid: () => valid });
  await s.sweep();
  clock.t = 2000;
  valid = false;
  assert.equal(await s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
  assert.equal(bucket.removed, []);
  valid = true;
  assert.is((await s.sweep()).removedSets, 1);
});

test('the lease lost in the middle of a removal (a GCS frozen there): it stops at the next set, says so, and the sets left go at a later look once it leads again', async () => {
  const bucket = new MemoryChunks();
  for (const id of ['one', 'two', 'three']) bucket.sets.set(id, 2);
  let leads = true;
  const { s, clock, lines } = sweeper(bucket, { valid: () => leads });
  await s.sweep();
  clock.t = 1000;
  // the lease runs out once the first set has gone
  bucket.beforeEach = () => {
    if (bucket.removed.length === 1) leads = false;
  };
  assert.equal(await s.sweep(), { unnamed: 3, removedSets: 0, removedChunks: 2 });
  assert.equal(bucket.removed, ['one'], 'nothing removed after the lease ran out');
  assert.equal(lines, ['code store orrery-code-spec: removal stopped partway, after 2 chunk(s): this GCS no longer holds its lease (the GCS that leads removes the rest)']);
  bucket.beforeEach = undefined;
  leads = true;
  // leading again, it counts the grace afresh for what is left (as a GCS that takes over does)
  clock.t = 1500;
  assert.equal(await s.sweep(), { unnamed: 2, removedSets: 0, removedChunks: 0 });
  clock.t = 2500;
  assert.equal(await s.sweep(), { unnamed: 2, removedSets: 2, removedChunks: 4 });
  assert.equal(bucket.removed, ['one', 'two', 'three']);
});

test('a store that fails says so once, never throws, and says when it works again', async () => {
  const bucket = new MemoryChunks();
  bucket.sets.set('cut-off', 1);
  bucket.failWith = new Error('TIMEOUT');
  const { s, clock, lines } = sweeper(bucket);
  assert.equal(await s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
  assert.equal(await s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
  assert.equal(lines, [`code store sweep failed (tried again every ${sweepIntervalMs(1000)} ms): TIMEOUT`]);
  bucket.failWith = undefined;
  await s.sweep();
  clock.t = 1000;
  assert.is((await s.sweep()).removedSets, 1);
  assert.is(lines[1], 'code store sweep: works again');
});

test('a server without JetStream: nothing to do and nothing said', async () => {
  const bucket = new MemoryChunks();
  bucket.failWith = new OrreryError('JETSTREAM_UNAVAILABLE', 'the NATS server has no JetStream (start it with -js)');
  const { s, lines } = sweeper(bucket);
  assert.equal(await s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
  assert.equal(lines, []);
});

test('no code store or a bucket that keeps no chunks: nothing to do', async () => {
  assert.equal(await sweeper(undefined).s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
  const plain: ObjectBucket = { name: 'plain', has: async () => false, put: async () => undefined, get: async () => undefined };
  assert.equal(await sweeper(plain).s.sweep(), { unnamed: 0, removedSets: 0, removedChunks: 0 });
});

test('the look interval is a quarter of the grace, kept between 250 ms and a minute', () => {
  assert.is(sweepIntervalMs(600_000), 60_000);
  assert.is(sweepIntervalMs(8_000), 2_000);
  assert.is(sweepIntervalMs(100), 250);
});

test('started, it looks on its own; stop() waits for a look under way', async () => {
  const bucket = new MemoryChunks();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let looks = 0;
  bucket.unnamedChunks = async () => {
    looks++;
    await held;
    return new Map();
  };
  const { s } = sweeper(bucket);
  s.start();
  await until('a look', () => (looks > 0 ? true : undefined));
  let stopped = false;
  const stopping = s.stop().then(() => (stopped = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(stopped, false, 'stop() waits for the look');
  release();
  await stopping;
  assert.is(looks, 1, 'no look after stop()');
});

test.run();
