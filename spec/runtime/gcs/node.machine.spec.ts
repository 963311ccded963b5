import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, SimulatedClock } from 'xstate';
import { Liveness, type LivenessClock } from '../../../runtime/gcs/liveness.ts';
import { nodeMachine, nodeStateOf } from '../../../runtime/gcs/node.machine.ts';

// The Node machine and the heartbeat deadlines that drive it (liveness.ts), wired as the GCS wires
// them (nodes.ts): a deadline that passes sends the machine TIMEOUT. Time is xstate's
// SimulatedClock: it moves only when the spec says so. The clock is counted, to show that a heartbeat
// costs no timer.

function node(timeoutMs = 3000) {
  const sim = new SimulatedClock();
  let timersSet = 0;
  const clock: LivenessClock = {
    now: () => sim.now(),
    setTimeout: (fn, ms) => {
      timersSet++;
      return sim.setTimeout(fn, ms);
    },
    clearTimeout: (h) => sim.clearTimeout(h as Parameters<SimulatedClock['clearTimeout']>[0]),
  };
  const unheardTimeouts: string[] = [];
  const logic = nodeMachine.provide({ actions: { timeoutUnheard: ({ context }) => void unheardTimeouts.push(context.nodeId) } });
  const actor = createActor(logic, { input: { nodeId: 'n1', nodeTimeoutMs: timeoutMs } }).start();
  const liveness = new Liveness({ timeoutMs, clock, expired: () => actor.send({ type: 'TIMEOUT' }) });
  liveness.watch('n1');
  return {
    clock: sim,
    actor,
    liveness,
    unheardTimeouts,
    timersSet: () => timersSet,
    beat: () => liveness.beat('n1'),
    state: () => nodeStateOf(actor.getSnapshot()),
  };
}

test('a node that never heartbeats is DEAD after the timeout, not before', () => {
  const n = node();
  n.clock.increment(2999);
  assert.is(n.state(), 'ALIVE');
  n.clock.increment(1);
  assert.is(n.state(), 'DEAD');
  assert.is(n.actor.getSnapshot().status, 'done');
});

test('each heartbeat restarts the window: DEAD exactly one timeout after the last beat', () => {
  const n = node();
  for (let i = 0; i < 10; i++) {
    n.clock.increment(2500);
    assert.is(n.beat(), true);
  }
  assert.is(n.state(), 'ALIVE');
  n.clock.increment(2999);
  assert.is(n.state(), 'ALIVE');
  n.clock.increment(1);
  assert.is(n.state(), 'DEAD');
});

test('heartbeats set no timer: one per timeout period at most, however often the node beats', () => {
  const n = node(3000);
  // 60 beats, 100 ms apart: 6 seconds, two timeout periods
  for (let i = 0; i < 60; i++) {
    n.clock.increment(100);
    n.beat();
  }
  assert.is(n.state(), 'ALIVE');
  assert.ok(n.timersSet() <= 3, `${n.timersSet()} timers for 60 heartbeats`);
  assert.equal(n.actor.getSnapshot().value, 'ALIVE');
});

test('DRAINING keeps the liveness timeout; UNDRAIN returns to ALIVE', () => {
  const n = node(1000);
  n.actor.send({ type: 'DRAIN' });
  assert.is(n.state(), 'DRAINING');
  n.clock.increment(900);
  n.beat();
  n.clock.increment(900);
  assert.is(n.state(), 'DRAINING');
  n.actor.send({ type: 'UNDRAIN' });
  assert.is(n.state(), 'ALIVE');
  n.actor.send({ type: 'DRAIN' });
  n.clock.increment(1000);
  assert.is(n.state(), 'DEAD');
});

test('a dead node takes no more events', () => {
  const n = node(10);
  n.clock.increment(10);
  n.actor.send({ type: 'DRAIN' });
  n.actor.send({ type: 'HEARD' });
  assert.is(n.state(), 'DEAD');
});

test('while the GCS cannot hear (UNHEARD) the timeout does not end the node; HEARD and a fresh window follow', () => {
  const n = node(1000);
  n.clock.increment(500);
  n.actor.send({ type: 'UNHEARD' });
  n.clock.increment(5000);
  assert.is(n.state(), 'ALIVE', 'a silence the GCS could not have heard does not count');
  assert.equal(n.unheardTimeouts, ['n1'], 'reported once, when the timeout passed unheard');
  n.actor.send({ type: 'HEARD' });
  n.liveness.restartAll();
  n.clock.increment(999);
  assert.is(n.state(), 'ALIVE', 'a whole window after the connection came back');
  n.clock.increment(1);
  assert.is(n.state(), 'DEAD');
});

test('UNHEARD keeps a DRAINING node DRAINING', () => {
  const n = node(1000);
  n.actor.send({ type: 'DRAIN' });
  n.actor.send({ type: 'UNHEARD' });
  n.clock.increment(3000);
  assert.is(n.state(), 'DRAINING');
  n.actor.send({ type: 'HEARD' });
  assert.is(n.actor.getSnapshot().context.unheard, false);
  n.liveness.restartAll();
  n.clock.increment(1000);
  assert.is(n.state(), 'DEAD');
});

test('a forgotten node gets no TIMEOUT; a heartbeat for an unknown node is refused', () => {
  const n = node(1000);
  n.liveness.forget('n1');
  n.clock.increment(5000);
  assert.is(n.state(), 'ALIVE');
  assert.is(n.liveness.beat('n1'), false);
  assert.is(n.liveness.size, 0);
});

test('the context is plain data: it survives a JSON round trip', () => {
  const n = node(1000);
  n.actor.send({ type: 'UNHEARD' });
  const ctx = n.actor.getSnapshot().context;
  assert.equal(JSON.parse(JSON.stringify(ctx)), ctx);
  assert.equal(ctx, { nodeId: 'n1', nodeTimeoutMs: 1000, unheard: true });
});

// A GCS that stalls (frozen, a long GC, synchronous code): Node.js runs the timers that came due
// meanwhile before it reads the heartbeats that arrived meanwhile. A clock whose timers run only
// when the spec says, with time moved first, as a process that runs again finds it.
function stalledGcs(timeoutMs = 3000) {
  let now = 0;
  let nextId = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: LivenessClock = {
    now: () => now,
    setTimeout: (fn, ms) => (timers.set(++nextId, { at: now + ms, fn }), nextId),
    clearTimeout: (h) => void timers.delete(h as number),
  };
  const expired: number[] = [];
  const liveness = new Liveness({ timeoutMs, clock, stallAware: true, expired: () => void expired.push(now) });
  liveness.watch('n1');
  /** Time moves to `to`, then every timer due by then runs, earliest first (the timers phase). */
  const runUntil = (to: number): void => {
    now = to;
    for (;;) {
      const due = [...timers].filter(([, t]) => t.at <= now).sort((a, b) => a[1].at - b[1].at)[0];
      if (due === undefined) return;
      timers.delete(due[0]);
      due[1].fn();
    }
  };
  return { liveness, expired, runUntil, beat: () => liveness.beat('n1') };
}

test('a deadline that passed while the GCS was stalled: the heartbeat read after the stall keeps the node', () => {
  const g = stalledGcs();
  g.runUntil(4000); // stalled from 0 to 4,000 ms: the timer due at 3,000 runs first, 1 s late
  assert.equal(g.expired, [], 'not at once: the beats waiting on the socket are read first');
  g.beat(); // ... and one of them is
  g.runUntil(4010);
  g.runUntil(6999);
  assert.equal(g.expired, [], 'alive, with a fresh window from that heartbeat');
  g.runUntil(7000);
  assert.equal(g.expired, [7000], 'and declared at its end if nothing comes');
});

test('no heartbeat read after the stall: DEAD at the first look that is on time', () => {
  const g = stalledGcs();
  g.runUntil(4000);
  g.runUntil(4010);
  assert.equal(g.expired, [4010]);
});

test('a GCS that stays overloaded still declares the node, at most min(timeout, 1 s) after the first late look', () => {
  const g = stalledGcs();
  g.runUntil(4000);
  // every look from now on runs 60 ms late
  let t = 4000;
  while (g.expired.length === 0 && t < 10_000) g.runUntil((t += 70));
  assert.is(g.expired.length, 1);
  assert.ok(g.expired[0]! >= 5000 && g.expired[0]! <= 5070, `declared at ${g.expired[0]} ms`);
});

test('on time, a deadline expires at once: a GCS that keeps up sees no difference', () => {
  const g = stalledGcs();
  g.runUntil(3000);
  assert.equal(g.expired, [3000]);
});

test.run();
