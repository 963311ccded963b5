import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, SimulatedClock } from 'xstate';
import { nodeMachine, nodeStateOf } from '../../../runtime/gcs/node.machine.ts';

// The Node machine on xstate's SimulatedClock: time moves only when the spec says so.

function node(timeoutMs = 3000) {
  const clock = new SimulatedClock();
  const unheardTimeouts: string[] = [];
  const logic = nodeMachine.provide({ actions: { timeoutUnheard: ({ context }) => void unheardTimeouts.push(context.nodeId) } });
  const actor = createActor(logic, { clock, input: { nodeId: 'n1', nodeTimeoutMs: timeoutMs } }).start();
  return { clock, actor, unheardTimeouts, state: () => nodeStateOf(actor.getSnapshot()) };
}

test('a node that never heartbeats is DEAD after the timeout, not before', () => {
  const n = node();
  n.clock.increment(2999);
  assert.is(n.state(), 'ALIVE');
  n.clock.increment(1);
  assert.is(n.state(), 'DEAD');
  assert.is(n.actor.getSnapshot().status, 'done');
});

test('each heartbeat restarts the timeout', () => {
  const n = node();
  for (let i = 0; i < 10; i++) {
    n.clock.increment(2500);
    n.actor.send({ type: 'HEARTBEAT', seq: i });
  }
  assert.is(n.state(), 'ALIVE');
  assert.is(n.actor.getSnapshot().context.lastSeq, 9);
  assert.is(n.actor.getSnapshot().context.heartbeats, 10);
  n.clock.increment(3000);
  assert.is(n.state(), 'DEAD');
});

test('DRAINING keeps the liveness timeout; UNDRAIN returns to ALIVE', () => {
  const n = node(1000);
  n.actor.send({ type: 'DRAIN' });
  assert.is(n.state(), 'DRAINING');
  n.clock.increment(900);
  n.actor.send({ type: 'HEARTBEAT', seq: 0 });
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
  n.actor.send({ type: 'HEARTBEAT', seq: 1 });
  n.actor.send({ type: 'DRAIN' });
  assert.is(n.state(), 'DEAD');
});

test('while the GCS cannot hear (UNHEARD) the timeout does not end the node; HEARD starts a fresh window', () => {
  const n = node(1000);
  n.clock.increment(500);
  n.actor.send({ type: 'UNHEARD' });
  n.clock.increment(5000);
  assert.is(n.state(), 'ALIVE', 'a silence the GCS could not have heard does not count');
  assert.equal(n.unheardTimeouts, ['n1'], 'reported once, when the timeout passed unheard');
  n.actor.send({ type: 'HEARD' });
  n.clock.increment(999);
  assert.is(n.state(), 'ALIVE', 'a whole window after the connection came back');
  n.clock.increment(1);
  assert.is(n.state(), 'DEAD');
});

test('UNHEARD keeps a DRAINING node DRAINING; heartbeats during it are still recorded', () => {
  const n = node(1000);
  n.actor.send({ type: 'DRAIN' });
  n.actor.send({ type: 'UNHEARD' });
  n.actor.send({ type: 'HEARTBEAT', seq: 4 });
  n.clock.increment(3000);
  assert.is(n.state(), 'DRAINING');
  assert.is(n.actor.getSnapshot().context.lastSeq, 4);
  n.actor.send({ type: 'HEARD' });
  assert.is(n.actor.getSnapshot().context.unheard, false);
  n.clock.increment(1000);
  assert.is(n.state(), 'DEAD');
});

test('HEARD without UNHEARD just restarts the window; the context survives a JSON round trip', () => {
  const n = node(1000);
  n.clock.increment(900);
  n.actor.send({ type: 'HEARD' });
  n.clock.increment(900);
  assert.is(n.state(), 'ALIVE');
  const ctx = n.actor.getSnapshot().context;
  assert.equal(JSON.parse(JSON.stringify(ctx)), ctx);
});

test.run();
