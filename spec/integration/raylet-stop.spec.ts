// A raylet stopped gracefully (SIGTERM: `orrery stop`, a rolling restart), on real processes: a
// nats-server, a GCS and raylets. The node timeout is 60 s here, longer than any wait of this spec,
// so whatever happens before it is the raylet's own doing.
//
// - While an actor's constructor runs on one of its worker hosts: the constructor did nothing wrong,
//   so the actor must be restarted elsewhere as for a node that died (one restart), not die for
//   good with its host's exit, and never be reported ALIVE on the node that is going away. (Before
//   the raylet answered NODE_STOPPING, it answered the host's WORKER_EXITED — DEAD at once,
//   whatever maxRestarts said — or, when the constructor returned first, "created", and the GCS
//   reported the actor ALIVE on the stopping node until its timeout.)
// - With actors running: once its hosts are stopped the raylet unregisters (gcs.unregister_node),
//   and the GCS declares the node DEAD and restarts its actors at once instead of after the node
//   timeout.
import { mkdtempSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity } from '../../lib/index.ts';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import type { ActorStateEvent } from '../../runtime/client/cluster-info.types.ts';
import { GatedStartActor } from '../runtime/client/failover-actors.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { until } from '../helpers/until.ts';

process.env.ORRERY_NODE_TIMEOUT_MS = '60000';

let local: LocalCluster;
const output: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'orrery-raylet-stop-'));

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'a', resources: { CPU: 1 } }, { name: 'b', resources: { CPU: 1 } }], onOutput: (line) => output.push(line) });
});
test.after(async () => {
  await local?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('an actor whose constructor runs on a raylet stopped with SIGTERM restarts on another node, one restart spent, never ALIVE on the stopped node', async () => {
  const nodes = await local.cluster.nodes();
  const a = nodes.find((n) => n.name === 'a')!;
  const b = nodes.find((n) => n.name === 'b')!;
  const actor = await local.cluster.actor(GatedStartActor).options({ maxRestarts: 1, schedulingStrategy: nodeIdAffinity(a.nodeId, { soft: true }) }).remote(dir);
  await until('the constructor running on node a', () => (existsSync(join(dir, 'started')) ? true : undefined));
  process.kill(local.rayletPid!(a.nodeId)!, 'SIGTERM');
  await until('raylet a stopping', () => (output.some((l) => l.includes(`raylet ${a.nodeId}: running → stopped`)) ? true : undefined));
  // let the constructor return: the raylet is stopping, whichever of the two its host does first
  writeFileSync(join(dir, 'gate'), '');
  const info = await actor.ready({ timeoutMs: 30_000 });
  assert.equal([info.state, info.nodeId, info.numRestarts], ['ALIVE', b.nodeId, 1], 'restarted on node b, the one restart spent');
  assert.is(await actor.call('where'), b.nodeId);
  const { events } = await local.cluster.recentEvents({ types: ['actor_state'] });
  const states = (events as ActorStateEvent[]).filter((e) => e.actor.actorId === actor.actorId).map((e) => `${e.actor.state}${e.actor.nodeId === a.nodeId ? '@a' : e.actor.nodeId === b.nodeId ? '@b' : ''}`);
  assert.not.ok(states.includes('ALIVE@a'), `never ALIVE on the stopping node: ${states.join(' → ')}`);
  assert.not.ok(states.includes('DEAD'), `never DEAD: ${states.join(' → ')}`);
});

test('a raylet stopped with SIGTERM unregisters once its hosts are stopped: its node is DEAD and its actors restart elsewhere long before the node timeout', async () => {
  const c = await local.addNode({ name: 'c', resources: { CPU: 2 } });
  const here = { schedulingStrategy: nodeIdAffinity(c.nodeId, { soft: true }) };
  const keeps = await local.cluster.actor(CounterActor).options({ ...here, maxRestarts: 1 }).remote(5);
  const dies = await local.cluster.actor(CounterActor).options(here).remote(0);
  for (const h of [keeps, dies]) assert.is((await h.ready({ timeoutMs: 30_000 })).nodeId, c.nodeId);
  assert.is(await keeps.call('add', 10), 15);
  const started = Date.now();
  process.kill(local.rayletPid!(c.nodeId)!, 'SIGTERM');
  const info = await until('keeps ALIVE again after a restart', async () => {
    const i = await keeps.info();
    return i.state === 'ALIVE' && i.numRestarts === 1 ? i : undefined;
  });
  assert.is.not(info.nodeId, c.nodeId);
  assert.is(await keeps.call('add', 1), 6, 'a new incarnation, from its constructor');
  const dead = await until('the actor with no restarts DEAD', async () => {
    const i = await dies.info();
    return i.state === 'DEAD' ? i : undefined;
  });
  assert.is(dead.deathCause, `node ${c.nodeId} stopped`);
  const node = (await local.cluster.nodes()).find((n) => n.nodeId === c.nodeId)!;
  assert.is(node.state, 'DEAD');
  assert.ok(Date.now() - started < 60_000, 'before the node timeout');
  assert.ok(output.some((l) => l.includes(`raylet ${c.nodeId}: unregistered from the GCS`)), 'the raylet says so');
});

test.run();
