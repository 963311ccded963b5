import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_MAX_BYTES } from '../../../protocols/codec.ts';
import type { ActorInfoWire } from '../../../protocols/messages/actor.ts';
import { encodeOk } from '../../../protocols/reply.ts';
import { randomInt, seededRng } from '../../../lib/random.ts';
import type { NodeInfoWire } from '../../../protocols/messages/cluster.ts';
import { nodesPage, pageOf, pageOfList, SortedKeys } from '../../../runtime/gcs/paging.ts';
import { joinNodeParts } from '../../../runtime/client/from-wire.ts';
import { fitNode } from '../../../runtime/gcs/node-fit.ts';
import { nodeInfo } from '../../../protocols/messages/cluster.ts';
import { encode } from '../../../protocols/codec.ts';
import { Harness } from './support.ts';

// Paged list replies (protocols/messages/page.ts): order, cursor, limit, filter, the byte budget,
// and a walk staying correct while the table changes between pages.

const letters = 'abcdefghij'.split('');
const table = new Map(letters.map((k) => [k, { id: k }]));
const source = { keys: letters, get: (k: string) => table.get(k) };
const ids = (p: { items: { id: string }[]; next?: string }) => [p.items.map((i) => i.id).join(''), p.next];

const cases: { name: string; query: { limit?: number; after?: string }; filter?: (k: string) => boolean; want: [string, string | undefined] }[] = [
  { name: 'everything fits: no cursor', query: {}, want: ['abcdefghij', undefined] },
  { name: 'a limit cuts the page and gives the last id as cursor', query: { limit: 3 }, want: ['abc', 'c'] },
  { name: 'after a cursor', query: { limit: 3, after: 'c' }, want: ['def', 'f'] },
  { name: 'the last page has no cursor', query: { limit: 3, after: 'i' }, want: ['j', undefined] },
  { name: 'a page ending exactly at the end has no cursor', query: { limit: 3, after: 'g' }, want: ['hij', undefined] },
  { name: 'a cursor past the end: empty', query: { after: 'z' }, want: ['', undefined] },
  { name: 'a cursor that is no key starts after where it would sort', query: { limit: 2, after: 'cc' }, want: ['de', 'e'] },
  { name: 'filtered items are skipped and never counted', query: { limit: 2 }, filter: (k) => 'bdh'.includes(k), want: ['bd', 'd'] },
  { name: 'no cursor when no filtered item follows', query: { limit: 2, after: 'd' }, filter: (k) => 'bdh'.includes(k), want: ['h', undefined] },
  { name: 'no cursor when only filtered-out items follow the limit', query: { limit: 1, after: 'd' }, filter: (k) => 'bdh'.includes(k), want: ['h', undefined] },
];

for (const c of cases) {
  test(`pageOf: ${c.name}`, () => {
    const get = c.filter ? (k: string) => (c.filter!(k) ? table.get(k) : undefined) : source.get;
    assert.equal(ids(pageOf({ keys: letters, get }, c.query)), c.want);
  });
}

test('pageOfList sorts by key in code-unit order, whatever order the list is in', () => {
  const list = [{ id: 'b' }, { id: 'B' }, { id: 'a' }, { id: '10' }, { id: '9' }];
  assert.equal(ids(pageOfList(list, (i) => i.id, {})), ['109Bab', undefined]);
});

test('SortedKeys sorts once until told the keys changed', () => {
  const keys = new Set(['b', 'a']);
  let sorts = 0;
  const order = new SortedKeys(() => (sorts++, keys));
  assert.equal(order.get(), ['a', 'b']);
  keys.add('c');
  assert.equal(order.get(), ['a', 'b'], 'not re-read before changed()');
  order.changed();
  assert.equal(order.get(), ['a', 'b', 'c']);
  assert.is(sorts, 2);
});

test('SortedKeys kept in order key by key: after random adds and removes it reads as a fresh sort, sorted once in all', () => {
  const keys = new Set<string>();
  let sorts = 0;
  const order = new SortedKeys(() => (sorts++, keys));
  const rng = seededRng(11);
  const next = (n: number): number => randomInt(rng, n);
  for (let i = 0; i < 300; i++) keys.add(`k${next(1000)}`);
  order.get();
  for (let step = 0; step < 3000; step++) {
    const key = `k${next(1000)}`;
    if (next(3) === 0 && keys.has(key)) {
      keys.delete(key);
      order.removed(key);
    } else {
      keys.add(key);
      order.added(key); // twice for a key already there: still once in the order
    }
    if (step % 500 === 0) assert.equal([...order.get()], [...keys].sort(), `step ${step}`);
  }
  assert.equal([...order.get()], [...keys].sort());
  assert.is(sorts, 1);
  order.removed('not-there');
  assert.equal([...order.get()], [...keys].sort());
});

const bigActor = (i: number, reasonChars: number): ActorInfoWire => ({
  actorId: `actor-${String(i).padStart(5, '0')}`,
  namespace: 'default',
  className: 'Big',
  state: 'PENDING',
  numRestarts: 0,
  labels: { 'orrery.io/actor-id': `actor-${i}` },
  // multi-byte characters: the budget counts encoded bytes, not characters
  pendingReason: '€'.repeat(reasonChars),
});

test('pages of large records each encode under the message size limit, and the walk returns every record once', () => {
  const actors = new Map<string, ActorInfoWire>();
  for (let i = 0; i < 200; i++) actors.set(bigActor(i, 20_000).actorId, bigActor(i, 20_000)); // ~60 KB each, 12 MB in all
  const keys = [...actors.keys()].sort();
  const seen: string[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const page = pageOf({ keys, get: (k) => actors.get(k) }, { limit: 10_000, ...(after === undefined ? {} : { after }) });
    const bytes = encodeOk(page).byteLength;
    assert.ok(bytes <= DEFAULT_MAX_BYTES, `page ${pages}: ${bytes} bytes`);
    assert.ok(bytes > DEFAULT_MAX_BYTES - 2 * 60_100 || page.next === undefined, `page ${pages} is filled close to the limit (${bytes} bytes)`);
    seen.push(...page.items.map((a) => a.actorId));
    after = page.next;
    pages++;
  } while (after !== undefined);
  assert.equal(seen, keys);
  assert.ok(pages >= 12, `${pages} pages`);
});

test('a record larger than the budget still gets a page of its own, so a walk never stalls', () => {
  const huge = { id: 'b', blob: 'x'.repeat(DEFAULT_MAX_BYTES) };
  const list = [{ id: 'a', blob: 'small' }, huge, { id: 'c', blob: 'small' }];
  assert.equal(ids(pageOfList(list, (i) => i.id, {})), ['a', 'a']);
  assert.equal(ids(pageOfList(list, (i) => i.id, { after: 'a' })), ['b', 'b']);
  assert.equal(ids(pageOfList(list, (i) => i.id, { after: 'b' })), ['c', undefined]);
});

test('list_actors: a walk while actors are registered and forgotten between pages lists every actor present throughout exactly once', async () => {
  const h = await Harness.start({ maxDeadActors: 5 });
  try {
    await h.addNode({ nodeId: 'n1', cpu: 1000 });
    const id = (n: number) => `a${String(n).padStart(3, '0')}`;
    for (let n = 0; n < 60; n += 2) await h.registerActor(id(n));
    // kill a few early on so later deaths push them out of the table mid-walk
    for (const n of [0, 2, 4, 6, 8]) await h.request('kill_actor', 'kill_actor', { actorId: id(n), noRestart: true });

    const seen: string[] = [];
    let after: string | undefined;
    let added = 1;
    let killed = 10;
    for (;;) {
      const page = await h.request('list_actors', 'list_actors', { limit: 7, ...(after === undefined ? {} : { after }) });
      seen.push(...page.items.map((a: ActorInfoWire) => a.actorId));
      if (page.next === undefined) break;
      after = page.next;
      // between pages: a new actor on either side of the cursor, and a death that forgets the oldest dead one
      await h.registerActor(id(added));
      added += 2;
      await h.request('kill_actor', 'kill_actor', { actorId: id(killed), noRestart: true });
      killed += 2;
    }
    assert.equal(seen, [...new Set(seen)], 'no actor listed twice');
    assert.equal(seen, [...seen].sort(), 'in id order');
    const deaths: string[] = [];
    for (let n = 0; n < killed; n += 2) deaths.push(id(n));
    const forgotten = new Set(deaths.slice(0, deaths.length - 5));
    assert.ok(forgotten.size >= 3, `${forgotten.size} dead actors forgotten mid-walk`);
    for (let n = 0; n < 60; n += 2) {
      if (!forgotten.has(id(n))) assert.ok(seen.includes(id(n)), `${id(n)}, present throughout, is listed`);
    }
    for (let n = 1; n < added; n += 2) {
      const cursorPassed = seen.some((s) => s > id(n)) && !seen.includes(id(n));
      assert.ok(seen.includes(id(n)) || cursorPassed, `${id(n)}, added mid-walk, is listed unless the cursor had passed it`);
    }
  } finally {
    await h.close();
  }
});

test('list_actors filters by state in the GCS; list_nodes and list_placement_groups are pages too', async () => {
  const h = await Harness.start();
  try {
    await h.addNode({ nodeId: 'n2' });
    await h.addNode({ nodeId: 'n1' });
    for (const a of ['x1', 'x2', 'x3']) {
      await h.registerActor(a);
      await h.reached(a, 'ALIVE');
    }
    await h.request('kill_actor', 'kill_actor', { actorId: 'x2', noRestart: true });
    const alive = await h.request('list_actors', 'list_actors', { states: ['ALIVE'] });
    assert.equal(alive.items.map((a: ActorInfoWire) => a.actorId), ['x1', 'x3']);
    const dead = await h.request('list_actors', 'list_actors', { states: ['DEAD', 'PENDING'], limit: 1 });
    assert.equal([dead.items.map((a: ActorInfoWire) => a.actorId), dead.next], [['x2'], undefined]);
    const nodes = await h.request('list_nodes', 'list_nodes', { limit: 1 });
    assert.equal([nodes.items.map((n: { nodeId: string }) => n.nodeId), nodes.next], [['n1'], 'n1']);
    assert.equal((await h.request('list_nodes', 'list_nodes', { after: 'n1' })).items.map((n: { nodeId: string }) => n.nodeId), ['n2']);
    assert.equal(await h.request('list_placement_groups', 'list_placement_groups', { limit: 5 }), { items: [] });
    assert.is((await h.refusal('list_actors', 'list_actors', { limit: 0 } as never)).code, 'INVALID_MESSAGE');
    assert.is((await h.refusal('list_actors', 'list_actors', { states: ['ASLEEP'] } as never)).code, 'INVALID_MESSAGE');
  } finally {
    await h.close();
  }
});

// list_nodes: a node holding thousands of bundles is larger than a reply; it goes in parts

function nodeWire(nodeId: string, bundles: number): NodeInfoWire {
  const total: Record<string, number> = { CPU: 64_000 + bundles * 1000 };
  const available: Record<string, number> = { CPU: 64_000 };
  for (let i = 0; i < bundles; i++) {
    const pg = `pg${String(i).padStart(6, '0')}a1b2c3d4`;
    total[`CPU_group_${pg}`] = total[`CPU_group_0_${pg}`] = 1000;
    available[`CPU_group_${pg}`] = available[`CPU_group_0_${pg}`] = i % 3 === 0 ? 0 : 1000;
  }
  return { nodeId, name: `node-${nodeId}`, state: 'ALIVE', labels: { zone: 'a' }, taints: {}, resources: { total, available } };
}

/** Every page of a list_nodes walk, as the client asks for them (gcs-client.ts `all`). */
function walkNodes(nodes: () => NodeInfoWire[], maxBytes: number, between?: (page: number) => void): { pages: { items: NodeInfoWire[]; next?: string }[]; items: NodeInfoWire[] } {
  const pages: { items: NodeInfoWire[]; next?: string }[] = [];
  let after: string | undefined;
  for (;;) {
    const page = nodesPage(nodes(), { limit: 10_000, after }, { maxBytes });
    pages.push(page);
    if (page.next === undefined) break;
    assert.ok(after === undefined || page.next > after, `the cursor moves forward (${after} → ${page.next})`);
    after = page.next;
    between?.(pages.length);
  }
  return { pages, items: pages.flatMap((p) => p.items) };
}

test('list_nodes: nodes that fit are whole items, as before', () => {
  const nodes = ['n3', 'n1', 'n2'].map((id) => nodeWire(id, 2));
  const page = nodesPage(nodes, {}, {});
  assert.equal(page, { items: [...nodes].sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1)) });
  assert.equal(nodesPage(nodes, { limit: 2 }), { items: [nodes[1], nodes[2]], next: 'n2' });
  assert.equal(nodesPage(nodes, { after: 'n2' }), { items: [nodes[0]] });
});

test('list_nodes: a node larger than a reply comes in parts, each page under the size limit, joined back to the node itself', () => {
  const MAX = 64 * 1024;
  const big = nodeWire('n2', 3_000);
  const nodes = [nodeWire('n1', 1), big, nodeWire('n3', 0)];
  const { pages, items } = walkNodes(() => nodes, MAX);
  assert.ok(pages.length > 5, `several pages (${pages.length})`);
  for (const page of pages) assert.ok(encodeOk(page).byteLength <= MAX, `a page of ${encodeOk(page).byteLength} bytes`);
  assert.ok(items.filter((n) => n.nodeId === 'n2').length > 1, 'the large node in parts');
  assert.equal(joinNodeParts(items), nodes, 'joined: the three nodes as they are');
  // the reply size the GCS uses (1 MiB): the same
  assert.equal(joinNodeParts(walkNodes(() => nodes, DEFAULT_MAX_BYTES).items), nodes);
});

test('list_nodes: names added and removed during a walk over a node in parts — every name present throughout comes exactly once', () => {
  const node = nodeWire('n1', 2_000);
  const { total, available } = node.resources;
  const initial = Object.keys(total);
  const removed = new Set<string>();
  const seen = new Map<string, number>();
  const { items } = walkNodes(
    () => [node],
    32 * 1024,
    (page) => {
      // between pages: a name that sorts first, one that sorts last, and one early name removed
      total[`A_early_${page}`] = available[`A_early_${page}`] = 1;
      total[`z_late_${page}`] = available[`z_late_${page}`] = 1;
      const gone = initial[page * 7]!;
      removed.add(gone);
      delete total[gone];
      delete available[gone];
    },
  );
  for (const part of items) for (const name of Object.keys(part.resources.total)) seen.set(name, (seen.get(name) ?? 0) + 1);
  for (const name of initial) if (!removed.has(name)) assert.is(seen.get(name), 1, name);
  assert.ok([...seen.values()].every((n) => n === 1), 'no name twice');
});

test('a node event or answer: the node as it is while it fits a message, else without its bundle resources, counted', () => {
  const small = nodeWire('n1', 10);
  assert.is(fitNode(small), small);
  const big = nodeWire('n2', 9_000); // ~1.2 MB with its 18,000 bundle names
  assert.ok(encode('event', { type: 'node_dead', time: 0, node: big }, { maxBytes: 64 * DEFAULT_MAX_BYTES }).byteLength > DEFAULT_MAX_BYTES);
  const fitted = fitNode(big);
  assert.equal(fitted.resources, { total: { CPU: 9_064_000 }, available: { CPU: 64_000 } }, 'its own resources');
  assert.is(fitted.bundleResourcesOmitted, 18_000);
  assert.equal([fitted.nodeId, fitted.name, fitted.labels], [big.nodeId, big.name, big.labels]);
  assert.ok(encode('event', { type: 'node_dead', time: 0, node: fitted }).byteLength < 1024, 'and the event fits');
  assert.equal(nodeInfo(fitted, 'node'), fitted, 'the protocol takes it');
  assert.is(Object.keys(big.resources.total).length, 18_001, 'the node itself is not changed');
});

test('list_nodes: a cursor that names no node, or a node and a name that are gone, resumes where it would sort', () => {
  const nodes = ['n1', 'n3'].map((id) => nodeWire(id, 1));
  assert.equal(nodesPage(nodes, { after: 'n2' }).items.map((n) => n.nodeId), ['n3']);
  assert.equal(nodesPage(nodes, { after: 'n2 CPU' }).items.map((n) => n.nodeId), ['n3'], 'inside a node that is gone: the next node');
  const resumed = nodesPage(nodes, { after: 'n1 zzz' });
  assert.equal(resumed.items.map((n) => n.nodeId), ['n3'], 'past every name of n1: nothing of it again');
  assert.equal(nodesPage(nodes, { after: 'n9 ' }), { items: [] });
});

test.run();
