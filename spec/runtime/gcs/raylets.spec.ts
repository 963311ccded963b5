// The GCS's create_actor (raylets.ts) when its own connection drops while it waits: the raylet may
// be creating the actor and its answer went with the connection, so the create is sent again, the
// same incarnation, until answered or the create timeout — not counted as a failed creation. On the
// memory bus, with a stub raylet, and a bus whose first requests fail as a dropped connection does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode } from '../../../protocols/codec.ts';
import { encodeOk } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { ConnectionLostError } from '../../../runtime/bus/errors.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { RayletClient } from '../../../runtime/gcs/raylets.ts';
import { createSpec } from '../worker/support.ts';

const NODE = 'n0000000000000001';
const SUBJECTS = subjects('lost');

/** A stub raylet answering every create, and a GCS bus whose first `drops` requests fail as a dropped connection. */
function setUp(drops: number, createTimeoutMs = 5_000) {
  const broker = new MemoryBroker();
  const raylet = connectMemoryBus(broker);
  const creates: { actorId: string; incarnation: number }[] = [];
  raylet.subscribe(SUBJECTS.raylet(NODE, 'create_actor'), (msg) => {
    const { body } = decode(msg.data) as { body: { actorId: string; incarnation: number } };
    creates.push({ actorId: body.actorId, incarnation: body.incarnation });
    msg.respond(encodeOk({ actorId: body.actorId, incarnation: body.incarnation, pid: 1 }));
  });
  const real = connectMemoryBus(broker);
  let left = drops;
  const bus = Object.create(real) as Bus;
  bus.request = (subject, data, opts) => (left-- > 0 ? Promise.reject(new ConnectionLostError(subject)) : real.request(subject, data, opts));
  const log: string[] = [];
  const raylets = new RayletClient({ bus, subjects: SUBJECTS, log: (l: string) => log.push(l), epoch: 0, staleEpoch: () => undefined, createTimeoutMs, killTimeoutMs: 2_000 });
  return { raylets, creates };
}

// the client's pauses are unref'd timers (a GCS has its connection to keep it running): this keeps the spec's process up
let alive: NodeJS.Timeout;
test.before(() => void (alive = setInterval(() => undefined, 60_000)));
test.after(() => clearInterval(alive));

test('a create whose connection dropped twice is sent again and answered: created, the same incarnation each time', async () => {
  const s = setUp(2);
  const spec = createSpec('Counter', { args: [1] });
  const outcome = await s.raylets.create(NODE, spec);
  assert.equal(outcome, { kind: 'created' });
  assert.equal(s.creates, [{ actorId: spec.actorId, incarnation: spec.incarnation }], 'only the attempt that left reached the raylet');
});

test('a connection down past the create timeout is the node unreachable, saying why', async () => {
  const s = setUp(Number.POSITIVE_INFINITY, 300);
  const outcome = await s.raylets.create(NODE, createSpec('Counter', { args: [1] }));
  assert.is(outcome.kind, 'unreachable');
  assert.match((outcome as { cause: string }).cause, /CONNECTION_LOST: this GCS was cut off from the bus until the create timeout/);
  assert.equal(s.creates, []);
});

test('a create the actor no longer waits for (killed meanwhile) is not sent again: a raylet that dropped it would start it anew', async () => {
  const s = setUp(1);
  let wanted = true;
  const spec = createSpec('Counter', { args: [1] });
  const outcome = s.raylets.create(NODE, spec, () => wanted);
  wanted = false; // the kill lands while the first attempt's answer is lost
  const settled = await outcome;
  assert.is(settled.kind, 'unreachable');
  assert.match((settled as { cause: string }).cause, /not sent again: the actor moved on/);
  assert.equal(s.creates, [], 'nothing reached the raylet again');
});

test.run();
