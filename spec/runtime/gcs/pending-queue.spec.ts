import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { actorAffinity, affinity } from '../../../lib/selectors/builders.ts';
import { PendingQueue, type PendingQueueStats, type PlaceOutcome } from '../../../runtime/gcs/pending-queue.ts';
import { Harness, within } from './support.ts';

// The pending queue alone (kicks, skipping actors whose inputs did not change, time slices, idle
// callbacks), then a storm of unplaceable actors on a GCS: one schedule_failed event per actor
// however often the queue is retried, and a retry pass over them that yields between its slices, so
// a nodes() request made during the pass is answered before the pass ends. Nothing here is timed:
// how long nodes() takes during such a storm is a benchmark's figure, not a spec's.

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const idle = (q: PendingQueue) => new Promise<void>((resolve) => q.whenIdle(resolve));

/** Waits, a turn of the event loop at a time, until the GCS's pending queue has no pass running or due. */
async function queueIdle(h: Harness): Promise<void> {
  let waiting = true;
  const poll = async () => {
    while (waiting && !h.gcs.snapshot().pending.idle) await turn();
  };
  await within(poll(), 'the pending queue to go idle', 10_000).finally(() => (waiting = false));
}

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
  let seenPassing = 0;
  let done = false;
  q.whenIdle(() => (done = true));
  while (!done) {
    await turn();
    turns++;
    if (q.stats().passing) seenPassing++;
  }
  assert.is(tried.length, 10);
  assert.ok(turns >= 4, `${turns} turns: three tries per slice`);
  assert.is(q.stats().passes, 1, 'still one pass');
  assert.is(q.stats().slices, 4, 'in four slices: 3 + 3 + 3 + 1 tries');
  assert.ok(seenPassing >= 3, `the pass was seen in progress between its slices (${seenPassing} times)`);
  assert.is(q.stats().passing, false);
  assert.is(q.stats().idle, true);
  q.stop();
});

test('storm: 1,000 unplaceable actors give 1,000 schedule_failed events, not one per retry; a retry pass over them runs in slices and answers nodes() before it ends', async () => {
  // Called once, from inside the GCS, on the first placement attempt it makes in a pass after this is
  // set: each attempt sends the actor's machine an event, which the inspection sees as it happens.
  let onAttemptInPass: (() => void) | undefined;
  const h: Harness = await Harness.start({
    queueSliceMs: 1, // the smallest slice budget the GCS takes
    explainBackoffMs: { initial: 0, max: 0 }, // every attempt explains: the pass below must send UNSCHEDULABLE
    inspect: (e) => {
      if (onAttemptInPass === undefined || e.type !== '@xstate.event' || e.event.type !== 'UNSCHEDULABLE') return;
      if (!h.gcs.snapshot().pending.passing) return; // an attempt at registration, not in a pass
      const probe = onAttemptInPass;
      onAttemptInPass = undefined;
      probe();
    },
  });
  try {
    await h.addNode({ nodeId: 'n1', cpu: 8, labels: { region: 'us' } });
    await h.addNode({ nodeId: 'n2', cpu: 8, labels: { region: 'us' } });
    const N = 1000;
    const ids = Array.from({ length: N }, (_, i) => `mars${i}`);
    for (let i = 0; i < N; i += 100) {
      await Promise.all(ids.slice(i, i + 100).map((id) => h.registerActor(id, { labelSelector: { region: 'mars' } })));
    }
    await h.events.wait(() => h.events.got.filter((e) => e.type === 'schedule_failed').length === N, 'one schedule_failed per actor', 10_000);

    // churn: actors placed and killed (resources freed: every waiting actor is retried), labels
    // changed; each round waits for the queue to settle, so a pass cannot span two rounds' kicks and
    // every round retries every waiting actor at least once
    await queueIdle(h);
    const before = h.gcs.snapshot().pending;
    for (let i = 0; i < 20; i++) {
      await h.registerActor(`busy${i}`, { numCpus: 1, labelSelector: { region: 'us' } });
      await h.reached(`busy${i}`, 'ALIVE');
      await h.request('kill_actor', 'kill_actor', { actorId: `busy${i}`, noRestart: true });
      await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n2', set: { churn: String(i) } });
      await queueIdle(h);
    }
    const after = h.gcs.snapshot().pending;
    const failed = h.events.got.filter((e) => e.type === 'schedule_failed');
    assert.is(failed.length, N, 'the explanation never changed, so no event was repeated');
    assert.is(new Set(failed.map((e) => (e.target as { id: string }).id)).size, N);
    assert.ok(after.attempts - before.attempts >= N * 20, `the queue was retried (${after.attempts - before.attempts} attempts)`);

    // One more retry pass over the 1,000 (a label change is news to all of them), and a nodes()
    // request sent from inside it, at its first attempt. On the memory bus the request and its reply
    // each take a turn of the event loop, so the answer comes one slice of the pass later: before the
    // pass ends whenever the pass runs in three slices or more. With 1 ms slices that needs the 1,000
    // attempts to take over about 2 ms; they take several times that (about 8 µs an attempt on a
    // 2-core dev machine), and a loaded machine only makes the pass longer.
    const start = h.gcs.snapshot().pending;
    const answered = new Promise<{ sent: PendingQueueStats; answered: PendingQueueStats; nodes: number }>((resolve, reject) => {
      onAttemptInPass = () => {
        const sent = h.gcs.snapshot().pending;
        h.nodes().then((nodes) => resolve({ sent, answered: h.gcs.snapshot().pending, nodes: nodes.length }), reject);
      };
    });
    await h.request('set_node_labels', 'set_node_labels', { nodeId: 'n2', set: { churn: 'last' } });
    const probe = await within(answered, 'the nodes() answer');
    await queueIdle(h);
    const end = h.gcs.snapshot().pending;
    assert.is(probe.nodes, 2);
    assert.is(end.passes - start.passes, 1, 'one pass');
    assert.is(end.attempts - start.attempts, N, 'over every waiting actor');
    assert.is(probe.sent.passes, end.passes, 'the request was sent during that pass');
    const slices = end.slices - start.slices;
    assert.ok(slices >= 3, `the pass yielded to the event loop ${slices - 1} time(s)`);
    assert.ok(
      probe.answered.passing && probe.answered.passes === probe.sent.passes,
      `the answer came before the pass ended (after ${probe.answered.slices - probe.sent.slices} of its ${end.slices - probe.sent.slices} remaining slices)`,
    );
    assert.is(h.events.got.filter((e) => e.type === 'schedule_failed').length, N, 'still one schedule_failed per actor');
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
