// One active GCS and hot standbys, on real processes (a nats-server with JetStream, GCS and raylet
// processes): a standby takes over when the leader is killed, keeping every actor where it runs;
// a leader frozen (SIGSTOP) until a standby took over and then resumed never answers again — every
// request gets exactly one answer, counted on a reply subject of our own; a leader killed while it
// asks a raylet again for a create whose answer a NATS restart lost, or frozen there, leaves the
// actor created once.
// Waits are on conditions.
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity } from '../../lib/index.ts';
import { decode, encode } from '../../protocols/codec.ts';
import { subjects } from '../../protocols/subjects.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connect, type Cluster } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { GatedFailActor, GatedStartActor } from '../runtime/client/failover-actors.ts';

process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '2000';
const CLUSTER = 'standby';
const WAIT_MS = 30_000;
/** A per-attempt request timeout no run of this spec comes near. */
const PATIENT_MS = 600_000;

let nats: NatsServerHandle;
let bus: Bus;
let cluster: Cluster;
const gcses: RuntimeProcess[] = [];
const raylets: RuntimeProcess[] = [];

const startGcs = async (): Promise<RuntimeProcess> => {
  const p = await spawnRuntimeProcess('gcs', ['--address', nats.url, '--cluster', CLUSTER, '--lease-ms', '1000', '--grace-ms', '10000']);
  gcses.push(p);
  return p;
};

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
  bus = await connectNatsBus({ servers: nats.url });
});

test.after(async () => {
  await cluster?.close().catch(() => undefined);
  await bus?.close().catch(() => undefined);
  for (const p of gcses) {
    try {
      process.kill(p.pid, 'SIGCONT');
    } catch {
      // gone already
    }
  }
  for (const p of [...raylets, ...gcses]) await p.stop();
  await nats?.stop();
});

/** Sends list_nodes with a reply subject of our own and counts the answers that come back. */
async function answersTo(count: number): Promise<number[]> {
  return (await probes(count)).counts();
}

/**
 * Sends `count` list_nodes requests, each with a reply subject of its own, and resolves once every
 * one has an answer; `counts()` then gives how many answers each got, after a round trip through
 * the server (a late second answer would come right behind the first).
 */
async function probes(count: number): Promise<{ counts(): Promise<number[]> }> {
  const inbox = `_INBOX.standby-probe.${Date.now()}`;
  const answers = new Map<string, number>();
  const sub = bus.subscribe(`${inbox}.*`, (msg) => {
    const token = msg.subject.slice(inbox.length + 1);
    answers.set(token, (answers.get(token) ?? 0) + 1);
  });
  await bus.flush();
  for (let i = 0; i < count; i++) bus.publish(subjects(CLUSTER).gcs('list_nodes'), encode('list_nodes', {}), { reply: `${inbox}.${i}` });
  await until('every probe answered', () => (answers.size === count ? true : undefined));
  return {
    async counts() {
      await bus.flush();
      await new Promise<void>((resolve) => bus.request(subjects(CLUSTER).gcs('list_nodes'), encode('list_nodes', {}), { timeoutMs: 5000 }).then(() => resolve(), () => resolve()));
      sub.unsubscribe();
      return [...answers.values()];
    },
  };
}

test('the first GCS leads, a second waits as a standby and takes over when the leader is killed', async () => {
  const leader = await startGcs();
  assert.is(leader.ready.epoch, 1);
  const standby = await startGcs();
  assert.is(standby.ready.standby, true);
  for (const name of ['n1', 'n2']) {
    raylets.push(await spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', name, '--num-cpus', '4']));
  }
  cluster = await connect({ address: nats.url, cluster: CLUSTER });
  const actors = await Promise.all([1, 2, 3].map((n) => cluster.actor(CounterActor).remote(n)));
  for (const a of actors) await a.ready({ timeoutMs: WAIT_MS });
  const before = new Map((await cluster.actors()).map((a) => [a.actorId, a]));
  assert.equal(await answersTo(20), new Array(20).fill(1), 'one answer per request: only the leader answers');

  await leader.crash();
  // the standby takes the lease, recovers the tables and what the raylets run, and serves
  await until('the standby serving', async () => ((await cluster.nodes()).length === 2 ? true : undefined));
  assert.match(standby.recentOutput(), /holding the leader lease with epoch 2/);
  for (const a of await cluster.actors()) {
    const was = before.get(a.actorId)!;
    assert.equal([a.state, a.nodeId, a.numRestarts], ['ALIVE', was.nodeId, 0], `${a.actorId} kept`);
  }
  assert.equal(await Promise.all(actors.map((a) => a.call('get'))), [1, 2, 3]);
  const fresh = await cluster.actor(CounterActor).remote(9);
  assert.is((await fresh.ready({ timeoutMs: WAIT_MS })).state, 'ALIVE');
});

test('a leader frozen until a standby took over, then resumed, steps down and never answers again; what it got while frozen is asked again of the new leader at once', async () => {
  const leader = gcses.find((p) => /holding the leader lease with epoch 2/.test(p.recentOutput()))!;
  const next = await startGcs();
  assert.is(next.ready.standby, true);
  // a client that would wait PATIENT_MS for an answer before asking again on its own
  const patient = await connect({ address: nats.url, cluster: CLUSTER, requestTimeoutMs: PATIENT_MS });
  const leaders: number[] = [];
  const seen = patient.events$.subscribe((e) => {
    if (e.type === 'gcs_leader') leaders.push(e.epoch);
  });
  process.kill(leader.pid, 'SIGSTOP');
  // only the frozen leader subscribes the GCS's subjects now: it gets the request and cannot answer
  const askedAt = performance.now();
  const askedWhileFrozen = patient.nodes();
  await until('the standby holding the lease', () => (/holding the leader lease with epoch 3/.test(next.recentOutput()) ? true : undefined));
  await until('the new leader serving', async () => ((await cluster.nodes()).length === 2 ? true : undefined));
  // the new leader said so (gcs_leader), and the client sent its unanswered request again to it
  assert.equal((await askedWhileFrozen).map((n) => n.state), ['ALIVE', 'ALIVE']);
  assert.ok(performance.now() - askedAt < PATIENT_MS, 'answered after the announcement, not after the attempt timed out');
  assert.equal(leaders, [3]);
  seen.unsubscribe();
  await patient.close();
  // requests the frozen leader reads only once resumed, while its lease is not valid: it holds
  // them (fenced-bus.ts), and drops them when its renewal finds the lease taken
  const whileFrozen = await probes(20);
  process.kill(leader.pid, 'SIGCONT');
  await until('the old leader stepping down', () => (/stepping down/.test(leader.recentOutput()) ? true : undefined));
  assert.equal(await whileFrozen.counts(), new Array(20).fill(1), 'requests sent while it was frozen: answered once, by the new leader only');
  assert.equal(await answersTo(20), new Array(20).fill(1), 'one answer per request after the old leader resumed');
  const nodes = await cluster.nodes();
  assert.equal(nodes.map((n) => n.state), ['ALIVE', 'ALIVE']);
  const actors = await cluster.actors();
  assert.ok(actors.every((a) => a.state === 'ALIVE' && a.numRestarts === 0), 'no actor restarted across two takeovers');
});

/**
 * The leader asking a raylet again for a create_actor whose answer a NATS restart lost (raylets.ts,
 * `create`) is killed or frozen there: a standby takes over, and the actor must end ALIVE once, its
 * constructor run once, no restart spent.
 */
async function faultWhileCreateAskedAgain(fault: 'SIGKILL' | 'SIGSTOP'): Promise<void> {
  await startGcs(); // a standby for the takeover below, whoever leads by then
  const [n1] = (await cluster.nodes()).map((n) => n.nodeId).sort();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-standby-create-'));
  const creates: number[] = [];
  const watch = bus.subscribe(subjects(CLUSTER).raylet(n1!, 'create_actor'), (msg) => {
    const epoch = (decode(msg.data).body as { epoch?: number }).epoch;
    if (epoch !== undefined) creates.push(epoch);
  });
  let frozen: RuntimeProcess | undefined;
  try {
    await bus.flush();
    const gated = await cluster.actor(GatedStartActor).options({ schedulingStrategy: nodeIdAffinity(n1!), isolation: 'process' }).remote(dir, WAIT_MS * 3);
    await until('the constructor running', () => (existsSync(join(dir, 'started')) ? true : undefined));
    renameSync(join(dir, 'started'), join(dir, 'started-first'));
    const before = creates.length;
    // the host is held in its constructor; the leader's request for its answer is lost with the server
    await nats.restart();
    const epoch = await until('create_actor asked again after the restart', () => (creates.length > before ? creates.at(-1) : undefined), WAIT_MS);
    const leads = (p: RuntimeProcess, e: number): boolean => new RegExp(`holding the leader lease with epoch ${e}\\b`).test(p.recentOutput());
    const asking = gcses.find((p) => leads(p, epoch))!;
    assert.ok(asking, `a GCS holds epoch ${epoch}`);
    if (fault === 'SIGKILL') await asking.crash();
    else process.kill((frozen = asking).pid, 'SIGSTOP');
    await until('a standby taking over', () => (gcses.some((p) => leads(p, epoch + 1)) ? true : undefined), WAIT_MS);
    if (frozen) {
      process.kill(frozen.pid, 'SIGCONT');
      await until('the old leader stepping down', () => (/stepping down/.test(frozen!.recentOutput()) ? true : undefined), WAIT_MS);
    }
    writeFileSync(join(dir, 'gate'), '');
    const info = await gated.ready({ timeoutMs: WAIT_MS });
    assert.equal([info.state, info.numRestarts, info.nodeId], ['ALIVE', 0, n1], info.deathCause);
    assert.is(await gated.call('where'), n1);
    assert.not.ok(existsSync(join(dir, 'started')), 'the constructor ran once');
    await gated.kill();
  } finally {
    if (frozen) process.kill(frozen.pid, 'SIGCONT');
    watch.unsubscribe();
    writeFileSync(join(dir, 'gate'), '');
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the leader SIGKILLed while it asks a raylet again for a create_actor whose answer a NATS restart lost: the standby takes over, and the actor is ALIVE once, its constructor run once, no restart spent', async () => {
  await faultWhileCreateAskedAgain('SIGKILL');
});

test('the leader killed while a constructor runs, which then throws: the new leader, told the actor is still starting, keeps it SCHEDULED and learns of the failure — DEAD with the constructor’s error, never ALIVE', async () => {
  await startGcs(); // a standby for the takeover below
  const [n1] = (await cluster.nodes()).map((n) => n.nodeId).sort();
  const dir = mkdtempSync(join(tmpdir(), 'orrery-standby-fail-'));
  try {
    const failing = await cluster.actor(GatedFailActor).options({ schedulingStrategy: nodeIdAffinity(n1!), isolation: 'process' }).remote(dir, WAIT_MS * 3);
    await until('the constructor running', () => (existsSync(join(dir, 'started')) ? true : undefined));
    const epochOf = (p: RuntimeProcess): number => Math.max(0, ...[...p.recentOutput().matchAll(/holding the leader lease with epoch (\d+)/g)].map((m) => Number(m[1])));
    const leader = gcses.reduce((a, b) => (epochOf(b) > epochOf(a) ? b : a));
    const epoch = epochOf(leader);
    await leader.crash();
    await until('a standby taking over', () => (gcses.some((p) => epochOf(p) === epoch + 1) ? true : undefined), WAIT_MS);
    const states: string[] = [];
    const seen = cluster.events$.subscribe((e) => {
      if (e.type === 'actor_state' && e.actor.actorId === failing.actorId) states.push(e.actor.state);
    });
    try {
      const recovered = await until('the new leader serving the actor', async () => {
        const info = await failing.info().catch(() => undefined);
        return info !== undefined && info.state !== 'PENDING' ? info : undefined;
      }, WAIT_MS);
      assert.is(recovered.state, 'SCHEDULED', 'still starting: not taken as ALIVE');
      writeFileSync(join(dir, 'gate'), '');
      const dead = await until('the actor DEAD', async () => {
        const info = await failing.info();
        return info.state === 'DEAD' ? info : undefined;
      }, WAIT_MS);
      assert.match(dead.deathCause ?? '', /the gate opened: this constructor fails/);
      assert.not.ok(states.includes('ALIVE'), `never ALIVE: ${states.join(' → ')}`);
    } finally {
      seen.unsubscribe();
    }
  } finally {
    writeFileSync(join(dir, 'gate'), '');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the same leader frozen (SIGSTOP) there until a standby took over, then resumed: it steps down, and the actor is ALIVE once, its constructor run once, no restart spent', async () => {
  await faultWhileCreateAskedAgain('SIGSTOP');
});

test.run();
