// The nats-server frozen for a second (SIGSTOP, then SIGCONT) in the middle of a stream of actor
// calls, on real processes: a nats-server with JetStream this spec starts, a GCS process, two
// raylet processes with their worker hosts, and this driver, all with the default heartbeat (500
// ms) and node timeout (3 s). Unlike a crash (nats-blip.spec.ts) no connection drops: every process
// just stops hearing anything, then hears it all at once.
//
// What must hold: a second's freeze is not a node death and not a lost call — every call made
// across it is answered, exactly once (the actor's count equals the calls answered), no node is
// declared dead, no actor restarted, and the cluster still creates actors afterwards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { TallyActor } from '../fixtures/handles/actors.ts';
import { frozen } from '../helpers/frozen.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { tallyPerNode } from '../helpers/tallies.ts';
import { until } from '../helpers/until.ts';

const FREEZE_MS = 1000;
const CALLERS = 8;

let server: NatsServerHandle;
let local: LocalCluster;

test.before(async () => {
  server = await startNatsServer({ jetstream: true });
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'f1', resources: { CPU: 4 } }, { name: 'f2', resources: { CPU: 4 } }] });
});
test.after(async () => {
  process.kill(server.pid, 'SIGCONT'); // never leave it frozen, whatever failed
  await local?.stop();
  await server?.stop();
});

test('a second-long freeze of the nats-server: every call answered once, no node dead, no actor restarted', async () => {
  const c = local.cluster;
  const tallies = await tallyPerNode(c);
  let thawed = false;
  let answeredAfterThaw = 0;
  const failures: unknown[] = [];
  const answered = tallies.map(() => 0);
  // callers on every actor, sequential each, until some calls have been answered after the thaw
  const callers = Array.from({ length: CALLERS }, async (_, i) => {
    const t = i % tallies.length;
    while (answeredAfterThaw < CALLERS * 4) {
      try {
        await tallies[t]!.call('add', 1);
        answered[t]!++;
        if (thawed) answeredAfterThaw++;
      } catch (err) {
        failures.push(err);
        if (failures.length > 100) return;
      }
    }
  });
  await until('calls flowing before the freeze', () => (answered.every((n) => n >= 5) ? true : undefined));
  process.kill(server.pid, 'SIGSTOP');
  // a stop takes each of the server's threads as it next leaves the kernel: counted once all have
  await until('every thread of the nats-server stopped', () => (frozen(server.pid) ? true : undefined));
  const before = answered.reduce((a, b) => a + b, 0);
  await new Promise((resolve) => setTimeout(resolve, FREEZE_MS)); // the fault's length, not a wait for a condition
  // at most each caller's call in flight, answered from bytes the server wrote before it stopped
  assert.ok(answered.reduce((a, b) => a + b, 0) - before <= CALLERS, 'no call made during the freeze was answered during it');
  process.kill(server.pid, 'SIGCONT');
  thawed = true;
  await Promise.all(callers);
  assert.equal(failures.map((e) => `${(e as { code?: string }).code}: ${(e as Error).message}`), [], 'no call failed');
  for (const [i, h] of tallies.entries()) assert.is(await h.call('get'), answered[i], `actor ${i}: every answered call ran, once`);
  for (const h of tallies) assert.is((await h.info()).numRestarts, 0, 'not restarted');
  assert.equal((await c.nodes()).map((n) => n.state), ['ALIVE', 'ALIVE'], 'no node declared dead');
  const after = await c.actor(TallyActor).remote(7);
  await after.ready({ timeoutMs: 60_000 });
  assert.is(await after.call('get'), 7, 'the cluster creates actors after the freeze');
});

test.run();
