// `orrery up CONFIG` / `orrery down CONFIG` as users run them (a process per command) on a
// nats-server this spec starts: up starts the GCS and the autoscaler process, which launches the
// minWorkers nodes with the local provider; status shows the autoscaler's sections; down stops
// everything up started. Bad configs are one line naming the field.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from '../../runtime/index.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';
import { orrery } from '../runtime/cli/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'orrery-cli-autoscaler-'));
let server: NatsServerHandle;
let env: NodeJS.ProcessEnv;
const config = join(dir, 'cluster.yaml');

test.before(async () => {
  server = await startNatsServer();
  env = { ORRERY_ADDRESS: server.url, ORRERY_RUN_DIR: join(dir, 'run') };
  writeFileSync(
    config,
    `cluster: default
provider: { type: local }
idleTimeoutSeconds: 3600
updateIntervalSeconds: 0.3
nodeTypes:
  cpu: { resources: { CPU: 1 }, labels: { type: cpu }, minWorkers: 1, maxWorkers: 2 }
  gpu: { resources: { CPU: 1, GPU: 1 }, taints: { gpu_node: "true" }, minWorkers: 0, maxWorkers: 1 }
`,
  );
});

test.after(async () => {
  await orrery(['down', config], env);
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('up starts the GCS (with the GCS settings given) and the autoscaler, waits for the minWorkers nodes; status shows the autoscaler; down stops it all', async () => {
  const upped = await orrery(['up', config, '--node-timeout-ms', '4000'], env);
  assert.is(upped.code, 0, upped.stderr);
  const gcsPid = Number(/Started the GCS of cluster "default" \(pid (\d+)\)/.exec(upped.stdout)?.[1]);
  assert.ok(gcsPid > 0, upped.stdout);
  assert.match(readFileSync(`/proc/${gcsPid}/cmdline`, 'utf8').split('\0').join(' '), / --node-timeout-ms 4000( |$)/, 'the GCS was started with the setting');
  assert.match(upped.stdout, /Started the autoscaler \(pid \d+, local provider\): node types cpu \(1-2\), gpu \(0-1\)/);
  assert.match(upped.stdout, /minWorkers: cpu 1\/1/);
  const client = await connect({ address: server.url });
  try {
    const nodes = await client.nodes();
    assert.is(nodes.length, 1);
    assert.match(nodes[0].name, /^default-cpu-[0-9a-f]{6}$/);
    assert.equal(nodes[0].labels.type, 'cpu');
    assert.is(nodes[0].labels['orrery.io/node-group'], 'cpu');
    const status = await until('status with the autoscaler section', async () => {
      const s = await orrery(['status'], env);
      return /cpu/.test(s.stdout) && /Autoscaler/.test(s.stdout) && !/Autoscaler: not running/.test(s.stdout) ? s : undefined;
    });
    assert.is(status.code, 0, status.stderr);
    const again = await orrery(['up', config], env);
    assert.is(again.code, 1);
    assert.match(again.stderr, /an autoscaler for cluster "default" already runs .*\[AUTOSCALER_RUNNING\]/);
  } finally {
    await client.close();
  }
  const downed = await orrery(['down', config], env);
  assert.is(downed.code, 0, downed.stderr);
  assert.match(downed.stdout, /stopped autoscaler \(pid \d+\)/);
  assert.match(downed.stdout, /terminated node default-cpu-[0-9a-f]{6} \(cpu\)/);
  assert.match(downed.stdout, /stopped gcs \(pid \d+\)/);
  const status = await orrery(['status'], env);
  assert.is(status.code, 1, 'no GCS answers any more');
});

test('a bad config is one line naming the file and the field, and nothing starts', async () => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'nodeTypes:\n  cpu: { resources: { CPU: 1 }, minWorkers: 3, maxWorkers: 2 }\n');
  const r = await orrery(['up', bad], env);
  assert.is(r.code, 2);
  assert.is(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /bad\.yaml: nodeTypes\.cpu\.maxWorkers: must be at least minWorkers \(2 < 3\)/);
  const missing = await orrery(['up'], env);
  assert.is(missing.code, 2);
  assert.match(missing.stderr, /up: missing the cluster config file/);
});

test.run();
