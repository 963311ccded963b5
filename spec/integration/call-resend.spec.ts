// A call that meets no responder while the GCS reports its actor ALIVE, on real processes: the
// actor's worker host has fenced itself (its raylet frozen with SIGSTOP past the fence lease, but
// not past the node timeout), so nothing subscribes the actor's subject and the GCS still says
// ALIVE. Such a call is sent again — no one received it, so it cannot run twice — and is answered
// once the raylet runs again and its hosts answer; calls sent back to back are sent again in the
// order they were sent, and a call made meanwhile waits behind them, so the actor receives every
// one in call order (runtime/client/call-resend.ts). The same gap, shorter, is a new actor whose host's
// subscription has not reached the caller's server of a NATS cluster yet (nats-cluster-failover).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeIdAffinity } from '../../lib/index.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { NoRespondersError } from '../../runtime/bus/errors.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { JournalActor } from '../runtime/client/failover-actors.ts';
import { CounterActor, type Counter } from '../fixtures/client/actors.ts';
import { frozen } from '../helpers/frozen.ts';
import { until } from '../helpers/until.ts';

// The fence lease is 60% of the node timeout: hosts fence after ~12 s of a frozen raylet, and the
// GCS declares the node dead after 20 s; the spec asks and resumes the raylet in between. With 6 s
// and 10 s, a CI run on a loaded 2-core VM (2026-11-27) got its get_actor answered only after the
// node timeout (DEAD, the spec 16.5 s long against 11–12 s when it passed). The cause, found later:
// a probe (`answered`) that reached the host just as it fenced itself was dropped with its
// subscription and waited out its 5 s — the host now answers such a call ACTOR_FENCED (the second
// test). The 8 s of room stay: the second test's streams load the machine through the window.
process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '20000';
const WAIT_MS = 30_000;

let local: LocalCluster;
let probe: Bus;

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'n1', resources: { CPU: 4 } }] });
  probe = await connectNatsBus({ servers: local.address, name: 'call-resend-probe' });
});
test.after(async () => {
  await probe?.close();
  await local?.stop();
});

/** Whether anything answers on `subject` now (a raw request; any answer, even a refusal, counts). */
function answered(subject: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    probe.requestCallback(subject, new Uint8Array([0xc1]), { timeoutMs: 5_000 }, (err) => {
      if (err === undefined) resolve(true);
      else if (err instanceof NoRespondersError) resolve(false);
      else reject(err);
    });
  });
}

test('calls that find no responder on an ALIVE actor are sent again, in order, and run once; a call made meanwhile waits behind them', async () => {
  const node = (await local.cluster.nodes())[0];
  const rayletPid = local.rayletPid!(node.nodeId)!;
  const actor = await local.cluster.actor(JournalActor).options({ schedulingStrategy: nodeIdAffinity(node.nodeId) }).remote();
  await actor.ready({ timeoutMs: WAIT_MS });
  assert.is(await actor.call('append', 'before'), 1);
  const callSubject = subjects('default').actorCall(actor.actorId);
  assert.ok(await answered(callSubject), 'the host answers before the freeze');

  process.kill(rayletPid, 'SIGSTOP');
  const settled: string[] = [];
  const track = (name: string, call: Promise<unknown>): Promise<unknown> =>
    call.then(
      (v) => (settled.push(name), v),
      (err: unknown) => (settled.push(`${name} failed`), err),
    );
  let calls: Promise<unknown>[] = [];
  try {
    await until('the raylet frozen', async () => (frozen(rayletPid) ? true : undefined), WAIT_MS);
    await until('its worker host fenced (no responder on the actor subject)', async () => ((await answered(callSubject)) ? undefined : true), WAIT_MS);
    // two calls back to back: both meet no responder
    calls = [track('a', actor.call('append', 'a')), track('b', actor.call('append', 'b'))];
    // The server answers "no responders" to both before it routes this get_actor, sent after them
    // on the same connection: once it is answered, both are parked, and a new call waits behind them.
    assert.is((await actor.info()).state, 'ALIVE', 'the GCS still reports the actor ALIVE');
    calls.push(track('c', actor.call('append', 'c')));
    // a few rounds of sending again while the host stays fenced (the pauses double from 10 ms)
    await until('one more get_actor answered', async () => ((await actor.info()).state === 'ALIVE' ? true : undefined), WAIT_MS);
    assert.equal(settled, [], 'nothing answers, and nothing fails, while the host is fenced and the actor ALIVE');
  } finally {
    process.kill(rayletPid, 'SIGCONT');
  }
  assert.equal(await Promise.all(calls), [2, 3, 4], 'each ran once, on the same incarnation');
  assert.equal(settled, ['a', 'b', 'c']);
  assert.equal(await actor.call('journal'), ['before', 'a', 'b', 'c'], 'in call order');
  const info = await actor.info();
  assert.equal([info.state, info.numRestarts], ['ALIVE', 0], 'the node was not declared dead');
});

test('calls streaming while the host fences itself are none of them left to time out: each runs once, and those that met the fence are answered after the thaw', async () => {
  const node = (await local.cluster.nodes())[0];
  const rayletPid = local.rayletPid!(node.nodeId)!;
  const actor = await local.cluster.actor(CounterActor).options({ name: 'fence-stream', schedulingStrategy: nodeIdAffinity(node.nodeId) }).remote();
  await actor.ready({ timeoutMs: WAIT_MS });
  const callSubject = subjects('default').actorCall(actor.actorId);
  // one handle per stream, one call in flight on each (no call waits on another's order); paced, so
  // that the twelve seconds before the fence do not load the machine, yet ~64 calls are always out
  const handles = await Promise.all(Array.from({ length: 64 }, () => local.cluster.getActor<Counter>('fence-stream')));
  const answers: number[] = [];
  const failures: unknown[] = [];
  let stop = false;
  const streams = handles.map(async (handle) => {
    while (!stop) {
      try {
        answers.push(await handle.options({ timeoutMs: WAIT_MS }).call('add', 1));
      } catch (err) {
        failures.push(err);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
  try {
    await until('calls flowing', () => (answers.length >= 200 ? true : undefined), WAIT_MS);
    process.kill(rayletPid, 'SIGSTOP');
    try {
      await until('the raylet frozen', async () => (frozen(rayletPid) ? true : undefined), WAIT_MS);
      // the host answers calls until its lease runs out; the calls on their way to it then are the race
      await until('its worker host fenced (no responder on the actor subject)', async () => ((await answered(callSubject)) ? undefined : true), WAIT_MS);
    } finally {
      process.kill(rayletPid, 'SIGCONT');
    }
    const atThaw = answers.length;
    await until('calls answered again after the thaw', () => (answers.length >= atThaw + 200 ? true : undefined), WAIT_MS);
  } finally {
    stop = true;
    await Promise.all(streams);
  }
  assert.equal(failures, [], 'no call failed or timed out');
  const sorted = [...answers].sort((a, b) => a - b);
  assert.ok(
    sorted.every((n, i) => n === i + 1),
    'each answer is a count no other answer has: no call ran twice',
  );
  assert.is(await actor.call('get'), answers.length, 'every call that ran was answered');
  const info = await actor.info();
  assert.equal([info.state, info.numRestarts], ['ALIVE', 0], 'the node was not declared dead');
});

test.run();
