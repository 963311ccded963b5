// The orrery command as users run it: a separate process per command. Bad flags exit non-zero with
// one stderr line naming the flag; `start` runs a head and a worker node in the background on a
// nats-server this spec starts, `list` and `status` report them, `stop` ends them.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { labelValueProblem } from '../../lib/labels/validate.ts';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isRunning } from '../../runtime/local/process-tree.ts';
import { connect, type Cluster, type NodeInfo } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { ORRERY_MAIN, runOrrery, type CliResult } from '../helpers/orrery-cli.ts';
import { freePort, startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { RunningCli } from '../runtime/cli/process.ts';
import { until } from '../helpers/until.ts';

const runDir = mkdtempSync(join(tmpdir(), 'orrery-cli-run-'));

function orrery(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runOrrery(args, { ORRERY_ADDRESS: '', ORRERY_RUN_DIR: runDir, ...env });
}

const lines = (text: string): string[] => text.split('\n').filter((l) => l.length > 0);

const badFlags: [string[], RegExp][] = [
  [['start', '--head', '--num-cpus', 'lots'], /--num-cpus/],
  [['start', '--head', '--labels', 'bad label=x'], /--labels/],
  [['start', '--head', '--resources', 'GPU=1'], /--resources/],
  [['start', '--head', '--taints', 'k=v:Never'], /--taints/],
  [['start', '--head', '--bogus'], /--bogus/],
  [['start', '--address', 'nats://127.0.0.1:9', '--connect-wait', 'a while'], /^orrery: start: --connect-wait: expected seconds from 0 to 86400, got "a while" \[USAGE\]/],
  [['list', 'nodes', '--address', 'nats://'], /--address/],
  [['explain', '--options', '{nope'], /--options is not JSON/],
  [['explain', '--options', '[1]'], /--options must be a JSON object/],
  [['explain'], /--options .* --placement-group/],
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
  // this spec's nats-server runs without JetStream, so the GCS keeps its tables in memory, with no lease
  assert.match(status.stdout, /^GCS: serving \(no leader lease\)$/m);
  assert.match(status.stdout, /Nodes: 2 \(2 ALIVE\)/);
  assert.match(status.stdout, /Actors: 2 \((1 ALIVE, 1 PENDING|1 PENDING, 1 ALIVE)\)/);
  // this spec's client is a job; the status command's own connection is not one
  assert.match(status.stdout, /^Jobs: 1 \(1 RUNNING\)$/m);
  // the usage line is the sum over the nodes' own figures
  const now = JSON.parse((await orrery(['list', 'nodes', '--json', '--address', server.url])).stdout) as NodeInfo[];
  const sum = (pick: (n: NodeInfo) => Record<string, number>, name: string) => now.reduce((t, n) => t + (pick(n)[name] ?? 0), 0);
  const used = (name: string) => sum((n) => n.resources.total, name) - sum((n) => n.resources.available, name);
  assert.match(status.stdout, new RegExp(`^Usage: CPU ${used('CPU')}/${sum((n) => n.resources.total, 'CPU')}, GPU ${used('GPU')}/${sum((n) => n.resources.total, 'GPU')}`, 'm'));
  assert.match(status.stdout, /labels: .*region=us/);
  assert.match(status.stdout, /taints: gpu=true/);
  assert.match(status.stdout, /resources: CPU 1\/2/);
  assert.match(status.stdout, new RegExp(`Counter ${pending.actorId} \\(default/waiting\\): 0/2 nodes are available: .*2 node\\(s\\) didn't match label selector region in \\(eu\\)`));

  // explain: a dry run of the GCS's scheduler, node by node; nothing created
  const before = (await client.actors()).length;
  const explained = await orrery(['explain', '--options', '{"numCpus":1,"labelSelector":{"region":"us"}}'], { ORRERY_ADDRESS: server.url });
  assert.is(explained.code, 0, explained.stderr);
  assert.match(explained.stdout, /^would be placed on head \(\S+\), by its labelSelector/);
  assert.match(explained.stdout, /worker \(\S+\): didn't match label selector region in \(us\)/);
  const nowhere = await orrery(['explain', '--json', '--options', '{"labelSelector":{"region":"eu"}}'], { ORRERY_ADDRESS: server.url });
  assert.is(nowhere.code, 0, nowhere.stderr);
  const dry = JSON.parse(nowhere.stdout) as { decision: string; failure: { message: string } };
  assert.is(dry.decision, 'unschedulable');
  assert.is(dry.failure.message, (await pending.info()).pendingReason, 'the reason the pending actor with these options carries');
  const misspelt = await orrery(['explain', '--options', '{"numCPUs":1}'], { ORRERY_ADDRESS: server.url });
  assert.is(misspelt.code, 1);
  assert.match(misspelt.stderr, /numCPUs.*\[INVALID_OPTION\]/);
  const group = await orrery(['explain', '--placement-group', '{"bundles":[{"CPU":1}],"strategy":"PACK"}'], { ORRERY_ADDRESS: server.url });
  assert.is(group.code, 0, group.stderr);
  assert.match(group.stdout, /bundle 0 on head/);
  assert.is((await client.actors()).length, before, 'explain created nothing');

  const actors = await orrery(['list', 'actors', '--address', server.url]);
  assert.is(actors.code, 0, actors.stderr);
  assert.match(actors.stdout, /ACTOR_ID\s+CLASS\s+NAME\s+STATE/);
  assert.match(actors.stdout, new RegExp(`${placed.actorId}\\s+Counter\\s+-\\s+ALIVE`));

  // filters, limit, detail; structured taints in JSON
  const alive = await orrery(['list', 'actors', '--filter', 'state=alive', '--address', server.url]);
  assert.is(alive.code, 0, alive.stderr);
  assert.ok(alive.stdout.includes(placed.actorId) && !alive.stdout.includes(pending.actorId), alive.stdout);
  const byName = await orrery(['list', 'actors', '--filter', 'name=waiting,namespace=default', '--json', '--address', server.url]);
  assert.equal((JSON.parse(byName.stdout) as { actorId: string }[]).map((a) => a.actorId), [pending.actorId]);
  const onHead = await orrery(['list', 'actors', '--filter', 'node=head', '--json', '--address', server.url]);
  assert.equal((JSON.parse(onHead.stdout) as { actorId: string }[]).map((a) => a.actorId), [placed.actorId], 'node by name');
  const limited = await orrery(['list', 'actors', '--limit', '1', '--address', server.url]);
  assert.is(lines(limited.stdout).length, 2, 'the header and one row');
  assert.match(limited.stderr, /showing 1 of 2 actors \(--limit 1\)/);
  const detail = await orrery(['list', 'nodes', '--filter', 'name=worker', '--detail', '--address', server.url]);
  assert.match(detail.stdout, /^name: worker$/m);
  assert.match(detail.stdout, /^taintList: \[\{"key":"gpu","value":"true","effect":"NoSchedule"\}\]$/m);
  assert.equal((JSON.parse(list.stdout) as (NodeInfo & { taintList: unknown })[]).find((n) => n.name === 'worker')!.taintList, [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }]);

  // --watch prints a change another process makes, and Ctrl-C ends it with 0
  const watcher = spawn(process.execPath, [...process.execArgv, ORRERY_MAIN, 'list', 'actors', '--watch', '--filter', 'name=watched', '--address', server.url], {
    env: { ...process.env, ORRERY_RUN_DIR: runDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let watched = '';
  let watchErr = '';
  watcher.stdout.on('data', (d) => (watched += d));
  watcher.stderr.on('data', (d) => (watchErr += d));
  const watcherExit = new Promise<number | null>((resolve) => watcher.on('close', resolve));
  try {
    await until('the watcher to start', () => (watchErr.includes('watching actors') ? true : undefined));
    const fresh = await client.actor(CounterActor).options({ name: 'watched', numCpus: 0.5 }).remote();
    await fresh.ready({ timeoutMs: 20_000 });
    await until('the watcher to print the new actor ALIVE', () => (new RegExp(`${fresh.actorId}\\s+Counter\\s+default/watched\\s+ALIVE`).test(watched) ? true : undefined));
    assert.not.ok(watched.includes(placed.actorId), 'filtered: only the watched one');
    watcher.kill('SIGINT');
    assert.is(await watcherExit, 0);
    await fresh.kill();
  } finally {
    if (watcher.exitCode === null) watcher.kill('SIGKILL');
  }
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

test('two nodes started on one host without --node-name get distinct names: the host\'s, then <host>-2', async () => {
  const cluster = ['--cluster', 'samehost'];
  const head = await orrery(['start', '--head', '--address', server.url, ...cluster, '--num-cpus', '1']);
  assert.is(head.code, 0, head.stderr);
  const second = await orrery(['start', '--address', server.url, ...cluster, '--num-cpus', '1']);
  assert.is(second.code, 0, second.stderr);
  const list = await orrery(['list', 'nodes', '--json', '--address', server.url, ...cluster]);
  const names = (JSON.parse(list.stdout) as NodeInfo[]).map((n) => n.name).sort();
  if (labelValueProblem(hostname()) === undefined) assert.equal(names, [hostname(), `${hostname()}-2`].sort());
  else assert.ok(names.length === 2 && names[0] !== names[1] && names.every((n) => n.startsWith('node-')), `a host name that is no label value names nodes by id: ${names}`);
  const stopped = await orrery(['stop']);
  assert.is(stopped.code, 0, stopped.stderr);
});

test('start --head --block runs in the foreground until SIGTERM, then stops what it started', async () => {
  const child = spawn(process.execPath, [...process.execArgv, ORRERY_MAIN, 'start', '--head', '--block', '--cluster', 'blocking', '--node-name', 'fg'], {
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

test('start --connect-wait: a node started before its NATS server and its GCS waits for each in turn, then joins', async () => {
  const port = await freePort();
  const address = `nats://127.0.0.1:${port}`;
  const starting = new RunningCli(['start', '--address', address, '--cluster', 'late', '--node-name', 'late-node', '--connect-wait', '60'], { ORRERY_ADDRESS: '', ORRERY_RUN_DIR: runDir });
  let late: NatsServerHandle | undefined;
  try {
    await starting.line('err', (l) => l === `orrery start: waiting up to 60 s for the NATS server at ${address} (--connect-wait)`);
    late = await startNatsServer({ port });
    await starting.line('err', (l) => l === 'orrery start: waiting up to 60 s for the GCS of cluster "late" (--connect-wait)');
    const gcs = await orrery(['start', '--gcs', '--address', address, '--cluster', 'late']);
    assert.is(gcs.code, 0, gcs.stderr);
    assert.is(await starting.exited, 0, starting.err.join('\n'));
    assert.ok(starting.out.some((l) => l.startsWith('Started node late-node')), starting.out.join('\n'));
    const list = await orrery(['list', 'nodes', '--json', '--address', address, '--cluster', 'late']);
    assert.equal((JSON.parse(list.stdout) as NodeInfo[]).map((n) => [n.name, n.state]), [['late-node', 'ALIVE']]);
  } finally {
    starting.signal('SIGKILL');
    const stopped = await orrery(['stop']);
    assert.is(stopped.code, 0, stopped.stderr);
    await late?.stop();
  }
});

test('start --connect-wait: a NATS server that never answers fails once the wait is over, naming the address', async () => {
  const r = await orrery(['start', '--address', 'nats://127.0.0.1:9', '--connect-wait', '0.5']);
  assert.is(r.code, 1);
  const err = lines(r.stderr);
  assert.is(err.length, 2, r.stderr);
  assert.is(err[0], 'orrery start: waiting up to 0.5 s for the NATS server at nats://127.0.0.1:9 (--connect-wait)');
  assert.match(err[1], /cannot connect to NATS at nats:\/\/127\.0\.0\.1:9: connection refused/);
});

test.run();
