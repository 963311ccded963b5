// Actors that call actors (issue 15, part 2), on real processes: a nats-server, a GCS and two
// raylet processes with forked worker hosts (startLocalCluster), and again on a secured cluster
// (credentials per role, the worker hosts running as `node`). A handle passed to an actor method,
// an actor constructor or a task arrives as a working handle; one returned from a method or a task
// arrives as a handle on the driver's connection; connect() with no argument inside a worker is
// the worker's cluster, and what it creates is owned by the job of the calling actor or task.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ActorDiedError, connect, startLocalCluster, type ActorHandle, type Cluster, type LocalCluster } from '../../runtime/index.ts';
import { AddThrough, MakeTally, RelayActor, TallyActor, type Tally } from '../fixtures/handles/actors.ts';
import { nodeIdAffinity } from '../../lib/index.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const NODES = [
  { name: 'h-a', resources: { CPU: 8 } },
  { name: 'h-b', resources: { CPU: 8 } },
];

/** The handle once its actor is ALIVE (a call to one still starting fails at once: maxTaskRetries 0). */
async function alive<H extends ActorHandle<any>>(handle: Promise<H>): Promise<H> {
  const h = await handle;
  await h.ready({ timeoutMs: 60_000 });
  return h;
}

function handleSpecs(name: string, setup: () => Promise<{ local: LocalCluster; stop: () => Promise<void> }>): void {
  const s = suite<{ local?: LocalCluster; stop?: () => Promise<void> }>(name);
  s.before(async (ctx) => {
    const { local, stop } = await setup();
    ctx.local = local;
    ctx.stop = stop;
  });
  s.after(async (ctx) => {
    await ctx.stop?.();
  });

  s('an actor receives a handle as a method argument and calls it; a constructor argument too', async ({ local }) => {
    const c = local!.cluster;
    const tally = await alive(c.actor(TallyActor).remote(10));
    const relay = await alive(c.actor(RelayActor).remote());
    assert.is(await relay.call('callVia', tally, 5), 15);
    const holder = await alive(c.actor(RelayActor).remote(tally));
    assert.is(await holder.call('forward', 2), 17);
    assert.is(await tally.call('get'), 17, 'both relays called the same actor');
  });

  s('handles inside nested arguments all arrive working', async ({ local }) => {
    const c = local!.cluster;
    const members = await Promise.all([1, 2, 3].map((n) => alive(c.actor(TallyActor).remote(n * 100))));
    const relay = await alive(c.actor(RelayActor).remote());
    assert.equal(await relay.call('fanOut', { members }, 1), [101, 201, 301]);
  });

  s('a handle returned from a method arrives as a handle on the caller’s connection', async ({ local }) => {
    const c = local!.cluster;
    const tally = await alive(c.actor(TallyActor).remote(0));
    const holder = await alive(c.actor(RelayActor).remote(tally));
    const back = (await holder.call('targetHandle')) as ActorHandle<Tally>;
    assert.is(back.actorId, tally.actorId);
    assert.is(await back.call('add', 4), 4);
    assert.is((await back.info()).state, 'ALIVE');
  });

  s('a task creates an actor through connect() inside the worker and returns its handle; the driver calls it', async ({ local }) => {
    const c = local!.cluster;
    const made = (await c.task(MakeTally).remote(40)) as ActorHandle<Tally>;
    assert.is(await made.call('add', 2), 42);
    const info = await made.info();
    assert.is(info.state, 'ALIVE');
    assert.is(info.jobId, c.jobId, 'owned by the job that submitted the task');
    // and a task calls a handle it is given
    assert.is(await c.task(AddThrough).remote(made, 8), 50);
  });

  s('an actor creates an actor through connect(), owned by the job that created the calling actor', async ({ local }) => {
    const c = local!.cluster;
    const relay = await alive(c.actor(RelayActor).remote());
    const child = (await relay.call('spawn', 7)) as ActorHandle<Tally>;
    assert.is(await child.call('add', 1), 8);
    assert.is((await child.info()).jobId, c.jobId);
    // a named actor is found from inside the worker, in the caller's namespace
    await alive(c.actor(TallyActor).options({ name: 'looked-up' }).remote(0));
    assert.is(await relay.call('callNamed', 'looked-up', 3), 3);
    // a task submitted from inside the actor runs and answers it
    assert.is(await relay.call('sumViaTask', 20, 22), 42);
    // close() of the worker's cluster stops nothing: it belongs to the host
    assert.is(await relay.call('closeAndSpawn', 9), 9);
    assert.is(await relay.call('callVia', child, 1), 9, 'the relay still reaches other actors');
  });

  s('what a job creates inside workers dies with the job', async ({ local }) => {
    const driver = await connect({ address: local!.address, ...(local!.authDir ? { creds: `${local!.authDir}/driver.creds` } : {}), job: { name: 'handles' } });
    let relay: ActorHandle;
    let grandchild: ActorHandle<Tally>;
    try {
      relay = await alive(driver.actor(RelayActor).remote());
      grandchild = (await relay.call('spawn', 1)) as ActorHandle<Tally>;
      assert.is((await grandchild.info()).jobId, driver.jobId);
    } finally {
      await driver.close();
    }
    const observer: Cluster = local!.cluster;
    const after = await until('the actor created inside the worker is DEAD', async () => {
      const info = (await observer.actors()).find((a) => a.actorId === grandchild.actorId);
      return info?.state === 'DEAD' ? info : undefined;
    });
    assert.match(after.deathCause ?? '', driver.jobId!, 'the cause names the job');
  });

  s('a handle to a dead actor fails calls made through it with ActorDiedError', async ({ local }) => {
    const c = local!.cluster;
    const tally = await alive(c.actor(TallyActor).remote(0));
    const relay = await alive(c.actor(RelayActor).remote());
    await tally.kill();
    const err = await relay.call('callVia', tally, 1).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.instance(err, Error);
    assert.match(String((err as Error).message), tally.actorId, 'the error names the dead actor');
    assert.match(String((err as Error).message), /died|dead/i);
    assert.not.instance(err, ActorDiedError, 'the relay’s own call failed remotely: a RemoteError carrying the cause');
  });

  // last: it kills a node of the suite's cluster
  s('a handle held by an actor reaches its actor again after the actor fails over to another node', async ({ local }) => {
    const c = local!.cluster;
    const nodes = await c.nodes();
    const [a, b] = ['h-a', 'h-b'].map((n) => nodes.find((x) => x.name === n)!);
    const tally = await alive(c.actor(TallyActor).options({ maxRestarts: 1, schedulingStrategy: nodeIdAffinity(b!.nodeId, { soft: true }) }).remote(5));
    assert.is((await tally.info()).nodeId, b!.nodeId);
    const relay = await alive(c.actor(RelayActor).options({ schedulingStrategy: nodeIdAffinity(a!.nodeId) }).remote(tally));
    assert.is(await relay.call('forward', 1), 6);
    await local!.killNode(b!.nodeId);
    const moved = await until('the actor ALIVE again on the other node', async () => {
      const info = await tally.info();
      return info.state === 'ALIVE' && info.nodeId === a!.nodeId ? info : undefined;
    }, 60_000);
    assert.is(moved.numRestarts, 1);
    // the relay's handle names the actor, not a host: it reaches the new incarnation (constructed anew with 5)
    assert.is(await relay.call('forward', 1), 6);
  });

  s.run();
}

handleSpecs('actor handles across actors and tasks (nats-server, GCS and raylet processes)', async () => {
  const server: NatsServerHandle = await startNatsServer({ jetstream: true });
  const local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: NODES });
  return { local, stop: async () => void (await local.stop(), await server.stop()) };
});

handleSpecs('actor handles on a secured cluster (worker hosts as the node role)', async () => {
  const local = await startLocalCluster({ transport: 'nats', auth: true, nodes: NODES });
  return { local, stop: () => local.stop() };
});

// A worker host SIGKILLed while an actor on another node is waiting on a call to one of its
// actors: the caller's call fails at once with a typed cause (no waiting for its timeout), the
// call is not run again on the restarted actor (at most once: maxTaskRetries 0), the calling actor
// lives on, and its handle reaches the new incarnation.
const hostKilled = suite<{ server?: NatsServerHandle; local?: LocalCluster }>('a worker host killed in the middle of an actor→actor call (real processes)');
hostKilled.before(async (ctx) => {
  ctx.server = await startNatsServer({ jetstream: true });
  ctx.local = await startLocalCluster({ transport: 'nats', address: ctx.server.url, nodes: NODES });
});
hostKilled.after(async (ctx) => {
  await ctx.local?.stop();
  await ctx.server?.stop();
});
hostKilled('the caller fails fast with the cause, nothing runs twice, and the handle reaches the restarted actor', async ({ local }) => {
  const c = local!.cluster;
  const nodes = await c.nodes();
  const [a, b] = ['h-a', 'h-b'].map((n) => nodes.find((x) => x.name === n)!);
  const tally = await alive(c.actor(TallyActor).options({ maxRestarts: 1, maxConcurrency: 2, schedulingStrategy: nodeIdAffinity(b!.nodeId) }).remote(5));
  const relay = await alive(c.actor(RelayActor).options({ schedulingStrategy: nodeIdAffinity(a!.nodeId) }).remote());
  const hostPid = (await tally.call('pid')) as number;
  const waiting = relay.call('callSlowVia', tally, 1, 120_000).then(
    () => undefined,
    (e: unknown) => e,
  );
  await until('the slow call running in the actor', async () => ((await tally.call('started')) === 1 ? true : undefined));
  const killedAt = performance.now();
  process.kill(hostPid, 'SIGKILL');
  const err = await waiting;
  assert.instance(err, Error, 'the call failed');
  assert.ok(performance.now() - killedAt < 60_000, 'long before the call’s own 120 s');
  assert.match(String((err as Error).message), tally.actorId, 'the cause names the actor');
  assert.match(String((err as Error).message), /unavailable|restart|died|dead/i);
  const back = await until('the actor ALIVE again', async () => {
    const info = await tally.info();
    return info.state === 'ALIVE' && info.numRestarts === 1 ? info : undefined;
  }, 60_000);
  assert.is(back.nodeId, b!.nodeId, 'its node lives on: restarted there');
  assert.is(await tally.call('started'), 0, 'the slow call was not run again on the new incarnation');
  assert.is(await relay.call('callVia', tally, 1), 6, 'the relay’s handle reaches the new incarnation (constructed anew with 5)');
  assert.is((await relay.info()).numRestarts, 0, 'the calling actor lived on');
});
hostKilled.run();

// The embedded cluster: raylets, their worker hosts and the driver in one process. Each host has a
// cluster of its own, found through the runtime context of the actor or task running.
handleSpecs('actor handles on the memory transport (hosts inside the raylets’ process)', async () => {
  const local = await startLocalCluster({ transport: 'memory', nodes: NODES });
  return { local, stop: () => local.stop() };
});
