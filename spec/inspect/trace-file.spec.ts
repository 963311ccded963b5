// Trace files: the recorder writes what the stream carries, readTrace reads it back; bad files are
// one clear error naming the line.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor } from 'xstate';
import type { InspectRecord } from '../../protocols/messages/inspect.ts';
import { MemoryBroker, connectMemoryBus } from '../../runtime/bus/memory.ts';
import { actorMachine } from '../../runtime/gcs/actor.machine.ts';
import { InspectPublisher } from '../../runtime/inspect/publisher.ts';
import { recordTrace } from '../../runtime/inspect/recorder.ts';
import { TraceFormatError, TraceWriter, parseTrace, readTrace } from '../../runtime/inspect/trace-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'orrery-trace-spec-'));
const input = { actorId: 'a1', namespace: 'default', className: 'C', labels: {}, resources: {}, maxRestarts: 0 };

test('a recording round-trips: header first, then every record as published', async () => {
  const broker = new MemoryBroker();
  const pubBus = connectMemoryBus(broker);
  const recBus = connectMemoryBus(broker);
  const publisher = new InspectPublisher({ bus: pubBus, cluster: 'c1', name: 'gcs:c1' });
  const actor = createActor(actorMachine, { input });
  publisher.add(actor.system);
  await publisher.start();
  const out = join(dir, 'round-trip.jsonl');
  const seen: InspectRecord[] = [];
  const recording = await recordTrace({ bus: recBus, cluster: 'c1', out, now: () => 42, onRecord: (r) => seen.push(r) });
  assert.is(await recording.ready(5000), true);
  assert.equal([...recording.publishers], ['gcs:c1']);
  actor.start();
  actor.send({ type: 'PLACED', nodeId: 'n1' });
  actor.send({ type: 'CREATED', incarnation: 0 });
  actor.send({ type: 'KILL', noRestart: true });
  await broker.settled();
  const { count } = await recording.stop();
  assert.is(count, 4);
  const trace = readTrace(out);
  assert.equal(trace.header, { format: 'orrery-trace', version: 1, cluster: 'c1', startedAt: 42 });
  assert.equal(trace.records, seen);
  assert.equal(trace.records.map((r) => r.to), ['PENDING', 'onNode.SCHEDULED', 'onNode.ALIVE', 'DEAD']);
  assert.is(trace.records[3].context.deathCause, 'killed');
  const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
  assert.is(lines.length, 5);
  assert.equal(JSON.parse(lines[0]), trace.header);
  await broker.settled();
  assert.is(publisher.attached, false, 'the recorder said it was leaving');
  publisher.stop();
  await Promise.all([pubBus.close(), recBus.close()]);
});

test('a recorder with nobody publishing is not ready, and records nothing', async () => {
  const bus = connectMemoryBus(new MemoryBroker());
  const out = join(dir, 'empty.jsonl');
  const recording = await recordTrace({ bus, cluster: 'c1', out });
  assert.is(await recording.ready(20), false);
  assert.equal(await recording.stop(), { count: 0 });
  assert.equal(readTrace(out).records, []);
  await bus.close();
});

test('TraceWriter writes a turn\'s lines together, in order, and close writes what is still held', async () => {
  const out = join(dir, 'writer.jsonl');
  const writer = new TraceWriter(out, { format: 'orrery-trace', version: 1, cluster: 'c', startedAt: 0 });
  await writer.opened();
  const record = (seq: number): InspectRecord => ({ machine: 'node', id: 'n1', seq, time: seq, event: { type: 'HEARTBEAT', seq }, from: 'ALIVE', to: 'ALIVE', context: { pad: 'x'.repeat(300) } });
  for (let seq = 0; seq < 2000; seq++) writer.write(record(seq)); // ~0.8 MB in one turn: written in chunks
  await new Promise((resolve) => setImmediate(resolve));
  for (let seq = 2000; seq < 2010; seq++) writer.write(record(seq)); // held when close() is called
  assert.is(writer.count, 2010);
  await writer.close();
  assert.equal(readTrace(out).records.map((r) => r.seq), Array.from({ length: 2010 }, (_, i) => i));
});

test('TraceWriter refuses a path it cannot create', async () => {
  const writer = new TraceWriter(join(dir, 'no', 'such', 'dir', 'x.jsonl'), { format: 'orrery-trace', version: 1, cluster: 'c', startedAt: 0 });
  const err = await writer.opened().catch((e: unknown) => e);
  assert.is((err as NodeJS.ErrnoException).code, 'ENOENT');
});

test('bad trace files: each is one error naming the line', () => {
  const header = JSON.stringify({ format: 'orrery-trace', version: 1, cluster: 'c', startedAt: 1 });
  const record = JSON.stringify({ machine: 'actor', id: 'a', seq: 0, time: 1, event: { type: 'X' }, from: null, to: 'PENDING', context: {} });
  assert.equal(parseTrace(`${header}\n${record}\n\n`).records.length, 1);
  const cases: [string, RegExp][] = [
    ['', /empty file/],
    ['{"format":"other"}', /not an orrery-trace file/],
    [JSON.stringify({ format: 'orrery-trace', version: 2, cluster: 'c', startedAt: 1 }), /version 2 is not supported/],
    [JSON.stringify({ format: 'orrery-trace', version: 1 }), /"cluster"/],
    ['not json', /line 1 is not JSON/],
    [`${header}\n${record}\n{oops`, /line 3 is not JSON/],
    [`${header}\n${record.replace('"actor"', '"robot"')}`, /line 2 is not an inspection record: machine/],
  ];
  for (const [text, pattern] of cases) {
    const err = (() => {
      try {
        parseTrace(text, 'f.jsonl');
      } catch (e) {
        return e;
      }
    })();
    assert.instance(err, TraceFormatError, text);
    assert.match((err as Error).message, pattern);
  }
  assert.throws(() => readTrace(join(dir, 'missing.jsonl')), /cannot read .*ENOENT/);
  writeFileSync(join(dir, 'h.jsonl'), header);
  assert.equal(readTrace(join(dir, 'h.jsonl')).records, []);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
