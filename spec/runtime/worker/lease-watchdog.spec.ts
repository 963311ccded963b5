// A worker host's watchdog on its raylet (runtime/worker/lease-watchdog.ts), stepped with a manual
// clock and a manual wall clock: it expires when no renewal came for the lease granted, a renewal
// after that brings it back, the time a renewal spent on its way is taken off, and fence is at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LeaseWatchdog } from '../../../runtime/worker/lease-watchdog.ts';
import { ManualClock } from '../../helpers/manual-clock.ts';

function setup() {
  const clock = new ManualClock();
  let wall = 1_000_000;
  const log: string[] = [];
  const late: number[] = [];
  const dog = new LeaseWatchdog({ clock, wallNow: () => wall + clock.now(), onExpire: (lateMs) => (log.push('expire'), late.push(lateMs)), onRenew: () => log.push('renew') });
  const sentAt = (agoMs = 0): number => wall + clock.now() - agoMs;
  return { clock, log, late, dog, sentAt, jumpWall: (ms: number) => (wall += ms) };
}

test('expires when no renewal came for the lease the raylet granted', () => {
  const { clock, log, dog, sentAt } = setup();
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() });
  clock.advance(499);
  assert.is(dog.live, true);
  clock.advance(1);
  assert.is(dog.live, false);
  assert.equal(log, ['expire']);
});

test('each renewal moves the deadline; one after expiry brings the host back', () => {
  const { clock, log, dog, sentAt } = setup();
  for (let i = 0; i < 10; i++) {
    dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() });
    clock.advance(400);
  }
  assert.equal(log, []);
  clock.advance(100);
  assert.equal(log, ['expire']);
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() });
  assert.is(dog.live, true);
  assert.equal(log, ['expire', 'renew']);
});

test('an expiry noticed late (the host\'s loop was held) says how late; one on time, or a fence, says 0', () => {
  const { clock, late, dog, sentAt } = setup();
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() });
  clock.stall(4_800); // a constructor holds the loop past the lease
  clock.advance(0);
  assert.equal(late, [4_300]);
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() }); // the renewal read right after
  clock.advance(500);
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() });
  dog.apply({ type: 'fence' });
  assert.equal(late, [4_300, 0, 0]);
});

test('table: the time a renewal spent on its way is taken off what it grants', () => {
  const cases = [
    { name: 'sent now', remainingMs: 500, agoMs: 0, liveAfter: 499 },
    { name: 'sent 200 ms ago', remainingMs: 500, agoMs: 200, liveAfter: 299 },
    { name: 'written by a raylet frozen past the lease', remainingMs: 500, agoMs: 10_000, liveAfter: -1 },
  ];
  for (const c of cases) {
    const { clock, dog, sentAt } = setup();
    dog.apply({ type: 'renew', remainingMs: c.remainingMs, sentAt: sentAt(c.agoMs) });
    if (c.liveAfter < 0) {
      assert.is(dog.live, false, c.name);
      continue;
    }
    clock.advance(c.liveAfter);
    assert.is(dog.live, true, c.name);
    clock.advance(1);
    assert.is(dog.live, false, c.name);
  }
});

test('a wall clock stepped backwards grants no more than remainingMs', () => {
  const { clock, dog, sentAt, jumpWall } = setup();
  const at = sentAt();
  jumpWall(-60_000);
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: at });
  clock.advance(500);
  assert.is(dog.live, false);
});

test('fence expires it at once and leaves no timer; a second fence changes nothing', () => {
  const { clock, log, dog, sentAt } = setup();
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() });
  dog.apply({ type: 'fence' });
  dog.apply({ type: 'fence' });
  assert.is(dog.live, false);
  assert.is(clock.pending, 0);
  assert.equal(log, ['expire']);
});

test('stop() leaves no timer behind', () => {
  const { clock, dog, sentAt } = setup();
  dog.apply({ type: 'renew', remainingMs: 500, sentAt: sentAt() });
  dog.stop();
  assert.is(clock.pending, 0);
});

test.run();
