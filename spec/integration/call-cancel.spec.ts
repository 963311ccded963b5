// An actor call whose AbortSignal aborts after it was sent, on real processes (a nats-server, a GCS,
// a raylet and its worker host): the call fails at once with CallAbortedError, and the handle
// publishes cancel_call on the actor's subject. A call still waiting in the actor's mailbox is
// dropped unstarted; a running one sees getRuntimeContext().signal abort. The cancels also wait out
// a frozen (SIGSTOP) worker host and a frozen nats-server, and run under roles (auth).
//
// Every case holds the mailbox (maxConcurrency 1) with a call to untilAborted, which ends only when
// its own signal aborts, and ends it last: the host reads one connection's messages on a subject in
// the order they were sent, so every cancel sent before has been read by then, and whatever the
// host kept of the aborted calls would run before the call made after them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { credsFile } from '../../runtime/auth/init.ts';
import { CallAbortedError, connect, startLocalCluster, type ActorHandle, type LocalCluster } from '../../runtime/index.ts';
import type { Gate } from '../fixtures/actors.ts';
import { GateActor, RelayActor } from '../fixtures/client/actors.ts';
import { frozen } from '../helpers/frozen.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

let server: NatsServerHandle;
let local: LocalCluster;

test.before(async () => {
  server = await startNatsServer();
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'one', resources: { CPU: 2 } }] });
});
test.after(async () => {
  if (server) process.kill(server.pid, 'SIGCONT'); // never leave it frozen, whatever failed
  await local?.stop();
  await server?.stop();
});

const settle = <T>(p: Promise<T>): Promise<T | unknown> => p.then((v) => v, (e: unknown) => e);

/** Starts untilAborted(label) on `gate`: it runs until `controller` aborts. */
function holdWith(gate: ActorHandle<Gate>, label: string): { controller: AbortController; done: Promise<unknown> } {
  const controller = new AbortController();
  return { controller, done: settle(gate.options({ signal: controller.signal }).call('untilAborted', label)) };
}

/**
 * `first` running on `gate` (holdWith), and behind it, once both have left the handle's outbox, a
 * call to be aborted and one to keep. `abort()` aborts the waiting one, then `first`, and checks both
 * failed as sent.
 */
async function behindHold(gate: ActorHandle<Gate>): Promise<{ kept: Promise<unknown>; abort(): Promise<void> }> {
  const first = holdWith(gate, 'first');
  const later = new AbortController();
  const cancelled = settle(gate.options({ signal: later.signal }).call('record', 'cancelled'));
  const kept = gate.call('record', 'kept');
  await new Promise((resolve) => setImmediate(resolve));
  return {
    kept,
    abort: async () => {
      later.abort();
      first.controller.abort();
      assertAbortedAfterSending(await cancelled, 'cancelled');
      assertAbortedAfterSending(await first.done, 'first');
    },
  };
}

function assertAbortedAfterSending(err: unknown, what: string): void {
  assert.instance(err, CallAbortedError, what);
  assert.is((err as CallAbortedError).sent, true, what);
}

test('a call aborted while it waits in the mailbox never runs — aborted in the turn it was made (the cancel follows it out of the batch) or later; the running call sees its signal abort', async () => {
  const gate = await local.cluster.actor(GateActor).options({ numCpus: 0.1 }).remote();
  await gate.ready();
  const first = holdWith(gate, 'first');
  // three calls in one turn travel as one call_batch; the cancel of the middle one must come after it
  const sameTurn = new AbortController();
  const before = gate.call('record', 'before');
  const a = settle(gate.options({ signal: sameTurn.signal }).call('record', 'same turn'));
  const after = gate.call('record', 'after');
  sameTurn.abort();
  await new Promise((resolve) => setImmediate(resolve)); // the batch has left: the next abort is of a call sent
  const later = new AbortController();
  const b = settle(gate.options({ signal: later.signal }).call('record', 'later'));
  await new Promise((resolve) => setImmediate(resolve));
  later.abort();
  first.controller.abort();
  for (const [err, what] of [[await a, 'same turn'], [await b, 'later'], [await first.done, 'first']] as const) assertAbortedAfterSending(err, what);
  assert.equal([await before, await after], ['before', 'after']);
  const probe = await gate.call('record', 'probe');
  assert.is(probe, 'probe');
  assert.equal(await gate.call('log'), ['first', 'first aborted', 'before', 'after', 'probe'], 'the running call saw its signal abort; neither aborted waiting call ran');
  await gate.kill();
});

test("a method that hands its own signal to the calls it makes cancels them with it: an abort at the driver reaches a call two hosts away", async () => {
  // two at a time: the log is read while the relayed call runs
  const gate = await local.cluster.actor(GateActor).options({ numCpus: 0.1, maxConcurrency: 2 }).remote();
  const relay = await local.cluster.actor(RelayActor).options({ numCpus: 0.1, isolation: 'process' }).remote();
  await Promise.all([gate.ready(), relay.ready()]);
  const controller = new AbortController();
  const relayed = settle(relay.options({ signal: controller.signal }).call('relay', gate, 'deep'));
  await until('the inner call runs', async () => ((await gate.call('log')) as string[]).includes('deep') ? true : undefined);
  controller.abort();
  assertAbortedAfterSending(await relayed, 'relay');
  await until('the inner call saw its signal abort', async () => ((await gate.call('log')) as string[]).includes('deep aborted') ? true : undefined);
  await Promise.all([gate.kill(), relay.kill()]);
});

test('the cancels wait out a frozen worker host (SIGSTOP): aborted while it is frozen, the waiting call is dropped once it thaws', async () => {
  const gate = await local.cluster.actor(GateActor).options({ numCpus: 0.1 }).remote();
  const pid = await gate.call('pid');
  // `first` has not left the driver yet: it waits in the frozen host's socket with what follows it
  const first = holdWith(gate, 'first');
  process.kill(pid, 'SIGSTOP');
  let b: Promise<unknown>;
  try {
    const later = new AbortController();
    b = settle(gate.options({ signal: later.signal }).call('record', 'frozen'));
    await new Promise((resolve) => setImmediate(resolve));
    later.abort();
    first.controller.abort();
    // the driver needs no answer from the frozen host
    assertAbortedAfterSending(await b, 'frozen');
    assertAbortedAfterSending(await first.done, 'first');
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  assert.is(await gate.call('record', 'probe'), 'probe');
  assert.equal(await gate.call('log'), ['first', 'first aborted', 'probe'], 'the call aborted while its host was frozen never ran');
  await gate.kill();
});

test('the cancel waits out a frozen nats-server (SIGSTOP): sent while it is frozen, it still reaches the host after its call, which never runs', async () => {
  const gate = await local.cluster.actor(GateActor).options({ numCpus: 0.1 }).remote();
  await gate.ready();
  const waiting = await behindHold(gate);
  process.kill(server.pid, 'SIGSTOP');
  try {
    await until('every thread of the nats-server stopped', () => (frozen(server.pid) ? true : undefined));
    await waiting.abort();
  } finally {
    process.kill(server.pid, 'SIGCONT');
  }
  assert.is(await waiting.kept, 'kept');
  assert.equal(await gate.call('log'), ['first', 'first aborted', 'kept'], 'the call aborted while the server was frozen never ran');
  await gate.kill();
});

test('with roles on NATS (auth): a driver cancels its own waiting call — cancel_call goes to the actor subject it may publish to — and it never runs', async () => {
  const secured = await startLocalCluster({ transport: 'nats', auth: true, nodes: [{ name: 'solo', resources: { CPU: 1 } }] });
  const driver = await connect({ address: secured.address, creds: credsFile(secured.authDir!, 'driver') });
  try {
    const gate = await driver.actor(GateActor).options({ numCpus: 0.1 }).remote();
    await gate.ready();
    const waiting = await behindHold(gate);
    await waiting.abort();
    assert.is(await waiting.kept, 'kept');
    assert.equal(await gate.call('log'), ['first', 'first aborted', 'kept']);
    await gate.kill();
  } finally {
    await driver.close();
    await secured.stop();
  }
});

test.run();
