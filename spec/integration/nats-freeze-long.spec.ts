// The nats-server frozen (SIGSTOP) longer than the raylets' fence lease but shorter than the node
// timeout, in the middle of streams of actor calls, on real processes: a nats-server with JetStream
// this spec starts, a GCS process, two raylet processes with their worker hosts, and this driver.
// The node timeout is 10 s here, so the fence lease (60%) is 6 s; the freeze lasts 7.5 s.
//
// During such a freeze every raylet's lease lapses and its worker hosts fence themselves: they stop
// answering, as they must when the GCS may be starting their actors elsewhere. The GCS, whose node
// timeout has not run out, declares no node dead. After the thaw the next acknowledged heartbeat
// renews the leases and the hosts answer again. What must hold (docs/failover.md, "A NATS outage"):
// no node is declared dead and no actor restarts; no call runs twice; a call fails only if it was
// out across the freeze, and then only because its own time ran out: with
// ACTOR_UNAVAILABLE when it met no responder (the host fenced) and was sent again until then — it
// did not run; one that reached a host after the host had fenced itself is answered ACTOR_FENCED
// and sent again the same way — or with TIMEOUT when no answer reached it in its time (one the
// frozen server held past it); calls flow again after the thaw; GCS requests sent
// during the freeze are answered after it (the GCS holds what comes while its own lease is lapsed:
// runtime/gcs/fenced-bus.ts); and the cluster still creates actors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus, BusMsg } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { TallyActor } from '../fixtures/handles/actors.ts';
import { frozen } from '../helpers/frozen.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { tallyPerNode } from '../helpers/tallies.ts';
import { until } from '../helpers/until.ts';

// the GCS process reads these (runtime/gcs/flags.ts); the raylets learn both from its registration reply
process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '10000';
const FENCE_LEASE_MS = 6_000;
const FREEZE_MS = 7_500;
const CALL_TIMEOUT_MS = 8_000;
const CALLERS = 6;

let server: NatsServerHandle;
let local: LocalCluster;
let probe: Bus;

test.before(async () => {
  server = await startNatsServer({ jetstream: true });
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'g1', resources: { CPU: 4 } }, { name: 'g2', resources: { CPU: 4 } }] });
  probe = await connectNatsBus({ servers: server.url, name: 'freeze-long-probe' });
});
test.after(async () => {
  process.kill(server.pid, 'SIGCONT'); // never leave it frozen, whatever failed
  await probe?.close();
  await local?.stop();
  await server?.stop();
});

test('a freeze past the fence lease, short of the node timeout: no node dead, no restart, no call run twice, calls flow again', async () => {
  const c = local.cluster;
  const tallies = await tallyPerNode(c);
  let phase: 'before' | 'frozen' | 'thawed' = 'before';
  let answeredAfterThaw = 0;
  const answered = tallies.map(() => 0);
  const timedOut = tallies.map(() => 0);
  const failures: string[] = [];
  /** Calls that failed and were sent before the thaw. */
  let failedBeforeThaw = 0;
  const callers = Array.from({ length: CALLERS }, async (_, i) => {
    const t = i % tallies.length;
    const caller = tallies[t]!.options({ timeoutMs: CALL_TIMEOUT_MS });
    while (answeredAfterThaw < CALLERS * 4 && failures.length < 50) {
      const sentIn = phase;
      try {
        await caller.call('add', 1);
        answered[t]!++;
        if (phase === 'thawed') answeredAfterThaw++;
      } catch (err) {
        const code = (err as { code?: string }).code;
        failures.push(`${code}: ${(err as Error).message}`);
        if (code === 'TIMEOUT') timedOut[t]!++;
        if (sentIn !== 'thawed') failedBeforeThaw++;
      }
    }
  });
  await until('calls flowing before the freeze', () => (answered.every((n) => n >= 5) ? true : undefined));
  process.kill(server.pid, 'SIGSTOP');
  await until('every thread of the nats-server stopped', () => (frozen(server.pid) ? true : undefined));
  phase = 'frozen';
  // the fault's length, not a wait for a condition: past the fence lease, short of the node timeout
  await new Promise((resolve) => setTimeout(resolve, FREEZE_MS));
  // GCS requests sent during the freeze reach the GCS while its own lease is still lapsed: it holds
  // them, and answers once its renewal goes through — well inside their 5 s, not never
  const asked = tallies.map((h) => probe.request(subjects('default').gcs('get_actor'), encode('get_actor', { actorId: h.actorId }), { timeoutMs: 5_000 }));
  process.kill(server.pid, 'SIGCONT');
  phase = 'thawed';
  for (const [i, answer] of (await Promise.allSettled(asked)).entries()) {
    assert.is(answer.status, 'fulfilled', `get_actor ${i} sent during the freeze answered: ${answer.status === 'rejected' ? String(answer.reason) : ''}`);
    const reply = decode((answer as PromiseFulfilledResult<BusMsg>).value.data, { registry: { reply: messages.reply } }).body;
    assert.ok(reply.ok && (reply.value as { state?: string }).state === 'ALIVE', `get_actor ${i}: ALIVE`);
  }
  await Promise.all(callers);

  assert.ok(FREEZE_MS > FENCE_LEASE_MS);
  assert.ok(answeredAfterThaw >= CALLERS * 4, `calls flow again after the thaw (failures: ${failures.join('; ')})`);
  assert.equal(failures.filter((f) => !f.startsWith('TIMEOUT:') && !(f.startsWith('ACTOR_UNAVAILABLE:') && f.endsWith('(ALIVE)'))), [], 'nothing fails but a call whose time ran out');
  // each caller has one call in flight, and a call can only fail once its 8 s are up: at most the one
  // each caller had out across the freeze
  assert.ok(failedBeforeThaw <= CALLERS && failures.length === failedBeforeThaw, `only calls out across the freeze failed (${failures.length}, of which ${failedBeforeThaw} sent before the thaw): ${failures.join("; ")}`);
  for (const [i, h] of tallies.entries()) {
    const count = await h.call('get');
    assert.ok(count >= answered[i]! && count <= answered[i]! + timedOut[i]!, `actor ${i}: ran ${count} calls for ${answered[i]} answered and ${timedOut[i]} timed out — none twice`);
    assert.is((await h.info()).numRestarts, 0, `actor ${i} not restarted`);
  }
  assert.equal((await c.nodes()).map((n) => n.state), ['ALIVE', 'ALIVE'], 'no node declared dead');
  const after = await c.actor(TallyActor).remote(7);
  await after.ready({ timeoutMs: 60_000 });
  assert.is(await after.call('get'), 7, 'the cluster creates actors after the freeze');
});

test.run();
