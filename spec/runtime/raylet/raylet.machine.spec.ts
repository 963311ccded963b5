import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { OrreryError } from '../../../lib/errors.ts';
import { rayletMachine, type HeartbeatInput } from '../../../runtime/raylet/raylet.machine.ts';

/**
 * The Raylet machine stepped with a simulated clock and scripted GCS answers: each register or
 * heartbeat takes the next answer from its script (a value, an error code to throw, or a `Later`
 * the spec settles when it likes).
 */
type Answer<T> = T | { error: string } | Later<T>;

/** An answer the spec gives later (or never). */
class Later<T> {
  settle!: (value: T) => void;
  readonly promise = new Promise<T>((resolve) => (this.settle = resolve));
}

function harness(script: { register: Answer<{ heartbeatMs: number }>[]; heartbeat: Answer<{ known: boolean }>[]; connect?: Answer<void> }) {
  const calls: string[] = [];
  const beats: { seq: number; at: number; timeoutMs: number }[] = [];
  const clock = new SimulatedClock();
  const next = async <T>(kind: string, list: Answer<T>[]): Promise<T> => {
    const answer = list.shift();
    if (answer === undefined) return new Promise<T>(() => {}); // unanswered: the spec did not script further
    if (answer instanceof Later) return answer.promise;
    if (answer !== null && typeof answer === 'object' && 'error' in answer) throw new OrreryError(answer.error, `${kind} failed`);
    return answer as T;
  };
  const machine = rayletMachine.provide({
    actors: {
      connect: fromPromise(async () => {
        calls.push('connect');
        if (script.connect) await next('connect', [script.connect]);
      }),
      register: fromPromise(async () => {
        calls.push('register');
        return next('register', script.register);
      }),
      heartbeat: fromPromise(async ({ input }: { input: HeartbeatInput }) => {
        calls.push(`heartbeat ${input.seq}`);
        beats.push({ seq: input.seq, at: clock.now(), timeoutMs: input.timeoutMs });
        return next('heartbeat', script.heartbeat);
      }),
    },
    actions: { forgetActors: () => void calls.push('forget') },
  });
  const actor = createActor(machine, { input: { nodeId: 'n1', heartbeatMs: 1000, retryMs: 200 }, clock });
  actor.start();
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    actor,
    calls,
    beats,
    phase: () => {
      const v = actor.getSnapshot().value;
      return typeof v === 'string' ? v : Object.keys(v)[0];
    },
    /** Advances simulated time and lets the invoked promises settle. */
    tick: async (ms: number) => {
      await settle();
      clock.increment(ms);
      await settle();
    },
    settle,
  };
}

test('connects, registers, then heartbeats at the pace of the reply with a growing seq', async () => {
  const h = harness({ register: [{ heartbeatMs: 50 }], heartbeat: [{ known: true }, { known: true }, { known: true }] });
  await h.settle();
  assert.is(h.phase(), 'running');
  assert.equal(h.calls, ['connect', 'register']);
  await h.tick(49);
  assert.equal(h.calls, ['connect', 'register']);
  await h.tick(1);
  await h.tick(50);
  await h.tick(50);
  assert.equal(h.calls, ['connect', 'register', 'heartbeat 1', 'heartbeat 2', 'heartbeat 3']);
  const ctx = h.actor.getSnapshot().context;
  assert.equal([ctx.seq, ctx.heartbeatMs, ctx.registrations], [3, 50, 1]);
});

test('a registration nobody answers is retried every retryMs', async () => {
  const h = harness({ register: [{ error: 'NO_RESPONDERS' }, { error: 'TIMEOUT' }, { heartbeatMs: 100 }], heartbeat: [] });
  await h.settle();
  assert.is(h.phase(), 'registering');
  await h.tick(199);
  assert.equal(h.calls, ['connect', 'register']);
  await h.tick(1);
  assert.equal(h.calls, ['connect', 'register', 'register']);
  await h.tick(200);
  assert.is(h.phase(), 'running');
  assert.is(h.actor.getSnapshot().context.misses, 0);
});

test('a registration the GCS refuses stops the machine with the error', async () => {
  const h = harness({ register: [{ error: 'INVALID_LABEL' }], heartbeat: [] });
  await h.settle();
  const snap = h.actor.getSnapshot();
  assert.is(snap.status, 'done');
  assert.equal(snap.context.error, { code: 'INVALID_LABEL', message: 'register failed' });
});

test('known:false forgets the actors and registers again', async () => {
  const h = harness({ register: [{ heartbeatMs: 10 }, { heartbeatMs: 20 }], heartbeat: [{ known: false }, { known: true }] });
  await h.settle();
  await h.tick(10);
  assert.equal(h.calls, ['connect', 'register', 'heartbeat 1', 'forget', 'register']);
  assert.is(h.phase(), 'running');
  assert.equal([h.actor.getSnapshot().context.registrations, h.actor.getSnapshot().context.heartbeatMs], [2, 20]);
  await h.tick(20);
  assert.equal(h.calls.at(-1), 'heartbeat 2');
});

test('an unanswered heartbeat moves to reconnecting, which beats on until the GCS answers', async () => {
  const h = harness({
    register: [{ heartbeatMs: 10 }],
    heartbeat: [{ error: 'TIMEOUT' }, { error: 'NO_RESPONDERS' }, { known: true }, { known: true }],
  });
  await h.settle();
  await h.tick(10);
  assert.is(h.phase(), 'reconnecting');
  await h.tick(10);
  assert.is(h.phase(), 'reconnecting');
  assert.is(h.actor.getSnapshot().context.misses, 2);
  await h.tick(10);
  assert.is(h.phase(), 'running');
  assert.is(h.actor.getSnapshot().context.misses, 0);
  await h.tick(10);
  assert.equal(h.calls.slice(2), ['heartbeat 1', 'heartbeat 2', 'heartbeat 3', 'heartbeat 4']);
});

test('reconnecting that hears known:false registers again', async () => {
  const h = harness({ register: [{ heartbeatMs: 10 }, { heartbeatMs: 10 }], heartbeat: [{ error: 'TIMEOUT' }, { known: false }] });
  await h.settle();
  await h.tick(10);
  await h.tick(10);
  assert.equal(h.calls.slice(-3), ['heartbeat 2', 'forget', 'register']);
  assert.is(h.phase(), 'running');
});

test('GCS_ANNOUNCED beats at once: from waiting, and in place of a beat in flight (whose late answer is then ignored), no miss counted', async () => {
  const lost = new Later<{ known: boolean }>();
  const h = harness({ register: [{ heartbeatMs: 1000 }, { heartbeatMs: 1000 }], heartbeat: [lost, { known: false }] });
  await h.settle();
  assert.is(h.phase(), 'running');
  assert.equal(h.beats, [], 'the first beat is not due yet');
  // waiting for the next beat: it goes now
  h.actor.send({ type: 'GCS_ANNOUNCED' });
  await h.settle();
  assert.equal(h.beats.map((b) => [b.seq, b.at]), [[1, 0]]);
  // beat 1 is in flight to a GCS that will not answer: another announcement sends beat 2 at once
  h.actor.send({ type: 'GCS_ANNOUNCED' });
  await h.settle();
  assert.equal(h.beats.map((b) => [b.seq, b.at]), [[1, 0], [2, 0]]);
  // the new GCS does not know the node: the raylet registers again; beat 1's late answer changes nothing
  assert.equal(h.calls.slice(-2), ['forget', 'register']);
  lost.settle({ known: false });
  await h.settle();
  assert.is(h.calls.filter((c) => c === 'forget').length, 1);
  assert.is(h.phase(), 'running');
  assert.is(h.actor.getSnapshot().context.misses, 0);
});

test('GCS_ANNOUNCED while a registration waits to be retried: it is retried at once', async () => {
  const h = harness({ register: [{ error: 'NO_RESPONDERS' }, { heartbeatMs: 1000 }], heartbeat: [] });
  await h.settle();
  assert.equal(h.calls, ['connect', 'register']);
  h.actor.send({ type: 'GCS_ANNOUNCED' });
  await h.settle();
  assert.equal(h.calls, ['connect', 'register', 'register'], 'before retryMs passed');
  assert.is(h.phase(), 'running');
});

test("GCS_ANNOUNCED while a registration is in flight sends it again; the first one's late answer is ignored", async () => {
  const lost = new Later<{ heartbeatMs: number }>();
  const h = harness({ register: [lost, { heartbeatMs: 1000 }], heartbeat: [] });
  await h.settle();
  assert.equal(h.calls, ['connect', 'register']);
  h.actor.send({ type: 'GCS_ANNOUNCED' });
  await h.settle();
  assert.equal(h.calls, ['connect', 'register', 'register']);
  assert.is(h.phase(), 'running');
  assert.is(h.actor.getSnapshot().context.registrations, 1);
  lost.settle({ heartbeatMs: 5 });
  await h.settle();
  assert.is(h.actor.getSnapshot().context.registrations, 1, 'the abandoned attempt counts for nothing');
  assert.is(h.actor.getSnapshot().context.heartbeatMs, 1000);
});

test('GCS_ANNOUNCED while reconnecting beats at once', async () => {
  const h = harness({ register: [{ heartbeatMs: 1000 }], heartbeat: [{ error: 'NO_RESPONDERS' }, { known: true }] });
  await h.settle();
  await h.tick(1000);
  assert.is(h.phase(), 'reconnecting');
  h.actor.send({ type: 'GCS_ANNOUNCED' });
  await h.settle();
  assert.equal(h.beats.map((b) => [b.seq, b.at]), [[1, 1000], [2, 1000]]);
  assert.is(h.phase(), 'running');
});

test('STOP from any state ends the machine; no heartbeat follows', async () => {
  const h = harness({ register: [{ heartbeatMs: 10 }], heartbeat: [{ known: true }] });
  await h.settle();
  h.actor.send({ type: 'STOP' });
  assert.is(h.actor.getSnapshot().status, 'done');
  await h.tick(100);
  assert.equal(h.calls, ['connect', 'register']);
});

test('the context survives a JSON round trip (plain data only)', async () => {
  const h = harness({ register: [{ error: 'INVALID_LABEL' }], heartbeat: [] });
  await h.settle();
  const ctx = h.actor.getSnapshot().context;
  assert.equal(JSON.parse(JSON.stringify(ctx)), ctx);
});

test('the pace does not wait for answers: a beat answered late is followed heartbeatMs after it went out', async () => {
  const slow = new Later<{ known: boolean }>();
  const h = harness({ register: [{ heartbeatMs: 100 }], heartbeat: [slow, { known: true }, { known: true }] });
  await h.settle();
  await h.tick(100);
  await h.tick(60);
  slow.settle({ known: true });
  await h.tick(40);
  await h.tick(100);
  assert.equal(h.beats.map((b) => [b.seq, b.at]), [[1, 100], [2, 200], [3, 300]]);
  assert.is(h.phase(), 'running');
  assert.is(h.actor.getSnapshot().context.misses, 0);
});

test('a beat still unanswered when the next is due: the next goes out on time with the next seq, from reconnecting', async () => {
  const h = harness({ register: [{ heartbeatMs: 100 }], heartbeat: [new Later(), new Later(), { known: true }] });
  await h.settle();
  await h.tick(100);
  await h.tick(99);
  assert.is(h.phase(), 'running', 'in flight, not missed yet');
  await h.tick(1);
  assert.is(h.phase(), 'reconnecting');
  assert.is(h.actor.getSnapshot().context.misses, 1);
  await h.tick(100);
  assert.equal(h.beats.map((b) => [b.seq, b.at]), [[1, 100], [2, 200], [3, 300]], 'never a gap longer than heartbeatMs');
  assert.is(h.phase(), 'running');
  assert.is(h.actor.getSnapshot().context.misses, 0);
});

test('the late answer of an abandoned beat is ignored, even known:false', async () => {
  const first = new Later<{ known: boolean }>();
  const h = harness({ register: [{ heartbeatMs: 100 }], heartbeat: [first, new Later()] });
  await h.settle();
  await h.tick(100);
  await h.tick(100);
  assert.is(h.phase(), 'reconnecting');
  first.settle({ known: false });
  await h.settle();
  assert.is(h.phase(), 'reconnecting');
  assert.not.ok(h.calls.includes('forget'), 'no actors dropped on an answer to a beat already abandoned');
  await h.tick(100);
  assert.equal(h.beats.map((b) => b.seq), [1, 2, 3]);
  assert.is(h.actor.getSnapshot().context.misses, 2);
});

test("a beat's request may wait two periods, so the beat timer decides; CONNECTION_LOST moves to reconnecting at once", async () => {
  const h = harness({ register: [{ heartbeatMs: 250 }], heartbeat: [{ error: 'CONNECTION_LOST' }, { error: 'CONNECTION_LOST' }, { known: true }] });
  await h.settle();
  await h.tick(250);
  assert.is(h.phase(), 'reconnecting');
  await h.tick(250);
  await h.tick(250);
  assert.equal(h.beats, [
    { seq: 1, at: 250, timeoutMs: 500 },
    { seq: 2, at: 500, timeoutMs: 500 },
    { seq: 3, at: 750, timeoutMs: 500 },
  ]);
  assert.is(h.phase(), 'running');
});

test('a registration that meets a lost connection is retried, not refused', async () => {
  const h = harness({ register: [{ error: 'CONNECTION_LOST' }, { heartbeatMs: 100 }], heartbeat: [] });
  await h.settle();
  assert.is(h.phase(), 'registering');
  await h.tick(200);
  assert.is(h.phase(), 'running');
});

test.run();
