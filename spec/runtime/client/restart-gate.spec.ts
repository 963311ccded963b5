import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomInt, seededRng } from '../../../lib/random.ts';
import type { ActorWatcher } from '../../../runtime/client/actor-handle.ts';
import type { ActorInfo } from '../../../runtime/client/cluster-info.types.ts';
import { RestartGate } from '../../../runtime/client/restart-gate.ts';

// The gate calls wait at while their actor restarts: they go in call order once a later incarnation
// is ALIVE, whatever order they reached the gate in, and death fails them all.

const info = (state: ActorInfo['state'], numRestarts: number): ActorInfo => ({ actorId: 'a', namespace: 'default', className: 'C', state, numRestarts, labels: {} });

function gate(): { gate: RestartGate; emit(i: ActorInfo): void } {
  let watcher: ActorWatcher | undefined;
  const g = new RestartGate({
    actorId: 'a',
    watch: (w) => {
      watcher = w;
      return () => (watcher = undefined);
    },
    info: () => new Promise(() => {}), // the GCS never answers: only events move the gate here
  });
  return { gate: g, emit: (i) => watcher?.next(i) };
}

test('waiting calls go in call order once a later incarnation is ALIVE, whatever order they reached the gate in', async () => {
  const { gate: g, emit } = gate();
  g.shutAfter(info('RESTARTING', 1));
  const order: number[] = [];
  // seeded shuffle of call numbers 0..199, each twice (two calls may share a number: they keep their arrival order)
  const rng = seededRng(7);
  const seqs = Array.from({ length: 400 }, (_, i) => i >> 1);
  for (let i = seqs.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    [seqs[i], seqs[j]] = [seqs[j], seqs[i]];
  }
  const arrivals = seqs.map((seq, arrival) => ({ seq, arrival }));
  const done = arrivals.map(({ seq, arrival }) => g.wait(seq).then(() => order.push(arrival)));
  emit(info('RESTARTING', 1));
  await Promise.resolve();
  assert.is(order.length, 0, 'still shut while the same incarnation restarts');
  emit(info('ALIVE', 2));
  await Promise.all(done);
  const expected = [...arrivals].sort((x, y) => x.seq - y.seq || x.arrival - y.arrival).map((x) => x.arrival);
  assert.equal(order, expected);
});

test('calls made in order while the actor restarts go in that order; its death fails them all', async () => {
  const { gate: g, emit } = gate();
  g.shutAfter(info('RESTARTING', 1));
  const outcomes: string[] = [];
  const done = Array.from({ length: 50_000 }, (_, seq) =>
    g.wait(seq).then(
      () => outcomes.push('went'),
      (err: { code?: string }) => outcomes.push(err.code ?? 'error'),
    ),
  );
  emit(info('DEAD', 1));
  await Promise.all(done);
  assert.is(outcomes.length, 50_000);
  assert.ok(outcomes.every((o) => o === 'ACTOR_DIED'), `outcomes: ${[...new Set(outcomes)].join(', ')}`);
});

test.run();
