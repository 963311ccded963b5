// The driver's core flow against real processes: a nats-server this spec starts, a GCS process and
// raylet processes (with forked worker hosts) started by startLocalCluster({ transport: 'nats' }).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom } from 'rxjs';
import { ActorDiedError, connect, startLocalCluster, type Cluster, type LocalCluster } from '../../runtime/index.ts';
import { InvalidOptionError } from '../../lib/errors.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { coreFlowSuite } from '../runtime/client/core-flow.ts';
import { until } from '../helpers/until.ts';
import { hangUpPort } from '../helpers/hang-up-port.ts';

let server: NatsServerHandle;
const nodes = [
  { name: 'n1', resources: { CPU: 2 } },
  { name: 'n2', resources: { CPU: 2 }, labels: { region: 'us' } },
];

const core = coreFlowSuite('core flow (nats transport, real processes)', async () => {
  server = await startNatsServer();
  return startLocalCluster({ transport: 'nats', address: server.url, nodes });
});
core.after(async () => {
  await server?.stop();
});
core.run();

let local: LocalCluster | undefined;
test.after(async () => {
  await local?.stop();
});

test('by default (nats-server installed) it spawns its own nats-server; killNode SIGKILLs the raylet and its worker hosts', async () => {
  local = await startLocalCluster({ nodes: [{ name: 'keep' }, { name: 'victim', labels: { role: 'victim' } }] });
  assert.is(local.transport, 'nats');
  assert.match(local.address, /^nats:\/\/127\.0\.0\.1:\d+$/);
  assert.is.not(local.address, 'nats://127.0.0.1:4222');
  const victim = (await local.cluster.nodes()).find((n) => n.name === 'victim')!;
  const actor = await local.cluster.actor(CounterActor).options({ labelSelector: { role: 'victim' } }).remote(1);
  await actor.ready({ timeoutMs: 20_000 });
  assert.is(await actor.call('add', 1), 2);
  const dead = firstValueFrom(local.cluster.events$.pipe(filter((e) => e.type === 'node_dead' && e.node.nodeId === victim.nodeId)));
  const inFlight = actor.call('later', 60_000).catch((e: unknown) => e);
  // The NATS server has routed the call to the host once the GCS answers a request sent after it on
  // the same connection. Killing the node earlier lets the call meet "no responders" while the GCS
  // still reports the actor ALIVE — an ActorUnavailableError, right, but not what this test names.
  assert.is((await actor.info()).state, 'ALIVE');
  await local.killNode(victim.nodeId);
  await dead;
  const failure = await inFlight;
  assert.instance(failure, ActorDiedError, `a call in flight fails once the GCS declares the actor dead (got ${String((failure as Error)?.name)} ${String((failure as { code?: string })?.code)}: ${String((failure as Error)?.message)})`);
  assert.instance(await actor.call('get').catch((e: unknown) => e), ActorDiedError);
  const added = await local.addNode({ name: 'late', resources: { CPU: 1, GPU: 1 } });
  assert.equal(added.resources.total, { CPU: 1, GPU: 1 });
  const states = (await local.cluster.nodes()).map((n) => `${n.name}:${n.state}`).sort();
  assert.equal(states, ['keep:ALIVE', 'late:ALIVE', 'victim:DEAD']);
});

test('connect({ connectWaitMs }) waits for a NATS server that is not up yet, and works once it is; without it, it fails at once', async () => {
  // at first the port accepts and hangs up, as a server starting may: each connection is one attempt
  const hangUp = await hangUpPort();
  const { port } = hangUp;
  let late: NatsServerHandle | undefined;
  try {
    const address = `nats://127.0.0.1:${port}`;
    const now = await connect({ address, job: false }).catch((e: unknown) => e);
    assert.is((now as { code?: string }).code, 'CONNECTION_FAILED', 'no wait: fails at the first attempt');
    const before = hangUp.attempts;
    const waiting = connect({ address, connectWaitMs: 60_000, job: false }).then((c) => c, (e: unknown) => e);
    await until('the driver trying again', () => (hangUp.attempts >= before + 2 ? true : undefined));
    await hangUp.close();
    late = await startNatsServer({ port });
    const client = await waiting;
    assert.ok(typeof (client as Cluster).close === 'function', `connected: ${String(client)}`);
    await (client as Cluster).close();
    const bad = await connect({ address, connectWaitMs: -1 }).catch((e: unknown) => e);
    assert.instance(bad, InvalidOptionError);
    assert.match((bad as Error).message, /connectWaitMs/);
  } finally {
    await hangUp.close();
    await late?.stop();
  }
});

test.run();
