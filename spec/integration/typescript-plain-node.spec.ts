// A raylet as `orrery start` runs it — the compiled package on plain node, no TypeScript loader in
// its flags — still runs an actor whose module is TypeScript: its worker host registers tsx's loader
// the first time a .ts module is asked for (runtime/worker/load.ts). Needs dist/ (`npm run build`,
// which `npm ci` runs).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, defineActor, type Cluster } from '../../runtime/index.ts';
import { parseReadyLine, spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { Greeter } from '../fixtures/typescript/greeter.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

const DIST_RAYLET = fileURLToPath(new URL('../../dist/runtime/raylet/main.js', import.meta.url));
const GreeterActor = defineActor(new URL('../fixtures/typescript/greeter.ts', import.meta.url).href, Greeter);

let server: NatsServerHandle;
let gcs: RuntimeProcess;
let raylet: ChildProcess | undefined;
let client: Cluster;
const output: string[] = [];

test.before(async () => {
  assert.ok(existsSync(DIST_RAYLET), `${DIST_RAYLET} is missing: run npm run build`);
  server = await startNatsServer();
  gcs = await spawnRuntimeProcess('gcs', ['--address', server.url]);
  // plain node, the compiled entry, nothing inherited from this (tsx) process
  raylet = spawn(process.execPath, [DIST_RAYLET, '--address', server.url, '--node-name', 'plain', '--labels', 'runtime=plain-node'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: raylet!.stdout! }).on('line', (line) => (parseReadyLine(line) ? resolve() : output.push(line)));
    createInterface({ input: raylet!.stderr! }).on('line', (line) => output.push(line));
    raylet!.once('exit', (code) => reject(new Error(`the raylet exited (${code}): ${output.join(' | ')}`)));
  });
  await ready;
  client = await connect({ address: server.url });
});

test.after(async () => {
  await client?.close();
  raylet?.kill('SIGTERM');
  await gcs?.stop();
  await server?.stop();
});

test('an actor from a .ts module runs on a plain-node raylet, and answers', async () => {
  const started = performance.now();
  const greeter = await client.actor(GreeterActor).options({ labelSelector: { runtime: 'plain-node' } }).remote('hello');
  const info = await greeter.ready({ timeoutMs: 60_000 });
  assert.is(info.state, 'ALIVE', `${info.deathCause ?? ''} ${output.slice(-5).join(' | ')}`);
  assert.equal(await greeter.call('greet', 'orrery'), { text: 'hello, orrery', count: 1 });
  process.stderr.write(`first call answered ${Math.round(performance.now() - started)} ms after create\n`);
  // a second actor of the module in the same host: the loader is registered once
  const second = await client.actor(GreeterActor).options({ labelSelector: { runtime: 'plain-node' } }).remote('hi');
  await second.ready({ timeoutMs: 30_000 });
  assert.equal(await second.call('greet', 'again'), { text: 'hi, again', count: 1 });
});

test.run();
