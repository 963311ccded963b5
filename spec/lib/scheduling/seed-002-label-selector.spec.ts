// Seed 002: label selectors (`v`, `!v`, `in()`, `!in()`, `exists()`, `!exists()`), default labels,
// and fallback_strategy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addNode, cluster, decide, failureOf, landings, placedOn } from '../../support/cluster.ts';

const fleet = () =>
  cluster([
    { id: 'h1', labels: { 'orrery.io/accelerator-type': 'nvidia-h100', 'orrery.io/market-type': 'spot', region: 'us' } },
    { id: 'h2', labels: { 'orrery.io/accelerator-type': 'nvidia-h100', 'orrery.io/market-type': 'on-demand', region: 'eu' } },
    { id: 'a1', labels: { 'orrery.io/accelerator-type': 'nvidia-a100', region: 'us' } },
    { id: 'c1', labels: { region: 'ap' } },
  ]);

const operators: { name: string; selector: Record<string, string>; want: string[] }[] = [
  { name: 'equals', selector: { 'orrery.io/accelerator-type': 'nvidia-h100' }, want: ['h1', 'h2'] },
  { name: 'not equals (matches nodes without the key too)', selector: { 'orrery.io/accelerator-type': '!nvidia-h100' }, want: ['a1', 'c1'] },
  { name: 'in', selector: { region: 'in(us,ap)' }, want: ['a1', 'c1', 'h1'] },
  { name: 'not in', selector: { region: '!in(us, ap)' }, want: ['h2'] },
  { name: 'exists', selector: { 'orrery.io/market-type': 'exists()' }, want: ['h1', 'h2'] },
  { name: 'does not exist', selector: { 'orrery.io/market-type': '!exists()' }, want: ['a1', 'c1'] },
  { name: 'operators are case-insensitive', selector: { region: 'IN(eu)' }, want: ['h2'] },
  { name: 'several keys are ANDed', selector: { region: 'us', 'orrery.io/accelerator-type': 'exists()' }, want: ['a1', 'h1'] },
];

for (const op of operators) {
  test(`operator ${op.name}`, () => {
    const s = fleet();
    // every allowed node must be reachable: fill each one as it is chosen
    const seen: string[] = [];
    for (let i = 0; i < op.want.length; i++) {
      const id = placedOn(decide(s, { labelSelector: op.selector }));
      seen.push(id);
      s.allocate(id, { CPU: 40_000 });
    }
    assert.equal(seen.sort(), op.want);
    assert.is(decide(s, { labelSelector: op.selector }).status, 'unschedulable');
  });
}

test('no node matches: the tally names the selector expression', () => {
  const f = failureOf(decide(fleet(), { labelSelector: { region: 'in(sa)' } }));
  assert.is(f.message, "0/4 nodes are available: 4 node(s) didn't match label selector region in (sa).");
  assert.is(f.reason, 'constraints');
});

test('fallback: prefer m5.16xlarge, else anything ({ labelSelector: {} }) — a soft constraint', () => {
  const s = cluster([{ id: 'small', labels: { instance_type: 'm5.large' } }]);
  const opts = { labelSelector: { instance_type: 'm5.16xlarge' }, fallbackStrategy: [{ labelSelector: {} }] };
  const d = decide(s, opts);
  assert.equal(d, { status: 'placed', nodeId: 'small', tier: 1 });
  addNode(s, { id: 'big', labels: { instance_type: 'm5.16xlarge' } });
  assert.equal(decide(s, opts), { status: 'placed', nodeId: 'big', tier: 0 });
});

test('fallback: tiers are tried in order, each only when the previous cannot exist', () => {
  const s = cluster([{ id: 'v', labels: { gpu: 'v100' } }]);
  const opts = { labelSelector: { gpu: 'h100' }, fallbackStrategy: [{ labelSelector: { gpu: 'a100' } }, { labelSelector: { gpu: 'v100' } }] };
  assert.equal(decide(s, opts), { status: 'placed', nodeId: 'v', tier: 2 });
  addNode(s, { id: 'a', labels: { gpu: 'a100' } });
  assert.equal(decide(s, opts), { status: 'placed', nodeId: 'a', tier: 1 });
  addNode(s, { id: 'h', labels: { gpu: 'h100' } });
  assert.equal(decide(s, opts), { status: 'placed', nodeId: 'h', tier: 0 });
});

test('fallback: a preferred node that exists but is busy makes the request wait, not fall back', () => {
  const s = cluster([{ id: 'big', labels: { instance_type: 'm5.16xlarge' } }, { id: 'small' }]);
  s.allocate('big', { CPU: 40_000 });
  const f = failureOf(decide(s, { labelSelector: { instance_type: 'm5.16xlarge' }, fallbackStrategy: [{ labelSelector: {} }] }));
  assert.is(f.code, 'unschedulable');
  assert.is(f.reason, 'resources');
  assert.is(f.message, "0/2 nodes are available: 1 node(s) didn't match label selector instance_type in (m5.16xlarge), 1 node(s) had insufficient CPU.");
});

test('fallback: when every tier fails, each node reports the reasons of every tier', () => {
  const s = cluster([{ id: 'x', labels: { gpu: 't4' } }]);
  const f = failureOf(decide(s, { labelSelector: { gpu: 'h100' }, fallbackStrategy: [{ labelSelector: { gpu: 'a100' } }] }));
  assert.equal(f.nodes, [{ nodeId: 'x', reasons: ["didn't match label selector gpu in (a100)", "didn't match label selector gpu in (h100)"] }]);
  assert.is(f.message, "0/1 nodes are available: 1 node(s) didn't match label selector gpu in (a100), 1 node(s) didn't match label selector gpu in (h100) (a node is counted under each reason it fails).");
});

test('landings of an unconstrained request never include a node a selector excludes', () => {
  assert.equal(landings(fleet(), { labelSelector: { region: 'eu' } }), ['h2']);
});

test.run();
