// Batches: a publisher sends the records of one event-loop turn as one inspect_records message
// (at most `batchRecords` each) while every watcher takes batches, and one inspect_record per
// transition on inspect.<machine>.<id> while any watcher does not. Either way nothing is lost and
// the records keep their seq order; a bad batch is skipped whole and the watcher goes on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, setup as machineSetup, type InspectionEvent } from 'xstate';
import { decode, encode } from '../../protocols/codec.ts';
import { MAX_BATCH_RECORDS, type InspectRecord } from '../../protocols/messages/inspect.ts';
import { subjects } from '../../protocols/subjects.ts';
import { MemoryBroker, connectMemoryBus } from '../../runtime/bus/memory.ts';
import { InspectPublisher, type InspectableSystem } from '../../runtime/inspect/publisher.ts';
import { recordTrace } from '../../runtime/inspect/recorder.ts';
import { batchSubject, watchSubject } from '../../protocols/inspect-subjects.ts';
import { readTrace } from '../../runtime/inspect/trace-file.ts';
import { watchInspection } from '../../runtime/inspect/watch.ts';

const dir = mkdtempSync(join(tmpdir(), 'orrery-batch-spec-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(opts: { batchRecords?: number } = {}) {
  const broker = new MemoryBroker();
  const pubBus = connectMemoryBus(broker);
  const watchBus = connectMemoryBus(broker);
  const publisher = new InspectPublisher({ bus: pubBus, cluster: 'c1', name: 'gcs:c1', sweepMs: 3_600_000, ...opts });
  // every message on the batch subject, as the number of records it carried
  const batches: number[] = [];
  const spy = watchBus.subscribe(batchSubject('c1'), (msg) => {
    try {
      const decoded = decode(msg.data);
      batches.push(decoded.type === 'inspect_records' ? decoded.body.records.length : -1);
    } catch {
      batches.push(-1);
    }
  });
  return {
    broker, pubBus, watchBus, publisher, batches,
    /** The publisher sends at the end of the turn; the broker delivers a turn later. */
    delivered: async () => {
      await turn();
      await broker.settled();
    },
    close: async () => {
      spy.unsubscribe();
      publisher.stop();
      await Promise.all([pubBus.close(), watchBus.close()]);
    },
  };
}

/**
 * A machine that inspection takes for a node (id 'node', context.nodeId) and that takes numbered
 * events, so a spec can check that records arrive complete and in order by their numbers.
 */
const beating = machineSetup({
  types: {
    context: {} as { nodeId: string },
    events: {} as { type: 'BEAT'; seq: number } | { type: 'DRAIN' },
    input: {} as { nodeId: string },
  },
}).createMachine({
  id: 'node',
  context: ({ input }) => ({ nodeId: input.nodeId }),
  initial: 'ALIVE',
  states: {
    ALIVE: { on: { BEAT: { target: 'ALIVE', reenter: true }, DRAIN: 'DRAINING' } },
    DRAINING: { on: { BEAT: { target: 'DRAINING', reenter: true } } },
  },
});

function node(nodeId: string) {
  return createActor(beating, { input: { nodeId } }).start();
}

/** Waits for the first acknowledgement of a watcher. */
function watch(t: ReturnType<typeof setup>, opts: { batches?: boolean; watcher: string }) {
  const records: InspectRecord[] = [];
  const invalid: string[] = [];
  let acked!: () => void;
  const ack = new Promise<void>((resolve) => (acked = resolve));
  const sub = watchInspection(t.watchBus, 'c1', { ...opts, onAck: () => acked(), onInvalid: (err) => invalid.push(String(err)) }).subscribe((r) => records.push(r));
  return { records, invalid, sub, ack };
}

test('the records of each turn go out as one batch (or several of batchRecords), in seq order, none lost', async () => {
  const t = setup({ batchRecords: 100 });
  const n1 = node('n1');
  t.publisher.add(n1.system);
  await t.publisher.start();
  const w = watch(t, { watcher: 'w1' });
  await w.ack;
  let seq = 0;
  for (const size of [3, 250, 1]) {
    for (let i = 0; i < size; i++) n1.send({ type: 'BEAT', seq: ++seq });
    await turn(); // each size is one turn's worth of transitions
  }
  await t.delivered();
  assert.equal(t.batches, [3, 100, 100, 50, 1]);
  assert.is(w.records.length, 254);
  assert.equal(w.records.map((r) => r.event.seq), Array.from({ length: 254 }, (_, i) => i + 1), 'every heartbeat, in order');
  for (let i = 1; i < w.records.length; i++) assert.ok(w.records[i].seq > w.records[i - 1].seq, 'seq increases');
  const stats = t.publisher.stats();
  assert.is(stats.published, 254);
  assert.is(stats.messages, 5);
  assert.is(stats.dropped, 0);
  assert.equal(w.invalid, []);
  w.sub.unsubscribe();
  n1.stop();
  await t.close();
});

test('a watcher that takes no batches gets one record per message, and one instance can be watched on its own subject', async () => {
  const t = setup();
  const n1 = node('n1');
  const n2 = node('n2');
  t.publisher.add(n1.system);
  t.publisher.add(n2.system);
  await t.publisher.start();
  const only: InspectRecord[] = [];
  const one = t.watchBus.subscribe(subjects('c1').inspect('node', 'n1'), (msg) => {
    const decoded = decode(msg.data);
    if (decoded.type === 'inspect_record') only.push(decoded.body as InspectRecord);
  });
  const w = watch(t, { watcher: 'single', batches: false });
  await w.ack;
  n1.send({ type: 'BEAT', seq: 1 });
  n2.send({ type: 'BEAT', seq: 1 });
  n1.send({ type: 'DRAIN' });
  await t.delivered();
  assert.equal(t.batches, [], 'no batch while a watcher takes none');
  assert.equal(w.records.map((r) => `${r.id} ${r.event.type}`), ['n1 BEAT', 'n2 BEAT', 'n1 DRAIN']);
  assert.equal(only.map((r) => `${r.id} ${r.event.type}`), ['n1 BEAT', 'n1 DRAIN']);
  assert.is(t.publisher.stats().messages, 3);
  one.unsubscribe();
  w.sub.unsubscribe();
  n1.stop();
  n2.stop();
  await t.close();
});

test('batches stop while a watcher that takes none is there, and resume when it leaves; the batch watcher misses nothing', async () => {
  const t = setup();
  const n1 = node('n1');
  t.publisher.add(n1.system);
  await t.publisher.start();
  const w = watch(t, { watcher: 'batcher' });
  await w.ack;
  n1.send({ type: 'BEAT', seq: 1 });
  await t.delivered();
  t.watchBus.publish(watchSubject('c1'), encode('inspect_watch', { watcher: 'plain' }));
  await t.broker.settled();
  n1.send({ type: 'BEAT', seq: 2 });
  n1.send({ type: 'BEAT', seq: 3 });
  await t.delivered();
  t.watchBus.publish(watchSubject('c1'), encode('inspect_watch', { watcher: 'plain', leaving: true }));
  await t.broker.settled();
  n1.send({ type: 'BEAT', seq: 4 });
  n1.send({ type: 'BEAT', seq: 5 });
  await t.delivered();
  assert.equal(t.batches, [1, 2], 'heartbeats 2 and 3 went out one by one');
  assert.equal(w.records.map((r) => r.event.seq), [1, 2, 3, 4, 5]);
  assert.is(t.publisher.stats().messages, 4);
  w.sub.unsubscribe();
  n1.stop();
  await t.close();
});

/** A system whose "machine" makes a record with a context of about 16 KiB each time it is poked. */
function bigContexts() {
  let observer: ((e: InspectionEvent) => void) | undefined;
  const ref = { id: 'x', logic: { id: 'actor', root: {} }, getSnapshot: () => undefined };
  const system: InspectableSystem = {
    inspect(o) {
      observer = o;
      return { unsubscribe: () => (observer = undefined) };
    },
  };
  const poke = (i: number) =>
    observer?.({
      type: '@xstate.snapshot',
      actorRef: ref,
      event: { type: 'xstate.init' },
      snapshot: { value: 'PENDING', context: { actorId: `a${i}`, a: 'a'.repeat(4000), b: 'b'.repeat(4000), c: 'c'.repeat(4000), d: 'd'.repeat(3500) } },
    } as unknown as InspectionEvent);
  return { system, poke };
}

test('a turn too large for one message is split into batches that fit, not dropped', async () => {
  const t = setup({ batchRecords: MAX_BATCH_RECORDS });
  const big = bigContexts();
  t.publisher.add(big.system);
  await t.publisher.start();
  const w = watch(t, { watcher: 'w1' });
  await w.ack;
  for (let i = 0; i < 150; i++) big.poke(i); // ~2.3 MiB in one turn; a message holds 1 MiB
  await t.delivered();
  assert.ok(t.batches.length >= 3, `split into ${t.batches.length} message(s)`);
  assert.is(t.batches.reduce((a, b) => a + b, 0), 150);
  assert.equal(w.records.map((r) => r.id), Array.from({ length: 150 }, (_, i) => `a${i}`));
  assert.is(t.publisher.stats().dropped, 0);
  w.sub.unsubscribe();
  await t.close();
});

test('a malformed batch is skipped whole; the watcher and the recorder go on', async () => {
  const t = setup();
  const n1 = node('n1');
  t.publisher.add(n1.system);
  await t.publisher.start();
  const w = watch(t, { watcher: 'w1' });
  await w.ack;
  const out = join(dir, 'malformed.jsonl');
  const recording = await recordTrace({ bus: t.watchBus, cluster: 'c1', out });
  assert.is(await recording.ready(5000), true);
  const good = { machine: 'node', id: 'n9', seq: 1, time: 1, event: { type: 'BEAT' }, from: 'ALIVE', to: 'ALIVE', context: {} };
  const bad = [
    new Uint8Array([0xc1, 0xff, 0x00]), // not msgpack
    encode('inspect_records', { publisher: 'x', records: [] }), // empty
    encode('inspect_records', { publisher: 'x', records: [good, { ...good, machine: 'toaster' }] }), // one bad record spoils the batch
    encode('inspect_records', { publisher: 'x', records: Array.from({ length: MAX_BATCH_RECORDS + 1 }, () => good) }), // too many
    encode('inspect_records', { records: [good] }), // no publisher
    encode('inspect_record', good), // a single record on the batch subject
  ];
  for (const data of bad) t.pubBus.publish(batchSubject('c1'), data);
  await t.broker.settled();
  assert.is(w.invalid.length, bad.length, w.invalid.join('\n'));
  assert.equal(w.records, []);
  assert.is(recording.count, 0);
  n1.send({ type: 'BEAT', seq: 1 });
  await t.delivered();
  assert.equal(w.records.map((r) => r.event.type), ['BEAT']);
  assert.equal((await recording.stop()).count, 1);
  assert.equal(readTrace(out).records.map((r) => [r.id, r.event.type]), [['n1', 'BEAT']]);
  w.sub.unsubscribe();
  n1.stop();
  await t.close();
});

test('a recording stopped right after transitions has them, though the publisher sends them at the end of its turn', async () => {
  const t = setup();
  const n1 = node('n1');
  t.publisher.add(n1.system);
  await t.publisher.start();
  const out = join(dir, 'stop.jsonl');
  const recording = await recordTrace({ bus: t.watchBus, cluster: 'c1', out });
  assert.is(await recording.ready(5000), true);
  for (let seq = 1; seq <= 5; seq++) n1.send({ type: 'BEAT', seq });
  const { count } = await recording.stop(); // no turn passes between the transitions and the stop
  assert.is(count, 5);
  assert.equal(readTrace(out).records.map((r) => r.event.seq), [1, 2, 3, 4, 5]);
  n1.stop();
  await t.close();
});

test('a recording whose bus closed under it still stops and closes its file', async () => {
  const t = setup();
  const n1 = node('n1');
  t.publisher.add(n1.system);
  await t.publisher.start();
  const recBus = connectMemoryBus(t.broker);
  const out = join(dir, 'closed.jsonl');
  const recording = await recordTrace({ bus: recBus, cluster: 'c1', out });
  assert.is(await recording.ready(5000), true);
  n1.send({ type: 'BEAT', seq: 1 });
  await t.delivered();
  await recBus.close();
  assert.equal(await recording.stop(), { count: 1 });
  assert.equal(readTrace(out).records.map((r) => r.event.seq), [1]);
  n1.stop();
  await t.close();
});

test.run();
