import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// rxjs and yaml are loaded on first use (runtime/rx.ts, lib/labels/parse.ts): a worker host reaches
// the whole package through every actor module's `import … from 'orrery'`, and a raylet started
// without --labels-file never parses YAML. These run a fresh process, since this one has both loaded.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `body` as an ES module in a child with this process's loader flags; resolves with its stdout. */
function inChild(body: string): Promise<string> {
  const code = `import { createRequire } from 'node:module';
const loaded = (name) => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/node_modules/' + name + '/'));
${body}`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...process.execArgv, '--input-type=module', '-e', code], { cwd: ROOT }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(stdout.trim());
    });
  });
}

test('importing the package loads neither rxjs nor yaml', async () => {
  const out = await inChild(`await import('./index.ts');
console.log(JSON.stringify({ rxjs: loaded('rxjs'), yaml: loaded('yaml') }));`);
  assert.equal(JSON.parse(out), { rxjs: false, yaml: false });
});

test('the first labels file loads yaml; the first stream loads rxjs, and it is the rxjs users import', async () => {
  const out = await inChild(`const orrery = await import('./index.ts');
const labels = orrery.parseLabelsYaml('zone: us-east\\nrack: 007');
const afterYaml = loaded('yaml');
const rx = await import('rxjs');
const local = await orrery.startLocalCluster({ transport: 'memory', nodes: [{ name: 'a', resources: { CPU: 1 } }] });
const events = local.cluster.events$;
const same = events instanceof rx.Observable;
await local.stop();
console.log(JSON.stringify({ labels, afterYaml, same }));`);
  assert.equal(JSON.parse(out), { labels: { zone: 'us-east', rack: '007' }, afterYaml: true, same: true });
});

test.run();
