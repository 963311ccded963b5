import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryKeyValue, type KvBucket } from '../../../runtime/bus/kv.ts';
import { LeaderLease } from '../../../runtime/gcs/leader.ts';
import { encode } from '../../../protocols/codec.ts';

// The leader lease on a MemoryKeyValue bucket (the JetStream bucket's compare-and-set is checked on a
// real server in spec/integration/kv.spec.ts). Renewals and standby polls run on real timers with a
// short ttl; every wait is on a condition (a promise the lease resolves), and the holder's clock is
// injected where a spec needs it to jump, as a frozen process's does.

const log = (): void => {};
const bucket = (): Promise<KvBucket> => new MemoryKeyValue().bucket('orrery_c_leader');

/** Resolves once the lease key has been written `n` more times (renewals), checked every few ms. */
async function renewals(b: KvBucket, n: number): Promise<void> {
  const from = (await b.get('lease'))!.revision;
  while ((await b.get('lease'))!.revision < from + n) await new Promise((resolve) => setTimeout(resolve, 5));
}

test('the first candidate takes the lease with epoch 1 and keeps it while it renews', async () => {
  const b = await bucket();
  const lease = new LeaderLease({ bucket: b, holder: 'a', ttlMs: 200, log });
  assert.is(await lease.acquire(), 1);
  assert.ok(lease.valid());
  await renewals(b, 3);
  assert.ok(lease.valid(), 'still held after three renewals');
  lease.stop();
  assert.not.ok(lease.valid(), 'a stopped lease is not held');
});

test('a standby waits while the leader renews and takes over with the next epoch once it stops', async () => {
  const b = await bucket();
  // a ttl that a busy machine's timers cannot overrun between two renewals
  const leader = new LeaderLease({ bucket: b, holder: 'a', ttlMs: 1000, log });
  await leader.acquire();
  const standby = new LeaderLease({ bucket: b, holder: 'b', ttlMs: 1000, log });
  let told: { holder: string; epoch: number } | undefined;
  let taken = false;
  const acquired = standby.acquire((held) => (told = held)).then((epoch) => ((taken = true), epoch));
  // eight renewals: two whole ttls in which the standby polled and saw the revision move
  await renewals(b, 8);
  assert.equal(told, { holder: 'a', epoch: 1 });
  assert.not.ok(taken, 'no takeover while the leader renews');
  leader.stop();
  assert.is(await acquired, 2);
  assert.ok(standby.valid());
  standby.stop();
});

test('a holder whose clock jumped past the lease (frozen, resumed) is not valid, and loses the lease at its next renewal', async () => {
  const b = await bucket();
  let skew = 0;
  const leader = new LeaderLease({ bucket: b, holder: 'a', ttlMs: 200, log, now: () => performance.now() + skew });
  await leader.acquire();
  // what a frozen process sees on waking: its clock ran on; meanwhile a standby took the lease
  const current = (await b.get('lease'))!;
  const standby = new LeaderLease({ bucket: b, holder: 'b', ttlMs: 200, log });
  leader.stop();
  const epoch = await standby.acquire();
  assert.is(epoch, 2);
  skew = 10_000;
  assert.not.ok(leader.valid(), 'past ttl - margin by its own clock: it may not act');
  assert.ok(current.revision < (await b.get('lease'))!.revision);
  standby.stop();
});

test('a renewal that finds the lease taken loses it at once, with the reason', async () => {
  const b = await bucket();
  const leader = new LeaderLease({ bucket: b, holder: 'a', ttlMs: 400, log });
  await leader.acquire();
  // someone else writes the key (a standby that judged it expired)
  const held = (await b.get('lease'))!;
  await b.update('lease', encode('stored_lease', { holder: 'b', epoch: 2 }), held.revision);
  assert.match(await leader.lost, /another GCS took the lease/);
  assert.not.ok(leader.valid());
});

test('a conflict over its own lease (a renewal stored, its acknowledgement lost) is no loss: it renews on', async () => {
  const b = await bucket();
  const leader = new LeaderLease({ bucket: b, holder: 'a', ttlMs: 400, log });
  await leader.acquire();
  let lost = false;
  void leader.lost.then(() => (lost = true));
  // what a renewal whose answer died with a NATS server leaves: the key moved, holding the same lease
  const held = (await b.get('lease'))!;
  await b.update('lease', held.value, held.revision);
  await renewals(b, 3);
  assert.not.ok(lost);
  assert.ok(leader.valid());
  assert.is(leader.epoch, 1);
  leader.stop();
});

test('of two standbys racing for an expired lease exactly one wins', async () => {
  const b = await bucket();
  const old = new LeaderLease({ bucket: b, holder: 'old', ttlMs: 100, log });
  await old.acquire();
  old.stop();
  const x = new LeaderLease({ bucket: b, holder: 'x', ttlMs: 100, log });
  const y = new LeaderLease({ bucket: b, holder: 'y', ttlMs: 100, log });
  // the loser's acquire() ends with an error once it is stopped below: that is expected
  const winner = await Promise.race([x.acquire().then(() => x, () => new Promise<never>(() => {})), y.acquire().then(() => y, () => new Promise<never>(() => {}))]);
  const loser = winner === x ? y : x;
  assert.is(winner.epoch, 2);
  assert.is(loser.epoch, 0);
  assert.not.ok(loser.valid());
  loser.stop();
  winner.stop();
});

test('a leader that releases its lease hands it over at once: a standby takes the next epoch without waiting out the ttl', async () => {
  const b = await bucket();
  // a ttl no run of this spec reaches: only the release can let the standby in
  const ttlMs = 600_000;
  const leader = new LeaderLease({ bucket: b, holder: 'a', ttlMs, renewMs: 10, log });
  assert.is(await leader.acquire(), 1);
  await renewals(b, 2);
  const lines: string[] = [];
  const standby = new LeaderLease({ bucket: b, holder: 'b', ttlMs, renewMs: 10, log: (line) => lines.push(line) });
  let waiting = false;
  const acquired = standby.acquire(() => (waiting = true));
  await new Promise<void>((resolve) => {
    const poll = (): void => void (waiting ? resolve() : setTimeout(poll, 5));
    poll();
  });
  leader.stop(); // as the GCS does on SIGTERM: no longer the leader, then it steps down
  await leader.release();
  assert.not.ok(leader.valid());
  assert.is(await acquired, 2);
  assert.ok(standby.valid());
  assert.equal(lines, ['leader lease: a released it (epoch 1); taken at once']);
  standby.stop();
});

test('a release after the lease was lost, or by a lease never held, writes nothing', async () => {
  const b = await bucket();
  const lease = new LeaderLease({ bucket: b, holder: 'a', ttlMs: 200, log });
  await lease.acquire();
  lease.giveUp('a raylet has heard from a newer leader');
  const revision = (await b.get('lease'))!.revision;
  await lease.release();
  await new LeaderLease({ bucket: b, holder: 'never', ttlMs: 200, log }).release();
  assert.is((await b.get('lease'))!.revision, revision);
});

test('giveUp ends the lease at once (a raylet heard from a newer leader)', async () => {
  const lease = new LeaderLease({ bucket: await bucket(), holder: 'a', ttlMs: 200, log });
  await lease.acquire();
  lease.giveUp('a raylet has heard from a newer leader');
  assert.is(await lease.lost, 'a raylet has heard from a newer leader');
  assert.not.ok(lease.valid());
});

test.run();
