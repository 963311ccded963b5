import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { OrreryError } from '../../../lib/errors.ts';
import { rayletMachine } from '../../../runtime/raylet/raylet.machine.ts';

/**
 * The Raylet machine stepped with a simulated clock and scripted GCS answers: each register or
 * heartbeat takes the next answer from its script (a value, or an error code to throw).
 */
type Answer<T> = T | { error: string };

function harness(script: { register: Answer<{ heartbeatMs: number }>[]; heartbeat: Answer<{ known: boolean }>[]; connect?: Answer<void> }) {
  const calls: string[] = [];
  const next = async <T>(kind: string, list: Answer<T>[]): Promise<T> => {
    const answer = list.shift();
    if (answer === undefined) return new Promise<T>(() => {}); // unanswered: the spec did not script further
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
      heartbeat: fromPromise(async ({ input }: { input: { seq: number } }) => {
        calls.push(`heartbeat ${input.seq}`);
        return next('heartbeat', script.heartbeat);
      }),
    },
    actions: { forgetActors: () => void calls.push('forget') },
  });
  const clock = new SimulatedClock();
  const actor = createActor(machine, { input: { nodeId: 'n1', heartbeatMs: 1000, retryMs: 200 }, clock });
  actor.start();
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    actor,
    calls,
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

test.run();
