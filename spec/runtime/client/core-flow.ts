// The driver's core flow, run against any local cluster: the memory transport in
// spec/runtime/client/cluster.spec.ts, real GCS and raylet processes on NATS in
// spec/integration/client.spec.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ActorDiedError, ActorNotFoundError, ActorNameTakenError, CallArgumentError, RemoteError, type ActorHandle, type LocalCluster } from '../../../runtime/index.ts';
import { CounterActor, ExplodingActor, type Counter } from '../../fixtures/client/actors.ts';

const READY = { timeoutMs: 20_000 };

export function coreFlowSuite(name: string, start: () => Promise<LocalCluster>): ReturnType<typeof suite> {
  const s = suite(name);
  let local: LocalCluster;
  s.before(async () => {
    local = await start();
  });
  s.after(async () => {
    await local?.stop();
  });

  s('remote() registers the actor; ready() resolves ALIVE; calls carry arguments and results', async () => {
    const counter = await local.cluster.actor(CounterActor).remote(5);
    assert.match(counter.actorId, /^[0-9a-f]{16}$/);
    assert.is(counter.namespace, 'default');
    const info = await counter.ready(READY);
    assert.is(info.state, 'ALIVE');
    assert.is(info.className, 'Counter');
    assert.is(info.numRestarts, 0);
    const nodeIds = (await local.cluster.nodes()).map((n) => n.nodeId);
    assert.ok(nodeIds.includes(info.nodeId!), 'placed on a node of the cluster');
    assert.is(await counter.call('add', 2), 7);
    assert.is(await counter.call('add', -3), 4);
    assert.equal(await counter.call('echo', { list: [1, 'two', null, true], nested: { x: 1.5 } }), { list: [1, 'two', null, true], nested: { x: 1.5 } });
    assert.is(await counter.call('later', 5), 'done');
    const where = await counter.call('where');
    assert.equal(where, { nodeId: info.nodeId!, nodeName: where.nodeName, actorId: counter.actorId });
  });

  s('concurrent calls to one actor run one at a time, in arrival order', async () => {
    const counter = await local.cluster.actor(CounterActor).remote(0);
    await counter.ready(READY);
    const results = await Promise.all(Array.from({ length: 20 }, () => counter.call('add', 1)));
    assert.equal(results, Array.from({ length: 20 }, (_, i) => i + 1));
  });

  s('an exception in a method reaches the caller as RemoteError with the remote name, message and stack', async () => {
    const counter = await local.cluster.actor(CounterActor).remote();
    await counter.ready(READY);
    const err = await counter.call('fail', 'out of range: 42').catch((e: unknown) => e);
    assert.instance(err, RemoteError);
    const remote = err as RemoteError;
    assert.is(remote.code, 'REMOTE_ERROR');
    assert.is(remote.message, 'out of range: 42');
    assert.is(remote.remoteName, 'RangeError');
    assert.match(remote.remoteStack ?? '', /fail/);
    assert.match(remote.stack ?? '', /--- remote RangeError ---/);
    assert.is(await counter.call('get'), 0, 'the actor goes on after a failed call');
  });

  s('arguments that cannot be sent are CallArgumentError with the path, before anything is sent; a result that cannot be is a RemoteError', async () => {
    const counter = await local.cluster.actor(CounterActor).remote(1);
    class Point {
      constructor(readonly x: number) {}
    }
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const cases: [unknown, string, RegExp][] = [
      [new Map([[1, 2]]), '', /a Map/],
      [{ list: [1, () => 2] }, 'list[1]', /a function/],
      [new Point(1), '', /an instance of Point/],
      [cycle, 'self', /a cycle/],
      [[2n ** 64n], '[0]', /a bigint beyond 64 bits/],
    ];
    for (const [value, path, problem] of cases) {
      const err = await (counter as ActorHandle).call('add', value).catch((e: unknown) => e);
      assert.instance(err, CallArgumentError);
      const e = err as CallArgumentError;
      assert.is(e.code, 'INVALID_ARGUMENT');
      assert.is(e.method, 'add');
      assert.is(e.index, 0);
      assert.is(e.path, path);
      assert.match(e.problem, problem);
    }
    assert.is(await counter.call('get'), 1, 'none of them ran');
    const result = await counter.call('asMap').catch((e: unknown) => e);
    assert.instance(result, RemoteError);
    assert.is((result as RemoteError).remoteName, 'TypeError');
    assert.match((result as RemoteError).message, /^Counter\.asMap returned a value that cannot be sent: a Map cannot be sent as it is/);
    const sent = { at: new Date(0), bytes: new Uint8Array([1, 2]), big: 2n ** 60n + 1n, small: 10n, negative: -(2n ** 63n), nothing: null, list: [1.5, 'two', true] };
    const back = (await counter.call('echo', sent)) as typeof sent;
    // bytes arrive as a Uint8Array (a Buffer, from a worker process's decoder)
    assert.ok(back.bytes instanceof Uint8Array);
    assert.equal([...back.bytes], [1, 2]);
    assert.equal({ ...back, bytes: undefined }, { ...sent, bytes: undefined }, 'what may be sent arrives as it was');
    await counter.kill();
  });

  s('named actors: getActor finds them by name and namespace; a taken name is refused', async () => {
    const c = local.cluster.actor(CounterActor).options({ name: 'tally', namespace: 'books' });
    const counter = await c.remote(10);
    await counter.ready(READY);
    const found = await local.cluster.getActor<Counter>('tally', 'books');
    assert.is(found.actorId, counter.actorId);
    assert.is(found.namespace, 'books');
    assert.is(await found.call('add', 1), 11);
    const untyped = await local.cluster.getActor('tally', 'books');
    assert.is(await untyped.call('get'), 11);
    const missing = await local.cluster.getActor('tally').catch((e: unknown) => e);
    assert.instance(missing, ActorNotFoundError, 'not in the default namespace');
    const taken = await c.remote(0).catch((e: unknown) => e);
    assert.instance(taken, ActorNameTakenError);
    assert.is((taken as ActorNameTakenError).code, 'ACTOR_NAME_TAKEN');
  });

  s('kill() resolves once the actor is DEAD; a later call is ActorDiedError', async () => {
    const counter = await local.cluster.actor(CounterActor).remote();
    await counter.ready(READY);
    await counter.kill();
    const info = await counter.info();
    assert.is(info.state, 'DEAD');
    assert.ok(info.deathCause, 'a death cause is given');
    const err = await counter.call('get').catch((e: unknown) => e);
    assert.instance(err, ActorDiedError);
    assert.is((err as ActorDiedError).code, 'ACTOR_DIED');
    // Another handle to the same actor has not seen it die: the call goes out and the GCS says why.
    const other = await local.cluster.actor(CounterActor).options({ name: 'doomed' }).remote();
    await other.ready(READY);
    const byName = await local.cluster.getActor('doomed');
    await other.kill();
    const viaOther = await byName.call('get').catch((e: unknown) => e);
    assert.instance(viaOther, ActorDiedError);
  });

  s('a constructor that throws: ready() rejects with ActorDiedError carrying the cause', async () => {
    const bad = await local.cluster.actor(ExplodingActor).remote();
    // a call made before, waiting for the actor's creation, fails with the same cause; it never ran
    const early = (bad as ActorHandle).call('get').catch((e: unknown) => e);
    const err = await bad.ready(READY).catch((e: unknown) => e);
    const callErr = await early;
    assert.instance(callErr, ActorDiedError);
    assert.match((callErr as ActorDiedError).message, /constructor refused/);
    assert.instance(err, ActorDiedError);
    assert.match((err as ActorDiedError).message, /constructor refused/);
    assert.is((await bad.info()).state, 'DEAD');
  });

  s('nodes() and actors() report the cluster in user quantities', async () => {
    const nodes = await local.cluster.nodes();
    assert.ok(nodes.length >= 1);
    for (const n of nodes) {
      assert.match(n.nodeId, /^\S+$/);
      assert.type(n.name, 'string');
      assert.is(n.state, 'ALIVE');
      assert.is(n.labels['orrery.io/node-id'], n.nodeId);
      assert.is(n.labels['orrery.io/node-name'], n.name);
      assert.type(n.taints, 'object');
      assert.ok(n.resources.total.CPU >= 1, 'CPU in whole CPUs, not fixed-point units');
      assert.ok(n.resources.available.CPU <= n.resources.total.CPU);
    }
    const actors = await local.cluster.actors();
    assert.ok(actors.length >= 1);
    for (const a of actors) {
      assert.match(a.actorId, /^[0-9a-f]{16}$/);
      assert.type(a.className, 'string');
      assert.type(a.namespace, 'string');
      assert.type(a.numRestarts, 'number');
      assert.type(a.labels, 'object');
    }
    assert.ok(actors.some((a) => a.state === 'ALIVE'));
    assert.ok(actors.some((a) => a.state === 'DEAD'));
  });

  s('a call made right after remote(), without ready(), waits for the actor and runs once', async () => {
    const counter = await local.cluster.actor(CounterActor).remote(1);
    assert.equal(await Promise.all([counter.call('add', 1), counter.call('add', 1)]), [2, 3]);
    assert.is(await counter.call('get'), 3);
    await counter.kill();
  });

  s('calls made while nothing can place the actor wait for it, each up to its own timeout; once it is placed they run once each, in call order', async () => {
    const waiting = await local.cluster.actor(CounterActor).options({ labelSelector: { stage: 'late' } }).remote(0);
    assert.is((await waiting.info()).state, 'PENDING');
    const early = Promise.all([waiting.call('add', 1), waiting.call('add', 2), waiting.call('get')]);
    const short = await waiting.options({ timeoutMs: 100 }).call('add', 100).catch((e: unknown) => e);
    assert.is((short as { code?: string }).code, 'ACTOR_UNAVAILABLE', 'its own timeout passed first');
    assert.is((short as { state?: string }).state, 'PENDING');
    const later = waiting.call('add', 4);
    await local.addNode({ name: 'late', labels: { stage: 'late' } });
    assert.equal(await early, [1, 3, 3]);
    assert.is(await later, 7, 'a call made after the one that timed out, which never ran');
    await waiting.kill();
  });

  return s;
}
