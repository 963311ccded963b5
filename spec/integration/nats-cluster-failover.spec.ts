// Losing one nats-server of three (issue 15 part 4, docs/deploy.md "Losing a server"). Three clustered
// servers on loopback with JetStream on each; every process is given all three URLs with its own
// server first: the GCS on A, raylets started with `orrery start` on B and C, the driver on C, which
// creates actors on both nodes — among them one from a .ts module with a relative import in a
// temporary directory, shipped through the cluster's code store — and calls them.
//   - the module deleted from disk: a node started afterwards with `orrery start` on A, with a code
//     cache of its own, runs a new actor of it — fetched from the store;
//   - B killed: node-b's raylet reconnects to A or C, no node goes DEAD, no actor dies or restarts,
//     every actor answers again; what fails meanwhile fails typed;
//   - (B back) the server that leads the GCS's actors bucket killed: kill_actor — a GCS write — works
//     again once JetStream has a new leader, and what the GCS acknowledged is stored;
//   - a GCS started afresh recovers every actor from the replicas: the live ones where they were,
//     the killed ones DEAD.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, defineActor, type ActorClass, type ActorHandle, type Cluster } from '../../runtime/index.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { CounterActor, type Counter } from '../fixtures/client/actors.ts';
import { startNatsCluster, type NatsClusterHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';
import { orrery } from '../runtime/cli/process.ts';

const A = 0;
const B = 1;
const C = 2;
/** What a call or a GCS verb may fail with while a server is lost: typed, and worth trying again. */
const RETRYABLE = new Set(['TIMEOUT', 'CONNECTION_LOST', 'NO_RESPONDERS', 'ACTOR_UNAVAILABLE', 'GCS_UNAVAILABLE']);
/** Generous bounds for a busy 2-core machine: a JetStream election alone takes 4–9 s on nats-server 2.9. */
const RECOVERY_MS = 60_000;

const runDir = mkdtempSync(join(tmpdir(), 'orrery-nats-failover-'));
let nats: NatsClusterHandle;
let gcs: RuntimeProcess | undefined;
let client: Cluster;
let env: NodeJS.ProcessEnv;
/** What every actor of the spec answers: its count. */
type Counting = Pick<Counter, 'get'>;
const actors: { at: string; handle: ActorHandle<Counting> }[] = [];

/** A user's module outside the repository: a .ts actor class importing a sibling by relative path. */
function writeModule(): string {
  const dir = join(runDir, 'project');
  mkdirSync(join(dir, 'lib'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "name": "failover-project", "type": "module" }\n');
  writeFileSync(join(dir, 'lib', 'start.ts'), 'export const START: number = 40;\n');
  writeFileSync(join(dir, 'tally.ts'), `import { START } from './lib/start.js';\nexport class Tally {\n  private n: number = START;\n  get(): number { return this.n; }\n}\n`);
  return pathToFileURL(join(dir, 'tally.ts')).href;
}
const killed: string[] = [];
/** The shipped .ts actor class (defined in the first test, from the temporary module). */
let Tally: ActorClass<Counting, []>;

/** The address a process on server `home` is given: its own server first, then the other two. */
function address(home: number): string {
  return [home, ...[A, B, C].filter((i) => i !== home)].map((i) => nats.servers[i].url).join(',');
}

async function monitor<T>(server: number, path: string): Promise<T> {
  return (await (await fetch(`http://127.0.0.1:${nats.servers[server].monitorPort}${path}`)).json()) as T;
}

/** The names of the clients connected to `server`. */
async function clientsOf(server: number): Promise<string[]> {
  const body = await monitor<{ connections?: { name?: string }[] }>(server, '/connz?limit=1024');
  return (body.connections ?? []).map((c) => c.name ?? '');
}

interface StreamDetail {
  name: string;
  cluster?: { leader?: string; replicas?: { name: string; current?: boolean; offline?: boolean }[] };
}

/** The GCS's streams as `server` sees them; none when it does not answer (killed). */
async function gcsStreams(server: number): Promise<StreamDetail[]> {
  try {
    const body = await monitor<{ account_details?: { stream_detail?: StreamDetail[] }[] }>(server, '/jsz?streams=true');
    return (body.account_details ?? []).flatMap((d) => d.stream_detail ?? []).filter((s) => s.name.startsWith('KV_orrery_default_'));
  } catch {
    return [];
  }
}

/**
 * Every GCS stream (six buckets) as its leader sees it — only the leader knows whether the others are
 * current — has a leader and two current replicas: the cluster can lose any one server.
 */
async function replicated(): Promise<StreamDetail[] | undefined> {
  const views = await Promise.all([A, B, C].map(gcsStreams));
  const byLeader = views.flatMap((view, i) => view.filter((s) => s.cluster?.leader === `orrery-${i}`));
  const whole = byLeader.length === 6 && byLeader.every((s) => s.cluster!.replicas?.length === 2 && s.cluster!.replicas.every((r) => r.current && !r.offline));
  return whole ? byLeader : undefined;
}

/** Runs `op` until it succeeds (resolves to something other than undefined); failures are collected. */
async function eventually<T>(what: string, op: () => Promise<T>, failures: string[]): Promise<T> {
  return untilOr(what, failures, () => until(
    what,
    async () => {
      try {
        return await op();
      } catch (err) {
        const code = (err as { code?: string }).code ?? `untyped ${(err as Error).name}: ${(err as Error).message}`;
        failures.push(code);
        return undefined;
      }
    },
    RECOVERY_MS,
  ));
}

/** `wait`, its error saying what failed meanwhile and what the GCS said last. */
async function untilOr<T>(what: string, failures: string[], wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (err) {
    throw new Error(`${(err as Error).message}; failures: ${[...new Set(failures)].join(', ')}; the GCS said:\n${gcs?.recentOutput()}`);
  }
}

function assertRetryable(failures: string[], what: string): void {
  const other = failures.filter((f) => !RETRYABLE.has(f));
  assert.equal(other, [], `${what}: failures other than typed retryable ones`);
}

test.before(async () => {
  nats = await startNatsCluster({ monitor: true });
  env = { ORRERY_RUN_DIR: runDir };
  gcs = await spawnRuntimeProcess('gcs', ['--address', address(A)]);
  for (const [name, home] of [['node-b', B], ['node-c', C]] as const) {
    const r = await orrery(['start', '--address', address(home), '--node-name', name, '--labels', `at=${name}`, '--num-cpus', '4'], env);
    assert.is(r.code, 0, r.stderr);
  }
  client = await connect({ address: address(C) });
});

test.after(async () => {
  await client?.close().catch(() => undefined);
  await orrery(['stop'], env);
  await gcs?.stop();
  await nats?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

test('each process starts on the server it lists first; actors on both nodes answer', async () => {
  await until('both nodes', async () => ((await client.nodes()).length === 2 ? true : undefined));
  assert.ok((await clientsOf(A)).includes('orrery-gcs-default'), 'the GCS on A');
  assert.ok((await clientsOf(B)).includes('orrery-raylet-node-b'), 'node-b on B');
  assert.ok((await clientsOf(C)).includes('orrery-raylet-node-c'), 'node-c on C');
  for (const at of ['node-b', 'node-c']) {
    for (let i = 0; i < 3; i++) {
      const handle = await client.actor(CounterActor).options({ name: `${at}-${i}`, labelSelector: { at }, numCpus: 0.1 }).remote(i);
      await handle.ready({ timeoutMs: 30_000 });
      assert.is(await handle.call('add', 1), i + 1);
      actors.push({ at, handle });
    }
  }
  const moduleUrl = writeModule();
  Tally = defineActor(moduleUrl, ((await import(moduleUrl)) as { Tally: new () => Counting }).Tally);
  for (const at of ['node-b', 'node-c']) {
    const handle = await client.actor(Tally).options({ name: `tally-${at}`, labelSelector: { at }, numCpus: 0.1 }).remote();
    await handle.ready({ timeoutMs: 30_000 });
    assert.is(await handle.call('get'), 40, `the shipped .ts module on ${at}`);
    actors.push({ at, handle });
  }
  await until('every GCS bucket replicated on the three servers', () => replicated());
});

test('the module deleted from disk: a node that joins afterwards (the CLI, on server A, a cache of its own) runs it from the code store', async () => {
  rmSync(join(runDir, 'project'), { recursive: true, force: true });
  // the new node's code cache is its own, as on another machine (runDir goes at the end)
  const cache = join(runDir, 'node-a-code-cache');
  const r = await orrery(['start', '--address', address(A), '--node-name', 'node-a', '--labels', 'at=node-a', '--num-cpus', '4'], { ...env, ORRERY_CODE_CACHE: cache });
  assert.is(r.code, 0, r.stderr);
  const handle = await client.actor(Tally).options({ name: 'tally-node-a', labelSelector: { at: 'node-a' }, numCpus: 0.1 }).remote();
  await handle.ready({ timeoutMs: 60_000 });
  assert.is(await handle.call('get'), 40, 'the deleted module ran on the new node');
  const fetched = readdirSync(join(cache, 'orrery-code-default')).filter((f) => /^[0-9a-f]{64}$/.test(f));
  assert.is(fetched.length, 1, 'fetched into the new node’s own cache, from the store');
  actors.push({ at: 'node-a', handle });
});

test('server B killed: its raylet reconnects elsewhere, no node goes DEAD, no actor dies, every actor answers again', async () => {
  const before = await client.nodes();
  process.kill(nats.servers[B].pid, 'SIGKILL');
  await until('node-b on A or C', async () => ([...(await clientsOf(A)), ...(await clientsOf(C))].includes('orrery-raylet-node-b') ? true : undefined), RECOVERY_MS);
  const failures: string[] = [];
  for (const [i, { handle }] of actors.entries()) {
    // each actor's count went 1 → 2 before; the first answer after the loss may follow a failed try
    await eventually(`actor ${i} to answer`, () => handle.call('get'), failures);
  }
  assertRetryable(failures, 'calls while B was gone');
  const after = await client.nodes();
  assert.equal(after.map((n) => `${n.nodeId}:${n.state}`).sort(), before.map((n) => `${n.nodeId}:ALIVE`).sort(), 'the same two nodes, both ALIVE');
  for (const { handle } of actors) {
    const info = await handle.info();
    assert.is(info?.state, 'ALIVE');
    assert.is(info?.numRestarts, 0, `${handle.actorId} did not restart`);
  }
  await nats.servers[B].restart();
  await until('B back and every GCS bucket replicated again', () => replicated(), RECOVERY_MS);
});

test("the server leading the GCS's actors bucket killed: kill_actor and creation work again after the election, and are stored", async () => {
  const streams = (await replicated())!;
  const leaderName = streams.find((s) => s.name === 'KV_orrery_default_actors')!.cluster!.leader!;
  const victim = Number(leaderName.split('-').pop());
  process.kill(nats.servers[victim].pid, 'SIGKILL');
  const failures: string[] = [];
  // two kills, one at a time: the first rides out the election, the second shows writes flow again
  for (const target of actors.slice(0, 2)) {
    await eventually(`kill_actor of ${target.handle.actorId}`, () => target.handle.kill().then(() => true), failures);
    killed.push(target.handle.actorId);
  }
  // and a creation, which writes the actor's record several times over
  const created = await eventually('an actor created after the election', async () => {
    const handle = await client.actor(CounterActor).options({ labelSelector: { at: 'node-c' }, numCpus: 0.1 }).remote(7);
    await handle.ready({ timeoutMs: 30_000 });
    return handle;
  }, failures);
  assert.is(await created.call('get'), 7);
  assertRetryable(failures, `GCS writes while ${leaderName} was gone`);
  await nats.servers[victim].restart();
  await until('every GCS bucket replicated again', () => replicated(), RECOVERY_MS);
});

test('a GCS started afresh recovers every actor from the replicas: live ones in place, killed ones DEAD', async () => {
  await gcs!.crash();
  gcs = await spawnRuntimeProcess('gcs', ['--address', address(A)]);
  for (const { handle } of actors) {
    const info = await until(`${handle.actorId} recovered`, async () => (await handle.info()), RECOVERY_MS);
    if (killed.includes(handle.actorId)) {
      assert.is(info.state, 'DEAD', `${handle.actorId} was killed`);
    } else {
      assert.is(info.state, 'ALIVE', `${handle.actorId} recovered ALIVE`);
      assert.is(info.numRestarts, 0, `${handle.actorId} kept its incarnation`);
      assert.type(await handle.call('get'), 'number');
    }
  }
});

test.run();
