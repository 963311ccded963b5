// Call limits and lost connections as a driver sees them, on the memory transport: the default call
// timeout of connect(), the per-call `handle.options({ timeoutMs })`, and a call whose connection
// dropped while it waited (CONNECTION_LOST) — failed without maxTaskRetries, sent again with them.
// The memory bus never drops, so the driver here talks through one dressed to fail its first actor
// calls the way the NATS bus does at a drop (runtime/bus/nats.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { ConnectionLostError } from '../../../runtime/bus/errors.ts';
import { connectMemoryBus } from '../../../runtime/bus/memory.ts';
import { ClusterClient } from '../../../runtime/client/cluster.ts';
import { connect, DEFAULT_CALL_TIMEOUT_MS } from '../../../runtime/client/connect.ts';
import { lookupMemoryBroker } from '../../../runtime/client/memory-registry.ts';
import { getEventListeners } from 'node:events';
import { InvalidOptionError } from '../../../lib/errors.ts';
import { CallAbortedError, startLocalCluster, type LocalCluster } from '../../../runtime/index.ts';
import { until } from '../../helpers/until.ts';
import { JournalActor } from './failover-actors.ts';
import { GateActor } from '../../fixtures/client/actors.ts';
import { newCallCancel } from '../../../runtime/client/random-id.ts';

const READY = { timeoutMs: 10_000 };
let local: LocalCluster;

test.before(async () => {
  local = await startLocalCluster({ transport: 'memory', nodes: [{ name: 'n1', resources: { CPU: 4 } }] });
});
test.after(async () => {
  await local?.stop();
});

/** A driver whose first `drops` actor calls fail with CONNECTION_LOST, as at a dropped NATS connection. */
async function droppingClient(drops: number, callTimeoutMs = 10_000): Promise<{ client: ClusterClient; calls: () => number }> {
  const bus: Bus = connectMemoryBus(lookupMemoryBroker(local.address)!);
  const dressed: Bus = Object.create(bus);
  let calls = 0;
  dressed.requestCallback = (subject, data, opts, done) => {
    if (!subject.endsWith('.call')) return bus.requestCallback(subject, data, opts, done);
    calls++;
    if (drops-- > 0) return queueMicrotask(() => done(new ConnectionLostError(subject), undefined));
    bus.requestCallback(subject, data, opts, done);
  };
  const client = await ClusterClient.open(dressed, { address: local.address, cluster: 'default', namespace: 'default', requestTimeoutMs: 10_000, callTimeoutMs, ownsBus: true });
  return { client, calls: () => calls };
}

test('connect() limits calls to 60 s by default; callTimeoutMs sets another', async () => {
  assert.is(DEFAULT_CALL_TIMEOUT_MS, 60_000);
  const plain = (await connect({ address: local.address })) as ClusterClient;
  const set = (await connect({ address: local.address, callTimeoutMs: 1234 })) as ClusterClient;
  try {
    assert.equal([plain.callTimeoutMs, set.callTimeoutMs], [60_000, 1234]);
  } finally {
    await Promise.all([plain.close(), set.close()]);
  }
});

test('a call never answered fails with TIMEOUT at the connection limit, or at its own options({ timeoutMs })', async () => {
  const { client } = await droppingClient(0, 200);
  try {
    // calls never answered hold their place in the mailbox: room for the answered one
    const actor = await client.actor(JournalActor).options({ maxConcurrency: 4 }).remote();
    await actor.ready(READY);
    const byConnection = await actor.call('appendNeverAnswer', 'a').catch((e: unknown) => e);
    assert.is((byConnection as { code?: string }).code, 'TIMEOUT');
    assert.is((byConnection as { detail: { timeoutMs: number } }).detail.timeoutMs, 200);
    const byCall = await actor.options({ timeoutMs: 50 }).call('appendNeverAnswer', 'b').catch((e: unknown) => e);
    assert.is((byCall as { code?: string }).code, 'TIMEOUT');
    assert.is((byCall as { detail: { timeoutMs: number } }).detail.timeoutMs, 50);
    assert.is(await actor.options({ timeoutMs: 5000 }).call('append', 'c'), 3, 'an answered call under options() resolves');
    await actor.kill();
  } finally {
    await client.close();
  }
});

test('options() refuses a bad timeout or an unknown option with INVALID_OPTION, before anything is sent', async () => {
  const actor = await local.cluster.actor(JournalActor).remote();
  for (const bad of [{ timeoutMs: 0 }, { timeoutMs: -5 }, { timeoutMs: 2 ** 31 }, { timeoutMs: 'soon' }, { timeout: 5 }]) {
    let err: unknown;
    try {
      actor.options(bad as { timeoutMs: number });
    } catch (e) {
      err = e;
    }
    assert.is((err as { code?: string })?.code, 'INVALID_OPTION', JSON.stringify(bad));
  }
  await actor.kill();
});

test('a call whose connection dropped fails with CONNECTION_LOST without maxTaskRetries', async () => {
  const { client } = await droppingClient(1);
  try {
    const actor = await client.actor(JournalActor).remote();
    await actor.ready(READY);
    const err = await actor.call('append', 'lost').catch((e: unknown) => e);
    assert.instance(err, ConnectionLostError);
    assert.is((err as ConnectionLostError).code, 'CONNECTION_LOST');
    assert.equal(await actor.call('journal'), [], 'not sent again');
    await actor.kill();
  } finally {
    await client.close();
  }
});

test('with maxTaskRetries, a call whose connection dropped is sent again once the GCS reports the actor ALIVE; each sending counts', async () => {
  const { client, calls } = await droppingClient(2);
  try {
    const actor = await client.actor(JournalActor).options({ maxTaskRetries: 2 }).remote();
    await actor.ready(READY);
    assert.is(await actor.call('append', 'retried'), 1);
    assert.is(calls(), 3, 'two drops, then the answered sending');
    assert.equal(await actor.call('journal'), ['retried']);
    const { client: short } = await droppingClient(2);
    try {
      const once = await short.actor(JournalActor).options({ maxTaskRetries: 1 }).remote();
      await once.ready(READY);
      const err = await once.call('append', 'x').catch((e: unknown) => e);
      assert.instance(err, ConnectionLostError, 'out of retries: the last CONNECTION_LOST');
      await once.kill();
    } finally {
      await short.close();
    }
    await actor.kill();
  } finally {
    await client.close();
  }
});

test('options({ signal }): aborted before it is sent, a call never runs; after, it fails at once and may run; an aborted signal sends nothing', async () => {
  const actor = await local.cluster.actor(JournalActor).options({ maxConcurrency: 4 }).remote();
  await actor.ready(READY);

  const pre = await actor.options({ signal: AbortSignal.abort('stop') }).call('append', 'pre').catch((e: unknown) => e);
  assert.instance(pre, CallAbortedError);
  assert.is((pre as CallAbortedError).code, 'ABORTED');
  assert.is((pre as CallAbortedError).sent, false);
  assert.is((pre as CallAbortedError).cause, 'stop', "the signal's reason is the cause");

  const inFlight = new AbortController();
  const sent = actor.options({ signal: inFlight.signal }).call('appendNeverAnswer', 'sent').catch((e: unknown) => e);
  await until('the call at the actor', async () => ((await actor.call('journal')).includes('sent') ? true : undefined));
  inFlight.abort();
  const after = (await sent) as CallAbortedError;
  assert.instance(after, CallAbortedError);
  assert.is(after.sent, true);
  assert.match(after.message, /after it was sent: .*it may still run/);
  assert.equal(await actor.call('journal'), ['sent'], 'the aborted call before it had nothing sent');

  // waiting for an actor nothing can place yet: the aborted call is never sent, the next one runs
  const waiting = await local.cluster.actor(JournalActor).options({ labelSelector: { zone: 'abort' }, maxTaskRetries: -1 }).remote();
  const controller = new AbortController();
  const first = waiting.options({ signal: controller.signal }).call('append', 'aborted').catch((e: unknown) => e);
  const second = waiting.call('append', 'kept');
  controller.abort(new Error('no longer wanted'));
  const err = (await first) as CallAbortedError;
  assert.instance(err, CallAbortedError);
  assert.is(err.sent, false);
  assert.match(err.message, /before it was sent: it will not run/);
  const node = await local.addNode({ name: 'abort', labels: { zone: 'abort' } });
  assert.is(await second, 1);
  assert.equal(await waiting.call('journal'), ['kept'], 'the aborted call never ran');

  // one signal for many calls: each call's listener goes when it settles
  const shared = new AbortController();
  await Promise.all(Array.from({ length: 50 }, (_, i) => actor.options({ signal: shared.signal }).call('append', `s${i}`)));
  assert.is(getEventListeners(shared.signal, 'abort').length, 0);

  assert.throws(() => actor.options({ signal: {} as AbortSignal }), (e: unknown) => e instanceof InvalidOptionError && /signal/.test((e as Error).message));
  await Promise.all([actor.kill(), waiting.kill()]);
  await local.killNode(node.nodeId);
});

test('one signal for 60 calls in flight: one abort listener, no MaxListenersExceededWarning, and every call fails at the abort', async () => {
  const actor = await local.cluster.actor(JournalActor).options({ maxConcurrency: 64 }).remote();
  await actor.ready(READY);
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => void warnings.push(w);
  process.on('warning', onWarning);
  try {
    const shared = new AbortController();
    const calls = Array.from({ length: 60 }, (_, i) => actor.options({ signal: shared.signal }).call('appendNeverAnswer', `w${i}`).catch((e: unknown) => e));
    await until('every call at the actor', async () => ((await actor.call('journal')).length === 60 ? true : undefined));
    assert.is(getEventListeners(shared.signal, 'abort').length, 1, 'the calls share one listener');
    shared.abort();
    const errs = await Promise.all(calls);
    assert.ok(errs.every((e) => e instanceof CallAbortedError && e.sent), 'each fails ABORTED, sent');
    assert.is(getEventListeners(shared.signal, 'abort').length, 0);
    // a warning is emitted on the next tick after the listener that crossed the limit
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), []);
  } finally {
    process.off('warning', onWarning);
  }
  await actor.kill();
});

test('a call with a signal draws an id and a key: 32 lowercase hex characters each, never repeated (across pool refills)', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const { callId, cancelKey } = newCallCancel();
    for (const v of [callId, cancelKey]) {
      assert.match(v, /^[0-9a-f]{32}$/);
      assert.not.ok(seen.has(v), `drawn twice: ${v}`);
      seen.add(v);
    }
  }
});

test("options({ signal }) after the call was sent: a call waiting at its actor is dropped unstarted, a running one's signal aborts", async () => {
  const gate = await local.cluster.actor(GateActor).options({ maxConcurrency: 1 }).remote();
  await gate.ready(READY);
  // a running call that ends only when its signal aborts keeps the mailbox of one busy (it arrives
  // first, to an idle mailbox: it starts at once)
  const first = new AbortController();
  const running = gate.options({ signal: first.signal }).call('untilAborted', 'first').catch((e: unknown) => e);
  // aborted in the turn it was made, while it still sits in the handle's outbox: its cancel_call
  // must not overtake it, or the host would not know the call yet and would run it
  const sameTurn = new AbortController();
  const a = gate.options({ signal: sameTurn.signal }).call('record', 'same turn').catch((e: unknown) => e);
  sameTurn.abort();
  // aborted a turn later, once it has left (the outbox flushes on process.nextTick)
  const later = new AbortController();
  const b = gate.options({ signal: later.signal }).call('record', 'later').catch((e: unknown) => e);
  const kept = gate.call('record', 'kept');
  await new Promise((resolve) => setImmediate(resolve));
  later.abort();
  // the host reads the cancels in the order they were sent: both before the one that ends `first`
  first.abort();
  for (const err of [await a, await b, await running]) {
    assert.instance(err, CallAbortedError);
    assert.is((err as CallAbortedError).sent, true);
  }
  assert.is(await kept, 'kept');
  assert.equal(await gate.call('log'), ['first', 'first aborted', 'kept'], 'the running call saw its signal abort; neither waiting call ran');
  await gate.kill();
});

test.run();
