// The orrery command as users run it: a separate process per command. Bad flags exit non-zero with
// one stderr line naming the flag; `start` runs a head and a worker node in the background on a
// nats-server this spec starts, `list` and `status` report them, `stop` ends them.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isRunning } from '../../runtime/local/process-tree.ts';
import { connect, type Cluster, type NodeInfo } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

const MAIN = fileURLToPath(new URL('../../runtime/cli/main.ts', import.meta.url));
const runDir = mkdtempSync(join(tmpdir(), 'orrery-cli-run-'));

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function orrery(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, MAIN, ...args], {
      env: { ...process.env, ORRERY_ADDRESS: '', ORRERY_RUN_DIR: runDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (text: string): string[] => text.split('\n').filter((l) => l.length > 0);

const badFlags: [string[], RegExp][] = [
  [['start', '--head', '--num-cpus', 'lots'], /--num-cpus/],
  [['start', '--head', '--labels', 'bad label=x'], /--labels/],
  [['start', '--head', '--resources', 'GPU=1'], /--resources/],
  [['start', '--head', '--taints', 'k=v:Never'], /--taints/],
  [['start', '--head', '--bogus'], /--bogus/],
  [['list', 'nodes', '--address', 'nats://'], /--address/],
];

for (const [args, flag] of badFlags) {
  test(`orrery ${args.join(' ')} → one line naming the flag, non-zero exit`, async () => {
    const r = await orrery(args);
    assert.is.not(r.code, 0);
    assert.is(r.stdout, '');
    assert.is(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, flag);
  });
}

test('an unreachable address is one line naming it', async () => {
  const r = await orrery(['status'], { ORRERY_ADDRESS: 'nats://127.0.0.1:9' });
  assert.is(r.code, 1);
  assert.is(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /nats:\/\/127\.0\.0\.1:9/);
});

let server: NatsServerHandle;
let client: Cluster | undefined;
test.after(async () => {
  await client?.close();
  await orrery(['stop']);
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

test('start --head and start --address run a cluster in the background; list, status and stop work on it', async () => {
  server = await startNatsServer();
  const head = await orrery(['start', '--head', '--address', server.url, '--node-name', 'head', '--num-cpus', '2', '--labels', 'region=us']);
  assert.is(head.code, 0, head.stderr);
  assert.match(head.stdout, new RegExp(`orrery start --address ${server.url.replace(/[.]/g, '\\.')}`));
  const again = await orrery(['start', '--head', '--address', server.url]);
  assert.is(again.code, 1, 'a second head for the same cluster is refused');
  assert.match(again.stderr, /a GCS already serves cluster "default"/);
  const worker = await orrery(['start', '--node-name', 'worker', '--taints', 'gpu=true', '--num-gpus', '1'], { ORRERY_ADDRESS: server.url });
  assert.is(worker.code, 0, worker.stderr);

  const list = await orrery(['list', 'nodes', '--json', '--address', server.url]);
  assert.is(list.code, 0, list.stderr);
  const nodes = (JSON.parse(list.stdout) as NodeInfo[]).sort((a, b) => a.name.localeCompare(b.name));
  assert.equal(nodes.map((n) => n.name), ['head', 'worker']);
  assert.is(nodes[0].labels.region, 'us');
  assert.equal(nodes[0].resources.total, { CPU: 2 });
  assert.is(nodes[1].taints.gpu, 'true');
  assert.is(nodes[1].resources.total.GPU, 1);

  client = await connect({ address: server.url });
  const pending = await client.actor(CounterActor).options({ labelSelector: { region: 'eu' }, name: 'waiting' }).remote();
  const placed = await client.actor(CounterActor).options({ numCpus: 1 }).remote();
  await placed.ready({ timeoutMs: 20_000 });
  await pending.info();

  const status = await orrery(['status'], { ORRERY_ADDRESS: server.url });
  assert.is(status.code, 0, status.stderr);
  assert.match(status.stdout, /Nodes: 2 \(2 alive\)/);
  assert.match(status.stdout, /labels: .*region=us/);
  assert.match(status.stdout, /taints: gpu=true/);
  assert.match(status.stdout, /resources: CPU 1\/2/);
  assert.match(status.stdout, new RegExp(`Counter ${pending.actorId} \\(default/waiting\\): 0/2 nodes are available: .*2 node\\(s\\) didn't match label selector region in \\(eu\\)`));

  const actors = await orrery(['list', 'actors', '--address', server.url]);
  assert.is(actors.code, 0, actors.stderr);
  assert.match(actors.stdout, /ACTOR_ID\s+CLASS\s+NAME\s+STATE/);
  assert.match(actors.stdout, new RegExp(`${placed.actorId}\\s+Counter\\s+-\\s+ALIVE`));
  await client.close();
  client = undefined;

  const recorded = (JSON.parse(readFileSync(join(runDir, 'processes.json'), 'utf8')) as { processes: { pid: number; role: string }[] }).processes;
  assert.equal(recorded.map((p) => p.role).sort(), ['gcs', 'raylet', 'raylet']);
  const stop = await orrery(['stop']);
  assert.is(stop.code, 0, stop.stderr);
  assert.is(lines(stop.stdout).filter((l) => l.startsWith('stopped')).length, 3, stop.stdout);
  for (const p of recorded) assert.not.ok(isRunning(p.pid), `${p.role} ${p.pid} stopped`);
  const after = await orrery(['list', 'nodes', '--address', server.url]);
  assert.is(after.code, 1);
  assert.match(after.stderr, /no GCS answers for cluster "default"/);
});

test('start --head --block runs in the foreground until SIGTERM, then stops what it started', async () => {
  const child = spawn(process.execPath, [...process.execArgv, MAIN, 'start', '--head', '--block', '--cluster', 'blocking', '--node-name', 'fg'], {
    env: { ...process.env, ORRERY_ADDRESS: server.url, ORRERY_RUN_DIR: runDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('Drivers connect with')) resolve();
    });
    void exited.then(() => reject(new Error(`exited before it was ready: ${stdout}`)));
  });
  assert.match(stdout, /orrery start --address \S+ --cluster blocking/);
  const list = await orrery(['list', 'nodes', '--json', '--cluster', 'blocking'], { ORRERY_ADDRESS: server.url });
  assert.equal((JSON.parse(list.stdout) as NodeInfo[]).map((n) => n.name), ['fg']);
  assert.equal(readFileSync(join(runDir, 'processes.json'), 'utf8').includes('blocking'), false, 'nothing recorded for orrery stop');
  child.kill('SIGTERM');
  assert.is(await exited, 0);
  const after = await orrery(['list', 'nodes', '--cluster', 'blocking'], { ORRERY_ADDRESS: server.url });
  assert.match(after.stderr, /no GCS answers for cluster "blocking"/);
});

test.run();
