// One raylet cut off the bus for a second — its connections dropped and refused, as when a switch
// port flaps — while the GCS, the other raylet and the driver stay on it, on real processes (a
// nats-server with JetStream, a GCS, two raylets, one of them through a TCP proxy the spec cuts).
// Unlike a frozen raylet, whose socket keeps what was sent meanwhile, a cut-off one never gets what
// was published to it during the cut: the GCS's create_actor and bundle requests meet no responders
// or go unanswered. A second is shorter than the node timeout, so none of it may cost a restart, a
// dead node, a bundle held twice or a constructor run twice.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Cluster, type ClusterEvent, type PlacementGroup } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { SlowStartActor } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { until } from '../helpers/until.ts';

const CPUS = 1000;
/** How long the raylet stays cut off: the fault, not a wait for something. */
const CUT_MS = 1000;
const WAIT_MS = 60_000;

const work = mkdtempSync(join(tmpdir(), 'orrery-cutoff-spec-'));
let nats: NatsServerHandle;
let proxy: TcpProxy;
let gcs: RuntimeProcess;
const raylets: RuntimeProcess[] = [];
let cluster: Cluster;
const trouble: ClusterEvent[] = [];

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
  proxy = await startTcpProxy(nats.url);
  gcs = await spawnRuntimeProcess('gcs', ['--address', nats.url]);
  raylets.push(await spawnRuntimeProcess('raylet', ['--address', nats.url, '--node-name', 'steady', '--num-cpus', String(CPUS)]));
  raylets.push(await spawnRuntimeProcess('raylet', ['--address', proxy.url, '--node-name', 'flaky', '--num-cpus', String(CPUS)]));
  cluster = await connect({ address: nats.url });
  await until('both nodes ALIVE', async () => ((await cluster.nodes()).filter((n) => n.state === 'ALIVE').length === 2 ? true : undefined));
  cluster.events$.subscribe((e) => {
    if (e.type === 'node_dead' || (e.type === 'actor_state' && e.actor.state === 'RESTARTING')) trouble.push(e);
  });
});

test.after(async () => {
  await cluster?.close().catch(() => undefined);
  proxy?.mend();
  for (const r of raylets) await r.stop();
  await gcs?.stop();
  await proxy?.close();
  await nats?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Cuts the flaky raylet off for CUT_MS; resolves once its connections are back through the proxy. */
async function cutForASecond(): Promise<void> {
  const before = proxy.accepted;
  const dropped = proxy.cut();
  assert.ok(dropped >= 1, 'the flaky raylet was connected through the proxy');
  await new Promise((resolve) => setTimeout(resolve, CUT_MS));
  proxy.mend();
  await until('the flaky raylet and its hosts connected again', () => (proxy.accepted >= before + dropped ? true : undefined), WAIT_MS);
}

test('cut off in the middle of creating 60 actors placed on it: every one ALIVE there, each constructor run once, no restart, the node never dead', async () => {
  const marker = join(work, 'starts.log');
  const flaky = (await cluster.nodes()).find((n) => n.name === 'flaky')!;
  const seen = trouble.length;
  // each constructor takes 30 ms and the host runs them one after another: the burst lasts ~2 s
  const actors = await Promise.all(
    Array.from({ length: 60 }, () => cluster.actor(SlowStartActor).options({ labelSelector: { 'orrery.io/node-name': 'flaky' }, maxRestarts: 0 }).remote(marker, 30)),
  );
  const starts = (): number => {
    try {
      return readFileSync(marker, 'utf8').split('\n').filter((l) => l.endsWith(' start')).length;
    } catch {
      return 0;
    }
  };
  await until('a few constructors run', () => (starts() >= 5 ? true : undefined), WAIT_MS).catch(async (err: unknown) => {
    const states = (await cluster.actors()).map((a) => a.state).join(' ');
    throw new Error(`${(err as Error).message}; actors: ${states}; flaky raylet said: ${raylets[1]!.recentOutput()}`);
  });
  assert.ok(starts() < actors.length, 'cut while creations were still under way');
  await cutForASecond();
  const infos = await Promise.all(actors.map((a) => a.ready({ timeoutMs: WAIT_MS })));
  assert.ok(
    infos.every((i) => i.state === 'ALIVE' && i.nodeId === flaky.nodeId && i.numRestarts === 0),
    infos.map((i) => `${i.state}@${i.nodeId === flaky.nodeId ? 'flaky' : i.nodeId}/${i.numRestarts}`).join(' '),
  );
  assert.is(starts(), actors.length, 'each constructor ran once');
  assert.equal(trouble.slice(seen), [], 'no node dead, no actor restarting');
  const answers = await Promise.all(actors.map((a) => a.call('pid')));
  assert.ok(answers.every((pid) => typeof pid === 'number'), 'every actor answers');
  await Promise.all(actors.map((a) => a.kill()));
});

test('cut off in the middle of 300 placement groups with a bundle on each node: all CREATED, each bundle held once, and removing them gives everything back', async () => {
  const seen = trouble.length;
  const groups: PlacementGroup[] = await Promise.all(
    Array.from({ length: 300 }, () => cluster.placementGroup({ bundles: [{ CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' })),
  );
  let created = 0;
  const readies = groups.map((pg) => pg.ready({ timeoutMs: WAIT_MS }).then((info) => (created++, info)));
  await until('some groups CREATED', () => (created >= 10 ? true : undefined), WAIT_MS);
  await cutForASecond();
  const infos = await Promise.all(readies);
  assert.ok(infos.every((g) => g.state === 'CREATED'), 'every group CREATED');
  const nodes = await cluster.nodes();
  for (const n of nodes) {
    assert.is(n.state, 'ALIVE', n.name);
    assert.is(n.resources.available.CPU, CPUS - groups.length, `${n.name}: one bundle of each group held, once`);
  }
  assert.equal(trouble.slice(seen), [], 'no node dead');
  await Promise.all(groups.map((pg) => pg.remove()));
  await until(
    'every CPU given back',
    async () => ((await cluster.nodes()).every((n) => n.resources.available.CPU === CPUS && Object.keys(n.resources.total).length === 1) ? true : undefined),
    WAIT_MS,
  );
});

test.run();
