/**
 * "No drift after a million allocate/free cycles of fractional amounts": fixed-point units return
 * exactly to where they started, while the same walk in plain floating point does not — which is
 * what makes the fixed-point assertion mean something.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import { seededRng, type Rng } from '../../../lib/random.ts';
import { addResources, parseResources, subtractResources, type ResourceSet } from '../../../lib/resources/resource-set.ts';

const CYCLES = 1_000_000;
const AMOUNTS = [0.1, 0.0001, 1 / 3];
const MAX_HELD = 24; // 24 × 1/3 < 10: every allocation fits

/**
 * A seeded random walk of CYCLES allocations, each freed later in random order (at most MAX_HELD
 * held at once), ending with everything freed. `take` and `give` get the index into AMOUNTS;
 * `idle` runs each time nothing is held, when the pool must be back where it started.
 */
function walk(rng: Rng, take: (i: number) => void, give: (i: number) => void, idle: () => void): void {
  const held: number[] = [];
  let allocated = 0;
  while (allocated < CYCLES || held.length > 0) {
    const mayTake = allocated < CYCLES && held.length < MAX_HELD;
    if (mayTake && (held.length === 0 || rng() < 0.5)) {
      const i = allocated % AMOUNTS.length;
      take(i);
      held.push(i);
      allocated++;
    } else {
      const at = Math.floor(rng() * held.length);
      const i = held[at];
      held[at] = held[held.length - 1];
      held.pop();
      give(i);
      if (held.length === 0) idle();
    }
  }
}

const cases: { name: string; seed: number; total: Record<string, number> }[] = [
  { name: 'CPU', seed: 7, total: { CPU: 10 } },
];

for (const c of cases) {
  test(`ClusterState: ${CYCLES} allocate/release cycles of 0.1, 0.0001 and 1/3 leave available exactly as it started (${c.name})`, () => {
    const state = new ClusterState();
    const total = parseResources(c.total);
    state.addNode({ nodeId: 'other', total });
    const node = state.addNode({ nodeId: 'n1', total });
    const requests = AMOUNTS.map((a) => parseResources({ CPU: a }));
    let naive = c.total.CPU;
    let idleTimes = 0;
    let naiveDrifted = 0;
    walk(
      seededRng(c.seed),
      (i) => {
        state.allocate('n1', requests[i]);
        naive -= AMOUNTS[i];
      },
      (i) => {
        state.release('n1', requests[i]);
        naive += AMOUNTS[i];
      },
      () => {
        idleTimes++;
        if (node.available.CPU !== total.CPU) assert.unreachable(`drifted to ${JSON.stringify(node.available)}`);
        if (naive !== c.total.CPU) naiveDrifted++;
      },
    );
    assert.equal(node.available, total);
    assert.is(node.score, 0);
    assert.is(state.order.rankOf(node), 0, 'back in (score, id) order, before "other"');
    // The same walk in floating point drifts: the comparisons above are not vacuous.
    assert.ok(idleTimes > 1000, `the pool emptied ${idleTimes} times`);
    assert.ok(naiveDrifted > 0, `plain floats were off at ${naiveDrifted} of ${idleTimes} idle points`);
    assert.ok(Math.abs(naive - c.total.CPU) < 1e-6, 'and the drift is small: a rounding effect, not a bookkeeping mistake');
  });
}

test(`resource-set arithmetic: ${CYCLES} subtract/add cycles return exactly to the start`, () => {
  const start = parseResources({ CPU: 10, GPU: 10 });
  const requests = AMOUNTS.map((a) => parseResources({ CPU: a, GPU: a }));
  let set: ResourceSet = start;
  let naive = 10;
  let idleTimes = 0;
  let naiveDrifted = 0;
  walk(
    seededRng(11),
    (i) => {
      set = subtractResources(set, requests[i]);
      naive -= AMOUNTS[i];
    },
    (i) => {
      set = addResources(set, requests[i]);
      naive += AMOUNTS[i];
    },
    () => {
      idleTimes++;
      if (set.CPU !== start.CPU || set.GPU !== start.GPU) assert.unreachable(`drifted to ${JSON.stringify(set)}`);
      if (naive !== 10) naiveDrifted++;
    },
  );
  assert.equal(set, start);
  assert.ok(naiveDrifted > 0, `plain floats were off at ${naiveDrifted} of ${idleTimes} idle points`);
});

test('the units of each amount are whole and exact', () => {
  assert.equal(AMOUNTS.map((a) => parseResources({ CPU: a }).CPU), [1_000, 1, 3_333]);
});

test.run();
