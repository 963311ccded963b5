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

test.run();
