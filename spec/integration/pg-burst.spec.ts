// Placement groups at scale on real processes (a nats-server with JetStream, a GCS process, two
// raylet processes), five cases: 10,000 one-bundle groups asked for at once, as a driver that builds
// its groups in a loop does, all on one node — which then holds 20,000 bundle resource names — with
// a GCS SIGKILL and restart; one SPREAD group of 10,000 bundles; and a GCS SIGKILLed while it ends a
// finished job's 10,000 groups (a job's end is sliced, so it can be cut in the middle).
//
// What broke here before:
// - every commit and cancel on a raylet counted the names of the node's resources
//   (`Leases.refresh`): past ~6,000 groups both raylets spent their whole CPU there, missed their
//   heartbeats, were declared DEAD, and the groups went RESCHEDULING — the cluster never recovered
//   from the burst (7,000 groups: 1,686 never CREATED; 10,000: 7,040);
// - a node holding ~5,000 bundles passes the 1 MiB message limit: `cluster.nodes()` failed
//   TOO_LARGE, setNodeLabels failed TOO_LARGE though the labels were set, the node's events
//   (node_labels_changed, node_dead) were never published, and its record could not be stored, so
//   a restarted GCS had forgotten the labels; after that restart the view's first delta with the
//   node threw TOO_LARGE and the GCS process exited;
// - the GCS summed a group's bundle resources with a copy per bundle (35 s of CPU for 10,000), and
//   SPREAD put all but one of them on one node.
// Then the same burst with the GCS, and then the nats-server, frozen for 3 s in its middle.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Cluster, type ClusterEvent, type NodeEvent, type NodeInfo, type PlacementGroup } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const CLUSTER = 'burst';
const GROUPS = 10_000;
const CPUS = 20_000;
const WAIT_MS = 180_000;

const isBundleResource = (name: string): boolean => name.includes('_group_');
const bundleNames = (n: NodeInfo): number => Object.keys(n.resources.total).filter(isBundleResource).length;

let nats: NatsServerHandle;
let gcs: RuntimeProcess;
const raylets: RuntimeProcess[] = [];
let cluster: Cluster;

const startGcs = (): Promise<RuntimeProcess> => spawnRuntimeProcess('gcs', ['--address', nats.url, '--cluster', CLUSTER, '--grace-ms', '10000']);

test.before(async () => {
  nats = await startNatsServer({ jetstream: true });
  gcs = await startGcs();
  for (const name of ['burst-a', 'burst-b']) {
    raylets.push(await spawnRuntimeProcess('raylet', ['--address', nats.url, '--cluster', CLUSTER, '--node-name', name, '--num-cpus', String(CPUS), '--labels', `burst=${name}`]));
  }
  cluster = await connect({ address: nats.url, cluster: CLUSTER });
  await until('both nodes ALIVE', async () => ((await cluster.nodes()).filter((n) => n.state === 'ALIVE').length === 2 ? true : undefined));
});

test.after(async () => {
  await cluster?.close().catch(() => undefined);
  for (const r of raylets) await r.stop();
  await gcs?.stop();
  await nats?.stop();
});

test(`${GROUPS.toLocaleString('en-US')} groups asked for at once on one node: all CREATED, no node dies, the node is listed, relabelled and remembered across a GCS restart, and removing the groups gives everything back`, async () => {
  const trouble: ClusterEvent[] = [];
  const nodeEvents: NodeEvent[] = [];
  const watching = cluster.events$.subscribe((e) => {
    if (e.type === 'node_dead' || e.type === 'gcs_leader') trouble.push(e);
    if (e.type === 'node_labels_changed') nodeEvents.push(e);
  });
  try {
    const groups: PlacementGroup[] = await Promise.all(
      Array.from({ length: GROUPS }, () => cluster.placementGroup({ bundles: [{ CPU: 1 }], bundleLabelSelector: [{ burst: 'burst-a' }] })),
    );
    const created = await Promise.all(groups.map((pg) => pg.ready({ timeoutMs: WAIT_MS })));
    assert.ok(created.every((g) => g.state === 'CREATED'), 'every group CREATED');

    // every name of the node, though it is larger than a reply (list_nodes sends it in parts)
    const nodes = await cluster.nodes();
    const a = nodes.find((n) => n.name === 'burst-a')!;
    const b = nodes.find((n) => n.name === 'burst-b')!;
    assert.equal([a.state, b.state], ['ALIVE', 'ALIVE']);
    assert.ok(created.every((g) => g.bundles[0]!.nodeId === a.nodeId), 'every bundle on burst-a, as its selector asks');
    assert.is(bundleNames(a), 2 * GROUPS, "each committed bundle adds two names (the group's and the bundle's)");
    assert.is(a.resources.available.CPU, CPUS - GROUPS);
    assert.is(a.bundleResourcesOmitted, undefined, 'the list leaves nothing out');

    // a label change: made, answered and announced, the node without its 20,000 bundle names
    const relabelled = await cluster.setNodeLabels(a.nodeId, { set: { tier: 'gold' } });
    assert.is(relabelled.labels.tier, 'gold');
    assert.is(relabelled.bundleResourcesOmitted, 2 * GROUPS);
    assert.equal(relabelled.resources.total, { CPU: CPUS });
    const announced = await until('the node_labels_changed event', () => nodeEvents.find((e) => e.node.nodeId === a.nodeId));
    assert.is(announced.node.labels.tier, 'gold');
    assert.is(announced.node.bundleResourcesOmitted, 2 * GROUPS);

    // the node's record was stored: a GCS killed and started again still has the label
    await gcs.crash();
    gcs = await startGcs();
    const after = await until('the restarted GCS to list burst-a ALIVE with its bundles', async () => {
      const n = (await cluster.nodes()).find((x) => x.nodeId === a.nodeId);
      return n?.state === 'ALIVE' && bundleNames(n) === 2 * GROUPS ? n : undefined;
    }, WAIT_MS);
    assert.is(after.labels.tier, 'gold', 'the label set before the restart');
    assert.ok((await Promise.all(groups.slice(0, 100).map((pg) => pg.info()))).every((g) => g.state === 'CREATED'), 'groups kept across the restart');
    trouble.splice(0, trouble.findIndex((e) => e.type === 'gcs_leader') + 1); // the restart's own announcement

    await Promise.all(groups.map((pg) => pg.remove()));
    const settled = await until(
      'every unit given back on both nodes',
      async () => {
        const now = await cluster.nodes();
        return now.every((n) => n.resources.available.CPU === CPUS && bundleNames(n) === 0) ? now : undefined;
      },
      WAIT_MS,
    );
    assert.equal(settled.map((n) => n.state), ['ALIVE', 'ALIVE']);
    assert.equal((await cluster.placementGroups()).filter((g) => g.state !== 'REMOVED').map((g) => g.id), [], 'every group REMOVED');
    assert.equal(trouble, [], 'no node declared dead and no GCS taking over but the restart');
  } finally {
    watching.unsubscribe();
  }
});

test('one SPREAD group of 10,000 bundles over the two nodes: CREATED with 5,000 on each, and removing it gives everything back', async () => {
  // 5,000 bundles per node travel as prepare, commit and cancel requests of 2,000 at most; before,
  // the GCS summed the group's bundle resources with a copy per bundle (35 s of CPU for 10,000), and
  // SPREAD put all but one bundle on one node
  const pg = await cluster.placementGroup({ bundles: Array.from({ length: GROUPS }, () => ({ CPU: 1 })), strategy: 'SPREAD' });
  const info = await pg.ready({ timeoutMs: WAIT_MS });
  const perNode = new Map<string, number>();
  for (const b of info.bundles) perNode.set(b.nodeId!, (perNode.get(b.nodeId!) ?? 0) + 1);
  assert.equal([...perNode.values()], [GROUPS / 2, GROUPS / 2]);
  const nodes = await cluster.nodes();
  for (const n of nodes) {
    assert.is(n.resources.available.CPU, CPUS - GROUPS / 2, n.name);
    assert.is(n.resources.total[`CPU_group_${pg.id}`], GROUPS / 2, `${n.name}: the group's bundles there`);
  }
  await pg.remove();
  await until(
    'every unit given back',
    async () => ((await cluster.nodes()).every((n) => n.resources.available.CPU === CPUS && bundleNames(n) === 0) ? true : undefined),
    WAIT_MS,
  );
});

test("the GCS killed while it ends a finished job's 10,000 groups: the GCS started again ends the rest, and every unit comes back", async () => {
  // a job's end is sliced (5 ms at a time, so heartbeats are answered meanwhile): it takes long
  // enough to be cut in the middle, and the job's end is stored before the groups go
  const owner = await connect({ address: nats.url, cluster: CLUSTER });
  const groups = await Promise.all(Array.from({ length: GROUPS }, () => owner.placementGroup({ bundles: [{ CPU: 1 }] })));
  await Promise.all(groups.map((pg) => pg.ready({ timeoutMs: WAIT_MS })));
  const ids = new Set(groups.map((pg) => pg.id));
  let removedBefore = 0;
  let crashing: Promise<void> | undefined;
  const watching = cluster.events$.subscribe((e) => {
    if (e.type !== 'placement_group_state' || e.placementGroup.state !== 'REMOVED' || !ids.has(e.placementGroup.id)) return;
    removedBefore++;
    crashing ??= gcs.crash(); // at the first group the job's end removed
  });
  try {
    const closing = owner.close().then(
      () => 'closed',
      (err: unknown) => `failed: ${String(err)}`,
    );
    await until('the job end to begin', () => (crashing === undefined ? undefined : true), WAIT_MS);
    await crashing;
    watching.unsubscribe();
    assert.ok(removedBefore < GROUPS, `cut in the middle: ${removedBefore} of ${GROUPS} removed before the kill`);
    gcs = await startGcs();
    // REMOVED, or already forgotten: the GCS keeps the newest 10,000 REMOVED groups, and the tests
    // above removed 10,001 before these
    await until(
      "every one of the job's groups REMOVED by the GCS started again",
      async () => ((await cluster.placementGroups()).every((g) => !ids.has(g.id) || g.state === 'REMOVED') ? true : undefined),
      WAIT_MS,
    );
    await until('every unit given back', async () => ((await cluster.nodes()).every((n) => n.resources.available.CPU === CPUS && bundleNames(n) === 0) ? true : undefined), WAIT_MS);
    assert.is(await closing, 'closed', "the driver's close() ends once the job has");
    // what the raylets hold, not only what the GCS counts: a group as large as a node fits on each.
    // Before, the restarted GCS placing again a group of the finished job threw (the job had
    // finished) out of its reconciliation: every group after it stayed unrestored and leased on
    // the raylets for good, and such a group waited forever
    for (const n of await cluster.nodes()) {
      const whole = await cluster.placementGroup({ bundles: [{ CPU: CPUS }], bundleLabelSelector: [{ 'orrery.io/node-id': n.nodeId }] });
      const info = await whole.ready({ timeoutMs: 60_000 }).catch(async (err: unknown) => `${String(err)}: ${JSON.stringify(await whole.info())}`);
      await whole.remove();
      assert.is(typeof info === 'string' ? info : info.state, 'CREATED', `${n.name} holds nothing left over`);
    }
  } finally {
    watching.unsubscribe();
    await owner.close().catch(() => undefined);
  }
});

/**
 * 10,000 two-bundle SPREAD groups at once, with `frozen`'s process stopped (SIGSTOP) for 3 s once
 * 1,000 are CREATED: every group CREATED, no node declared dead, and once they are removed every
 * unit is free again in the GCS's count. (What the raylets hold is checked after the job-end case,
 * where a leak was found: see there.)
 *
 * "No node declared dead" is read from the GCS's own event history as well as from the events the
 * driver heard: a GCS that thawed used to declare both nodes DEAD (their heartbeat timers fired
 * before it read the heartbeats waiting on its socket) while its lease had lapsed, so the node_dead
 * events were recorded but never published — and the raylets then dropped every bundle they held.
 * `spread`: whether every group must have its two bundles on two nodes — the GCS freeze keeps no
 * node out (its own fence refusing a prepare used to mark the node unreachable, and 130–430 groups
 * got both bundles on the other); a nats-server freeze times requests out, which rightly keeps a node
 * out for a moment, so there SPREAD stays a preference.
 */
async function burstThroughAFreeze(frozen: () => number, spread: boolean): Promise<void> {
  const since = (await cluster.recentEvents({ limit: 1 })).lastSeq;
  const trouble: ClusterEvent[] = [];
  let created = 0;
  let thawed: Promise<void> | undefined;
  const watching = cluster.events$.subscribe((e) => {
    if (e.type === 'node_dead') trouble.push(e);
    if (e.type !== 'placement_group_state' || e.placementGroup.state !== 'CREATED' || ++created !== 1_000) return;
    const pid = frozen();
    process.kill(pid, 'SIGSTOP');
    thawed = new Promise((resolve) => setTimeout(() => resolve(void process.kill(pid, 'SIGCONT')), 3_000));
  });
  let groups: PlacementGroup[] = [];
  try {
    groups = await Promise.all(Array.from({ length: GROUPS }, () => cluster.placementGroup({ bundles: [{ CPU: 1 }, { CPU: 1 }], strategy: 'SPREAD' })));
    const infos = await Promise.all(groups.map((pg) => pg.ready({ timeoutMs: WAIT_MS })));
    assert.ok(thawed !== undefined, 'frozen in the middle of the burst');
    await thawed;
    assert.ok(infos.every((g) => g.state === 'CREATED'), 'every group CREATED');
    const nodes = await cluster.nodes();
    assert.is(nodes.reduce((sum, n) => sum + n.resources.available.CPU, 0), 2 * (CPUS - GROUPS), 'two units per group taken, no more');
    if (spread) assert.is(infos.filter((g) => g.bundles[0]!.nodeId === g.bundles[1]!.nodeId).length, 0, 'SPREAD kept: no group with both bundles on one node');
    await Promise.all(groups.map((pg) => pg.remove()));
    groups = [];
    await until('every unit given back', async () => ((await cluster.nodes()).every((n) => n.resources.available.CPU === CPUS && bundleNames(n) === 0) ? true : undefined), WAIT_MS);
    assert.equal(trouble, [], 'no node declared dead');
    assert.equal((await cluster.recentEvents({ types: ['node_dead'], afterSeq: since })).events, [], 'none in the GCS\'s own history either');
  } finally {
    watching.unsubscribe();
    // a failed case leaves nothing behind for the next
    await Promise.all(groups.map((pg) => pg.remove().catch(() => undefined)));
  }
}

test('the GCS frozen (SIGSTOP) for 3 s in the middle of 10,000 groups asked for at once: all CREATED, no node dead, every unit given back', () => burstThroughAFreeze(() => gcs.pid, true));

test('the nats-server frozen (SIGSTOP) for 3 s in the middle of 10,000 groups asked for at once: all CREATED, no node dead, every unit given back', () => burstThroughAFreeze(() => nats.pid, false));

test.run();
