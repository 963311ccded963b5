// Calls one handle makes in one turn travel as one call_batch (protocols/call-batch.ts), on real
// processes: a nats-server, a GCS and a raylet with its forked worker host (startLocalCluster). A
// plain NATS subscriber on the actor's call subject sees what the driver sends.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCallBatch, isCallBatch } from '../../protocols/call-batch.ts';
import { encodeOk } from '../../protocols/reply.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startLocalCluster, type ActorHandle, type LocalCluster } from '../../runtime/index.ts';
import { TallyActor, type Tally } from '../fixtures/handles/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const s = suite<{ server?: NatsServerHandle; local?: LocalCluster; watcher?: Bus }>('calls of one turn in one message (real processes)');
s.before(async (ctx) => {
  ctx.server = await startNatsServer({ jetstream: true });
  ctx.local = await startLocalCluster({ transport: 'nats', address: ctx.server.url, nodes: [{ name: 'b-a', resources: { CPU: 8 } }] });
  ctx.watcher = await connectNatsBus({ servers: ctx.server.url, name: 'call-batch-spec-watcher' });
});
s.after(async (ctx) => {
  await ctx.watcher?.close();
  await ctx.local?.stop();
  await ctx.server?.stop();
});

async function alive(handle: Promise<ActorHandle<Tally>>): Promise<ActorHandle<Tally>> {
  const h = await handle;
  await h.ready({ timeoutMs: 60_000 });
  return h;
}

s('64 calls made in one turn leave as one batch, run in call order, each answered with its own result; calls made one at a time leave alone', async ({ local, watcher }) => {
  const tally = await alive(local!.cluster.actor(TallyActor).remote(0));
  const seen: Uint8Array[] = [];
  const sub = watcher!.subscribe(`orrery.*.actor.${tally.actorId}.call`, (msg) => void seen.push(msg.data));
  await watcher!.flush();
  const results = await Promise.all(Array.from({ length: 64 }, (_, i) => tally.call('add', i + 1)));
  // add(i + 1) in call order leaves the running sum 1 + … + (i + 1)
  assert.equal(results, Array.from({ length: 64 }, (_, i) => ((i + 1) * (i + 2)) / 2));
  await until('the watcher has the batch', () => (seen.length >= 1 ? true : undefined));
  await watcher!.flush();
  sub.unsubscribe();
  assert.is(seen.length, 1);
  assert.ok(isCallBatch(seen[0]!));
  assert.is(decodeCallBatch(seen[0]!).calls.length, 64);
  // one at a time, each waiting for its answer: every call leaves alone, as a plain actor_call
  seen.length = 0;
  const again = watcher!.subscribe(`orrery.*.actor.${tally.actorId}.call`, (msg) => void seen.push(msg.data));
  await watcher!.flush();
  for (let i = 0; i < 3; i++) await tally.call('add', 0);
  await until('the watcher has the three calls', () => (seen.length >= 3 ? true : undefined));
  again.unsubscribe();
  assert.equal(seen.map(isCallBatch), [false, false, false]);
});

s('a call of a batch whose reply fits a message alone but not a reply_batch gets its value: the host sends that reply alone to the call\'s own reply subject', async ({ local, watcher }) => {
  const tally = await alive(local!.cluster.actor(TallyActor).remote(0));
  // the longest text whose reply is 16 bytes under the server's 1 MiB payload limit: a reply_batch
  // around it (its envelope, the token, the other call's reply) is over the limit
  const limit = 1024 * 1024;
  const overhead = encodeOk('x'.repeat(100_000)).byteLength - 100_000; // the reply's envelope around a long string
  const length = limit - 16 - overhead;
  assert.is(encodeOk('x'.repeat(length)).byteLength, limit - 16);
  const seen: Uint8Array[] = [];
  const sub = watcher!.subscribe(`orrery.*.actor.${tally.actorId}.call`, (msg) => void seen.push(msg.data));
  await watcher!.flush();
  const [text, sum] = await Promise.all([tally.call('text', length), tally.call('add', 3)]);
  await until('the watcher has the batch', () => (seen.length >= 1 ? true : undefined));
  sub.unsubscribe();
  assert.ok(isCallBatch(seen[0]!), 'the two calls travelled as one batch');
  assert.is((text as string).length, length);
  assert.is(sum, 3);
});

s('a worker host SIGKILLed with a batch of calls running: every call of it fails at once with the cause, none runs again', async ({ local }) => {
  const c = local!.cluster;
  const tally = await alive(c.actor(TallyActor).options({ maxRestarts: 1, maxConcurrency: 32 }).remote(5));
  const hostPid = (await tally.call('pid')) as number;
  const calls = Array.from({ length: 16 }, () =>
    tally.options({ timeoutMs: 120_000 }).call('slowAdd', 1, 120_000).then(
      () => undefined,
      (e: unknown) => e as Error,
    ),
  );
  await until('all 16 calls running in the actor', async () => ((await tally.call('started')) === 16 ? true : undefined));
  const killedAt = performance.now();
  process.kill(hostPid, 'SIGKILL');
  const errors = await Promise.all(calls);
  assert.ok(performance.now() - killedAt < 60_000, 'long before the calls’ own 120 s');
  for (const err of errors) {
    assert.instance(err, Error);
    assert.match(err!.message, tally.actorId);
    assert.match(err!.message, /unavailable|restart|died|dead/i);
  }
  await until('the actor ALIVE again', async () => {
    const info = await tally.info();
    return info.state === 'ALIVE' && info.numRestarts === 1 ? true : undefined;
  }, 60_000);
  assert.is(await tally.call('started'), 0, 'no call of the batch ran again on the new incarnation');
  assert.is(await tally.call('add', 1), 6, 'the restarted actor (constructed anew with 5) answers');
});

s('a worker host frozen (SIGSTOP) with a batch of calls on its way: each call times out on its own; resumed, its late answers settle nothing and no call ran twice', async ({ local }) => {
  const tally = await alive(local!.cluster.actor(TallyActor).options({ maxConcurrency: 16 }).remote(5));
  const hostPid = (await tally.call('pid')) as number;
  process.kill(hostPid, 'SIGSTOP');
  let resumed = false;
  try {
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        tally.options({ timeoutMs: 300 }).call('add', 1).then(
          (v) => v,
          (e: unknown) => (e as { code?: string }).code,
        ),
      ),
    );
    assert.equal(outcomes, Array.from({ length: 8 }, () => 'TIMEOUT'));
    process.kill(hostPid, 'SIGCONT');
    resumed = true;
  } finally {
    if (!resumed) process.kill(hostPid, 'SIGCONT');
  }
  // resumed, the host reads the batch it was sent and answers it (or, fenced meanwhile, answers it
  // ACTOR_FENCED without running it): either way to a reply subject retired at the timeouts
  const now = (await tally.call('get')) as number;
  assert.ok(now >= 5 && now <= 13, `each timed-out call ran at most once (the tally is ${now})`);
  assert.equal(await Promise.all([tally.call('add', 100), tally.call('add', 1000)]), [now + 100, now + 1100], 'new calls get their own answers, not the late ones');
});

s.run();
