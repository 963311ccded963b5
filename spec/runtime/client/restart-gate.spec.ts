import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomInt, seededRng } from '../../../lib/random.ts';
import type { ActorWatcher } from '../../../runtime/client/actor-watch.ts';
import type { ActorInfo } from '../../../runtime/client/cluster-info.types.ts';
import { RestartGate } from '../../../runtime/client/restart-gate.ts';
import { Worker } from 'node:worker_threads';

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

test('a call whose time runs out at the shut gate fails then and leaves the gate; the others still go in order when it opens', async () => {
  const { gate: g, emit } = gate();
  g.shutAfter(info('RESTARTING', 1));
  const outcomes = new Map<number, string>();
  const order: number[] = [];
  const record = (seq: number, p: Promise<void>) =>
    p.then(
      () => {
        outcomes.set(seq, 'went');
        order.push(seq);
      },
      (err: Error) => outcomes.set(seq, err.message),
    );
  // far enough that making the 1,002 waits cannot pass it: a call made past its deadline fails at
  // once without waiting (the end of this test), and with 30 ms a loaded machine made a third of them so
  const deadline = Date.now() + 300;
  // calls 0..999 give up at `deadline`; 1000 and 1001, made between them in number, wait without a limit
  const limited = Array.from({ length: 1000 }, (_, seq) => record(seq, g.wait(seq, { deadline, timedOut: () => new Error('timed out') })));
  const patient = [record(1001, g.wait(1001)), record(500.5, g.wait(500.5))];
  assert.ok(Date.now() < deadline, 'the waits were made before their deadline');
  assert.is(g.waiting, 1002);
  await Promise.all(limited);
  assert.ok(Date.now() >= deadline, 'not before the deadline');
  assert.ok([...outcomes.values()].every((o) => o === 'timed out'), 'every limited call failed with its own error');
  assert.is(outcomes.size, 1000);
  assert.is(g.waiting, 2, 'the calls that gave up are no longer waiting');
  assert.ok(g.shut);
  emit(info('ALIVE', 2));
  await Promise.all(patient);
  assert.equal(order, [500.5, 1001], 'the rest in call order');
  assert.is(g.waiting, 0);
  // a call made past its deadline fails at once, without waiting
  g.shutAfter(info('RESTARTING', 2));
  const late = await g.wait(2000, { deadline: Date.now() - 1, timedOut: () => new Error('late') }).catch((err: Error) => err.message);
  assert.is(late, 'late');
  assert.is(g.waiting, 0);
});

/**
 * Holds this thread's loop past a gate wait's deadline while another thread sends the actor's ALIVE
 * (a message that, like a socket's, is read after the turn's timers): until the message is sent and
 * the deadline is 200 ms behind. `send` false: the other thread sends nothing.
 */
async function heldPastDeadline(send: boolean): Promise<string> {
  const { gate: g, emit } = gate();
  const sent = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     parentPort.on('message', () => setTimeout(() => {
       if (workerData.send) parentPort.postMessage('alive');
       Atomics.store(workerData.sent, 0, 1);
     }, 20));
     parentPort.postMessage('ready');`,
    { eval: true, workerData: { sent, send } },
  );
  try {
    await new Promise((resolve) => worker.once('message', resolve));
    worker.on('message', () => emit(info('ALIVE', 2)));
    g.shutAfter(info('RESTARTING', 1));
    const outcome = g.wait(0, { deadline: Date.now() + 100, timedOut: () => new Error('timed out') }).then(
      () => 'went',
      (err: Error) => err.message,
    );
    // held from a callback of the check phase, so the next turn runs its timers before it reads
    // (held from a message callback, the port would go on reading its queue first)
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        const start = performance.now();
        worker.postMessage('go');
        while (Atomics.load(sent, 0) === 0 || performance.now() - start < 300);
        resolve();
      }),
    );
    return await outcome;
  } finally {
    await worker.terminate();
  }
}

test('a process held past a waiting call\'s deadline while the ALIVE that opens the gate arrives: the call goes, it does not time out', async () => {
  assert.is(await heldPastDeadline(true), 'went');
});

test('held past the deadline with nothing arriving: the call still fails with its own error', async () => {
  assert.is(await heldPastDeadline(false), 'timed out');
});

test.run();
