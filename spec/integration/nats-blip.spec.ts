// A NATS outage on real processes: a nats-server this spec starts (so it can kill it and start it
// again on the same port), a GCS process, three raylet processes with their worker hosts, and this
// driver. The server is SIGKILLed and started again once every process has noticed; nothing is
// timed by the clock — each wait is on a condition (output lines of the processes, the server's
// connection count, a call's outcome), bounded by a generous timeout.
//
// What must hold (docs/failover.md, "A NATS outage"): a blip is not a node death — no node_dead,
// no actor restarted or moved, actor state kept, calls work after; a call in flight across it fails
// with CONNECTION_LOST at once, or with maxTaskRetries is sent again and answered; a constructor
// running across it gives an actor ALIVE once (the GCS asks its raylet again for the lost answer).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity } from '../../lib/index.ts';
import { ConnectionLostError, startLocalCluster, type ActorHandle, type LocalCluster } from '../../runtime/index.ts';
import { freePort, startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatedStartActor, JournalActor, type Journal } from '../runtime/client/failover-actors.ts';

const HEARTBEAT_MS = 200;
// the raylets' fence lease is 60% of this: long enough that a loaded machine's late heartbeat does not
// fence a node for nothing, short enough that the outage below (at least this long) would kill every node
const NODE_TIMEOUT_MS = 2000;
const WAIT_MS = 30_000;
// the GCS process reads these (runtime/gcs/flags.ts); the raylets learn the heartbeat from it
process.env.ORRERY_HEARTBEAT_MS = String(HEARTBEAT_MS);
process.env.ORRERY_NODE_TIMEOUT_MS = String(NODE_TIMEOUT_MS);

let server: NatsServerHandle;
let monitorPort: number;
let local: LocalCluster;
let nodeIds: string[];
const lines: string[] = [];
const lineWaiters = new Set<() => void>();

test.before(async () => {
  monitorPort = await freePort();
  server = await startNatsServer({ monitorPort });
  local = await startLocalCluster({
    transport: 'nats',
    address: server.url,
    nodes: [{ name: 'n1' }, { name: 'n2' }, { name: 'n3' }].map((n) => ({ ...n, resources: { CPU: 4 } })),
    onOutput: (line) => {
      lines.push(line);
      for (const wake of [...lineWaiters]) wake();
    },
  });
  nodeIds = (await local.cluster.nodes()).map((n) => n.nodeId).sort();
});
test.after(async () => {
  await local?.stop();
  await server?.stop();
});

/** Rejects after `ms` with what it waited for: a broken runtime fails the spec instead of hanging it. */
function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), ms)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Resolves once the process output from line `from` on passes `pass`. */
function output(from: number, pass: (lines: string[]) => boolean, what: string): Promise<void> {
  let check = (): void => {};
  const seen = new Promise<void>((resolve) => {
    check = () => {
      if (pass(lines.slice(from))) resolve();
    };
  });
  lineWaiters.add(check);
  check();
  return within(seen, what).finally(() => lineWaiters.delete(check));
}

const everyRaylet = (pattern: (nodeId: string) => string) => (seen: string[]) => nodeIds.every((id) => seen.some((l) => l.includes(pattern(id))));

/** Connections and subscriptions the server holds now (its /connz monitoring endpoint). */
async function serverLoad(): Promise<{ connections: number; subscriptions: number }> {
  const res = await fetch(`http://127.0.0.1:${monitorPort}/connz?limit=1024`);
  const body = (await res.json()) as { num_connections: number; connections: { subscriptions: number }[] };
  return { connections: body.num_connections, subscriptions: body.connections.reduce((n, c) => n + c.subscriptions, 0) };
}

/** Checks `pass` again and again until it holds; stops (and rejects) once WAIT_MS have gone by. */
async function until(pass: () => Promise<boolean>, what: string): Promise<void> {
  let gaveUp = false;
  const poll = async (): Promise<void> => {
    while (!gaveUp && !(await pass())) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  await within(poll(), what).finally(() => (gaveUp = true));
}

/** Waits until the server holds at least `want` again: every process is back, subscribed. */
async function reconnected(want: { connections: number; subscriptions: number }): Promise<void> {
  await until(async () => {
    const now = await serverLoad().catch(() => ({ connections: 0, subscriptions: 0 }));
    return now.connections >= want.connections && now.subscriptions >= want.subscriptions;
  }, `${want.connections} connections and ${want.subscriptions} subscriptions back on the server`);
}

/**
 * The blip: SIGKILL the server; once the GCS and every raylet have noticed (their own output) and
 * the GCS has seen every node's timeout pass while it could not hear it (so the outage lasted at
 * least NODE_TIMEOUT_MS, a second: the GCS would have declared the nodes dead), start it again on
 * the same port; resolves once every process is connected again, the GCS said so and every raylet
 * heard its heartbeat answered (reconnecting → running). `back` runs as soon as the server is.
 */
async function blip(back: () => void = () => undefined): Promise<void> {
  const before = await serverLoad();
  const from = lines.length;
  const { port } = server;
  process.kill(server.pid, 'SIGKILL');
  await server.stop();
  try {
    await output(from, (seen) => seen.some((l) => l.includes('the GCS lost its connection to the bus')), 'the GCS noticing the outage');
    await output(from, everyRaylet((id) => `raylet ${id}: running → reconnecting`), 'every raylet noticing the outage');
    await output(from, everyRaylet((id) => `node ${id}: no heartbeat for ${NODE_TIMEOUT_MS} ms while the GCS could not hear it`), 'every node timeout passing unheard');
  } finally {
    // back up even when a wait failed, so the cluster can stop
    server = await startNatsServer({ port, monitorPort });
  }
  back();
  await output(from, (seen) => seen.some((l) => l.includes('the GCS is connected again')), 'the GCS reconnected');
  await output(from, everyRaylet((id) => `raylet ${id}: reconnecting → running`), 'every raylet heard again by the GCS');
  await reconnected(before);
}

async function journalOn(nodeId: string, opts: { maxTaskRetries?: number; maxConcurrency?: number } = {}): Promise<ActorHandle<Journal>> {
  const handle = await local.cluster.actor(JournalActor).options({ schedulingStrategy: nodeIdAffinity(nodeId), maxConcurrency: 2, ...opts }).remote();
  const info = await handle.ready({ timeoutMs: WAIT_MS });
  assert.is(info.nodeId, nodeId);
  return handle;
}

/** Resolves once the actor has received `entry` (it records a call on arrival). */
async function arrived(handle: ActorHandle<Journal>, entry: string): Promise<void> {
  await until(async () => (await handle.call('journal')).includes(entry), `${entry} at its actor`);
}

test('a NATS outage longer than the node timeout kills no node and restarts no actor: counters are kept and calls work after it', async () => {
  const actors = await Promise.all(nodeIds.map((id) => journalOn(id)));
  for (const a of actors) for (const entry of ['a', 'b']) await a.call('append', entry);
  const { events } = await local.cluster.recentEvents({ types: ['node_dead'] });
  assert.is(events.length, 0);

  await blip();

  // the GCS's own history: a node_dead during the outage would not have reached the bus
  assert.equal((await local.cluster.recentEvents({ types: ['node_dead'] })).events, [], 'no node_dead');
  assert.equal((await local.cluster.nodes()).map((n) => n.state), ['ALIVE', 'ALIVE', 'ALIVE']);
  for (const [i, a] of actors.entries()) {
    const info = await a.info();
    assert.equal([info.state, info.numRestarts, info.nodeId], ['ALIVE', 0, nodeIds[i]], `actor on ${nodeIds[i]} kept its place`);
    // a raylet and its hosts that fenced themselves while they heard no one (docs/failover.md,
    // "Fencing") answer again once their heartbeats are acknowledged and the hosts renewed
    await until(async () => (await a.call('journal').catch(() => undefined)) !== undefined, `the actor on ${nodeIds[i]} answering again`);
    assert.is(await a.call('append', 'c'), 3, 'the counter went on from where it was');
    assert.equal(await a.call('journal'), ['a', 'b', 'c']);
  }
  for (const a of actors) await a.kill();
});

test('a call in flight across the outage fails with CONNECTION_LOST at once, or with maxTaskRetries is sent again and answered', async () => {
  const [single, retried] = await Promise.all([journalOn(nodeIds[0]), journalOn(nodeIds[1], { maxTaskRetries: -1 })]);
  // the methods outlast the outage; each call's own limit is far beyond both
  const lost = single.options({ timeoutMs: WAIT_MS }).call('appendLater', 'slow', 3000).catch((e: unknown) => e);
  const again = retried.options({ timeoutMs: WAIT_MS }).call('appendLater', 'slow', 3000);
  await Promise.all([arrived(single, 'slow'), arrived(retried, 'slow')]);

  const from = lines.length;
  const done = blip();
  const err = await within(lost, 'the in-flight call to settle');
  assert.instance(err, ConnectionLostError);
  assert.is((err as ConnectionLostError).code, 'CONNECTION_LOST');
  assert.not.ok(lines.slice(from).some((l) => l.includes('the GCS is connected again')), 'failed while the server was still down, not at a timeout');
  await done;

  assert.type(await within(again, 'the retried call to be answered'), 'number');
  const journal = await retried.call('journal');
  assert.ok(journal.filter((e) => e === 'slow').length >= 1, 'at least once');
  assert.equal((await retried.info()).numRestarts, 0);
  await single.kill();
  await retried.kill();
});

test('calls of one turn, in flight across the outage as one batch: each fails with CONNECTION_LOST at once, or with maxTaskRetries each is sent again and answered', async () => {
  // room for every call of the batch to run at once, and for journal() beside them
  const [single, retried] = await Promise.all([journalOn(nodeIds[0], { maxConcurrency: 8 }), journalOn(nodeIds[1], { maxTaskRetries: -1, maxConcurrency: 8 })]);
  const entries = ['b0', 'b1', 'b2', 'b3', 'b4', 'b5'];
  // made in one turn, so each handle sends them as one call_batch
  const lost = entries.map((e) => single.options({ timeoutMs: WAIT_MS }).call('appendLater', e, 3000).catch((err: unknown) => err));
  const again = entries.map((e) => retried.options({ timeoutMs: WAIT_MS }).call('appendLater', e, 3000));
  await Promise.all([arrived(single, 'b5'), arrived(retried, 'b5')]);

  const from = lines.length;
  const done = blip();
  const errors = await within(Promise.all(lost), 'every call of the batch to settle');
  for (const err of errors) assert.is((err as ConnectionLostError).code, 'CONNECTION_LOST');
  assert.not.ok(lines.slice(from).some((l) => l.includes('the GCS is connected again')), 'failed while the server was still down, not at a timeout');
  await done;

  const answered = await within(Promise.all(again), 'every retried call of the batch to be answered');
  for (const n of answered) assert.type(n, 'number');
  const journal = await retried.call('journal');
  for (const e of entries) assert.ok(journal.includes(e), `${e} ran at least once`);
  assert.equal((await retried.info()).numRestarts, 0);
  await single.kill();
  await retried.kill();
});

test('calls waiting for an actor nothing can place yet ride through the outage unsent; once a node fits they run once each, in call order', async () => {
  const waiting = await local.cluster.actor(JournalActor).options({ labelSelector: { stage: 'late' } }).remote();
  assert.is((await waiting.info()).state, 'PENDING');
  const calls = ['w1', 'w2', 'w3'].map((e) => waiting.options({ timeoutMs: WAIT_MS }).call('append', e));
  await blip();
  const added = await local.addNode({ name: 'late', labels: { stage: 'late' }, resources: { CPU: 1 } });
  assert.equal(await within(Promise.all(calls), 'the waiting calls to be answered'), [1, 2, 3]);
  assert.equal(await waiting.call('journal'), ['w1', 'w2', 'w3'], 'each ran once, in call order');
  assert.is((await waiting.info()).nodeId, added.nodeId);
  await waiting.kill();
  await local.killNode(added.nodeId);
});

test('a constructor running across the outage: the GCS, whose create_actor lost its answer with the connection, asks again, and the actor is ALIVE once, no restart spent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'orrery-blip-create-'));
  try {
    const gated = await local.cluster.actor(GatedStartActor).options({ schedulingStrategy: nodeIdAffinity(nodeIds[0]), isolation: 'process' }).remote(dir, WAIT_MS * 2);
    await until(async () => existsSync(join(dir, 'started')), 'the constructor running');
    // the host is held in the constructor (its event loop too): it reconnects once the gate opens
    await blip(() => writeFileSync(join(dir, 'gate'), ''));
    const info = await gated.ready({ timeoutMs: WAIT_MS });
    assert.equal([info.state, info.numRestarts, info.nodeId], ['ALIVE', 0, nodeIds[0]], info.deathCause);
    await until(async () => (await gated.call('where').catch(() => undefined)) === nodeIds[0], 'the actor answering on its node');
    await gated.kill();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
