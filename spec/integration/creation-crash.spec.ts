// An actor whose creation brings down the node it lands on must not hop from node to node taking
// each one down, even with maxRestarts -1 (issue 14, part 6). On real processes: three raylets on a
// nats-server; the actor's constructor SIGKILLs its raylet. The first node's death is a restart; the
// second creation in a row that fails with its host gone is fatal; the third node is never touched.
// A constructor that runs longer than the GCS's create timeout is waited for, not failed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity } from '../../lib/index.ts';
import { ActorDiedError, ActorUnavailableError, startLocalCluster, type ActorHandle, type LocalCluster } from '../../runtime/index.ts';
import { CounterActor, HostCrasherActor, NodeKillerActor, SlowFirstStartActor, SlowStartActor } from '../fixtures/client/actors.ts';
import { until } from '../helpers/until.ts';

/** The GCS asks a raylet again for a create_actor's answer after this (its --create-timeout-ms). */
const CREATE_TIMEOUT_MS = 1000;
process.env.ORRERY_CREATE_TIMEOUT_MS = String(CREATE_TIMEOUT_MS);

let local: LocalCluster;
const dir = mkdtempSync(join(tmpdir(), 'orrery-creation-crash-'));

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: ['a', 'b', 'c'].map((name) => ({ name, resources: { CPU: 1 } })) });
});

test.after(async () => {
  await local?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the pid `marker` holds once a constructor wrote it. */
const pidIn = (marker: string): Promise<number> =>
  until('the constructor running', () => {
    try {
      const pid = Number(readFileSync(marker, 'utf8'));
      return pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  });

test('a constructor that runs four times the create timeout is created once: ALIVE in the host it started in, no restart spent, however often the GCS asked again', async () => {
  const marker = join(dir, 'slow-start');
  const actor = (await local.cluster.actor(SlowStartActor).options({ isolation: 'process', maxRestarts: 1 }).remote(marker, 4 * CREATE_TIMEOUT_MS)) as ActorHandle<{ pid(): number }>;
  const info = await actor.ready({ timeoutMs: 60_000 });
  assert.equal([info.state, info.numRestarts, info.incarnation ?? 0], ['ALIVE', 0, 0], info.deathCause);
  const pid = await actor.call('pid');
  assert.equal(readFileSync(marker, 'utf8').trim().split('\n'), [`${pid} start`, `${pid} done`], 'the constructor ran once, to its end');
  await actor.kill();
});

test('a worker host killed from outside (SIGKILL) while a constructor runs: with a restart left, the actor is created again and ALIVE', async () => {
  const marker = join(dir, 'slow-restartable');
  const actor = (await local.cluster.actor(SlowFirstStartActor).options({ isolation: 'process', maxRestarts: 1 }).remote(marker)) as ActorHandle<{ pid(): number }>;
  const first = await pidIn(marker);
  process.kill(first, 'SIGKILL');
  const info = await actor.ready({ timeoutMs: 60_000 });
  assert.equal([info.state, info.numRestarts], ['ALIVE', 1]);
  assert.is.not(await actor.call('pid'), first, 'a new worker host');
  await actor.kill();
});

test('a worker host killed while a constructor runs, no restarts allowed: DEAD with the host\'s exit, no restart', async () => {
  const marker = join(dir, 'slow-mortal');
  const actor = await local.cluster.actor(SlowFirstStartActor).options({ isolation: 'process' }).remote(marker);
  process.kill(await pidIn(marker), 'SIGKILL');
  const err = await actor.ready({ timeoutMs: 60_000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(err, ActorDiedError);
  const info = await actor.info();
  assert.equal([info.state, info.numRestarts], ['DEAD', 0]);
  assert.match(info.deathCause!, /WORKER_EXITED: the worker host \(pid \d+\) exited \(signal SIGKILL\)/);
});

test('a constructor that crashes its own worker host, with maxRestarts -1: created twice at most, then DEAD saying why; every node stays ALIVE', async () => {
  const crasher = await local.cluster.actor(HostCrasherActor).options({ isolation: 'process', maxRestarts: -1 }).remote();
  const err = await crasher.ready({ timeoutMs: 60_000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(err, ActorDiedError);
  const info = await crasher.info();
  assert.is(info.state, 'DEAD');
  assert.is(info.numRestarts, 1, 'the first crash was a restart');
  assert.match(info.deathCause!, /^2 creations in a row failed with their host gone; the last: .*WORKER_EXITED: the worker host \(pid \d+\) exited \(code 3\)/);
  assert.equal((await local.cluster.nodes()).map((n) => n.state), ['ALIVE', 'ALIVE', 'ALIVE']);
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
