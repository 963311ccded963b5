// The driver's code shipper (runtime/code/shipper.ts) against an in-memory object bucket: a bundle is
// uploaded once, skipped when the store has it, and put again once when the store holds it without
// all its chunks right after the put (the GCS's sweep took a stalled upload's chunks:
// gcs/code-sweep.ts); one gone from the store later is put again after a look in the background. spec/integration/code-shipping.spec.ts ships through a real nats-server.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Bus } from '../../../runtime/bus/bus.ts';
import type { ObjectBucket } from '../../../runtime/bus/objects.ts';
import { CodeShipper, STORE_RECHECK_MS } from '../../../runtime/code/shipper.ts';
import { until } from '../../helpers/until.ts';

/** Objects by name; `whole` false for a name stored without all its chunks. */
class MemoryStore implements ObjectBucket {
  readonly name = 'orrery-code-default';
  readonly objects = new Map<string, { data: Uint8Array; whole: boolean }>();
  puts = 0;
  looks = 0;
  /** The puts (counted from 1) whose chunks go missing once stored. */
  readonly losing = new Set<number>();
  async has(name: string): Promise<boolean> {
    this.looks++;
    return this.objects.get(name)?.whole === true;
  }
  async put(name: string, data: Uint8Array): Promise<void> {
    this.puts++;
    this.objects.set(name, { data, whole: !this.losing.has(this.puts) });
  }
  async get(name: string): Promise<Uint8Array | undefined> {
    return this.objects.get(name)?.data;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'orrery-shipper-spec-'));
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
let n = 0;
/** A module of its own per test, so each test's bundle is new to its shipper. */
function moduleUrl(): string {
  const file = join(dir, `m${++n}.mjs`);
  writeFileSync(file, `export const value = ${n};\n`);
  return pathToFileURL(file).href;
}
const shipperOn = (store: ObjectBucket) => new CodeShipper({ bus: { objectBucket: async () => store } as unknown as Bus, cluster: 'default' });

test('a bundle is uploaded once and named by its hash; a second ask uploads nothing', async () => {
  const store = new MemoryStore();
  const shipper = shipperOn(store);
  const url = moduleUrl();
  const first = await shipper.codeUrl(url);
  assert.match(first, /^orrery-code:[0-9a-f]{64}\/m\d+\.mjs$/);
  assert.is(await shipper.codeUrl(url), first);
  assert.is(store.puts, 1);
});

test('a store that has the bundle already: nothing is uploaded', async () => {
  const store = new MemoryStore();
  const url = moduleUrl();
  await shipperOn(store).codeUrl(url);
  await shipperOn(store).codeUrl(url);
  assert.is(store.puts, 1);
});

test('a put the store then holds without all its chunks is put again, once, and the bundle ends whole', async () => {
  const store = new MemoryStore();
  store.losing.add(1);
  const shipped = await shipperOn(store).codeUrl(moduleUrl());
  const hash = shipped.slice('orrery-code:'.length, 'orrery-code:'.length + 64);
  assert.is(store.puts, 2);
  assert.ok(await store.has(hash), 'whole');
});

test('a bundle found not whole before the upload (has() says no) is uploaded over', async () => {
  const store = new MemoryStore();
  const url = moduleUrl();
  store.losing.add(1);
  store.losing.add(2);
  const first = await shipperOn(store).codeUrl(url); // both puts of this shipper lose their chunks
  assert.is(store.puts, 2);
  await shipperOn(store).codeUrl(url); // a later driver finds it not whole and puts it again
  assert.is(store.puts, 3);
  assert.ok(await store.has(first.slice('orrery-code:'.length, 'orrery-code:'.length + 64)));
});

test('a bundle gone from the store (deleted, purged, swept) is put again by the driver that stored it, once it has been stored STORE_RECHECK_MS: it looks again in the background', async () => {
  const store = new MemoryStore();
  const clock = { t: 1_000 };
  const shipper = new CodeShipper({ bus: { objectBucket: async () => store } as unknown as Bus, cluster: 'default', now: () => clock.t });
  const url = moduleUrl();
  const shipped = await shipper.codeUrl(url);
  const hash = shipped.slice('orrery-code:'.length, 'orrery-code:'.length + 64);
  store.objects.delete(hash);
  clock.t += STORE_RECHECK_MS - 1;
  await shipper.codeUrl(url);
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(store.puts, 1, 'not looked at again before STORE_RECHECK_MS');
  clock.t += 1;
  assert.is(await shipper.codeUrl(url), shipped, 'this create goes on at once, naming the bundle');
  await until('the bundle put again', () => (store.puts === 2 ? true : undefined));
  assert.ok(await store.has(hash));
  // and a store that has it: a look, no put
  const looks = store.looks;
  clock.t += STORE_RECHECK_MS;
  await shipper.codeUrl(url);
  await until('a look', () => (store.looks > looks ? true : undefined));
  await shipper.codeUrl(url);
  assert.is(store.puts, 2);
  assert.is(store.looks, looks + 1, 'one look per STORE_RECHECK_MS');
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
