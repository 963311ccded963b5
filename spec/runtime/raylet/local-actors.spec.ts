import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LocalActors, type LostActor } from '../../../runtime/raylet/local-actors.ts';
import { createSpec, rejection } from '../worker/support.ts';
import { FakeHost } from './fake-host.ts';

function table() {
  const hosts: FakeHost[] = [];
  const lost: { actors: LostActor[]; cause: string }[] = [];
  let gate: Promise<void> | undefined;
  const actors = new LocalActors({
    nodeId: 'node000000000001',
    total: { CPU: 40_000, GPU: 10_000 },
    launch: async () => {
      const host = new FakeHost();
      host.gate = gate;
      hosts.push(host);
      return host;
    },
    onLost: (list, cause) => lost.push({ actors: list, cause }),
    log: () => {},
  });
  /** Creates wait until the function returned is called (hosts launched from now on). */
  const holdCreates = (): (() => void) => {
    let open!: () => void;
    gate = new Promise<void>((resolve) => (open = resolve));
    return open;
  };
  return { actors, hosts, lost, holdCreates };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('leases follow creates, failed creates and kills', async () => {
  const { actors, hosts } = table();
  const a = createSpec('Counter', { resources: { CPU: 15_000, GPU: 10_000 } });
  await actors.create(a);
  assert.equal(actors.available(), { CPU: 25_000, GPU: 0 });
  hosts[0].failCreate = new Error('constructor threw');
  await rejection(actors.create(createSpec('Failing', { resources: { CPU: 10_000 } })));
  assert.equal(actors.available(), { CPU: 25_000, GPU: 0 });
  hosts[0].failCreate = undefined;
  assert.equal(await actors.kill(a.actorId, 0), { killed: true });
  assert.equal(actors.available(), { CPU: 40_000, GPU: 10_000 });
  assert.is(actors.count, 0);
});

test('more than the node holds is still run (the GCS decides); available stops at zero', async () => {
  const { actors } = table();
  await actors.create(createSpec('Counter', { resources: { CPU: 30_000 } }));
  await actors.create(createSpec('Counter', { resources: { CPU: 30_000 } }));
  assert.equal(actors.available(), { CPU: 0, GPU: 10_000 });
  assert.is(actors.count, 2);
});

test('a host that dies reports only the actors whose creation was acknowledged', async () => {
  const { actors, hosts, lost } = table();
  const a = createSpec('Counter', { incarnation: 2 });
  await actors.create(a);
  let open!: () => void;
  hosts[0].gate = new Promise<void>((resolve) => (open = resolve));
  const starting = createSpec('Counter');
  const pending = rejection(actors.create(starting));
  await turn();
  hosts[0].die('signal SIGKILL');
  await turn();
  open();
  assert.equal(lost, [{ actors: [{ actorId: a.actorId, incarnation: 2 }], cause: `worker host (pid ${hosts[0].pid}) exited unexpectedly (signal SIGKILL)` }]);
  assert.is(actors.count, 0);
  await pending.catch(() => undefined);
});

test('a kill while the constructor runs fails the create with ACTOR_DIED and leaves nothing', async () => {
  const { actors, hosts, holdCreates } = table();
  const open = holdCreates();
  const spec = createSpec('Counter', { resources: { CPU: 10_000 } });
  const creating = rejection(actors.create(spec));
  await turn();
  assert.equal(await actors.kill(spec.actorId, 0), { killed: true });
  open();
  const err = await creating;
  assert.is(err.code, 'ACTOR_DIED');
  assert.is(actors.count, 0);
  assert.equal(actors.available(), { CPU: 40_000, GPU: 10_000 });
  assert.is(hosts.length, 1);
});

test('a create still running when the raylet stops fails NODE_STOPPING naming the node, whether its host then answers or exits', async () => {
  for (const ending of ['answers', 'exits'] as const) {
    const { actors, hosts, holdCreates } = table();
    const open = holdCreates();
    const spec = createSpec('Counter', { resources: { CPU: 10_000 } });
    const creating = rejection(actors.create(spec));
    await turn();
    const stopping = actors.stop();
    if (ending === 'exits') {
      hosts[0].failCreate = new Error('host exited (signal SIGTERM)'); // what a real host's create rejects with
      hosts[0].die('signal SIGTERM');
    }
    open(); // the constructor returns, or its host has gone, as the raylet stops
    const err = await creating;
    assert.is(err.code, 'NODE_STOPPING', ending);
    assert.equal(err.detail, { nodeId: 'node000000000001', actorId: spec.actorId }, ending);
    await stopping;
    assert.is(actors.count, 0, ending);
  }
});

test('forgetAll drops every actor; stop refuses later creates', async () => {
  const { actors } = table();
  await actors.create(createSpec('Counter'));
  await actors.create(createSpec('Counter', { isolation: 'process' }));
  assert.is(actors.forgetAll(), 2);
  await turn();
  assert.is(actors.count, 0);
  await actors.stop();
  assert.is((await rejection(actors.create(createSpec('Counter')))).code, 'NODE_STOPPING');
});

test('a create asked again after its constructor threw (the GCS missed the answer) is answered with the same error; the constructor does not run again', async () => {
  const { actors, hosts } = table();
  await actors.create(createSpec('Counter')); // a host to fail on
  hosts[0].failCreate = new Error('constructor threw');
  const spec = createSpec('Failing');
  const first = await rejection(actors.create(spec));
  const again = await rejection(actors.create(spec));
  assert.is(again, first, 'the same answer');
  assert.is(hosts[0].creates, 2, 'the failing constructor ran once');
  // a newer incarnation (a restart) runs
  hosts[0].failCreate = undefined;
  await actors.create({ ...spec, incarnation: 1 });
  assert.is(hosts[0].creates, 3);
  assert.equal(actors.running().find((r) => r.actorId === spec.actorId), { actorId: spec.actorId, incarnation: 1 });
});

test('a create of an incarnation killed here (asked again after the kill) is refused as ACTOR_DIED, and an older one as STALE_INCARNATION; nothing runs', async () => {
  const { actors, hosts } = table();
  const spec = createSpec('Counter', { incarnation: 3 });
  await actors.create(spec);
  assert.equal(await actors.kill(spec.actorId, 3), { killed: true });
  assert.is((await rejection(actors.create(spec))).code, 'ACTOR_DIED');
  assert.is((await rejection(actors.create({ ...spec, incarnation: 2 }))).code, 'STALE_INCARNATION');
  assert.is(hosts[0].creates, 1);
  assert.is(actors.count, 0);
});

test('a host that exits with a started actor: a create of that incarnation afterwards is refused, not run', async () => {
  const { actors, hosts } = table();
  const spec = createSpec('Counter');
  await actors.create(spec);
  hosts[0].die('signal SIGKILL');
  await turn();
  assert.is((await rejection(actors.create(spec))).code, 'ACTOR_DIED');
  assert.is(hosts.length, 1, 'no host launched for it');
});

test('registration lists an actor whose constructor has not returned as starting', async () => {
  const { actors, holdCreates } = table();
  const started = createSpec('Counter');
  await actors.create(started);
  const open = holdCreates();
  const starting = createSpec('Counter', { isolation: 'process' });
  const creating = actors.create(starting);
  await turn();
  assert.equal(actors.running(), [
    { actorId: started.actorId, incarnation: 0 },
    { actorId: starting.actorId, incarnation: 0, starting: true },
  ]);
  open();
  await creating;
  assert.equal(actors.running()[1], { actorId: starting.actorId, incarnation: 0 });
});

test.run();
