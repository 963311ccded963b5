// The code store's replicas (runtime/bus/nats-obj.ts): three on a NATS cluster of three JetStream
// servers, so losing one loses no shipped code; one on a lone server. A driver's shipper makes the
// bucket on its first upload; a reader on another server of the cluster gets the bundle back.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeBundle } from '../../protocols/code-bundle.ts';
import { parseShippedCode } from '../../protocols/code-source.ts';
import { codeBucketName, codeStreamName } from '../../protocols/code-store.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { CodeShipper } from '../../runtime/code/shipper.ts';
import { startNatsCluster, startNatsServer } from '../helpers/nats-server.ts';

const work = mkdtempSync(join(tmpdir(), 'orrery-code-replicas-'));
writeFileSync(join(work, 'mod.mjs'), 'export class M {}\n');
const moduleUrl = pathToFileURL(join(work, 'mod.mjs')).href;

async function replicasOf(url: string): Promise<number> {
  const nc = await natsConnect({ servers: url });
  try {
    return (await (await jetstreamManager(nc)).streams.info(codeStreamName('default'))).config.num_replicas;
  } finally {
    await nc.close();
  }
}

test('on three clustered JetStream servers the code store has three replicas, and another server serves the bundle', async () => {
  const cluster = await startNatsCluster({ size: 3 });
  try {
    const writer = await connectNatsBus({ servers: cluster.servers[0].url });
    const reader = await connectNatsBus({ servers: cluster.servers[2].url });
    try {
      const shipped = parseShippedCode(await new CodeShipper({ bus: writer, cluster: 'default' }).codeUrl(moduleUrl));
      assert.ok(shipped, 'shipped');
      assert.is(await replicasOf(cluster.servers[1].url), 3);
      const bucket = await reader.objectBucket!(codeBucketName('default'), { create: false });
      const bytes = await bucket!.get(shipped!.hash);
      assert.equal(decodeBundle(shipped!.hash, bytes!).map((f) => f.path), ['mod.mjs']);
    } finally {
      await writer.close();
      await reader.close();
    }
  } finally {
    await cluster.stop();
  }
});

test('on a lone server it has one; without JetStream the file: URL is sent as it is', async () => {
  const lone = await startNatsServer({ jetstream: true });
  const plain = await startNatsServer();
  try {
    const bus = await connectNatsBus({ servers: lone.url });
    const noJs = await connectNatsBus({ servers: plain.url });
    try {
      assert.ok(parseShippedCode(await new CodeShipper({ bus, cluster: 'default' }).codeUrl(moduleUrl)));
      assert.is(await replicasOf(lone.url), 1);
      assert.is(await new CodeShipper({ bus: noJs, cluster: 'default' }).codeUrl(moduleUrl), moduleUrl);
    } finally {
      await bus.close();
      await noJs.close();
    }
  } finally {
    await lone.stop();
    await plain.stop();
  }
});

test.after(() => rmSync(work, { recursive: true, force: true }));
test.run();
