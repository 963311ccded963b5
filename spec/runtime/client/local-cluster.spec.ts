// startLocalCluster's choices that need no running cluster: the default transport, a missing
// nats-server binary, bad node specs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NatsServerMissingError, startLocalCluster } from '../../../runtime/index.ts';
import { rayletFlags, resolveNodeSpec } from '../../../runtime/local/node-spec.ts';

test('without nats-server the default transport is memory, and asking for nats names the fix', async () => {
  const saved = process.env.NATS_SERVER_BIN;
  process.env.NATS_SERVER_BIN = '/nonexistent/nats-server';
  try {
    const local = await startLocalCluster({ nodes: [{}] });
    assert.is(local.transport, 'memory');
    await local.stop();
    const err = await startLocalCluster({ transport: 'nats', nodes: [{}] }).catch((e: unknown) => e);
    assert.instance(err, NatsServerMissingError);
    assert.is((err as NatsServerMissingError).code, 'NATS_SERVER_MISSING');
    assert.match((err as Error).message, /apt-get install -y nats-server/);
    assert.match((err as Error).message, /NATS_SERVER_BIN/);
  } finally {
    if (saved === undefined) delete process.env.NATS_SERVER_BIN;
    else process.env.NATS_SERVER_BIN = saved;
  }
});

test('bad node specs and options fail before anything starts', async () => {
  const cases: [unknown, RegExp][] = [
    [{ nodes: 'two' }, /nodes/],
    [{ transport: 'carrier-pigeon', nodes: [] }, /transport/],
    [{ transport: 'memory', address: 'nats://x:1', nodes: [] }, /address.*nats/],
    [{ transport: 'memory', nodes: [{ resources: { CPU: -1 } }] }, /CPU/],
    [{ transport: 'memory', nodes: [{ labels: { 'orrery.io/node-id': 'x' } }] }, /orrery\.io/],
    [{ transport: 'memory', nodes: [{ taints: { gpu: 'true:Often' } }] }, /effect/],
  ];
  for (const [opts, pattern] of cases) {
    const err = await startLocalCluster(opts as never).catch((e: unknown) => e);
    assert.instance(err, Error, JSON.stringify(opts));
    assert.match((err as Error).message, pattern);
  }
});

test('a node spec gets a name and one CPU unless given, and becomes raylet flags', () => {
  const plain = resolveNodeSpec({}, 'node-3');
  assert.equal(plain, { name: 'node-3', resources: { CPU: 1 }, labels: {}, taints: {} });
  assert.equal(rayletFlags(plain), ['--node-name', 'node-3', '--num-cpus', '1']);
  const full = resolveNodeSpec({ name: 'g', resources: { CPU: 4, GPU: 2, disk: 1.5 }, labels: { a: 'b', c: 'd' }, taints: { gpu: 'true:NoExecute' } }, 'x');
  assert.equal(rayletFlags(full), [
    '--node-name', 'g', '--num-cpus', '4', '--num-gpus', '2', '--resources', '{"disk":1.5}', '--labels', 'a=b,c=d', '--taints', 'gpu=true:NoExecute',
  ]);
});

test.run();
