// A process held by its own code — a driver's long synchronous computation, a long garbage
// collection — on the embedded cluster, where the GCS, the raylets and the driver share one event
// loop (the memory transport). Node.js runs the timers that came due during the hold before anything
// queued meanwhile is delivered: the GCS's heartbeat deadlines ran before the heartbeats the raylets
// sent as the hold ended, and every node was declared DEAD (runtime/process/stall.ts,
// runtime/gcs/liveness.ts). Here the hold is longer than the node timeout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { TallyActor } from '../fixtures/handles/actors.ts';

// the embedded cluster's defaults: heartbeats every 500 ms, a node DEAD after 3 s without one
const HOLD_MS = 4_000;

let local: LocalCluster;

test.before(async () => {
  local = await startLocalCluster({ transport: 'memory', nodes: [{ name: 'h1', resources: { CPU: 2 } }, { name: 'h2', resources: { CPU: 2 } }] });
});
test.after(async () => {
  await local?.stop();
});

/** Holds this process's event loop for `ms`, from a callback of the check phase, as a synchronous stretch of user code does. */
function hold(ms: number): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      const end = performance.now() + ms;
      while (performance.now() < end);
      resolve();
    }),
  );
}

test(`a ${HOLD_MS}-ms hold of the process, past the 3-s node timeout: no node declared dead, no actor restarted`, async () => {
  const c = local.cluster;
  const tally = await c.actor(TallyActor).remote(5);
  await tally.ready({ timeoutMs: 20_000 });
  const since = (await c.recentEvents({ limit: 1 })).lastSeq;
  await hold(HOLD_MS);
  // a deadline decided on at the hold's end is decided by now: the GCS has answered a request since
  const nodes = await c.nodes();
  assert.equal((await c.recentEvents({ types: ['node_dead'], afterSeq: since })).events, [], 'no node_dead in the GCS history');
  assert.equal(nodes.map((n) => n.state), ['ALIVE', 'ALIVE']);
  assert.is(await tally.call('get'), 5, 'the actor kept its state');
  assert.is((await tally.info()).numRestarts, 0);
});

test.run();
