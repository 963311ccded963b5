// The GCS's create_actor (raylets.ts) when its own connection drops while it waits, or the raylet
// does not answer within the create timeout: the raylet may be creating the actor (a constructor may
// take minutes) and its answer is still to come or went with the connection, so the create is sent
// again, the same incarnation, until answered or the actor moves on — never counted as a failed
// creation. On the memory bus, with a stub raylet, and a bus whose first requests fail as a dropped
// connection does. And kill_actor answered without the node's secret: sent again for a node timeout.
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
import { until } from '../../helpers/until.ts';

const NODE = 'n0000000000000001';
const SUBJECTS = subjects('lost');

/** A stub raylet answering every create, and a GCS bus whose first `drops` requests fail as a dropped connection. */
function setUp(drops: number, createTimeoutMs = 5_000) {
  const broker = new MemoryBroker();
  const raylet = connectMemoryBus(broker);
  const creates: { actorId: string; incarnation: number }[] = [];
  /** The attempts (counted from 0) the raylet leaves unanswered, as a constructor still running does. */
  const silent = new Set<number>();
  const sub = raylet.subscribe(SUBJECTS.raylet(NODE, 'create_actor'), (msg) => {
    const { body } = decode(msg.data) as { body: { actorId: string; incarnation: number } };
    creates.push({ actorId: body.actorId, incarnation: body.incarnation });
    if (!silent.has(creates.length - 1)) msg.respond(encodeOk({ actorId: body.actorId, incarnation: body.incarnation, pid: 1 }));
  });
  const real = connectMemoryBus(broker);
  let left = drops;
  const bus = Object.create(real) as Bus;
  const sent = { requests: 0 };
  bus.request = (subject, data, opts) => (sent.requests++, left-- > 0 ? Promise.reject(new ConnectionLostError(subject)) : real.request(subject, data, opts));
  const log: string[] = [];
  const raylets = new RayletClient({ bus, subjects: SUBJECTS, log: (l: string) => log.push(l), epoch: 0, staleEpoch: () => undefined, createTimeoutMs, killTimeoutMs: 2_000 });
  /** The raylet goes away: its subject has no subscriber from now on (NO_RESPONDERS). */
  const gone = (): void => sub.unsubscribe();
  return { raylets, creates, silent, gone, sent, log };
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

test('a connection down longer than the create timeout: asked again once it is back, and created', async () => {
  // six drops: 50 + 100 + 200 + 400 + 800 + 1,000 ms of pauses, well past a 300 ms create timeout
  const s = setUp(6, 300);
  const spec = createSpec('Counter', { args: [1] });
  assert.equal(await s.raylets.create(NODE, spec), { kind: 'created' });
  assert.equal(s.creates, [{ actorId: spec.actorId, incarnation: spec.incarnation }]);
});

test('a raylet that does not answer within the create timeout (the constructor still runs) is asked again, the same incarnation, at once: created once it answers', async () => {
  const s = setUp(0, 100);
  s.silent.add(0);
  s.silent.add(1);
  const spec = createSpec('Counter', { args: [1] });
  assert.equal(await s.raylets.create(NODE, spec), { kind: 'created' });
  assert.equal(s.creates.map((c) => c.incarnation), [spec.incarnation, spec.incarnation, spec.incarnation], 'three attempts, one incarnation');
  assert.equal(s.log, [`actor ${spec.actorId} (incarnation ${spec.incarnation}): node ${NODE} has not answered its create_actor within 100 ms (its constructor may still run); asking again until it answers or the node dies`], 'said once');
});

test('a raylet gone after an attempt that timed out (it may have died of the constructor): NO_RESPONDERS is not taken as never delivered; asked again until the actor moves on (its node declared dead)', async () => {
  const s = setUp(0, 100);
  s.silent.add(0);
  let wanted = true;
  const spec = createSpec('Counter', { args: [1] });
  const outcome = s.raylets.create(NODE, spec, () => wanted);
  await until('the first attempt sent', () => (s.creates.length === 1 ? true : undefined));
  s.gone();
  // the first attempt timed out, and two more met no raylet: still asking
  await until('two attempts after the raylet went', () => (s.sent.requests >= 3 ? true : undefined));
  let settled: unknown;
  void outcome.then((o) => (settled = o));
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(settled, undefined, 'still asking while the node may live');
  wanted = false; // the node is declared dead: the actor fails over
  const result = await outcome;
  assert.equal(result, { kind: 'unreachable', cause: `create_actor on node ${NODE}: not sent again: the actor moved on`, noResponders: false });
});

test('a GCS that stops (steps down) while it asks sends nothing more, saying why', async () => {
  const s = setUp(Number.POSITIVE_INFINITY);
  const outcome = s.raylets.create(NODE, createSpec('Counter', { args: [1] }));
  s.raylets.stop();
  const settled = await outcome;
  assert.is(settled.kind, 'unreachable');
  assert.match((settled as { cause: string }).cause, /this GCS stopped before it was answered/);
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


const NODE_TIMEOUT_MS = 1_500;

test('a raylet that answers kill_actor without its secret (one from before kills were signed) is sent the kill again for a node timeout, then no more', async () => {
  const broker = new MemoryBroker();
  const raylet = connectMemoryBus(broker);
  const kills: number[] = [];
  raylet.subscribe(SUBJECTS.raylet(NODE, 'kill_actor'), (msg) => {
    kills.push(performance.now());
    msg.respond(encodeOk({ killed: true }));
  });
  const forged: string[] = [];
  const raylets = new RayletClient({
    bus: connectMemoryBus(broker), subjects: SUBJECTS, log: () => undefined, epoch: 0, staleEpoch: () => undefined, createTimeoutMs: 5_000, killTimeoutMs: 2_000,
    answeredBy: (_nodeId, secret) => secret === 'the-secret', forged: (_nodeId, verb) => forged.push(verb), nodeLive: () => true, nodeTimeoutMs: NODE_TIMEOUT_MS,
  });
  const first = performance.now();
  await raylets.kill(NODE, 'a1', 0);
  // sent again 250, 500, 1,000 ms apart while the answers come within the node timeout; the first
  // answered after it ends the sending (3 s without a kill: no more come)
  await until('the kill sent no more', () => (kills.length >= 2 && performance.now() - kills[kills.length - 1] > 3_000 ? true : undefined), 20_000);
  const at = kills.map((t) => Math.round(t - first)).join(', ');
  assert.ok(kills.length >= 2 && kills.length <= 6, `sent again, a few times: at ${at} ms`);
  assert.ok(kills.slice(0, -1).every((t) => t - first < NODE_TIMEOUT_MS), `each attempt sent again came within the node timeout: at ${at} ms`);
  assert.is(forged.length, kills.length, 'each unsigned answer counted');
  raylets.stop();
});

test('a kill answered with the node\'s secret is sent once', async () => {
  const broker = new MemoryBroker();
  const raylet = connectMemoryBus(broker);
  let kills = 0;
  raylet.subscribe(SUBJECTS.raylet(NODE, 'kill_actor'), (msg) => {
    kills++;
    msg.respond(encodeOk({ killed: true, secret: 'the-secret' }));
  });
  const raylets = new RayletClient({
    bus: connectMemoryBus(broker), subjects: SUBJECTS, log: () => undefined, epoch: 0, staleEpoch: () => undefined, createTimeoutMs: 5_000, killTimeoutMs: 2_000,
    answeredBy: (_nodeId, secret) => secret === 'the-secret', nodeLive: () => true, nodeTimeoutMs: NODE_TIMEOUT_MS,
  });
  await raylets.kill(NODE, 'a1', 0);
  await raylets.kill(NODE, 'a2', 0);
  assert.is(kills, 2);
  raylets.stop();
});

test.run();
