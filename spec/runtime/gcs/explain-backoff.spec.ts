// The explanation backoff of unplaceable actors (explain-backoff.ts), on a clock the spec moves:
// when a refresh may run, how the backoff grows with a reason that stays the same and starts over
// when it changes, and a held-back refresh retried once due. The GCS under it: service.spec.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ExplainBackoff } from '../../../runtime/gcs/explain-backoff.ts';
import type { ScheduleFailure } from '../../../lib/scheduling/explain.ts';
import { until } from '../../helpers/until.ts';

const failure = (message: string, code: ScheduleFailure['code'] = 'unschedulable'): ScheduleFailure => ({ code, message }) as ScheduleFailure;

function backoff(initial = 1000, max = 8000): { b: ExplainBackoff; clock: { t: number }; retried: string[] } {
  const clock = { t: 0 };
  const retried: string[] = [];
  const b = new ExplainBackoff({ now: () => clock.t, backoffMs: { initial, max }, retry: (id) => retried.push(id) });
  return { b, clock, retried };
}

test('an actor never explained may be explained at once', () => {
  const { b } = backoff();
  assert.ok(b.mayRefresh('a1', 0));
  assert.is(b.last('a1'), undefined);
});

test('the same reason doubles the backoff up to the most; another reason starts it over', () => {
  const { b, clock } = backoff(1000, 4000);
  const seen: number[] = [];
  for (const reason of ['x', 'x', 'x', 'x', 'y']) {
    b.explained('a1', failure(reason), clock.t);
    seen.push(b.last('a1')!.backoffMs);
    clock.t += 10_000;
  }
  assert.equal(seen, [1000, 2000, 4000, 4000, 1000]);
  assert.equal({ reason: b.last('a1')!.reason, code: b.last('a1')!.code }, { reason: 'y', code: 'unschedulable' });
});

test('inside its backoff a refresh is held back, and the actor is retried once it is due', async () => {
  const { b, clock, retried } = backoff(20, 20);
  b.explained('a1', failure('x', 'infeasible'), 0);
  clock.t = 5;
  assert.not.ok(b.mayRefresh('a1', clock.t), 'held back');
  clock.t = 25; // the timer fires on real time; by then the spec's clock says it is due
  await until('the held-back actor retried', () => (retried.length > 0 ? true : undefined));
  assert.equal(retried, ['a1']);
  assert.ok(b.mayRefresh('a1', clock.t), 'due now');
  b.stop();
});

test('a forgotten actor is not retried, and stop() ends every held-back refresh', async () => {
  const { b, clock, retried } = backoff(10, 10);
  b.explained('a1', failure('x'), 0);
  b.explained('a2', failure('x'), 0);
  clock.t = 1;
  b.mayRefresh('a1', clock.t);
  b.mayRefresh('a2', clock.t);
  b.forget('a1');
  clock.t = 50;
  await until('the other one retried', () => (retried.length > 0 ? true : undefined));
  assert.equal(retried, ['a2']);
  assert.is(b.last('a1'), undefined);
  b.explained('a3', failure('x'), clock.t);
  b.mayRefresh('a3', clock.t + 1); // due 9 ms from now
  b.stop();
  // a sentinel held back for longer: once it is retried, a3's refresh would have run too
  const sentinel = backoff(30, 30);
  sentinel.b.explained('s', failure('x'), 0);
  sentinel.clock.t = 1;
  sentinel.b.mayRefresh('s', 1);
  sentinel.clock.t = 100;
  await until('the sentinel retried', () => (sentinel.retried.length > 0 ? true : undefined));
  assert.equal(retried, ['a2'], 'nothing retried after stop()');
});

test.run();
