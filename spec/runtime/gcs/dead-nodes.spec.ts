import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_MAX_DEAD_NODES } from '../../../runtime/gcs/dead-actors.ts';
import { MemoryStore } from '../../../runtime/gcs/store.ts';
import { Harness } from './support.ts';

// The node table keeps the newest maxDeadNodes dead nodes (every raylet start is a new node id, so
// kept forever they grew the GCS and its store with every restart and scale-down); a node that comes
// back under its id is never forgotten while it lives; a restarted GCS takes up the bound.

const ids = (nodes: { nodeId: string; state: string }[]): string[] => nodes.map((n) => `${n.nodeId}:${n.state}`).sort();

test('dead nodes past maxDeadNodes are forgotten, oldest death first: the list and the store drop them', async () => {
  const store = new MemoryStore();
  const h = await Harness.start({ maxDeadNodes: 2, store });
  try {
    for (const id of ['n1', 'n2', 'n3', 'n4', 'n5']) await h.addNode({ nodeId: id, cpu: 1 });
    for (const id of ['n2', 'n1', 'n3']) assert.equal(await h.request('unregister_node', 'unregister_node', { nodeId: id }), { known: true });
    assert.equal(ids(await h.nodes()), ['n1:DEAD', 'n3:DEAD', 'n4:ALIVE', 'n5:ALIVE']);
    assert.is(store.getNode('n2'), undefined);
    assert.is(store.getNode('n1')?.info.state, 'DEAD');
    await h.request('unregister_node', 'unregister_node', { nodeId: 'n5' });
    assert.equal(ids(await h.nodes()), ['n3:DEAD', 'n4:ALIVE', 'n5:DEAD']);
    assert.equal(store.counts().nodes, 3);
  } finally {
    await h.close();
  }
});

test('a dead node that registered again under its id is not forgotten when its old death falls out', async () => {
  const h = await Harness.start({ maxDeadNodes: 1 });
  try {
    const n1 = await h.addNode({ nodeId: 'n1', cpu: 1 });
    await h.addNode({ nodeId: 'n2', cpu: 1 });
    await h.request('unregister_node', 'unregister_node', { nodeId: 'n1' });
    await n1.register(); // the same raylet, back under its id: a new life of node n1
    await h.request('unregister_node', 'unregister_node', { nodeId: 'n2' }); // n1's old death falls out of the bound
    assert.equal(ids(await h.nodes()), ['n1:ALIVE', 'n2:DEAD']);
    assert.is(h.gcs.snapshot().nodes.find((n: { nodeId: string }) => n.nodeId === 'n1')?.state, 'ALIVE');
  } finally {
    await h.close();
  }
});

test('a GCS started on a store with more dead nodes than its bound keeps the newest', async () => {
  const store = new MemoryStore();
  const first = await Harness.start({ store });
  try {
    for (const id of ['n1', 'n2', 'n3', 'n4']) await first.addNode({ nodeId: id, cpu: 1 });
    for (const id of ['n1', 'n2', 'n3', 'n4']) await first.request('unregister_node', 'unregister_node', { nodeId: id });
    assert.equal(store.counts().nodes, 4);
  } finally {
    await first.close();
  }
  // registeredAt orders the dead ones a restarted GCS finds: n1, n2, n3, n4
  const second = await Harness.start({ store, maxDeadNodes: 2 });
  try {
    assert.equal(['n1', 'n2', 'n3', 'n4'].map((id) => store.getNode(id)?.info.state), [undefined, undefined, 'DEAD', 'DEAD']);
  } finally {
    await second.close();
  }
  assert.is(DEFAULT_MAX_DEAD_NODES, 1_000);
});

test.run();
