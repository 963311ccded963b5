// A node's cache of shipped code (runtime/code/cache.ts): fetched once by hash, verified, written at
// its layout; packages resolved through the node_modules link; a missing or corrupt bundle is a typed
// error and leaves nothing behind. The store here is an in-memory object bucket (the JetStream one is
// exercised by spec/integration/code-shipping.spec.ts).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeBundle } from '../../../protocols/code-bundle.ts';
import { codeBucketName } from '../../../protocols/code-store.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import type { ObjectBucket } from '../../../runtime/bus/objects.ts';
import { CodeCache, isStale, codeCacheRoot, nodeModulesOfOrrery, orreryPackageRoot } from '../../../runtime/code/cache.ts';
import { OrreryError } from '../../../lib/errors.ts';

class MemoryBucket implements ObjectBucket {
  readonly objects = new Map<string, Uint8Array>();
  gets = 0;
  constructor(readonly name: string) {}
  async has(name: string): Promise<boolean> {
    return this.objects.has(name);
  }
  async put(name: string, data: Uint8Array): Promise<void> {
    this.objects.set(name, data);
  }
  async get(name: string): Promise<Uint8Array | undefined> {
    this.gets++;
    await new Promise((resolve) => setImmediate(resolve));
    return this.objects.get(name);
  }
}

const root = mkdtempSync(join(tmpdir(), 'orrery-cache-spec-'));
const bucket = new MemoryBucket(codeBucketName('default'));
const bus = { objectBucket: async () => bucket } as unknown as Bus;
const bundle = encodeBundle([
  { path: 'actors/greeter.mjs', data: Buffer.from(`import { of, firstValueFrom } from 'rxjs';\nimport { name } from '../lib/name.mjs';\nexport const greet = () => firstValueFrom(of('hello ' + name));\n`) },
  { path: 'lib/name.mjs', data: Buffer.from(`export const name = 'shipped';\n`) },
]);
bucket.objects.set(bundle.hash, bundle.bytes);

test('concurrent asks for one bundle fetch it once and see its files at their layout', async () => {
  const cache = new CodeCache({ bus, cluster: 'default', root });
  const paths = await Promise.all([1, 2, 3].map(() => cache.materialize({ hash: bundle.hash, path: 'actors/greeter.mjs' })));
  assert.is(bucket.gets, 1);
  assert.equal(new Set(paths), new Set([join(root, codeBucketName('default'), bundle.hash, 'actors', 'greeter.mjs')]));
  assert.match(readFileSync(join(root, codeBucketName('default'), bundle.hash, 'lib', 'name.mjs'), 'utf8'), /shipped/);
});

test('another host process on the node finds the bundle in the cache without fetching', async () => {
  const other = new CodeCache({ bus, cluster: 'default', root });
  await other.materialize({ hash: bundle.hash, path: 'lib/name.mjs' });
  assert.is(bucket.gets, 1);
});

test("a shipped module's bare imports resolve through the node_modules link (rxjs, beside orrery)", async () => {
  const cache = new CodeCache({ bus, cluster: 'default', root });
  const path = await cache.materialize({ hash: bundle.hash, path: 'actors/greeter.mjs' });
  assert.is(readlinkSync(join(root, codeBucketName('default'), 'node_modules')), nodeModulesOfOrrery());
  const mod = (await import(pathToFileURL(path).href)) as { greet(): Promise<string> };
  assert.is(await mod.greet(), 'hello shipped');
});

test("run from its checkout (not from a node_modules), orrery itself resolves: the root's node_modules/orrery links to the checkout", async () => {
  const cache = new CodeCache({ bus, cluster: 'default', root });
  await cache.materialize({ hash: bundle.hash, path: 'actors/greeter.mjs' });
  const checkout = orreryPackageRoot()!;
  assert.ok(!checkout.split('/').includes('node_modules'), 'these specs run from the checkout');
  assert.is(readlinkSync(join(root, 'node_modules', 'orrery')), checkout);
  // and the default root is one per install: another checkout never shares this one's links
  assert.match(codeCacheRoot({}), /orrery-code\/[0-9a-f]{12}$/);
  assert.is(codeCacheRoot({ ORRERY_CODE_CACHE: '/srv/cache' }), '/srv/cache');
});

test('a hash not in the store is CODE_NOT_FOUND naming it; nothing is left in the cache', async () => {
  const cache = new CodeCache({ bus, cluster: 'default', root });
  const missing = 'a'.repeat(64);
  try {
    await cache.materialize({ hash: missing, path: 'x.ts' });
    assert.unreachable('fetched');
  } catch (err) {
    assert.instance(err, OrreryError);
    assert.is((err as OrreryError).code, 'CODE_NOT_FOUND');
    assert.match((err as Error).message, missing);
  }
  assert.not.ok(existsSync(join(root, codeBucketName('default'), missing)));
  assert.not.ok(existsSync(join(root, codeBucketName('default'), `${missing}.lock`)));
});

test('an object the store holds without all its chunks is CODE_NOT_FOUND saying it is not whole and how to mend it; nothing is left in the cache', async () => {
  const partial = 'b'.repeat(64);
  const incomplete: ObjectBucket = {
    name: bucket.name,
    has: async () => false,
    put: async () => undefined,
    get: async (name) => {
      throw new OrreryError('OBJECT_INCOMPLETE', `object ${name} in ${bucket.name} is missing 2 of its 3 chunk(s)`);
    },
  };
  const cache = new CodeCache({ bus: { objectBucket: async () => incomplete } as unknown as Bus, cluster: 'default', root });
  const err = await cache.materialize({ hash: partial, path: 'x.ts' }).then(
    () => undefined,
    (e: OrreryError) => e,
  );
  assert.is(err?.code, 'CODE_NOT_FOUND');
  assert.match(err?.message ?? '', `shipped code ${partial} is in the code store ${bucket.name} but not whole: object ${partial} in ${bucket.name} is missing 2 of its 3 chunk(s)`);
  assert.match(err?.message ?? '', /a driver that ships it again mends it/);
  assert.not.ok(existsSync(join(root, codeBucketName('default'), partial)));
  assert.not.ok(existsSync(join(root, codeBucketName('default'), `${partial}.lock`)));
});

test('bytes that are not the bundle their name says are BUNDLE_CORRUPT; nothing is cached, and a later ask fetches again', async () => {
  const other = encodeBundle([{ path: 'x.mjs', data: Buffer.from('export {}') }]);
  const liar = 'b'.repeat(64);
  bucket.objects.set(liar, other.bytes);
  const cache = new CodeCache({ bus, cluster: 'default', root });
  for (let i = 0; i < 2; i++) {
    const before = bucket.gets;
    await cache.materialize({ hash: liar, path: 'x.mjs' }).then(
      () => assert.unreachable('accepted'),
      (err: unknown) => assert.is((err as OrreryError).code, 'BUNDLE_CORRUPT'),
    );
    assert.is(bucket.gets, before + 1);
  }
  assert.not.ok(existsSync(join(root, codeBucketName('default'), liar)));
});

test('a lock left by a process that is gone is taken over, and the partial copy it was writing goes', async () => {
  const fresh = encodeBundle([{ path: 'y.mjs', data: Buffer.from('export const y = 1;') }]);
  bucket.objects.set(fresh.hash, fresh.bytes);
  const cache = new CodeCache({ bus, cluster: 'default', root });
  // a pid that cannot be running: above the kernel's pid_max
  const gone = 2 ** 22 + 12345;
  writeFileSync(join(cache.dir, `${fresh.hash}.lock`), String(gone));
  const partial = join(cache.dir, `${fresh.hash}.tmp-${gone}-0badc0de`);
  mkdirSync(partial, { recursive: true });
  writeFileSync(join(partial, 'y.mjs'), 'export const y =');
  assert.ok(existsSync(await cache.materialize({ hash: fresh.hash, path: 'y.mjs' })));
  assert.equal(readdirSync(cache.dir).filter((e) => e.startsWith(fresh.hash)), [fresh.hash], 'the complete copy, no lock, no partial copy');
});

test('a lock is stale when its process is gone, or when a process that started after it was written holds its pid; not while its writer lives', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orrery-lock-spec-'));
  const lock = join(dir, 'x.lock');
  const stranger = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    // this process wrote it and lives: held
    writeFileSync(lock, String(process.pid));
    assert.not.ok(isStale(lock));
    // a pid that cannot be running (above the kernel's pid_max): its writer is gone
    writeFileSync(lock, String(2 ** 22 + 12345));
    assert.ok(isStale(lock));
    // written a minute before the process that holds its pid now started: a recycled pid
    writeFileSync(lock, String(stranger.pid));
    const before = new Date(Date.now() - 60_000);
    utimesSync(lock, before, before);
    assert.ok(isStale(lock));
  } finally {
    stranger.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a node whose bus has no object store (no JetStream) says so', async () => {
  const cache = new CodeCache({ bus: {} as Bus, cluster: 'default', root: mkdtempSync(join(tmpdir(), 'orrery-cache-spec-')) });
  await cache.materialize({ hash: 'c'.repeat(64), path: 'x.mjs' }).then(
    () => assert.unreachable('fetched'),
    (err: unknown) => assert.match((err as Error).message, /no JetStream/),
  );
});

test.after(() => rmSync(root, { recursive: true, force: true }));
test.run();
