import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NodeOrder, type Ranked } from '../../../lib/cluster/node-order.ts';
import { seededRng } from '../../../lib/random.ts';

const item = (id: string, score = 0): Ranked => ({ id, score });

function ids(order: NodeOrder<Ranked>): string[] {
  return Array.from({ length: order.size }, (_, i) => order.at(i).id);
}

type Step = ['insert', string, number] | ['remove', string] | ['rescore', string, number];

const cases: { name: string; steps: Step[]; want: string[] }[] = [
  { name: 'empty', steps: [], want: [] },
  { name: 'equal scores sort by id', steps: [['insert', 'c', 0], ['insert', 'a', 0], ['insert', 'b', 0]], want: ['a', 'b', 'c'] },
  { name: 'lower scores first', steps: [['insert', 'a', 0.9], ['insert', 'b', 0.6], ['insert', 'c', 0]], want: ['c', 'b', 'a'] },
  { name: 'score before id', steps: [['insert', 'a', 0.7], ['insert', 'z', 0]], want: ['z', 'a'] },
  { name: 'remove from the middle', steps: [['insert', 'a', 0], ['insert', 'b', 0], ['insert', 'c', 0], ['remove', 'b']], want: ['a', 'c'] },
  { name: 'rescore moves an item back', steps: [['insert', 'a', 0], ['insert', 'b', 0], ['rescore', 'a', 0.8]], want: ['b', 'a'] },
  { name: 'rescore moves an item forward', steps: [['insert', 'a', 0.6], ['insert', 'b', 0.7], ['insert', 'c', 0.9], ['rescore', 'c', 0.5]], want: ['c', 'a', 'b'] },
  { name: 'rescore to the same score keeps the place', steps: [['insert', 'a', 0.6], ['insert', 'b', 0.6], ['rescore', 'a', 0.6]], want: ['a', 'b'] },
  { name: 'rescore into a tie sorts by id', steps: [['insert', 'b', 0.5], ['insert', 'a', 0.9], ['rescore', 'a', 0.5]], want: ['a', 'b'] },
  { name: 'removing an item not in the order is harmless', steps: [['insert', 'a', 0], ['remove', 'ghost']], want: ['a'] },
];

for (const c of cases) {
  test(`node order: ${c.name}`, () => {
    const order = new NodeOrder<Ranked>();
    const items = new Map<string, Ranked>();
    for (const step of c.steps) {
      if (step[0] === 'insert') {
        const it = item(step[1], step[2]);
        items.set(it.id, it);
        order.insert(it);
      } else if (step[0] === 'remove') {
        order.remove(items.get(step[1]) ?? item(step[1]));
      } else {
        const it = items.get(step[1])!;
        order.rescore(it, it.score, step[2]);
      }
    }
    assert.equal(ids(order), c.want);
    assert.is(order.size, c.want.length);
    c.want.forEach((id, i) => assert.is(order.rankOf(items.get(id)!), i));
  });
}

test('rescore records the new score on the item', () => {
  const order = new NodeOrder<Ranked>();
  const a = item('a', 0);
  order.insert(a);
  order.rescore(a, 0, 0.75);
  assert.is(a.score, 0.75);
});

test('rankOf is -1 for an item not in the order, even one equal to a member', () => {
  const order = new NodeOrder<Ranked>();
  order.insert(item('a', 0));
  assert.is(order.rankOf(item('a', 0)), -1);
  assert.is(order.rankOf(item('b', 0)), -1);
});

test('seeded random inserts, removals and rescores agree with a fresh sort', () => {
  const rng = seededRng(99);
  const order = new NodeOrder<Ranked>();
  const members: Ranked[] = [];
  const scores = [0, 0, 0, 0.5, 0.5, 0.6, 0.75, 0.9, 1];
  let next = 0;
  for (let step = 0; step < 5000; step++) {
    const r = rng();
    if (r < 0.3 || members.length === 0) {
      const it = item(`n${String(next++).padStart(4, '0')}`, scores[Math.floor(rng() * scores.length)]);
      members.push(it);
      order.insert(it);
    } else if (r < 0.45) {
      const [it] = members.splice(Math.floor(rng() * members.length), 1);
      order.remove(it);
    } else {
      const it = members[Math.floor(rng() * members.length)];
      order.rescore(it, it.score, scores[Math.floor(rng() * scores.length)]);
    }
    if (step % 250 === 0) {
      const want = [...members].sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : 1)).map((m) => m.id);
      assert.equal(ids(order), want, `step ${step}`);
    }
  }
  for (const m of members) assert.is(order.at(order.rankOf(m)), m);
});



test('thousands of random inserts, removals and rescores agree with a plainly sorted array (blocks split and empty)', () => {
  const rng = seededRng(99);
  const order = new NodeOrder<{ id: string; score: number }>();
  const live: { id: string; score: number }[] = [];
  const sorted = () => [...live].sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (let step = 0; step < 6_000; step++) {
    const roll = rng();
    if (roll < 0.5 || live.length === 0) {
      const item = { id: `n${String(Math.floor(rng() * 1e9)).padStart(9, '0')}-${step}`, score: rng() < 0.5 ? 0 : Math.round(rng() * 100) / 100 };
      live.push(item);
      order.insert(item);
    } else if (roll < 0.75) {
      const [item] = live.splice(Math.floor(rng() * live.length), 1);
      order.remove(item);
      assert.is(order.rankOf(item), -1);
    } else {
      const item = live[Math.floor(rng() * live.length)];
      order.rescore(item, item.score, rng() < 0.3 ? 0 : Math.round(rng() * 100) / 100);
    }
    if (step % 500 === 499 || step === 5_999) {
      const want = sorted();
      assert.is(order.size, want.length);
      want.forEach((item, i) => {
        assert.is(order.at(i), item);
        assert.is(order.rankOf(item), i);
      });
    }
  }
  // drain completely, then reuse
  for (const item of [...live]) order.remove(item);
  assert.is(order.size, 0);
  order.insert({ id: 'z', score: 1 });
  assert.is(order.at(0).id, 'z');
});

test.run();
