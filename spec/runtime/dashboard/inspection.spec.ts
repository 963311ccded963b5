// The dashboard's shared inspection feed (runtime/dashboard/inspection.ts), on a stand-in source:
// it subscribes while pages follow, or from retain() on whether they do or not; a page that follows
// later gets the kept records first; and it keeps at most 5,000 instances, those changed last.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Observable, Subject } from 'rxjs';
import { InspectionFeed } from '../../../runtime/dashboard/inspection.ts';
import type { InspectAck, InspectRecord } from '../../../protocols/messages/inspect.ts';

function standIn() {
  const records = new Subject<InspectRecord>();
  const state = { subscriptions: 0, open: 0, ack: undefined as ((a: InspectAck) => void) | undefined };
  const feed = new InspectionFeed((onAck) => {
    state.ack = onAck;
    state.subscriptions++;
    return new Observable<InspectRecord>((subscriber) => {
      state.open++;
      const sub = records.subscribe(subscriber);
      return () => {
        state.open--;
        sub.unsubscribe();
      };
    });
  });
  return { feed, records, state };
}

let seq = 0;
const record = (id: string, to = 'ALIVE'): InspectRecord => ({ machine: 'actor', id, seq: ++seq, time: Date.now(), event: { type: 'x' }, from: null, to, context: {} });

test('without retain the feed subscribes while a page follows and stops with the last one', () => {
  const { feed, state } = standIn();
  assert.is(state.open, 0, 'nobody follows: the cluster is not asked to publish');
  const leave = feed.follow(() => {});
  assert.is(state.open, 1);
  leave();
  assert.is(state.open, 0);
  assert.is(feed.status().since, undefined);
});

test('retain() follows with no page; pages come and go without stopping it; a later page gets what came before it', () => {
  const { feed, records, state } = standIn();
  const before = Date.now();
  feed.retain();
  assert.is(state.open, 1);
  assert.ok(feed.status().since! >= before);
  state.ack!({ publisher: 'gcs:default' } as InspectAck);
  records.next(record('a', 'PENDING'));
  feed.follow(() => {})(); // a page opens and closes
  assert.is(state.open, 1, 'still following');
  records.next(record('a', 'ALIVE'));
  const seen: string[] = [];
  const attached: string[] = [];
  feed.follow((r) => seen.push(`${r.id}:${r.to}`), (p) => attached.push(p));
  assert.equal(seen, ['a:PENDING', 'a:ALIVE'], 'the kept records first, in order');
  assert.equal(attached, ['gcs:default']);
  assert.equal(feed.status().attached, ['gcs:default']);
  feed.stop();
  assert.is(state.open, 0);
});

test('it keeps the 5,000 instances that changed last: an instance that changes again is kept over older ones', () => {
  const { feed, records } = standIn();
  feed.retain();
  records.next(record('old'));
  records.next(record('touched'));
  for (let i = 0; i < 4998; i++) records.next(record(`n${i}`));
  records.next(record('touched', 'RESTARTING')); // moves to the newest end
  records.next(record('newest')); // 5,001 instances: the least recently changed ('old') goes
  const ids = new Set<string>();
  feed.follow((r) => ids.add(r.id))();
  assert.is(ids.size, 5000);
  assert.not.ok(ids.has('old'));
  assert.ok(ids.has('touched') && ids.has('newest') && ids.has('n0'));
  feed.stop();
});

test.run();
