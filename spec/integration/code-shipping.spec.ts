// Code shipped to the nodes (docs/code-shipping.md) on a real nats-server with JetStream: a .ts actor
// module with a relative import and an npm import, written to a temporary directory, is uploaded once
// to the cluster's code store and run by raylet processes from their own caches; deleted from disk
// after the first creation, it still runs on a raylet that joins afterwards — the CLI's compiled
// raylet on plain node, with a cache of its own, so the code can only have come from the store. A
// message naming a hash the store does not have leaves the actor DEAD with CODE_LOAD_FAILED, and the
// node goes on. A worker host SIGKILLed while it writes a bundle into the node's cache leaves its
// lock and a partial copy: the next host takes the lock over and leaves one complete copy. The
// nats-server killed while a driver uploads a working directory: the upload starts again once the
// server is back, and the creation runs the whole bundle; killed as a host begins to fetch one: the
// GCS's create_actor, whose answer its connection lost, is sent again and the actor is created once.
// Needs
// dist/ (`npm run build`, which `npm ci` runs).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { connect as natsConnect } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, defineActor, defineTask, type Cluster } from '../../runtime/index.ts';
import { codeBucketName } from '../../protocols/code-store.ts';
import { parseReadyLine, spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const DIST_RAYLET = fileURLToPath(new URL('../../dist/runtime/raylet/main.js', import.meta.url));
const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));

const work = mkdtempSync(join(tmpdir(), 'orrery-shipping-spec-'));
const project = join(work, 'project');
const cacheOf = (node: string): string => join(work, `cache-${node}`);

/** The user's project (ES modules): a .ts actor module importing a sibling module by a NodeNext-style .js path, and rxjs. */
function writeProject(): void {
  mkdirSync(join(project, 'lib'), { recursive: true });
  // the driver imports the module too (to define the class): its packages resolve as in any project
  symlinkSync(NODE_MODULES, join(project, 'node_modules'), 'junction');
  writeFileSync(join(project, 'package.json'), '{ "name": "shipped-project", "type": "module" }\n');
  writeFileSync(
    join(project, 'lib', 'step.ts'),
    `export interface Step { readonly by: number }\nexport const STEP: Step = { by: 2 };\nexport function advance(n: number, s: Step = STEP): number { return n + s.by; }\n`,
  );
  writeFileSync(
    join(project, 'counter.ts'),
    [
      `import { firstValueFrom, of, map } from 'rxjs';`,
      `import type { Step } from './lib/step.js';`,
      `import { advance, STEP } from './lib/step.js';`,
      `export class ShippedCounter {`,
      `  private n: number;`,
      `  constructor(start: number) { this.n = start; }`,
      `  async next(): Promise<number> { this.n = await firstValueFrom(of(this.n).pipe(map((v) => advance(v)))); return this.n; }`,
      `  step(): Step { return STEP; }`,
      `}`,
      `export async function tripled(x: number): Promise<number> { return firstValueFrom(of(x * 3)); }`,
      ``,
    ].join('\n'),
  );
}

let server: NatsServerHandle;
let gcs: RuntimeProcess;
const raylets: { stop(): Promise<void>; output(): string }[] = [];
let client: Cluster;

async function startRaylet(name: string, opts: { dist?: boolean } = {}): Promise<void> {
  const args = ['--address', server.url, '--node-name', name, '--labels', `node=${name}`, '--num-cpus', '4'];
  const env = { ...process.env, ORRERY_CODE_CACHE: cacheOf(name) };
  if (!opts.dist) {
    const r = await spawnRuntimeProcess('raylet', args, { env });
    raylets.push({ stop: () => r.stop(), output: () => r.recentOutput() });
    return;
  }
  // the CLI's raylet: the compiled package on plain node, nothing inherited from this (tsx) process
  const lines: string[] = [];
  const child = spawn(process.execPath, [DIST_RAYLET, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, NODE_OPTIONS: '' } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => (parseReadyLine(line) ? resolve() : lines.push(line)));
    createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
    void exited.then(() => reject(new Error(`raylet ${name} exited: ${lines.join(' | ')}`)));
  });
  raylets.push({ stop: () => (child.kill('SIGTERM'), exited), output: () => lines.join('\n') });
}

test.before(async () => {
  assert.ok(existsSync(DIST_RAYLET), `${DIST_RAYLET} is missing: run npm run build`);
  writeProject();
  server = await startNatsServer({ jetstream: true });
  gcs = await spawnRuntimeProcess('gcs', ['--address', server.url]);
  await startRaylet('a');
  client = await connect({ address: server.url });
});

test.after(async () => {
  await client?.close();
  await Promise.all(raylets.map((r) => r.stop()));
  await gcs?.stop();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function storedObjects(): Promise<string[]> {
  const nc = await natsConnect({ servers: server.url });
  try {
    const store = await new Objm(nc).open(codeBucketName('default'));
    return (await store.list()).map((o) => o.name);
  } finally {
    await nc.close();
  }
}

let Counter: ReturnType<typeof defineActor<{ next(): Promise<number> }, [number]>>;
let firstHash = '';

test('a .ts actor with a relative and an npm import is shipped once and runs from the node’s cache', async () => {
  const moduleUrl = pathToFileURL(join(project, 'counter.ts')).href;
  const mod = (await import(moduleUrl)) as { ShippedCounter: new (start: number) => { next(): Promise<number> }; tripled: (x: number) => Promise<number> };
  Counter = defineActor(moduleUrl, mod.ShippedCounter);
  const a1 = await client.actor(Counter).options({ labelSelector: { node: 'a' } }).remote(1);
  const info = await a1.ready({ timeoutMs: 60_000 });
  assert.is(info.state, 'ALIVE', info.deathCause);
  assert.is(await a1.call('next'), 3);
  const a2 = await client.actor(Counter).options({ labelSelector: { node: 'a' } }).remote(10);
  assert.is((await a2.ready({ timeoutMs: 30_000 })).state, 'ALIVE');
  assert.is(await a2.call('next'), 12);
  // a task of the same module: the same bundle
  assert.is(await client.task(defineTask(moduleUrl, mod.tripled)).remote(5), 15);
  const objects = await storedObjects();
  assert.is(objects.length, 1, `one bundle uploaded: ${objects.join(', ')}`);
  firstHash = objects[0];
  // the node has it at its relative layout, in its own cache
  const dir = join(cacheOf('a'), codeBucketName('default'), firstHash);
  assert.ok(existsSync(join(dir, 'counter.ts')) && existsSync(join(dir, 'lib', 'step.ts')), readdirSync(join(cacheOf('a'), codeBucketName('default'))).join(', '));
});

test('deleted from disk after the first creation, the module runs on a plain-node CLI raylet that joins afterwards: from the store', async () => {
  rmSync(join(project, 'counter.ts'));
  rmSync(join(project, 'lib'), { recursive: true });
  await startRaylet('b', { dist: true });
  await until('raylet b registered', async () => ((await client.nodes()).some((n) => n.name === 'b' && n.state === 'ALIVE') ? true : undefined));
  const b1 = await client.actor(Counter).options({ labelSelector: { node: 'b' } }).remote(100);
  const info = await b1.ready({ timeoutMs: 60_000 });
  assert.is(info.state, 'ALIVE', `${info.deathCause ?? ''} ${raylets[1]?.output().split('\n').slice(-5).join(' | ')}`);
  assert.is(await b1.call('next'), 102);
  assert.ok(existsSync(join(cacheOf('b'), codeBucketName('default'), firstHash, 'counter.ts')), 'raylet b fetched the bundle into its own cache');
  assert.equal(await storedObjects(), [firstHash]);
});

test('a message naming a hash the store does not have: the actor is DEAD with CODE_LOAD_FAILED, and the node goes on', async () => {
  const missing = 'e'.repeat(64);
  const Ghost = defineActor(`orrery-code:${missing}/ghost.ts`, class Ghost {});
  const ghost = await client.actor(Ghost).options({ labelSelector: { node: 'a' } }).remote();
  const info = await ghost.ready({ timeoutMs: 60_000 }).catch(() => ghost.info());
  assert.is(info.state, 'DEAD');
  assert.match(info.deathCause ?? '', /CODE_LOAD_FAILED|cannot load Ghost/);
  assert.match(info.deathCause ?? '', /not in the code store/);
  // a task naming it fails with the same code
  const ghostTask = defineTask(`orrery-code:${missing}/ghost.ts`, function ghostTask() {});
  const failed = await client.task(ghostTask).options({ labelSelector: { node: 'a' } }).remote().then(
    () => undefined,
    (err: Error & { code?: string }) => err,
  );
  assert.is(failed?.code, 'CODE_LOAD_FAILED');
  assert.match(failed?.message ?? '', /not in the code store/);
  const again = await client.actor(Counter).options({ labelSelector: { node: 'a' } }).remote(0);
  assert.is((await again.ready({ timeoutMs: 30_000 })).state, 'ALIVE');
  assert.is(await again.call('next'), 2);
});

test('runtimeEnv.workingDir ships the whole directory: a module reads a file it never imports, from the node’s copy', async () => {
  const wd = join(work, 'wd');
  mkdirSync(join(wd, 'data'), { recursive: true });
  writeFileSync(join(wd, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(wd, 'data', 'motd.txt'), 'from the working dir');
  writeFileSync(
    join(wd, 'reader.ts'),
    `import { readFileSync } from 'node:fs';\nexport class WdReader { read(): string { return readFileSync(new URL('./data/motd.txt', import.meta.url), 'utf8'); } where(): string { return import.meta.url; } }\n`,
  );
  const url = pathToFileURL(join(wd, 'reader.ts')).href;
  const { WdReader } = (await import(url)) as { WdReader: new () => { read(): string; where(): string } };
  const withDir = await connect({ address: server.url, runtimeEnv: { workingDir: wd } });
  try {
    const r = await withDir.actor(defineActor(url, WdReader)).options({ labelSelector: { node: 'b' } }).remote();
    assert.is((await r.ready({ timeoutMs: 60_000 })).state, 'ALIVE');
    assert.is(await r.call('read'), 'from the working dir');
    // named by its path inside the working directory, loaded from raylet b's cache
    assert.match(await r.call('where'), new RegExp(`^file://${cacheOf('b')}/${codeBucketName('default')}/[0-9a-f]{64}/reader\\.ts$`));
  } finally {
    await withDir.close();
  }
});

test('a working directory that does not exist is InvalidOptionError naming runtimeEnv.workingDir, before connecting', async () => {
  const err = await connect({ address: server.url, runtimeEnv: { workingDir: join(work, 'nowhere') } }).then(
    () => undefined,
    (e: Error & { code?: string; option?: string }) => e,
  );
  assert.is(err?.code, 'INVALID_OPTION');
  assert.is(err?.option, 'runtimeEnv.workingDir');
});

test('a worker host SIGKILLed while it writes a fetched bundle into the cache: the next host to ask takes the stale lock over and runs from a complete copy; nothing partial is left', async () => {
  const wd = join(work, 'wd-big');
  mkdirSync(join(wd, 'data'), { recursive: true });
  writeFileSync(join(wd, 'package.json'), '{ "type": "module" }\n');
  // enough files that writing them out takes a while (~16 MB in 2,000 files)
  for (let i = 0; i < 2000; i++) writeFileSync(join(wd, 'data', `part-${i}.bin`), randomBytes(8 * 1024));
  writeFileSync(join(wd, 'data', 'motd.txt'), 'from the big working dir');
  writeFileSync(
    join(wd, 'big-reader.ts'),
    `import { readFileSync, readdirSync } from 'node:fs';\nexport class BigReader { read(): string { return readFileSync(new URL('./data/motd.txt', import.meta.url), 'utf8'); } parts(): number { return readdirSync(new URL('./data/', import.meta.url)).filter((f) => f.startsWith('part-')).length; } }\n`,
  );
  const url = pathToFileURL(join(wd, 'big-reader.ts')).href;
  const { BigReader } = (await import(url)) as { BigReader: new () => { read(): string; parts(): number } };
  const dir = join(cacheOf('a'), codeBucketName('default'));
  const before = new Set(readdirSync(dir));
  const withDir = await connect({ address: server.url, runtimeEnv: { workingDir: wd } });
  try {
    const Reader = defineActor(url, BigReader);
    const first = await withDir.actor(Reader).options({ labelSelector: { node: 'a' }, isolation: 'process' }).remote();
    // the host writing the bundle out: its temporary directory, and the lock naming its pid
    let victim: number | undefined;
    for (const giveUp = Date.now() + 60_000; victim === undefined && Date.now() < giveUp; await new Promise((resolve) => setImmediate(resolve))) {
      const entries = readdirSync(dir).filter((e) => !before.has(e));
      const lock = entries.find((e) => e.endsWith('.lock'));
      if (lock !== undefined && entries.some((e) => e.includes('.tmp-'))) {
        try {
          victim = Number(readFileSync(join(dir, lock), 'utf8'));
        } catch {
          // released meanwhile: too late, look again (a later ask would find the bundle complete)
        }
      }
    }
    assert.ok(victim !== undefined && victim > 0, 'caught a host writing the bundle out');
    process.kill(victim, 'SIGKILL');
    // a creation whose host is killed fails with WORKER_EXITED; with no restarts (maxRestarts 0,
    // the default) that is DEAD (docs/failover.md)
    const dead = await until('the first actor DEAD', async () => ((await first.info()).state === 'DEAD' ? first.info() : undefined), 60_000);
    assert.match(dead.deathCause ?? '', /WORKER_EXITED|exited/);
    const r = await withDir.actor(Reader).options({ labelSelector: { node: 'a' }, isolation: 'process' }).remote();
    const info = await r.ready({ timeoutMs: 60_000 });
    assert.is(info.state, 'ALIVE', info.deathCause);
    assert.is(await r.call('read'), 'from the big working dir');
    assert.is(await r.call('parts'), 2000, 'every file of the bundle is there');
    const left = readdirSync(dir).filter((e) => !before.has(e));
    assert.equal(left.filter((e) => e.endsWith('.lock') || e.includes('.tmp-')), [], `no lock and no partial copy left: ${left.join(', ')}`);
    assert.is(left.length, 1, 'one complete copy');
  } finally {
    await withDir.close();
  }
});

test('the nats-server SIGKILLed and restarted while a driver uploads its working directory: the upload starts again once the server is back, and the creation goes through with the whole code', async () => {
  const wd = join(work, 'wd-upload');
  mkdirSync(join(wd, 'data'), { recursive: true });
  writeFileSync(join(wd, 'package.json'), '{ "type": "module" }\n');
  // ~16 MB: the store takes it in ~130 chunks, so the server dies with most of them still to come
  for (let i = 0; i < 2000; i++) writeFileSync(join(wd, 'data', `part-${i}.bin`), randomBytes(8 * 1024));
  writeFileSync(
    join(wd, 'up-reader.ts'),
    `import { readdirSync, readFileSync } from 'node:fs';\nexport class UpReader { sum(): number { let n = 0; for (const f of readdirSync(new URL('./data/', import.meta.url))) n += readFileSync(new URL('./data/' + f, import.meta.url)).length; return n; } }\n`,
  );
  const url = pathToFileURL(join(wd, 'up-reader.ts')).href;
  const { UpReader } = (await import(url)) as { UpReader: new () => { sum(): number } };
  // a connection of the spec's own sees the first chunk go by, and kills the server from that callback
  const watcher = await natsConnect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  let restarting: Promise<void> | undefined;
  watcher.subscribe(`$O.${codeBucketName('default')}.C.>`, {
    callback: () => {
      restarting ??= server.restart();
    },
  });
  await watcher.flush();
  const withDir = await connect({ address: server.url, runtimeEnv: { workingDir: wd } });
  try {
    const r = await withDir.actor(defineActor(url, UpReader)).options({ labelSelector: { node: 'a' } }).remote();
    assert.ok(restarting !== undefined, 'the server was killed during the upload');
    await restarting;
    const info = await r.ready({ timeoutMs: 60_000 });
    assert.is(info.state, 'ALIVE', info.deathCause);
    assert.is(await r.call('sum'), 2000 * 8 * 1024, 'every byte of the 2,000 files');
    await r.kill();
  } finally {
    await withDir.close();
    await watcher.close();
  }
});

test('the nats-server SIGKILLed and restarted as a worker host begins to fetch a bundle: the GCS sends its create_actor again (the answer went with its connection) and the actor is created once, with the whole code', async () => {
  const wd = join(work, 'wd-upload'); // the previous test's ~16 MB directory, in the store already
  const url = pathToFileURL(join(wd, 'up-reader.ts')).href;
  const { UpReader } = (await import(url)) as { UpReader: new () => { sum(): number } };
  const bucket = `OBJ_${codeBucketName('default')}`;
  // node b has never run it: its host must fetch it, and a fetch starts with a consumer on the bundle's chunks
  const watcher = await natsConnect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  let restarting: Promise<void> | undefined;
  watcher.subscribe('$JS.API.CONSUMER.>', {
    callback: (_err, msg) => {
      if (msg.subject.includes(bucket)) restarting ??= server.restart();
    },
  });
  await watcher.flush();
  const withDir = await connect({ address: server.url, runtimeEnv: { workingDir: wd } });
  try {
    const r = await withDir.actor(defineActor(url, UpReader)).options({ labelSelector: { node: 'b' } }).remote();
    const info = await r.ready({ timeoutMs: 90_000 });
    assert.ok(restarting !== undefined, 'the server was killed as the fetch began');
    await restarting;
    assert.is(info.state, 'ALIVE', info.deathCause);
    assert.is(await r.call('sum'), 2000 * 8 * 1024, 'every byte of the 2,000 files');
    assert.is(info.numRestarts, 0, 'created once: no restart spent on the lost answer');
    await r.kill();
  } finally {
    await withDir.close();
    await watcher.close();
  }
});

test.run();
