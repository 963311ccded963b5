// Who says a newer GCS leads. A raylet that refuses a request as STALE_EPOCH has heard of a newer
// leader, and the GCS gives its lease up (docs/failover.md, "Epochs"). The GCS's own fenced bus
// (fenced-bus.ts) refuses its requests with the same code while its lease is lapsed — a renewal
// that came late because the GCS was busy — and that must not count: it made a GCS flooded with
// 100,000 create_pg requests step down and recover over and over, each time telling its log that
// "a raylet refused" what no raylet had seen. Here the bundle client and the raylet client, on the
// memory bus, against a stub raylet, with a lease the spec sets.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { encodeError, encodeOk } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { BundleClient } from '../../../runtime/gcs/bundle-client.ts';
import { fencedBus, type Validity } from '../../../runtime/gcs/fenced-bus.ts';
import { RayletClient } from '../../../runtime/gcs/raylets.ts';

const NODE = 'n0000000000000001';
const SUBJECTS = subjects('stale');

function lease(valid: boolean): Validity {
  return { valid: () => valid, onValidityChange: () => () => {} };
}

/** A GCS side (bundle and raylet clients on a fenced bus) and a stub raylet that refuses or accepts everything. */
function setUp(opts: { leaseValid: boolean; raylet: 'refuses-stale' | 'accepts' }) {
  const broker = new MemoryBroker();
  const raylet = connectMemoryBus(broker);
  const asked: string[] = [];
  raylet.subscribe(`${SUBJECTS.raylet(NODE, 'prepare_bundle').replace(/prepare_bundle$/, '*')}`, (msg) => {
    asked.push(msg.subject.split('.').at(-1)!);
    if (opts.raylet === 'refuses-stale') msg.respond(encodeError(new OrreryError('STALE_EPOCH', 'epoch 1 is older than the leader\'s (2): refused')));
    else msg.respond(encodeOk(msg.subject.endsWith('kill_actor') ? null : {}));
  });
  const bus = fencedBus(connectMemoryBus(broker), lease(opts.leaseValid));
  let stale = 0;
  const log: string[] = [];
  const deps = { bus, subjects: SUBJECTS, log: (line: string) => log.push(line), epoch: 1, staleEpoch: () => void stale++ };
  const bundles = new BundleClient({ ...deps, timeoutMs: 2_000 });
  const raylets = new RayletClient({ ...deps, createTimeoutMs: 2_000, killTimeoutMs: 2_000 });
  return { bundles, raylets, asked, stale: () => stale, log };
}

test('a raylet refusing a bundle request or a kill as STALE_EPOCH makes the GCS give its lease up', async () => {
  const s = setUp({ leaseValid: true, raylet: 'refuses-stale' });
  const outcome = await s.bundles.prepare(NODE, { pgId: 'pg1', index: 0, resources: { CPU: 1 } });
  assert.is(outcome.ok, false);
  assert.is(s.stale(), 1, 'the prepare refused as stale');
  await s.raylets.kill(NODE, 'a1', 0);
  assert.is(s.stale(), 2, 'the kill refused as stale');
  assert.equal(s.asked, ['prepare_bundle', 'kill_actor'], 'both reached the raylet');
});

test("this GCS's own fence refusing its requests while its lease is lapsed does not: nothing reached a raylet", async () => {
  const s = setUp({ leaseValid: false, raylet: 'refuses-stale' });
  const outcome = await s.bundles.prepare(NODE, { pgId: 'pg1', index: 0, resources: { CPU: 1 } });
  assert.is(outcome.ok, false, 'the prepare still fails: nothing went out');
  assert.ok(!outcome.ok && outcome.unanswered, 'unanswered: the group is tried again, a cancel sent again');
  assert.ok(!outcome.ok && !outcome.unreachable, 'but its node is not kept out of the next round: no raylet was asked');
  assert.ok(!outcome.ok && outcome.cause.includes('STALE_EPOCH'), 'its cause says why');
  await s.bundles.commit(NODE, { pgId: 'pg1', index: 0 });
  await s.bundles.cancel(NODE, { pgId: 'pg1', index: 0 });
  await s.raylets.kill(NODE, 'a1', 0);
  assert.is(s.stale(), 0, 'no step-down');
  assert.equal(s.asked, [], 'nothing reached the raylet');
});

test('an accepting raylet: no step-down either way', async () => {
  const s = setUp({ leaseValid: true, raylet: 'accepts' });
  await s.raylets.kill(NODE, 'a1', 0);
  assert.is(s.stale(), 0);
  assert.equal(s.asked, ['kill_actor']);
});

test.run();
