import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventLog, RESERVED_SEQS } from '../../../runtime/gcs/event-log.ts';
import type { ClusterEventType } from '../../../protocols/messages/cluster.ts';
import { Harness } from './support.ts';

// The recent-events ring behind `gcs.list_events` (`orrery events`): numbering, filters, limits,
// the reply's size budget, and what it says about events it no longer has.

const ev = (type: ClusterEventType, i: number) => ({ type, time: 1000 + i, message: `m${i}` });

test('events are numbered in publish order; a query returns the newest matching ones, oldest first', () => {
  const log = new EventLog(100);
  for (let i = 1; i <= 10; i++) log.append(ev(i % 2 ? 'actor_state' : 'node_added', i));
  assert.is(log.lastSeq, 10);
  const all = log.query({});
  assert.equal(all.events.map((e) => e.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.equal([all.lastSeq, all.omitted], [10, 0]);
  const odd = log.query({ types: ['actor_state'], limit: 3 });
  assert.equal(odd.events.map((e) => e.seq), [5, 7, 9], 'the newest three, oldest first');
  assert.is(odd.omitted, 2);
  assert.equal(log.query({ afterSeq: 8 }).events.map((e) => e.seq), [9, 10]);
  assert.equal(log.query({ afterSeq: 10 }).events, []);
});

test('a full ring drops the oldest, and says how many a reader asking from before has missed', () => {
  const log = new EventLog(4);
  for (let i = 1; i <= 10; i++) log.append(ev('lease_revoked', i));
  const r = log.query({});
  assert.equal(r.events.map((e) => e.seq), [7, 8, 9, 10]);
  assert.is(r.omitted, 6);
  assert.is(log.query({ afterSeq: 8 }).omitted, 0);
});

test('a reply stays within its byte budget, keeping the newest events', () => {
  const log = new EventLog(100, { maxReplyBytes: 1000 });
  for (let i = 1; i <= 50; i++) log.append({ type: 'schedule_failed', time: i, message: 'x'.repeat(200) });
  const r = log.query({});
  assert.ok(r.events.length >= 3 && r.events.length <= 4, `${r.events.length} events`);
  assert.is(r.events.at(-1)!.seq, 50);
  assert.is(r.omitted, 50 - r.events.length);
});

test('fromOldest pages walk the ring oldest first; next is the afterSeq of the following page', () => {
  const log = new EventLog(100);
  for (let i = 1; i <= 10; i++) log.append(ev(i % 2 ? 'actor_state' : 'node_added', i));
  const first = log.query({ fromOldest: true, limit: 4 });
  assert.equal([first.events.map((e) => e.seq), first.next, first.lastSeq, first.omitted], [[1, 2, 3, 4], 4, 10, 0]);
  // published between pages: the walk carries on to it, as seq only grows
  log.append(ev('actor_state', 11));
  const second = log.query({ fromOldest: true, limit: 4, afterSeq: first.next });
  assert.equal([second.events.map((e) => e.seq), second.next], [[5, 6, 7, 8], 8]);
  const last = log.query({ fromOldest: true, limit: 4, afterSeq: second.next });
  assert.equal([last.events.map((e) => e.seq), last.next, last.lastSeq], [[9, 10, 11], undefined, 11]);
  const odd = log.query({ fromOldest: true, types: ['actor_state'], limit: 2, afterSeq: 4 });
  assert.equal([odd.events.map((e) => e.seq), odd.next], [[5, 7], 7]);
  const oddLast = log.query({ fromOldest: true, types: ['actor_state'], limit: 3, afterSeq: 7 });
  assert.equal([oddLast.events.map((e) => e.seq), oddLast.next], [[9, 11], undefined], 'no cursor when the page reached the end');
});

test('a fromOldest page says how many events after afterSeq the ring has lost, and keeps under its byte budget in encoded bytes', () => {
  const log = new EventLog(4);
  for (let i = 1; i <= 10; i++) log.append(ev('lease_revoked', i));
  const r = log.query({ fromOldest: true, afterSeq: 2 });
  assert.equal([r.events.map((e) => e.seq), r.omitted, r.next], [[7, 8, 9, 10], 4, undefined]);

  const small = new EventLog(100, { maxReplyBytes: 1000 });
  // '€' is one character of JSON but three bytes on the wire: the budget counts bytes
  for (let i = 1; i <= 20; i++) small.append({ type: 'schedule_failed', time: i, message: '€'.repeat(96) });
  const seen: number[] = [];
  let after = 0;
  for (;;) {
    const page = small.query({ fromOldest: true, afterSeq: after });
    assert.ok(page.events.length === 3 || (page.next === undefined && page.events.length === 2), `${page.events.length} events of ~330 bytes in a 1000-byte page`);
    seen.push(...page.events.map((e) => e.seq!));
    if (page.next === undefined) break;
    after = page.next;
  }
  assert.equal(seen, Array.from({ length: 20 }, (_, i) => i + 1), 'every event once, in order');
});

test('list_events answers what the GCS published, each event carrying its seq', async () => {
  const h = await Harness.start({ eventHistory: 50 });
  try {
    await h.addNode({ nodeId: 'n1', labels: {} });
    await h.registerActor('a1', { labelSelector: { region: 'mars' } });
    await h.events.wait((e) => e.type === 'schedule_failed', 'schedule_failed');
    const r = await h.request('list_events', 'list_events', { types: ['schedule_failed', 'node_added'] });
    assert.equal(r.events.map((e: { type: string }) => e.type), ['node_added', 'schedule_failed']);
    const published = h.events.got.filter((e) => e.type === 'schedule_failed')[0];
    assert.is(r.events[1].seq, published.seq, 'the ring and the stream number events alike');
    assert.equal(r.events[1], published);
    assert.is(r.lastSeq, Math.max(...h.events.got.map((e) => e.seq!)));
  } finally {
    await h.close();
  }
});


test('a restarted GCS numbers on from the seq its store kept, and reports the seqs before it as gone', () => {
  const log = new EventLog(4, { firstSeq: 100 });
  assert.is(log.lastSeq, 100);
  assert.equal(log.query({}).events, []);
  for (let i = 1; i <= 6; i++) log.append(ev('lease_revoked', i));
  const newest = log.query({});
  assert.equal(newest.events.map((e) => e.seq), [103, 104, 105, 106]);
  assert.is(newest.omitted, 102, 'seqs 1..102 are not held: 100 from the earlier GCS, 2 pushed out');
  const pages = log.query({ afterSeq: 104, fromOldest: true });
  assert.equal(pages.events.map((e) => e.seq), [105, 106]);
});

test('the store is told a mark ahead of the seqs, before the first event and again when half of it is used; no seq handed out passes the last mark told', () => {
  const told: number[] = [];
  const log = new EventLog(8, { firstSeq: 100, reserve: (upTo) => told.push(upTo) });
  assert.equal(told, [100 + RESERVED_SEQS], 'told on creation, before any event');
  const seqs: number[] = [];
  const marks: number[] = [];
  for (let i = 1; i <= 3 * RESERVED_SEQS; i++) {
    seqs.push(log.append(ev('lease_revoked', i)).seq!);
    marks.push(told.at(-1)!);
  }
  assert.equal(seqs, Array.from({ length: 3 * RESERVED_SEQS }, (_, i) => 101 + i), 'one by one, on from the stored seq');
  assert.ok(seqs.every((seq, i) => seq <= marks[i]), 'each seq at or below the mark told when it was handed out');
  assert.ok(seqs.every((seq, i) => marks[i] - seq >= RESERVED_SEQS / 2), 'at least half a reservation in hand after every event');
  assert.ok(told.length - 1 <= (3 * RESERVED_SEQS) / (RESERVED_SEQS / 2), `one write per half reservation, not one per event (${told.length})`);

  // a GCS started from the last mark never hands out a seq the first one did
  const next = new EventLog(8, { firstSeq: told.at(-1)!, reserve: (upTo) => told.push(upTo) });
  const first = next.append(ev('lease_revoked', 0)).seq!;
  assert.ok(first > Math.max(...seqs));
  assert.ok(first - Math.max(...seqs) <= RESERVED_SEQS + 1, 'skipping at most a reservation');
});

test.run();
