// The raylet's fence (runtime/raylet/fence.ts) stepped with a manual clock: the lease counts from
// the send time of the newest acknowledged heartbeat, NO_RESPONDERS extends it (not after known:false
// until a registration is acknowledged), and a late acknowledgement lifts nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Fence, leaseFromNodeTimeout } from '../../../runtime/raylet/fence.ts';
import { ManualClock } from '../../helpers/manual-clock.ts';

const LEASE = 600;

function setup() {
  const clock = new ManualClock();
  const log: string[] = [];
  const fence = new Fence({
    clock,
    onFence: () => log.push('fence'),
    onUnfence: () => log.push('unfence'),
    onRenew: (ms) => log.push(`renew ${ms}`),
  });
  fence.setLease(LEASE);
  return { clock, log, fence };
}

test('the lease is 60% of the node timeout unless told otherwise', () => {
  assert.is(leaseFromNodeTimeout(3000), 1800);
  assert.is(leaseFromNodeTimeout(1500, 0.5), 750);
  for (const bad of [0, 1, 1.2, -0.5, Number.NaN]) assert.throws(() => leaseFromNodeTimeout(3000, bad), /strictly between 0 and 1/, String(bad));
});

test('fences when no heartbeat was acknowledged for the lease, counted from the send time', () => {
  const { clock, log, fence } = setup();
  fence.acked(0); // registration sent at 0
  clock.advance(100);
  fence.acked(50); // heartbeat sent at 50, answered at 100
  assert.equal(log, ['renew 600', 'renew 550']);
  clock.advance(549);
  assert.is(fence.fenced, false);
  assert.is(fence.remainingMs(), 1);
  clock.advance(1);
  assert.is(fence.fenced, true);
  assert.is(fence.remainingMs(), 0);
  assert.equal(log.at(-1), 'fence');
});

test('a heartbeat acknowledged again lifts the fence and renews for what is left', () => {
  const { clock, log, fence } = setup();
  fence.acked(0);
  clock.advance(700);
  assert.is(fence.fenced, true);
  fence.acked(650); // sent at 650, answered at 700
  assert.is(fence.fenced, false);
  assert.equal(log.slice(-3), ['fence', 'unfence', 'renew 550']);
});

test('an acknowledgement whose lease already ran out (a raylet frozen while its answer waited) lifts nothing', () => {
  const { clock, log, fence } = setup();
  fence.acked(0);
  clock.advance(10_000);
  fence.acked(100);
  assert.is(fence.fenced, true);
  assert.equal(log, ['renew 600', 'fence']);
});

test('an older acknowledgement arriving after a newer one does not shorten the lease', () => {
  const { clock, fence } = setup();
  fence.acked(0);
  clock.advance(300);
  fence.acked(200);
  fence.acked(100);
  assert.is(fence.remainingMs(), 500);
});

test('NO_RESPONDERS alone (no GCS subscribed at all) never fences: each one counts from its send time', () => {
  const { clock, fence } = setup();
  fence.acked(0);
  for (let t = 200; t <= 5000; t += 200) {
    clock.advance(200);
    fence.failed('NO_RESPONDERS', t);
    assert.is(fence.fenced, false, `at ${t} ms`);
  }
});

test('a NO_RESPONDERS after a TIMEOUT extends the lease again: the heartbeat in flight when the GCS died timed out', () => {
  const { clock, fence } = setup();
  fence.acked(0);
  clock.advance(200);
  fence.failed('TIMEOUT', 200); // sent to a GCS that died before answering
  clock.advance(200);
  fence.failed('NO_RESPONDERS', 400); // no GCS subscribed now: nobody can move the actors
  clock.advance(599);
  assert.is(fence.fenced, false, 'deadline 1000, from the NO_RESPONDERS send time');
  clock.advance(1);
  assert.is(fence.fenced, true);
});

test('table: failures other than NO_RESPONDERS fence at the deadline', () => {
  for (const code of ['TIMEOUT', 'BUS_ERROR', 'BUS_CLOSED', 'INTERNAL']) {
    const { clock, fence } = setup();
    fence.acked(0);
    clock.advance(300);
    fence.failed(code, 300);
    clock.advance(299);
    assert.is(fence.fenced, false, code);
    clock.advance(1);
    assert.is(fence.fenced, true, code);
  }
});

test('known:false does not fence at once, but only an acknowledgement of something sent after it extends the lease', () => {
  const { clock, log, fence } = setup();
  fence.acked(0);
  clock.advance(100);
  fence.forgotten();
  assert.is(fence.fenced, false, 'the lease still runs: the GCS cannot have moved the actors before it ran out');
  fence.acked(50); // a beat sent before the GCS forgot the node
  clock.advance(100);
  fence.failed('NO_RESPONDERS', 200); // that GCS may have moved the actors and died: counts for nothing
  clock.advance(400);
  assert.is(fence.fenced, true, 'fenced at 600, the lease from the last acknowledgement');
  fence.acked(650); // the registration sent after it
  assert.is(fence.fenced, false);
  clock.advance(100);
  fence.failed('NO_RESPONDERS', 750);
  assert.equal(log, ['renew 600', 'fence', 'unfence', 'renew 650', 'renew 650']);
});

test('without a node timeout from the GCS the fence is never armed', () => {
  const clock = new ManualClock();
  const log: string[] = [];
  const fence = new Fence({ clock, onFence: () => log.push('fence'), onUnfence: () => log.push('unfence'), onRenew: () => log.push('renew') });
  fence.acked(0);
  fence.failed('TIMEOUT', 10);
  fence.forgotten();
  clock.advance(100_000);
  assert.equal(log, []);
  assert.is(fence.remainingMs(), undefined);
  assert.is(clock.pending, 0);
});

test('stop() leaves no timer behind', () => {
  const { clock, fence } = setup();
  fence.acked(0);
  fence.stop();
  assert.is(clock.pending, 0);
});

test.run();
