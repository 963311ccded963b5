import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { seededRng } from '../../../lib/random.ts';
import { encode } from '../../../protocols/codec.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { GcsService } from '../../../runtime/gcs/service.ts';
import { rayletConfig } from '../../../runtime/raylet/config.ts';
import { RayletService } from '../../../runtime/raylet/service.ts';
import { Farm, realNow } from '../../../bench/sim/farm.ts';
import { nodeSpec } from '../../../bench/sim/workload.ts';
import { until } from '../../helpers/until.ts';

// A raylet that joins a cluster whose view is larger than one message reads the view snapshot in
// pages (gcs.view_snapshot with a cursor) and ends with every node. Before, the snapshot was one
// reply, refused as too large past about 11,000 actors at the 1 MiB limit: the raylet never had a
// view. Here the GCS's limit is 16 KiB, so a few hundred actors are enough.

test('a raylet joining reads a view larger than one message in pages and has every node', async () => {
  const broker = new MemoryBroker();
  const s = subjects('spec');
  const gcs = new GcsService({ bus: connectMemoryBus(broker), cluster: 'spec', maxMessageBytes: 16 * 1024, nodeTimeoutMs: 600_000 });
  await gcs.start();
  const farm = new Farm({ bus: connectMemoryBus(broker), subjects: s, rng: seededRng(3), now: () => 0, realNow });
  const driver = connectMemoryBus(broker);
  let raylet: RayletService | undefined;
  try {
    for (let i = 0; i < 4; i++) await farm.join({ ...nodeSpec(i, seededRng(i)), taints: {} });
    for (let i = 0; i < 300; i++) {
      const reply = await driver.request(s.gcs('register_actor'), encode('register_actor', {
        actorId: `a${i}`, code: { moduleUrl: 'file:///spec/actor.js', className: 'A', args: [] }, namespace: 'spec',
        options: { labels: { app: `service-${i % 9}`, tier: 'backend' }, labelSelector: { type: 'in(cpu,gpu)' } },
      }), { timeoutMs: 5000 });
      decodeReply(reply.data, { value: unknown() });
    }
    await until('300 actors running on the simulated nodes', () => ([...farm.nodes.values()].reduce((n, node) => n + node.actors.size, 0) === 300 ? true : undefined));
    assert.ok(gcs.view.snapshot().upserts.length === 4);

    const config = rayletConfig({ cluster: 'spec', nodeName: 'joiner', labels: {}, taints: {}, resources: { CPU: 1 } });
    raylet = new RayletService({ bus: connectMemoryBus(broker), config, hosts: { mode: 'inline' }, log: () => {}, followView: 'always' });
    await raylet.start();
    const view = await until('the joiner’s view of all five nodes', () => {
      const v = raylet!.stats().view;
      return v.nodes === 5 ? v : undefined;
    });
    assert.ok(view.snapshots >= 1, 'it read a snapshot');
    assert.ok(view.version >= gcs.view.version - 1, `its view is current (${view.version} of ${gcs.view.version})`);
  } finally {
    await raylet?.stop();
    await gcs.stop();
  }
});

test.run();
