import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IntakeQueue, slicer } from '../../../runtime/gcs/intake-queue.ts';

// The GCS's intake queue (register_actor and other heavy requests): arrival order, slices of at most
// sliceMs with a turn of the event loop between them, a failing job failing alone, stop(), and a
// backlog that never empties holding nothing of the jobs that already ran.

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('jobs run in arrival order and resolve with their results; one that throws rejects alone', async () => {
  const q = new IntakeQueue({ sliceMs: 5 });
  const ran: number[] = [];
  const results = await Promise.allSettled(
    [1, 2, 3, 4].map((i) =>
      q.run(() => {
        ran.push(i);
        if (i === 3) throw new Error('three');
        return i * 10;
      }),
    ),
  );
  assert.equal(ran, [1, 2, 3, 4]);
  assert.equal(
    results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
    [10, 20, 'three', 40],
  );
  assert.is(q.size, 0);
});

test('a slice ends once sliceMs has passed: what else waits on the event loop runs before the next slice', async () => {
  let clock = 0;
  const q = new IntakeQueue({ sliceMs: 5, now: () => clock });
  const order: string[] = [];
  const jobs = Array.from({ length: 6 }, (_, i) =>
    q.run(() => {
      order.push(`job ${i}`);
      if (i === 0) setImmediate(() => order.push('other work'));
      clock += 2; // each job takes 2 ms of the fake clock: three make a slice
    }),
  );
  await Promise.all(jobs);
  assert.equal(order, ['job 0', 'job 1', 'job 2', 'other work', 'job 3', 'job 4', 'job 5']);
});

test('stop() rejects the waiting jobs with GCS_STOPPING and refuses new ones', async () => {
  let clock = 0;
  const q = new IntakeQueue({ sliceMs: 1, now: () => clock });
  const first = q.run(() => (clock += 5));
  const waiting = q.run(() => 'never');
  await first;
  q.stop();
  const err = (await waiting.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code?: string };
  assert.is(err?.code, 'GCS_STOPPING');
  const late = (await q.run(() => 'late').then(
    () => undefined,
    (e: unknown) => e,
  )) as { code?: string };
  assert.is(late?.code, 'GCS_STOPPING');
});

test('a backlog that never empties keeps nothing of the jobs that ran', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let clock = 0;
  const q = new IntakeQueue({ sliceMs: 10, now: () => clock });
  const refs: WeakRef<object>[] = [];
  let ran = 0;
  const total = 6000;
  // each job made in a call of its own: a loop body's per-iteration scope can be kept alive by the
  // engine itself (V8 compiling the loop on the stack holds the iteration it was in: job 948 here).
  // And each job holds its payload as a bound argument, not in a closure's scope: V8 may compile a
  // hot closure for the scope it was running in and keep that scope in the code (job 640 of 3,000,
  // held in 2 of 40 runs, with every job of the queue long gone)
  const runJob = (payload: { bytes: Uint8Array }): void => {
    ran += payload.bytes.length > 0 ? 1 : 0;
    clock += 1; // ten jobs a slice
  };
  const enqueue = (i: number): void => {
    const payload = { i, bytes: new Uint8Array(256) };
    refs.push(new WeakRef(payload));
    void q.run(runJob.bind(null, payload));
  };
  for (let i = 0; i < total; i++) enqueue(i);
  while (ran < 4000) await turn();
  assert.ok(q.size > 0, 'the backlog is still there');
  gc();
  await turn();
  const keptOfRun = refs.slice(0, 3000).filter((r) => r.deref() !== undefined).length;
  assert.is(keptOfRun, 0, `${keptOfRun} of the first 3,000 jobs that ran are still held by the queue`);
  const keptWaiting = refs.slice(ran + 20).filter((r) => r.deref() !== undefined).length;
  assert.is(keptWaiting, total - ran - 20, 'the waiting jobs are all held');
  while (q.size > 0) await turn();
});

test('slicer: a long loop pauses once sliceMs have passed, so what else waits on the event loop runs in between', async () => {
  let clock = 0;
  const breathe = slicer(5, () => clock);
  const order: string[] = [];
  setImmediate(() => order.push('heartbeat'));
  for (let i = 0; i < 10; i++) {
    clock += 2; // each step of the loop takes 2 ms
    order.push(`step ${i}`);
    const pause = breathe();
    if (pause) await pause;
  }
  // paused after steps 2 (6 ms) and 5 (6 ms after the pause) and 8: the waiting callback ran at the first pause
  assert.equal(order.slice(0, 4), ['step 0', 'step 1', 'step 2', 'heartbeat']);
  assert.is(order.length, 11);
  assert.is(slicer(5, () => 0)(), undefined, 'no pause before sliceMs');
});

test.run();
