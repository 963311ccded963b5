import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { actorAffinity, affinity } from '../../../lib/selectors/builders.ts';
import { PendingQueue, type PlaceOutcome } from '../../../runtime/gcs/pending-queue.ts';
import { Harness } from './support.ts';

// The pending queue alone (kicks, skipping actors whose inputs did not change, time slices, idle
// callbacks), then a storm of unplaceable actors on a GCS: one schedule_failed event per actor, and
// nodes() answered within 100 ms while the queue is retried over and over.

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const idle = (q: PendingQueue) => new Promise<void>((resolve) => q.whenIdle(resolve));

function queueOf(opts: { peers?: Set<string>; outcome?: (id: string) => PlaceOutcome; sliceMs?: number; now?: () => number } = {}) {
  const tried: string[] = [];
  const q = new PendingQueue({
    tryPlace: (id) => {
      tried.push(id);
      return opts.outcome?.(id) ?? 'waiting';
    },
    waitsOnPeers: (id) => opts.peers?.has(id) ?? false,
    log: () => undefined,
    sliceMs: opts.sliceMs,
    now: opts.now,
  });
  return { q, tried };
}

test('kicks in one turn make one pass; a newcomer is tried, others only when something they depend on changed', async () => {
  const { q, tried } = queueOf({ peers: new Set(['follower']) });
  q.add('a');
  q.add('follower');
  q.kick('node_registered');
  q.kick('labels_changed');
  await idle(q);
  assert.equal(tried, ['a', 'follower']);
  assert.is(q.stats().passes, 1);

  tried.length = 0;
  q.kick('actor_placed');
  await idle(q);
  assert.equal(tried, ['follower'], 'a placement is news only to actors with actor affinity');

  tried.length = 0;
  q.add('restarting');
  q.kick('actor_waiting');
  await idle(q);
  assert.equal(tried, ['restarting'], 'a restart joining is news only to itself');

  tried.length = 0;
  q.kick('resources_freed');
  await idle(q);
  assert.equal(tried, ['a', 'follower', 'restarting'], 'freed resources are news to everyone, oldest first');
  assert.equal(q.stats().skipped, 3);
  assert.equal(q.stats().attempts, 7);
  q.stop();
});

test('an actor tried at registration is not tried again until something changes', async () => {
  const { q, tried } = queueOf();
  q.add('a');
  q.tried('a');
  q.kick('actor_waiting');
  await idle(q);
  assert.equal(tried, []);
  q.kick('node_died');
  await idle(q);
  assert.equal(tried, ['a']);
  q.stop();
});

test('placed and gone actors leave the queue; a kick during a pass makes one more pass', async () => {
  const placed = new Set(['lead']);
  const { q, tried } = queueOf({
    peers: new Set(['follower']),
    outcome: (id) => {
      if (id === 'lead') {
        q.kick('actor_placed');
        return 'placed';
      }
      if (id === 'follower' && placed.has('lead') && tried.filter((t) => t === 'follower').length > 1) return 'placed';
      return id === 'gone' ? 'gone' : 'waiting';
    },
  });
  for (const id of ['follower', 'gone', 'lead']) q.add(id);
  q.kick('node_registered');
  await idle(q);
  q.delete('lead');
  assert.equal(tried, ['follower', 'gone', 'lead', 'follower'], 'the follower was retried in the pass the leader\'s placement caused');
  assert.is(q.stats().passes, 2);
  assert.equal(q.stats().waiting, ['follower'], 'placed actors are removed by their state change, gone ones by the queue');
  q.stop();
});

test('a long pass yields to the event loop between slices', async () => {
  let clock = 0;
  const { q, tried } = queueOf({ sliceMs: 5, now: () => clock, outcome: () => ((clock += 2), 'waiting') });
  for (let i = 0; i < 10; i++) q.add(`a${i}`);
  q.kick('node_registered');
  let turns = 0;
  let done = false;
  q.whenIdle(() => (done = true));
  while (!done) {
    await turn();
    turns++;
  }
  assert.is(tried.length, 10);
  assert.ok(turns >= 4, `${turns} turns: three tries per slice`);
  assert.is(q.stats().passes, 1, 'still one pass');
  q.stop();
});

test('storm: 1,000 unplaceable actors give 1,000 schedule_failed events, not one per retry, and nodes() answers within 100 ms', async () => {
  const h = await Harness.start();
  try {
    await h.addNode({ nodeId: 'n1', cpu: 8, labels: { region: 'us' } });
    await h.addNode({ nodeId: 'n2', cpu: 8, labels: { region: 'us' } });
    const N = 1000;
    const ids = Array.from({ length: N }, (_, i) => `mars${i}`);
    for (let i = 0; i < N; i += 100) {
      await Promise.all(ids.slice(i, i + 100).map((id) => h.registerActor(id, { labelSelector: { region: 'mars' } })));
    }
    await h.events.wait(() => h.events.got.filter((e) => e.type === 'schedule_failed').length === N, 'one schedule_failed per actor', 10_000);

    // churn: actors placed and killed (resources freed: every waiting actor is retried), labels changed
    let worst = 0;
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const t0 = performance.now();
        assert.is((await h.nodes()).length, 2);
        worst = Math.max(worst, performance.now() - t0);
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const before = h.gcs.snapshot().pending;
    for (let i = 0; i < 20; i++) {
      await h.registerActor(`busy${i}`, { numCpus: 1, labelSelector: { region: 'us' } });
      await h.reached(`busy${i}`, 'ALIVE');
      await h.request('kill_actor', 'kill_actor', { actorId: `busy${i}`, noRestart: true });
      await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n2', set: { churn: String(i) } });
    }
    await new Promise<void>((resolve) => setTimeout(resolve, 50));
    probing = false;
    await probe;
    const after = h.gcs.snapshot().pending;
    const failed = h.events.got.filter((e) => e.type === 'schedule_failed');
    assert.is(failed.length, N, 'the explanation never changed, so no event was repeated');
    assert.is(new Set(failed.map((e) => (e.target as { id: string }).id)).size, N);
    assert.ok(after.attempts - before.attempts >= N * 20, `the queue was retried (${after.attempts - before.attempts} attempts)`);
    console.log(`storm: nodes() worst ${worst.toFixed(1)} ms, ${after.attempts - before.attempts} attempts, ${after.passes - before.passes} passes`);
    assert.ok(worst < 100, `nodes() answered within ${worst.toFixed(1)} ms during the storm`);
    assert.is((await h.actor('mars7')).pendingReason, "0/2 nodes are available: 2 node(s) didn't match label selector region in (mars).");
  } finally {
    await h.close();
  }
});

test('a follower of a pending actor is placed in the same turn its leader is', async () => {
  const h = await Harness.start();
  try {
    await h.addNode({ nodeId: 'n1', labels: {} });
    await h.registerActor('lead', { labelSelector: { role: 'lead' } });
    await h.registerActor('follow', { schedulingStrategy: actorAffinity(affinity('lead')) });
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n1', set: { role: 'lead' } });
    const lead = await h.reached('lead', 'SCHEDULED');
    const follow = await h.reached('follow', 'SCHEDULED');
    assert.is(follow.nodeId, lead.nodeId);
    const at = (id: string) => h.events.got.findIndex((e) => e.actor?.actorId === id && e.actor.state === 'SCHEDULED');
    const between = h.events.got.slice(at('lead'), at('follow')).filter((e) => e.type !== 'actor_state' && e.type !== 'node_labels_changed');
    assert.equal(between, [], 'nothing else happened in between: no timer, no poll');
  } finally {
    await h.close();
  }
});

test.run();
