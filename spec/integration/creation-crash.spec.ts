// An actor whose creation brings down the node it lands on must not hop from node to node taking
// each one down, even with maxRestarts -1 (issue 14, part 6). On real processes: three raylets on a
// nats-server; the actor's constructor SIGKILLs its raylet. The first node's death is a restart; the
// second creation in a row that fails with its host gone is fatal; the third node is never touched.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity } from '../../lib/index.ts';
import { ActorDiedError, ActorUnavailableError, startLocalCluster, type ActorHandle, type LocalCluster } from '../../runtime/index.ts';
import { CounterActor, NodeKillerActor } from '../fixtures/client/actors.ts';

let local: LocalCluster;

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: ['a', 'b', 'c'].map((name) => ({ name, resources: { CPU: 1 } })) });
});

test.after(async () => {
  await local?.stop();
});

test('a constructor that kills its raylet takes down two nodes at most, then the actor is DEAD saying why', async () => {
  const hopper = await local.cluster.actor(NodeKillerActor).options({ maxRestarts: -1, numCpus: 1 }).remote();
  // made before its first creation, it waits for the actor; the first node's death (RESTARTING)
  // fails it, unrun, rather than leaving it to wait for an incarnation that never comes
  const early = (hopper as ActorHandle).call('get').catch((e: unknown) => e);
  const err = await hopper.ready({ timeoutMs: 60_000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(err, ActorDiedError);
  const info = await hopper.info();
  assert.is(info.state, 'DEAD');
  assert.is(info.numRestarts, 1, 'the first crash was a restart');
  assert.match(info.deathCause!, /^2 creations in a row failed with their host gone; the last: node \S+ died$/);
  const callErr = (await early) as { code?: string };
  assert.ok(callErr instanceof ActorUnavailableError || callErr instanceof ActorDiedError, `the early call failed unrun (got ${String(callErr?.code)})`);
  const nodes = await local.cluster.nodes();
  assert.equal(nodes.map((n) => n.state).sort(), ['ALIVE', 'DEAD', 'DEAD']);
  // the node left standing still serves
  const survivor = nodes.find((n) => n.state === 'ALIVE')!;
  const counter = await local.cluster.actor(CounterActor).options({ schedulingStrategy: nodeIdAffinity(survivor.nodeId) }).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  assert.is(await counter.call('add', 1), 2);
});

test.run();
