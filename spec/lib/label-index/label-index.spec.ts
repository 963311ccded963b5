import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LabelIndex, NODE_SCOPE, TAINT_SCOPE, actorScope } from '../../../lib/label-index/label-index.ts';

type Labels = Record<string, string>;
type Op = ['add' | 'remove', string, string, Labels];

/** One lookup and the answer it must give (sets are compared sorted). */
type Query =
  | { q: 'byValue'; scope: string; key: string; values: string[]; want: string[] }
  | { q: 'byKey'; scope: string; key: string; want: string[] }
  | { q: 'countValue'; scope: string; key: string; values: string[]; want: number }
  | { q: 'countKey'; scope: string; key: string; want: number }
  | { q: 'has'; scope: string; node: string; key: string; values?: string[]; want: boolean }
  | { q: 'ref'; scope: string; node: string; key: string; value: string; want: number };

const N = NODE_SCOPE;
const T = TAINT_SCOPE;
const A = actorScope('default');
const B = actorScope('other');

function answer(index: LabelIndex, query: Query): unknown {
  switch (query.q) {
    case 'byValue':
      return [...index.nodesByKeyValue(query.scope, query.key, query.values)].sort();
    case 'byKey':
      return [...index.nodesByKey(query.scope, query.key)].sort();
    case 'countValue':
      return index.countByKeyValue(query.scope, query.key, query.values);
    case 'countKey':
      return index.countByKey(query.scope, query.key);
    case 'has':
      return index.nodeHas(query.scope, query.node, query.key, query.values);
    case 'ref':
      return index.refCount(query.scope, query.node, query.key, query.value);
  }
}

const cases: { name: string; ops: Op[]; queries: Query[] }[] = [
  {
    name: 'an empty index answers nothing',
    ops: [],
    queries: [
      { q: 'byValue', scope: N, key: 'zone', values: ['a'], want: [] },
      { q: 'byKey', scope: N, key: 'zone', want: [] },
      { q: 'countValue', scope: N, key: 'zone', values: ['a'], want: 0 },
      { q: 'countKey', scope: N, key: 'zone', want: 0 },
      { q: 'has', scope: N, node: 'n1', key: 'zone', want: false },
      { q: 'has', scope: N, node: 'n1', key: 'zone', values: ['a'], want: false },
      { q: 'ref', scope: N, node: 'n1', key: 'zone', value: 'a', want: 0 },
    ],
  },
  {
    name: 'node labels over several values',
    ops: [
      ['add', N, 'n1', { zone: 'a', gpu: 'A100' }],
      ['add', N, 'n2', { zone: 'b' }],
      ['add', N, 'n3', { zone: 'c', gpu: '' }],
      ['add', N, 'n4', { zone: 'a' }],
    ],
    queries: [
      { q: 'byValue', scope: N, key: 'zone', values: ['a'], want: ['n1', 'n4'] },
      { q: 'byValue', scope: N, key: 'zone', values: ['a', 'b'], want: ['n1', 'n2', 'n4'] },
      { q: 'byValue', scope: N, key: 'zone', values: ['b', 'c', 'missing'], want: ['n2', 'n3'] },
      { q: 'byValue', scope: N, key: 'zone', values: [], want: [] },
      { q: 'byValue', scope: N, key: 'gpu', values: [''], want: ['n3'] },
      { q: 'byKey', scope: N, key: 'zone', want: ['n1', 'n2', 'n3', 'n4'] },
      { q: 'byKey', scope: N, key: 'gpu', want: ['n1', 'n3'] },
      { q: 'countValue', scope: N, key: 'zone', values: ['a', 'b'], want: 3 },
      { q: 'countKey', scope: N, key: 'gpu', want: 2 },
      { q: 'has', scope: N, node: 'n1', key: 'gpu', want: true },
      { q: 'has', scope: N, node: 'n2', key: 'gpu', want: false },
      { q: 'has', scope: N, node: 'n1', key: 'zone', values: ['b', 'a'], want: true },
      { q: 'has', scope: N, node: 'n1', key: 'zone', values: ['b', 'c'], want: false },
      { q: 'has', scope: N, node: 'n1', key: 'zone', values: [], want: false },
      { q: 'has', scope: N, node: 'n9', key: 'zone', want: false },
    ],
  },
  {
    name: 'countByKeyValue is an upper bound: a node counted under each value it has',
    ops: [
      ['add', A, 'n1', { app: 'web' }],
      ['add', A, 'n1', { app: 'db' }],
    ],
    queries: [
      { q: 'countValue', scope: A, key: 'app', values: ['web', 'db'], want: 2 },
      { q: 'byValue', scope: A, key: 'app', values: ['web', 'db'], want: ['n1'] },
      { q: 'countKey', scope: A, key: 'app', want: 1 },
    ],
  },
  {
    name: 'two actors with the same label on one node: removing one keeps the node',
    ops: [
      ['add', A, 'n1', { app: 'web', 'orrery.io/actor-id': 'a1' }],
      ['add', A, 'n1', { app: 'web', 'orrery.io/actor-id': 'a2' }],
      ['remove', A, 'n1', { app: 'web', 'orrery.io/actor-id': 'a1' }],
    ],
    queries: [
      { q: 'byValue', scope: A, key: 'app', values: ['web'], want: ['n1'] },
      { q: 'byKey', scope: A, key: 'app', want: ['n1'] },
      { q: 'ref', scope: A, node: 'n1', key: 'app', value: 'web', want: 1 },
      { q: 'has', scope: A, node: 'n1', key: 'app', values: ['web'], want: true },
      { q: 'has', scope: A, node: 'n1', key: 'orrery.io/actor-id', values: ['a1'], want: false },
      { q: 'has', scope: A, node: 'n1', key: 'orrery.io/actor-id', values: ['a2'], want: true },
      { q: 'byKey', scope: A, key: 'orrery.io/actor-id', want: ['n1'] },
    ],
  },
  {
    name: 'two actors with the same label on one node: removing both drops the node',
    ops: [
      ['add', A, 'n1', { app: 'web' }],
      ['add', A, 'n1', { app: 'web' }],
      ['add', A, 'n2', { app: 'web' }],
      ['remove', A, 'n1', { app: 'web' }],
      ['remove', A, 'n1', { app: 'web' }],
    ],
    queries: [
      { q: 'byValue', scope: A, key: 'app', values: ['web'], want: ['n2'] },
      { q: 'byKey', scope: A, key: 'app', want: ['n2'] },
      { q: 'countValue', scope: A, key: 'app', values: ['web'], want: 1 },
      { q: 'countKey', scope: A, key: 'app', want: 1 },
      { q: 'ref', scope: A, node: 'n1', key: 'app', value: 'web', want: 0 },
      { q: 'has', scope: A, node: 'n1', key: 'app', want: false },
    ],
  },
  {
    name: 'the key stays while another value of it is on the node',
    ops: [
      ['add', A, 'n1', { app: 'web' }],
      ['add', A, 'n1', { app: 'db' }],
      ['remove', A, 'n1', { app: 'web' }],
    ],
    queries: [
      { q: 'byValue', scope: A, key: 'app', values: ['web'], want: [] },
      { q: 'byValue', scope: A, key: 'app', values: ['db'], want: ['n1'] },
      { q: 'has', scope: A, node: 'n1', key: 'app', want: true },
      { q: 'countKey', scope: A, key: 'app', want: 1 },
    ],
  },
  {
    name: 'everything removed leaves the index empty',
    ops: [
      ['add', N, 'n1', { zone: 'a', gpu: 'x' }],
      ['remove', N, 'n1', { zone: 'a', gpu: 'x' }],
    ],
    queries: [
      { q: 'byValue', scope: N, key: 'zone', values: ['a'], want: [] },
      { q: 'byKey', scope: N, key: 'gpu', want: [] },
      { q: 'countValue', scope: N, key: 'zone', values: ['a'], want: 0 },
      { q: 'countKey', scope: N, key: 'zone', want: 0 },
    ],
  },
  {
    name: 'removing unknown entries is harmless',
    ops: [
      ['add', N, 'n1', { zone: 'a' }],
      ['remove', N, 'n2', { zone: 'a' }],
      ['remove', N, 'n1', { zone: 'b' }],
      ['remove', N, 'n1', { rack: 'r1' }],
      ['remove', T, 'n1', { zone: 'a' }],
      ['remove', actorScope('nowhere'), 'n1', { zone: 'a' }],
      ['remove', N, 'n1', {}],
    ],
    queries: [
      { q: 'byValue', scope: N, key: 'zone', values: ['a'], want: ['n1'] },
      { q: 'ref', scope: N, node: 'n1', key: 'zone', value: 'a', want: 1 },
      { q: 'countKey', scope: N, key: 'zone', want: 1 },
      { q: 'byKey', scope: N, key: 'rack', want: [] },
    ],
  },
  {
    name: 'removing more times than added does not go below zero or drop a later add',
    ops: [
      ['add', N, 'n1', { zone: 'a' }],
      ['remove', N, 'n1', { zone: 'a' }],
      ['remove', N, 'n1', { zone: 'a' }],
      ['add', N, 'n1', { zone: 'a' }],
    ],
    queries: [
      { q: 'ref', scope: N, node: 'n1', key: 'zone', value: 'a', want: 1 },
      { q: 'byValue', scope: N, key: 'zone', values: ['a'], want: ['n1'] },
      { q: 'countKey', scope: N, key: 'zone', want: 1 },
    ],
  },
  {
    name: 'scopes are isolated: node labels, taints and actor labels of two namespaces',
    ops: [
      ['add', N, 'n1', { gpu: 'true' }],
      ['add', T, 'n2', { gpu: 'true' }],
      ['add', A, 'n3', { gpu: 'true' }],
      ['add', B, 'n4', { gpu: 'true' }],
    ],
    queries: [
      { q: 'byValue', scope: N, key: 'gpu', values: ['true'], want: ['n1'] },
      { q: 'byValue', scope: T, key: 'gpu', values: ['true'], want: ['n2'] },
      { q: 'byValue', scope: A, key: 'gpu', values: ['true'], want: ['n3'] },
      { q: 'byValue', scope: B, key: 'gpu', values: ['true'], want: ['n4'] },
      { q: 'byKey', scope: actorScope('third'), key: 'gpu', want: [] },
      { q: 'has', scope: T, node: 'n1', key: 'gpu', want: false },
      { q: 'has', scope: N, node: 'n2', key: 'gpu', want: false },
      { q: 'has', scope: B, node: 'n3', key: 'gpu', want: false },
      { q: 'countKey', scope: A, key: 'gpu', want: 1 },
    ],
  },
  {
    name: 'removing from one scope leaves the same label in another',
    ops: [
      ['add', N, 'n1', { app: 'web' }],
      ['add', A, 'n1', { app: 'web' }],
      ['add', B, 'n1', { app: 'web' }],
      ['remove', A, 'n1', { app: 'web' }],
    ],
    queries: [
      { q: 'has', scope: N, node: 'n1', key: 'app', values: ['web'], want: true },
      { q: 'has', scope: A, node: 'n1', key: 'app', values: ['web'], want: false },
      { q: 'has', scope: B, node: 'n1', key: 'app', values: ['web'], want: true },
    ],
  },
  {
    name: 'keys that look like Object.prototype names are ordinary keys',
    ops: [['add', N, 'n1', { constructor: 'x', toString: 'y' }]],
    queries: [
      { q: 'byValue', scope: N, key: 'constructor', values: ['x'], want: ['n1'] },
      { q: 'byKey', scope: N, key: 'toString', want: ['n1'] },
      { q: 'byKey', scope: N, key: 'hasOwnProperty', want: [] },
      { q: 'has', scope: N, node: 'n1', key: 'valueOf', want: false },
    ],
  },
];

for (const c of cases) {
  test(`label index: ${c.name}`, () => {
    const index = new LabelIndex();
    for (const [op, scope, node, labels] of c.ops) index[op](scope, node, labels);
    for (const query of c.queries) {
      assert.equal(answer(index, query), query.want, JSON.stringify(query));
    }
  });
}

test('scope names', () => {
  assert.is(NODE_SCOPE, 'node');
  assert.is(TAINT_SCOPE, 'taint');
  assert.is(actorScope('ns1'), 'actor/ns1');
  assert.is.not(actorScope('a'), actorScope('b'));
});

test('lookups return fresh sets: changing one does not change the index', () => {
  const index = new LabelIndex();
  index.add(N, 'n1', { zone: 'a' });
  index.nodesByKey(N, 'zone').add('n9');
  index.nodesByKeyValue(N, 'zone', ['a']).add('n9');
  assert.equal([...index.nodesByKey(N, 'zone')], ['n1']);
  assert.equal([...index.nodesByKeyValue(N, 'zone', ['a'])], ['n1']);
});

test('a seeded random add/remove sequence agrees with a plain list of entries', () => {
  const index = new LabelIndex();
  const entries: { scope: string; node: string; labels: Labels }[] = [];
  let seed = 1;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const scopes = [N, T, A, B];
  for (let step = 0; step < 3000; step++) {
    if (entries.length && rand(3) === 0) {
      const [e] = entries.splice(rand(entries.length), 1);
      index.remove(e.scope, e.node, e.labels);
    } else {
      const e = { scope: scopes[rand(4)], node: `n${rand(6)}`, labels: { k: `v${rand(3)}`, [`k${rand(2)}`]: 'x' } };
      entries.push(e);
      index.add(e.scope, e.node, e.labels);
    }
  }
  for (const scope of scopes) {
    for (const key of ['k', 'k0', 'k1']) {
      for (const value of ['v0', 'v1', 'v2', 'x']) {
        const want = new Set(entries.filter((e) => e.scope === scope && e.labels[key] === value).map((e) => e.node));
        assert.equal([...index.nodesByKeyValue(scope, key, [value])].sort(), [...want].sort(), `${scope} ${key}=${value}`);
        for (let n = 0; n < 6; n++) {
          const count = entries.filter((e) => e.scope === scope && e.node === `n${n}` && e.labels[key] === value).length;
          assert.is(index.refCount(scope, `n${n}`, key, value), count);
        }
      }
      const want = new Set(entries.filter((e) => e.scope === scope && key in e.labels).map((e) => e.node));
      assert.equal([...index.nodesByKey(scope, key)].sort(), [...want].sort(), `${scope} ${key}`);
      assert.is(index.countByKey(scope, key), want.size);
    }
  }
});

test.run();
