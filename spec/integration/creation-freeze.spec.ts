// A raylet frozen with SIGSTOP while an actor's constructor runs on it, for longer than the GCS's
// create timeout. On real processes: the GCS keeps asking the frozen raylet for the same incarnation
// until the node's heartbeats time out; then the actor restarts on the other node. After SIGCONT the
// raylet registers again and its first incarnation is killed: that one is never reported ALIVE,
// never answers a call, and its worker host exits.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity } from '../../lib/index.ts';
import { startLocalCluster, type ActorHandle, type ActorStateEvent, type ClusterEvent, type LocalCluster, type NodeEvent } from '../../runtime/index.ts';
import { SlowStartActor } from '../fixtures/client/actors.ts';
import { frozen } from '../helpers/frozen.ts';
import { until } from '../helpers/until.ts';

const CREATE_TIMEOUT_MS = 1000;
const HEARTBEAT_MS = 200;
/** Three create timeouts: the GCS asks the frozen raylet again at least twice before the node is DEAD. */
const NODE_TIMEOUT_MS = 3000;
/** Each constructor blocks this long: longer than the freeze takes to make the node DEAD. */
const CONSTRUCTOR_MS = 5000;
// the GCS process reads these (runtime/gcs/flags.ts); the raylets learn the heartbeat and node timeout from it
process.env.ORRERY_CREATE_TIMEOUT_MS = String(CREATE_TIMEOUT_MS);
process.env.ORRERY_HEARTBEAT_MS = String(HEARTBEAT_MS);
process.env.ORRERY_NODE_TIMEOUT_MS = String(NODE_TIMEOUT_MS);

let local: LocalCluster;
const dir = mkdtempSync(join(tmpdir(), 'orrery-creation-freeze-'));
/** Every line the GCS and raylet processes printed, with when it came. */
const output: { at: number; source: string; line: string }[] = [];
/** Every event the GCS published, as the client heard them. */
const heard: ClusterEvent[] = [];

test.before(async () => {
  local = await startLocalCluster({
    transport: 'nats',
    nodes: [
      { name: 'a', resources: { CPU: 1 } },
      { name: 'b', resources: { CPU: 1 } },
    ],
    onOutput: (line, source) => output.push({ at: Date.now(), source, line }),
  });
  local.cluster.events$.subscribe((e) => heard.push(e));
});

test.after(async () => {
  await local?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether process `pid` exists: process.kill(pid, 0) throws once it has exited and been reaped. */
const exists = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const markerLines = (marker: string): string[] => {
  try {
    return readFileSync(marker, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

const nodeEvent = (type: NodeEvent['type'], nodeId: string, after = -1): Promise<NodeEvent> =>
  until(`${type} for node ${nodeId}`, () => heard.find((e, i): e is NodeEvent => i > after && e.type === type && e.node.nodeId === nodeId));

/** On failure, what the processes said about the actor and the frozen node goes to stderr with the error. */
const explained =
  (body: (seen: { actorId?: string; nodeId?: string }) => Promise<void>) =>
  async (): Promise<void> => {
    const seen: { actorId?: string; nodeId?: string } = {};
    try {
      await body(seen);
    } catch (err) {
      const ids = [seen.actorId, seen.nodeId].filter((id): id is string => id !== undefined);
      for (const o of output) if (ids.some((id) => o.line.includes(id)) || / worker \d+: /.test(o.line)) process.stderr.write(`${new Date(o.at).toISOString()} ${o.line}\n`);
      throw err;
    }
  };

test('a raylet frozen while a constructor runs there past the create timeout: the actor restarts on the other node once the node is DEAD; the first incarnation never comes up', explained(async (seen) => {
  const nodes = await local.cluster.nodes();
  const a = nodes.find((n) => n.name === 'a')!;
  const b = nodes.find((n) => n.name === 'b')!;
  const marker = join(dir, 'slow-start');
  const actor = (await local.cluster
    .actor(SlowStartActor)
    .options({ isolation: 'process', maxRestarts: 1, schedulingStrategy: nodeIdAffinity(a.nodeId, { soft: true }) })
    .remote(marker, CONSTRUCTOR_MS)) as ActorHandle<{ pid(): number }>;
  const { actorId } = actor;
  Object.assign(seen, { actorId, nodeId: a.nodeId });

  // the constructor runs in a worker host of node a
  const firstPid = await until('the first constructor running', () => {
    const m = /^(\d+) start$/.exec(markerLines(marker)[0] ?? '');
    return m ? Number(m[1]) : undefined;
  });
  const scheduled = await actor.info();
  assert.equal([scheduled.state, scheduled.nodeId, scheduled.numRestarts, scheduled.incarnation ?? 0], ['SCHEDULED', a.nodeId, 0, 0]);

  const rayletPid = local.rayletPid?.(a.nodeId);
  assert.ok(rayletPid !== undefined, 'the process cluster knows the raylet pid');
  const heardBefore = heard.length - 1;
  const frozenAt = Date.now();
  process.kill(rayletPid!, 'SIGSTOP');
  const answers: { pid: number; at: number }[] = [];
  const callErrors: unknown[] = [];
  let calling = true;
  let loop: Promise<void> | undefined;
  let secondPid = 0;
  let restartedIncarnation = 0;
  let resumedAt = 0;
  try {
    await until('the raylet frozen', () => frozen(rayletPid!) || undefined);
    await nodeEvent('node_dead', a.nodeId, heardBefore);

    const info = await actor.ready({ timeoutMs: 60_000 });
    assert.equal([info.state, info.nodeId, info.numRestarts], ['ALIVE', b.nodeId, 1], 'ALIVE on the other node after one restart');
    restartedIncarnation = info.incarnation ?? 0;
    assert.ok(restartedIncarnation > 0, `a new incarnation (got ${restartedIncarnation})`);

    secondPid = await actor.call('pid');
    assert.is.not(secondPid, firstPid, 'answered by a new worker host');
    // the first constructor has returned in its host while the raylet stays frozen: a fully built,
    // stale incarnation whose host still runs (fenced by its lease watchdog)
    await until('the first constructor returning', () => markerLines(marker).includes(`${firstPid} done`) || undefined, 2 * CONSTRUCTOR_MS);
    assert.ok(exists(firstPid), 'the first worker host still runs while its raylet is frozen');

    loop = (async () => {
      while (calling) {
        try {
          answers.push({ pid: await actor.call('pid'), at: Date.now() });
        } catch (err) {
          callErrors.push(err);
        }
      }
    })();
    await until('20 answers while the raylet is frozen', () => answers.length >= 20 || undefined);
  } finally {
    process.kill(rayletPid!, 'SIGCONT');
    resumedAt = Date.now();
  }
  try {
    const deadAt = heard.findIndex((e) => e.type === 'node_dead' && e.node.nodeId === a.nodeId);
    await nodeEvent('node_added', a.nodeId, deadAt);
    await until('node a ALIVE again', async () => ((await local.cluster.nodes()).find((n) => n.nodeId === a.nodeId)?.state === 'ALIVE' ? true : undefined));
    await until(`the first worker host (pid ${firstPid}) to exit`, () => !exists(firstPid) || undefined, 15_000);
    const settled = answers.length;
    await until('20 more answers after the first host exited', () => answers.length >= settled + 20 || undefined);
  } finally {
    calling = false;
    await loop;
  }

  assert.equal(callErrors, [], 'no call failed');
  const byPid = new Map<number, number>();
  for (const x of answers) byPid.set(x.pid, (byPid.get(x.pid) ?? 0) + 1);
  assert.equal([...byPid], [[secondPid, answers.length]], 'every call was answered by the restarted incarnation');
  assert.ok(answers.some((x) => x.at > resumedAt), 'calls were answered after SIGCONT too');

  const now = await actor.info();
  assert.equal([now.state, now.nodeId, now.numRestarts, now.incarnation ?? 0], ['ALIVE', b.nodeId, 1, restartedIncarnation], 'the restarted incarnation stays as it was');
  // the two constructors overlap in time (the first returns while the second runs): their lines interleave
  const lines = markerLines(marker);
  assert.equal(lines.length, 4, `two constructors, no more: ${lines.join(', ')}`);
  for (const pid of [firstPid, secondPid]) {
    assert.equal(lines.filter((l) => l.startsWith(`${pid} `)), [`${pid} start`, `${pid} done`], 'each incarnation constructed once, however often the GCS asked');
  }

  // What the GCS published, in its own order (its recent-events ring, not the live stream).
  const { events } = await local.cluster.recentEvents({ types: ['actor_state', 'node_dead', 'node_added'] });
  const mine = events.filter((e): e is ActorStateEvent => e.type === 'actor_state' && e.actor.actorId === actorId);
  const steps = mine.map((e) => `${e.actor.state}${e.actor.nodeId === a.nodeId ? '@a' : e.actor.nodeId === b.nodeId ? '@b' : ''}#${e.actor.incarnation ?? 0}`);
  assert.not.ok(
    mine.some((e) => e.actor.state === 'ALIVE' && e.actor.nodeId === a.nodeId),
    `never ALIVE on the frozen node: ${steps.join(' ')}`,
  );
  const left = mine.findIndex((e) => !(e.actor.state === 'PENDING' || (e.actor.state === 'SCHEDULED' && e.actor.nodeId === a.nodeId)));
  assert.ok(left > 0, `SCHEDULED on a first: ${steps.join(' ')}`);
  const restarting = mine[left];
  assert.equal([restarting.actor.state, restarting.actor.numRestarts], ['RESTARTING', 1], `SCHEDULED on a until the restart: ${steps.join(' ')}`);
  // the create_actor was sent before the freeze; the actor stayed SCHEDULED on a while the GCS asked
  // again every create timeout, and left only with the node's death (a node timeout after the freeze)
  assert.ok(restarting.time - frozenAt >= 2 * CREATE_TIMEOUT_MS, `SCHEDULED on the frozen node for ${restarting.time - frozenAt} ms after the freeze`);
  const nodeDead = events.find((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === a.nodeId);
  assert.ok(nodeDead, 'node_dead published for the frozen node');
  assert.ok(nodeDead.time - restarting.time < NODE_TIMEOUT_MS, 'the restart went with the node\'s death');
  const nodeAdded = events.find((e): e is NodeEvent => e.type === 'node_added' && e.node.nodeId === a.nodeId && (e.seq ?? 0) > (nodeDead.seq ?? 0));
  assert.ok(nodeAdded, 'the resumed raylet registered again');
  assert.not.ok(mine.slice(left).some((e) => e.actor.nodeId === a.nodeId), `never on a again after the restart: ${steps.join(' ')}`);
  assert.equal(steps.at(-1), `ALIVE@b#${restartedIncarnation}`, `ends ALIVE on b: ${steps.join(' ')}`);
  // the live stream said the same
  assert.not.ok(
    heard.some((e) => e.type === 'actor_state' && e.actor.actorId === actorId && e.actor.state === 'ALIVE' && e.actor.nodeId === a.nodeId),
    'no actor_state event heard live shows it ALIVE on the frozen node',
  );

  // the GCS said it asked again rather than failing the creation, and the raylet listed the stale one
  const gcsLines = output.filter((o) => o.line.includes(actorId) && o.line.includes('has not answered its create_actor'));
  assert.ok(
    gcsLines.some((o) => o.line.includes('(incarnation 0)') && o.line.includes(a.nodeId) && o.at < resumedAt),
    'the GCS asked the frozen raylet again',
  );
  assert.ok(
    output.some((o) => o.line.includes(`raylet ${a.nodeId}: the GCS does not know this node; registering again with 1 actor(s)`) && o.at >= resumedAt),
    'the resumed raylet registered again with the stale incarnation',
  );
  await actor.kill();
}));

test.run();
