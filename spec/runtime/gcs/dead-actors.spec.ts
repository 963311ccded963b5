import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DeadActors, DEFAULT_MAX_DEAD_ACTORS } from '../../../runtime/gcs/dead-actors.ts';
import { MemoryStore } from '../../../runtime/gcs/store.ts';
import { Harness } from './support.ts';

// The retention unit alone (a bounded FIFO of dead actor ids), then the GCS forgetting what it drops.

const cases: { name: string; max: number; deaths: string[]; dropped: string[]; kept: string[] }[] = [
  { name: 'under the bound nothing is dropped', max: 3, deaths: ['a', 'b'], dropped: [], kept: ['a', 'b'] },
  { name: 'at the bound nothing is dropped', max: 3, deaths: ['a', 'b', 'c'], dropped: [], kept: ['a', 'b', 'c'] },
  { name: 'past the bound the oldest deaths go first', max: 2, deaths: ['a', 'b', 'c', 'd'], dropped: ['a', 'b'], kept: ['c', 'd'] },
  { name: 'a second death of one id is not counted twice', max: 2, deaths: ['a', 'b', 'a', 'c'], dropped: ['a'], kept: ['b', 'c'] },
  { name: 'a bound of 0 forgets every death at once', max: 0, deaths: ['a', 'b'], dropped: ['a', 'b'], kept: [] },
];

for (const c of cases) {
  test(`DeadActors: ${c.name}`, () => {
    const dead = new DeadActors(c.max);
    const dropped = c.deaths.flatMap((id) => dead.died(id));
    assert.equal(dropped, c.dropped);
    assert.equal(dead.ids(), c.kept);
    assert.is(dead.size, c.kept.length);
  });
}

test('DeadActors keeps exactly the newest `max` of many deaths, in order of death', () => {
  const dead = new DeadActors(1000);
  let dropped = 0;
  for (let i = 0; i < 25_000; i++) dropped += dead.died(`a${i}`).length;
  assert.is(dropped, 24_000);
  const kept = dead.ids();
  assert.is(kept.length, 1000);
  assert.is(kept[0], 'a24000');
  assert.is(kept[999], 'a24999');
});

test("DeadActors defaults to Ray's maximum_gcs_destroyed_actor_cached_count and refuses a bad bound", () => {
  assert.is(new DeadActors().max, 100_000);
  assert.is(DEFAULT_MAX_DEAD_ACTORS, 100_000);
  assert.throws(() => new DeadActors(-1), /max dead actors/);
  assert.throws(() => new DeadActors(1.5), /max dead actors/);
});

test('the GCS forgets dead actors past maxDeadActors: get_actor is ACTOR_NOT_FOUND, the store and the list drop them', async () => {
  const store = new MemoryStore();
  const h = await Harness.start({ maxDeadActors: 2, store });
  try {
    await h.addNode({ nodeId: 'n1', cpu: 8 });
    for (const id of ['a1', 'a2', 'a3', 'a4']) {
      await h.registerActor(id, {}, { name: `named-${id}` });
      await h.reached(id, 'ALIVE');
    }
    for (const id of ['a1', 'a2', 'a3']) await h.request('kill_actor', 'kill_actor', { actorId: id, noRestart: true });

    assert.is((await h.refusal('get_actor', 'get_actor', { actorId: 'a1' })).code, 'ACTOR_NOT_FOUND');
    assert.is(store.getActor('a1'), undefined);
    assert.is((await h.actor('a2')).state, 'DEAD');
    assert.is((await h.actor('a3')).state, 'DEAD');
    assert.is(store.getActor('a2')?.info.state, 'DEAD');
    assert.equal(h.gcs.snapshot().actors.map((a) => [a.actorId, a.state]).sort(), [['a2', 'DEAD'], ['a3', 'DEAD'], ['a4', 'ALIVE']]);
    assert.equal(store.counts().actors, 3);
    // the name was freed at death: a new actor may take it, dropped or not
    await h.registerActor('a5', {}, { name: 'named-a1' });
    assert.is((await h.request('get_actor', 'get_actor', { name: 'named-a1' })).actorId, 'a5');

    await h.request('kill_actor', 'kill_actor', { actorId: 'a4', noRestart: true });
    assert.is((await h.refusal('get_actor', 'get_actor', { actorId: 'a2' })).code, 'ACTOR_NOT_FOUND');
    assert.equal(h.gcs.snapshot().actors.map((a) => a.actorId).sort(), ['a3', 'a4', 'a5']);
  } finally {
    await h.close();
  }
});

test.run();
