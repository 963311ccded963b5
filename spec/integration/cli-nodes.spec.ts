// `orrery start --taints … --rare-resources …` on a head node, then `orrery taint` and `orrery label`
// against it as users run them (a process per command): static taints and rare-resource taints with
// their automatic tolerations, --node-ip, and bad input — an unknown node, an ambiguous one, a key
// that is not there, a malformed taint — each one line with a stable code, nothing half-applied —
// and --max-queued-tasks, which bounds a node's task queue.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Exists, nodeIdAffinity } from '../../lib/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { connect, type Cluster, type NodeInfo } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { HoldUntil } from '../fixtures/tasks/tasks.ts';
import { existsSync, writeFileSync } from 'node:fs';
import { TaskQueueFullError } from '../../runtime/index.ts';
import { until } from '../helpers/until.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { lines, orrery } from '../runtime/cli/process.ts';

const runDir = mkdtempSync(join(tmpdir(), 'orrery-cli-nodes-'));
let server: NatsServerHandle;
let client: Cluster;
let byIp: RuntimeProcess | undefined;
let env: NodeJS.ProcessEnv;

test.before(async () => {
  server = await startNatsServer();
  env = { ORRERY_ADDRESS: server.url, ORRERY_RUN_DIR: runDir };
  const head = await orrery(
    ['start', '--head', '--node-name', 'gpu-head', '--num-gpus', '1', '--resources', '{"my_rare":1}', '--taints', 'team=ml,pressure=high:PreferNoSchedule', '--rare-resources', 'GPU,my_rare'],
    env,
  );
  assert.is(head.code, 0, head.stderr);
  const worker = await orrery(['start', '--node-name', 'cpu-1', '--num-cpus', '2', '--max-queued-tasks', '1'], env);
  assert.is(worker.code, 0, worker.stderr);
  // a node with an address of its own, for --node-ip (the two above share this machine's)
  byIp = await spawnRuntimeProcess('raylet', ['--address', server.url, '--node-name', 'remote', '--node-ip', '10.9.8.7', '--num-cpus', '1']);
  client = await connect({ address: server.url });
});

test.after(async () => {
  await client?.close();
  await byIp?.stop();
  await orrery(['stop'], env);
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

const node = async (name: string): Promise<NodeInfo> => (await client.nodes()).find((n) => n.name === name)!;

test('start --taints and --rare-resources: static taints, rare-resource taints, and automatic tolerations for requests of those resources', async () => {
  const head = await node('gpu-head');
  assert.equal(head.taints, { team: 'ml', pressure: 'high:PreferNoSchedule', 'orrery.io/rare-gpu': 'true', 'orrery.io/rare-my_rare': 'true' });
  assert.equal((await node('cpu-1')).taints, {});
  const plain = await client.actor(CounterActor).options({ labelSelector: { 'orrery.io/node-name': 'gpu-head' }, tolerations: { team: Exists() } }).remote();
  const why = (await plain.info()).pendingReason!;
  assert.match(why, /had untolerated taint \{orrery\.io\/rare-gpu: true\}/, why);
  const gpuWork = await client.actor(CounterActor).options({ numGpus: 1, resources: { my_rare: 1 }, tolerations: { team: Exists() } }).remote();
  assert.is((await gpuWork.ready({ timeoutMs: 20_000 })).nodeId, head.nodeId, 'asking for the rare resources tolerates their taints');
  await plain.kill();
  await gpuWork.kill();
});

test("start --max-queued-tasks reaches the node's raylet: with one task waiting there, the next is refused until its timeout", async () => {
  // a hard pin: the driver asks cpu-1's raylet itself (another raylet could only keep the tasks in its own queue)
  const options = { numCpus: 2, schedulingStrategy: nodeIdAffinity((await node('cpu-1')).nodeId) };
  const [gate, started] = [join(runDir, 'gate'), join(runDir, 'started')];
  const settle = <T>(p: Promise<T>): Promise<T | unknown> => p.then((v) => v, (e: unknown) => e);
  const running = settle(client.task(HoldUntil).options(options).remote(gate, started));
  await until('the node busy', () => (existsSync(started) ? true : undefined));
  const waiting = settle(client.task(HoldUntil).options(options).remote(gate, join(runDir, 'waited')));
  const refused = await client.task(HoldUntil).options({ ...options, timeoutMs: 1_000 }).remote(gate, join(runDir, 'refused')).catch((e: unknown) => e);
  assert.instance(refused, TaskQueueFullError);
  assert.equal([(refused as TaskQueueFullError).queue.queued, (refused as TaskQueueFullError).queue.maxQueued], [1, 1]);
  writeFileSync(gate, '');
  assert.equal([await running, await waiting], [(await node('cpu-1')).nodeId, (await node('cpu-1')).nodeId]);
  assert.not.ok(existsSync(join(runDir, 'refused')), 'the refused task never ran');
});

test('taint by --node-ip; label by --node-name; --json prints the node', async () => {
  const r = await orrery(['taint', '--node-ip', '10.9.8.7', '--add', 'zone-down=true:NoExecute'], env);
  assert.is(r.code, 0, r.stderr);
  const remote = await node('remote');
  assert.is(r.stdout.trim(), `node remote (${remote.nodeId}): taints zone-down=true:NoExecute`);
  assert.equal(remote.taints, { 'zone-down': 'true:NoExecute' });
  const json = await orrery(['label', '--node-name', 'remote', '--set', 'rack=r7', '--json'], env);
  assert.is(json.code, 0, json.stderr);
  assert.is((JSON.parse(json.stdout) as NodeInfo).labels.rack, 'r7');
  assert.is((await orrery(['taint', '--node-ip', '10.9.8.7', '--remove', 'zone-down'], env)).code, 0);
});

const failures: { name: string; args: (ids: Record<string, string>, ip: string) => string[]; exit: number; line: RegExp }[] = [
  { name: 'an unknown node id', args: () => ['taint', '--node-id', 'feedfacefeedface', '--add', 'a=b'], exit: 1, line: /^orrery: no live node matches --node-id "feedfacefeedface" \[NODE_NOT_FOUND\]$/ },
  { name: 'an unknown node name', args: () => ['label', '--node-name', 'nowhere', '--set', 'a=b'], exit: 1, line: /^orrery: no live node matches --node-name "nowhere" \[NODE_NOT_FOUND\]$/ },
  { name: 'an ip two nodes share', args: (_, ip) => ['taint', '--node-ip', ip, '--add', 'a=b'], exit: 1, line: /^orrery: 2 live nodes match --node-ip "[^"]+": .*gpu-head.*cpu-1.*; use --node-id \[AMBIGUOUS_NODE\]$|^orrery: 2 live nodes match --node-ip "[^"]+": .*cpu-1.*gpu-head.*; use --node-id \[AMBIGUOUS_NODE\]$/ },
  { name: 'removing a taint the node does not have', args: (ids) => ['taint', '--node-id', ids['cpu-1'], '--add', 'a=b', '--remove', 'missing'], exit: 1, line: /has no taint "missing"; nothing changed \[TAINT_NOT_FOUND\]$/ },
  { name: 'removing a label the node does not have', args: (ids) => ['label', '--node-id', ids['cpu-1'], '--set', 'a=b', '--remove', 'missing'], exit: 1, line: /has no label "missing"; nothing changed \[LABEL_NOT_FOUND\]$/ },
  { name: 'a malformed taint among good ones', args: (ids) => ['taint', '--node-id', ids['cpu-1'], '--add', 'a=b,c=has space'], exit: 2, line: /^orrery: taint: --add: invalid taint "c"="has space": .* \[USAGE\]$/ },
  { name: 'an unknown effect', args: (ids) => ['taint', '--node-id', ids['cpu-1'], '--add', 'a=b:Evict'], exit: 2, line: /invalid taint "a"="b:Evict": the effect must be one of NoSchedule, PreferNoSchedule, NoExecute \(got "Evict"\) \[USAGE\]$/ },
  { name: 'a built-in taint', args: (ids) => ['taint', '--node-id', ids['gpu-head'], '--remove', 'orrery.io/rare-gpu'], exit: 2, line: /^orrery: taint: --remove: .*orrery\.io.* \[USAGE\]$/ },
];

test('bad input: one line with a stable code, and nothing half-applied', async () => {
  const nodes = await client.nodes();
  const ids = Object.fromEntries(nodes.map((n) => [n.name, n.nodeId]));
  const ip = nodes.find((n) => n.name === 'cpu-1')!.labels['orrery.io/node-ip'];
  const before = nodes.map((n) => ({ labels: n.labels, taints: n.taints }));
  for (const f of failures) {
    const r = await orrery(f.args(ids, ip), env);
    assert.is(r.code, f.exit, `${f.name}: ${r.stderr}`);
    assert.is(r.stdout, '', f.name);
    assert.is(lines(r.stderr).length, 1, `${f.name}: ${r.stderr}`);
    assert.match(lines(r.stderr)[0], f.line, f.name);
  }
  const after = (await client.nodes()).map((n) => ({ labels: n.labels, taints: n.taints }));
  assert.equal(after, before, 'no node changed');
});

test.run();
