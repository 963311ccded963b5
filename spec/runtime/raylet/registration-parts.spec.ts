// runningParts: what a raylet runs, cut into parts no larger than a budget of encoded bytes, for a
// registration larger than one message (runtime/raylet/registration-parts.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodedSize } from '../../../protocols/codec.ts';
import { RUNNING_PART_BYTES, runningParts, type RunningList } from '../../../runtime/raylet/registration-parts.ts';

const actor = (i: number, idLength = 16) => ({ actorId: `a${i}`.padEnd(idLength, 'x'), incarnation: i % 7 === 0 ? 4_000_000_000 : i % 5 });
const bundle = (i: number, idLength = 16) => ({ pgId: `p${i}`.padEnd(idLength, 'y'), index: i % 10_000, committed: i % 2 === 0 });

const flat = (parts: RunningList[]) => ({ actors: parts.flatMap((p) => p.actors), bundles: parts.flatMap((p) => p.bundles) });

test('a list that fits is one part, itself; an empty list is one empty part', () => {
  const running = { actors: [actor(1)], bundles: [bundle(1)] };
  assert.equal(runningParts(running), [running]);
  assert.equal(runningParts({ actors: [], bundles: [] }), [{ actors: [], bundles: [] }]);
});

test('30,000 actors and 30,000 bundles: parts within the default budget, in order, every item once', () => {
  const running = { actors: Array.from({ length: 30_000 }, (_, i) => actor(i)), bundles: Array.from({ length: 30_000 }, (_, i) => bundle(i)) };
  const parts = runningParts(running);
  assert.ok(parts.length >= 4, `${parts.length} parts`);
  for (const p of parts) assert.ok(encodedSize(p) <= RUNNING_PART_BYTES, `a part of ${encodedSize(p)} bytes`);
  assert.equal(flat(parts), running);
});

test('the longest ids the protocol takes (256 characters) and the largest incarnations stay within a small budget', () => {
  const budget = 4_096;
  const running = { actors: Array.from({ length: 200 }, (_, i) => actor(i, 256)), bundles: Array.from({ length: 200 }, (_, i) => bundle(i, 256)) };
  const parts = runningParts(running, budget);
  for (const p of parts) {
    assert.ok(encodedSize(p) <= budget, `a part of ${encodedSize(p)} bytes`);
    assert.ok(p.actors.length + p.bundles.length > 0, 'no empty part');
  }
  assert.equal(flat(parts), running);
});

test('an item larger than the budget alone still goes, in a part of its own', () => {
  const running = { actors: [actor(1, 256), actor(2, 256)], bundles: [] };
  assert.equal(runningParts(running, 100), [{ actors: [actor(1, 256)], bundles: [] }, { actors: [actor(2, 256)], bundles: [] }]);
});

test.run();
