/**
 * bench:ts-first-call — issue 15 part 3's question: is a TypeScript actor faster to its first call
 * through the worker host's loader (tsx registered on first use, runtime/worker/load.ts — what orrery
 * does) or compiled on the driver (an esbuild transform of the same source, loaded as .js)? Each
 * round starts a fresh plain-node raylet from dist/ (so a fresh worker host), creates one actor on
 * it and times remote() → ready → the first answer, the driver's compile time included for the
 * compiled side. 10 rounds, alternating. Needs dist/ (npm run build).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { connect, defineActor } from '../index.ts';
import { parseReadyLine, spawnRuntimeProcess } from '../runtime/local/runtime-process.ts';
import { startNatsServer } from '../runtime/local/nats-server.ts';

const server = await startNatsServer({ jetstream: false });
const gcs = await spawnRuntimeProcess('gcs', ['--address', server.url]);
const client = await connect({ address: server.url });
const dir = mkdtempSync(join(tmpdir(), 'ts-first-'));
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
const src = readFileSync(new URL('../spec/fixtures/typescript/greeter.ts', import.meta.url), 'utf8');
const results: Record<string, number[]> = { loader: [], compiled: [] };
const compileMs: number[] = [];
async function raylet(name: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [new URL('../dist/runtime/raylet/main.js', import.meta.url).pathname, '--address', server.url, '--node-name', name, '--labels', `n=${name}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (l) => parseReadyLine(l) && resolve());
    child.once('exit', (c) => reject(new Error(`raylet exited ${c}`)));
  });
  return child;
}
for (let round = 0; round < 10; round++) {
  const kind = round % 2 === 0 ? 'loader' : 'compiled';
  const file = join(dir, `greeter${round}.${kind === 'loader' ? 'ts' : 'js'}`);
  if (kind === 'compiled') {
    const c0 = performance.now();
    const out = await transform(src, { loader: 'ts', format: 'esm', target: 'node20' });
    compileMs.push(performance.now() - c0);
    writeFileSync(file, out.code);
  } else writeFileSync(file, src);
  const name = `r${round}`;
  const r = await raylet(name);
  const t1 = performance.now();
  const mod = pathToFileURL(file).href;
  // the class itself is loaded on the node; here it only names the export and types the calls
  const A = defineActor(mod, class Greeter {
    constructor(readonly prefix: string) {}
    greet(_name: string): unknown {
      return undefined;
    }
  });
  const h = await client.actor(A).options({ labelSelector: { n: name } }).remote('hi');
  await h.ready({ timeoutMs: 60_000 });
  await h.call('greet', 'x');
  results[kind]!.push(performance.now() - t1 + (kind === 'compiled' ? compileMs.at(-1)! : 0));
  await h.kill();
  r.kill('SIGTERM');
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const m = { loader: med(results.loader), compiled: med(results.compiled), compile: med(compileMs) };
console.log(`first call of a .ts actor on a fresh plain-node host, median of 5: loader ${m.loader.toFixed(0)} ms, compiled on the driver ${m.compiled.toFixed(0)} ms (compiling: ${m.compile.toFixed(1)} ms); load ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(JSON.stringify({ loaderMs: results.loader, compiledMs: results.compiled, compileOnlyMs: compileMs, medians: { loader: med(results.loader), compiled: med(results.compiled), compile: med(compileMs) }, load: (await import('node:os')).loadavg() }));
await client.close();
await gcs.stop();
await server.stop();
