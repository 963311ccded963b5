// Issue 13: thousands of dead actors on real processes (nats-server, a GCS process, a raylet process).
// Dead actors used to be kept forever and every list was one reply, so past ~7,000 of them
// `orrery list actors`, `orrery status` and GET /api/actors failed with TOO_LARGE for good. Here
// 10,000 actors are created and killed, then every list works: cluster.actors(), `orrery list actors
// --json`, `orrery status`, `orrery events`, the dashboard's /api/actors (whole and paged). A second
// GCS started with ORRERY_MAX_DEAD_ACTORS=2000 keeps exactly the newest 2,000 dead actors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startDashboard } from '../../runtime/dashboard/server.ts';
import { startLocalCluster, type ActorHandle, type ActorInfo, type LocalCluster } from '../../runtime/index.ts';
import { CounterActor, type Counter } from '../fixtures/client/actors.ts';
import { lines, orrery } from '../runtime/cli/process.ts';

const BATCH = 500;

/** Creates `n` actors, `BATCH` registrations in flight at a time. */
async function create(local: LocalCluster, n: number): Promise<ActorHandle<Counter>[]> {
  const handles: ActorHandle<Counter>[] = [];
  for (let i = 0; i < n; i += BATCH) {
    const size = Math.min(BATCH, n - i);
    handles.push(...(await Promise.all(Array.from({ length: size }, () => local.cluster.actor(CounterActor).remote()))));
  }
  return handles;
}

/** Kills the actors batch after batch: every death of one batch comes before any of the next. */
async function kill(handles: readonly ActorHandle<Counter>[]): Promise<void> {
  for (let i = 0; i < handles.length; i += BATCH) await Promise.all(handles.slice(i, i + BATCH).map((h) => h.kill()));
}

test('10,000 dead actors: cluster.actors(), orrery list actors --json, orrery status, orrery events and GET /api/actors all answer', async () => {
  const local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'many', resources: { CPU: 2 } }] });
  try {
    const handles = await create(local, 10_000);
    await kill(handles);
    const ids = handles.map((h) => h.actorId).sort();

    const actors = await local.cluster.actors();
    assert.is(actors.length, 10_000);
    assert.equal(actors.map((a) => a.actorId), ids, 'every actor once, in id order');
    assert.ok(actors.every((a) => a.state === 'DEAD'));
    assert.equal(await local.cluster.actors({ states: ['ALIVE', 'PENDING'] }), [], 'the GCS filters by state');
    // the first dead actor is still known: the default bound (100,000) is far away
    assert.is((await handles[0]!.info()).state, 'DEAD');

    const env = { ORRERY_ADDRESS: local.address };
    const listed = await orrery(['list', 'actors', '--json'], env);
    assert.is(listed.code, 0, listed.stderr);
    const fromCli = JSON.parse(listed.stdout) as ActorInfo[];
    assert.equal(fromCli.map((a) => a.actorId), ids);

    const alive = await orrery(['list', 'actors', '--state', 'ALIVE'], env);
    assert.is(alive.code, 0, alive.stderr);
    assert.equal(lines(alive.stdout).slice(1), [], 'only the header: no live actor');

    const status = await orrery(['status'], env);
    assert.is(status.code, 0, status.stderr);
    assert.ok(lines(status.stdout).includes('Actors: 10000 (10000 DEAD)'), status.stdout);

    // the GCS's ring (10,000 events) is full of actor_state events, far more than one reply holds
    const events = await orrery(['events', '--json', '--limit', '10000'], env);
    assert.is(events.code, 0, events.stderr);
    const seqs = lines(events.stdout).map((l) => (JSON.parse(l) as { seq: number }).seq);
    assert.is(seqs.length, 10_000);
    assert.ok(seqs.every((s, i) => i === 0 || s === seqs[i - 1]! + 1), 'the newest 10,000 events, in order, none missing');

    const dash = await startDashboard({ cluster: local.cluster, port: 0 });
    try {
      const whole = await fetch(new URL('/api/actors', dash.url));
      assert.is(whole.status, 200);
      assert.equal(((await whole.json()) as ActorInfo[]).map((a) => a.actorId), ids);
      const walked: string[] = [];
      let after: string | undefined;
      do {
        const res = await fetch(new URL(`/api/actors?limit=3000${after === undefined ? '' : `&after=${after}`}`, dash.url));
        assert.is(res.status, 200);
        const page = (await res.json()) as { items: ActorInfo[]; next?: string };
        assert.ok(page.items.length <= 3000);
        walked.push(...page.items.map((a) => a.actorId));
        after = page.next;
      } while (after !== undefined);
      assert.equal(walked, ids, 'the pages of /api/actors hold every actor once');
      const aliveOnly = await fetch(new URL('/api/actors?state=ALIVE', dash.url));
      assert.is(aliveOnly.status, 200);
      assert.equal(await aliveOnly.json(), []);
      const bad = await fetch(new URL('/api/actors?limit=0', dash.url));
      assert.is(bad.status, 400);
      assert.is(((await bad.json()) as { code: string }).code, 'BAD_QUERY');
    } finally {
      await dash.close();
    }
  } finally {
    await local.stop();
  }
});

test('a GCS started with ORRERY_MAX_DEAD_ACTORS=2000 keeps exactly the newest 2,000 dead actors', async () => {
  process.env.ORRERY_MAX_DEAD_ACTORS = '2000';
  let local: LocalCluster;
  try {
    local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'bounded', resources: { CPU: 2 } }] });
  } finally {
    delete process.env.ORRERY_MAX_DEAD_ACTORS;
  }
  try {
    const handles = await create(local, 3000);
    const older = handles.slice(0, 1000);
    const newer = handles.slice(1000);
    const survivor = await local.cluster.actor(CounterActor).remote();
    await kill(older);
    await kill(newer);

    const actors = await local.cluster.actors();
    const dead = actors.filter((a) => a.state === 'DEAD').map((a) => a.actorId);
    assert.equal(dead, newer.map((h) => h.actorId).sort(), 'the 2,000 most recent deaths');
    assert.equal(actors.filter((a) => a.state !== 'DEAD').map((a) => a.actorId), [survivor.actorId], 'live actors are never dropped');
    const gone = await older[0]!.info().then(
      () => undefined,
      (err: { code?: string }) => err.code,
    );
    assert.is(gone, 'ACTOR_NOT_FOUND');
    assert.is((await newer[0]!.info()).state, 'DEAD');

    const listed = await orrery(['list', 'actors', '--json'], { ORRERY_ADDRESS: local.address });
    assert.is(listed.code, 0, listed.stderr);
    assert.is((JSON.parse(listed.stdout) as ActorInfo[]).length, 2001);
  } finally {
    await local.stop();
  }
});

test.run();
