// A driver whose own code holds its event loop (a long synchronous computation, a long GC) while
// what it waits for arrives, on real processes: a nats-server, a GCS and a raylet with its worker
// host (startLocalCluster). Node.js runs the timers that came due during the hold before it reads
// what reached its socket meanwhile, so a call's answer, an actor's ALIVE and a group's CREATED that
// came in time used to lose against their timeouts (runtime/process/stall.ts). Each case arms a
// 300-ms timeout, lets the request leave, and holds the loop 1.5 s.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { TallyActor } from '../fixtures/handles/actors.ts';

const TIMEOUT_MS = 300;
const HOLD_MS = 1_500;

let local: LocalCluster;

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'ds1', resources: { CPU: 4 } }] });
});
test.after(async () => {
  await local?.stop();
});

/** Holds the loop from a callback of the check phase — after this turn's messages went out — for HOLD_MS. */
function hold(): Promise<number> {
  return new Promise((resolve) =>
    setImmediate(() => {
      const start = performance.now();
      while (performance.now() - start < HOLD_MS);
      resolve(HOLD_MS);
    }),
  );
}

test('a call answered while the driver holds its loop past the call timeout: answered, run once', async () => {
  const tally = await local.cluster.actor(TallyActor).remote(0);
  await tally.ready({ timeoutMs: 60_000 });
  const answer = tally.options({ timeoutMs: TIMEOUT_MS }).call('add', 1);
  await hold();
  assert.is(await answer, 1);
  assert.is(await tally.call('get'), 1, 'ran once');
});

test("ready() of an actor that became ALIVE during the hold: resolves, not WaitTimeoutError", async () => {
  const tally = await local.cluster.actor(TallyActor).remote(7);
  const ready = tally.ready({ timeoutMs: TIMEOUT_MS }).then((info) => info.state, (err: Error) => err.name);
  await hold();
  assert.is(await ready, 'ALIVE');
});

test('ready() of a placement group CREATED during the hold: resolves, not WaitTimeoutError', async () => {
  const pg = await local.cluster.placementGroup({ bundles: [{ CPU: 1 }] });
  const ready = pg.ready({ timeoutMs: TIMEOUT_MS }).then((info) => info.state, (err: Error) => err.name);
  await hold();
  try {
    assert.is(await ready, 'CREATED');
  } finally {
    await pg.remove();
  }
});

test.run();
