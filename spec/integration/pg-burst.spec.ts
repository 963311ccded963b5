// A burst of placement groups on real processes (nats-server, a GCS process, two raylet processes):
// 10,000 one-bundle groups asked for at once, as a driver that builds its groups in a loop does.
//
// Before the fix this spec came with, every commit and cancel on a raylet counted the names of the
// node's resources (`Leases.refresh`), and a node holding thousands of bundles has thousands of
// names: past ~6,000 groups both raylets spent their whole CPU there, missed their heartbeats, were
// declared DEAD, and the groups they held went RESCHEDULING — the cluster never recovered from the
// burst (7,000 groups: 1,686 never CREATED; 10,000: 7,040). Here every group becomes CREATED, no
// node dies, and removing them all gives every unit back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Subscription } from 'rxjs';
import { startLocalCluster, type ClusterEvent, type LocalCluster, type NodeInfo, type PlacementGroup } from '../../runtime/index.ts';
import { until } from '../helpers/until.ts';

const GROUPS = 10_000;
const CPUS = 20_000;
const WAIT_MS = 180_000;

const isBundleResource = (name: string): boolean => name.includes('_group_');

test(`${GROUPS.toLocaleString('en-US')} groups asked for at once all become CREATED, no node is declared dead, and removing them gives everything back`, async () => {
  let local: LocalCluster | undefined;
  let watching: Subscription | undefined;
  try {
    local = await startLocalCluster({
      transport: 'nats',
      nodes: [
        { name: 'burst-a', resources: { CPU: CPUS } },
        { name: 'burst-b', resources: { CPU: CPUS } },
      ],
    });
    const { cluster } = local;
    const trouble: ClusterEvent[] = [];
    watching = cluster.events$.subscribe((e) => {
      if (e.type === 'node_dead' || e.type === 'gcs_leader') trouble.push(e);
    });

    const groups: PlacementGroup[] = await Promise.all(
      Array.from({ length: GROUPS }, (_, i) => cluster.placementGroup({ bundles: [{ CPU: 1 }], strategy: i % 2 === 0 ? 'PACK' : 'SPREAD' })),
    );
    const created = await Promise.all(groups.map((pg) => pg.ready({ timeoutMs: WAIT_MS })));
    assert.ok(
      created.every((g) => g.state === 'CREATED' && g.bundles.length === 1 && g.bundles[0]!.nodeId !== undefined),
      'every group CREATED with its bundle on a node',
    );

    const nodes: NodeInfo[] = await cluster.nodes();
    assert.equal(nodes.map((n) => n.state), ['ALIVE', 'ALIVE']);
    const cpuLeft = nodes.reduce((sum, n) => sum + (n.resources.available.CPU ?? 0), 0);
    assert.is(cpuLeft, 2 * CPUS - GROUPS, 'each bundle holds one CPU of its node');
    const bundleNames = nodes.reduce((sum, n) => sum + Object.keys(n.resources.total).filter(isBundleResource).length, 0);
    assert.is(bundleNames, 2 * GROUPS, "each committed bundle adds its two bundle resources (the group's and the bundle's) to its node");

    await Promise.all(groups.map((pg) => pg.remove()));
    const settled = await until(
      'every unit given back on both nodes',
      async () => {
        const now = await cluster.nodes();
        const back = now.every((n) => n.resources.available.CPU === CPUS && !Object.keys(n.resources.total).some(isBundleResource));
        return back ? now : undefined;
      },
      WAIT_MS,
    );
    assert.equal(settled.map((n) => n.state), ['ALIVE', 'ALIVE']);
    assert.equal(
      (await cluster.placementGroups()).filter((g) => g.state !== 'REMOVED').map((g) => g.id),
      [],
      'every group REMOVED',
    );
    assert.equal(trouble, [], 'no node declared dead and no GCS taking over during the burst');
  } finally {
    watching?.unsubscribe();
    await local?.stop();
  }
});

test.run();
