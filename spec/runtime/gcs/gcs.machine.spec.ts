import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { gcsMachine, type GcsContext } from '../../../runtime/gcs/gcs.machine.ts';

// The Gcs machine stepped on xstate's SimulatedClock with its promise actors supplied here: the
// recovering state's grace window, its early end, reconciliation and its failure, and STOP on the
// way. Opening the subjects is a promise the spec resolves itself.

function gcs(input: { recover?: boolean; graceMs?: number }, reconcile: () => Promise<void> = async () => {}) {
  const clock = new SimulatedClock();
  let opened!: () => void;
  const calls: string[] = [];
  const machine = gcsMachine.provide({
    actors: {
      openSubjects: fromPromise<void, GcsContext>(() => new Promise<void>((resolve) => (opened = resolve))),
      closeSubjects: fromPromise<void, GcsContext>(async () => {
        calls.push('close');
      }),
      reconcile: fromPromise<void, GcsContext>(async () => {
        calls.push('reconcile');
        await reconcile();
      }),
    },
    actions: { reportReconcileFailure: (_, { error }) => void calls.push(`failed: ${(error as Error).message}`) },
  });
  const actor = createActor(machine, { clock, input: { cluster: 'c', ...input } }).start();
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { clock, actor, calls, open: async () => (opened(), settle()), settle, value: () => actor.getSnapshot().value };
}

test('with nothing to recover it serves as soon as its subjects are open', async () => {
  const g = gcs({});
  assert.is(g.value(), 'starting');
  await g.open();
  assert.is(g.value(), 'serving');
  assert.equal(g.calls, []);
});

test('with tables to recover it holds the grace window, then reconciles, then serves', async () => {
  const g = gcs({ recover: true, graceMs: 3000 });
  await g.open();
  assert.equal(g.value(), { recovering: 'grace' });
  g.clock.increment(2999);
  assert.equal(g.value(), { recovering: 'grace' });
  g.clock.increment(1);
  await g.settle();
  assert.equal(g.calls, ['reconcile']);
  assert.is(g.value(), 'serving');
});

test('NODES_BACK ends the grace window early; later ones change nothing', async () => {
  const g = gcs({ recover: true, graceMs: 60_000 });
  await g.open();
  g.actor.send({ type: 'NODES_BACK' });
  await g.settle();
  assert.is(g.value(), 'serving');
  g.actor.send({ type: 'NODES_BACK' });
  assert.is(g.value(), 'serving');
  assert.equal(g.calls, ['reconcile']);
});

test('a reconciliation that fails is reported and the GCS serves all the same', async () => {
  const g = gcs({ recover: true, graceMs: 10 }, async () => {
    throw new Error('half way');
  });
  await g.open();
  g.clock.increment(10);
  await g.settle();
  await g.settle();
  assert.equal(g.calls, ['reconcile', 'failed: half way']);
  assert.is(g.value(), 'serving');
});

test('STOP while recovering goes to stopping and closes the subjects; no reconciliation follows', async () => {
  const g = gcs({ recover: true, graceMs: 1000 });
  await g.open();
  g.actor.send({ type: 'STOP' });
  await g.settle();
  assert.is(g.value(), 'stopped');
  g.clock.increment(5000);
  assert.equal(g.calls, ['close']);
});

test.run();
