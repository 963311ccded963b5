// What a raylet process and a worker host process load when they start: every static import of
// their entry files, followed through the repository's own files. Each module a process loads stays
// in its heap for as long as it runs, so what these two need and no more is what they may reach
// (issue 18, part 5; bench:e2e --memory measures them). A dynamic import() is loaded on first use
// and is not followed. Type-only imports are erased (verbatimModuleSyntax) and are not followed either.
//
// A worker host also loads what its actors' modules import. `import … from 'orrery'` loads the package
// entry: definitions, errors, types and the scheduling library, but not the client or the local
// clusters, which connect() and startLocalCluster() load on their first call.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STATIC = /(?:^|[\s;])((?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s+['"]([^'"]+)['"])/gm;
const DYNAMIC = /import\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Graph {
  /** Repository files reached, relative to the root, each with the file that imports it first. */
  readonly files: Map<string, string>;
  /** Packages named by those files, each with the file that imports it first. */
  readonly packages: Map<string, string>;
}

/** What `entry` loads: static imports only, or with `dynamic` the import() calls too. */
function graph(entry: string, opts: { dynamic?: boolean } = {}): Graph {
  const files = new Map<string, string>([[entry, '(entry)']]);
  const packages = new Map<string, string>();
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const source = readFileSync(resolve(ROOT, file), 'utf8');
    const specs = [...source.matchAll(STATIC)].filter((m) => !/^(?:import|export)\s+type\s/.test(m[1])).map((m) => m[2] ?? m[3]);
    if (opts.dynamic) specs.push(...[...source.matchAll(DYNAMIC)].map((m) => m[1]));
    for (const spec of specs) {
      if (!spec.startsWith('.')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (!name.startsWith('node:') && !packages.has(name)) packages.set(name, file);
        continue;
      }
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec));
      if (files.has(target) || !existsSync(resolve(ROOT, target))) continue;
      files.set(target, file);
      queue.push(target);
    }
  }
  return { files, packages };
}

/** Packages neither process needs at start: streams for users, YAML labels files, the dashboard, JetStream. */
const PACKAGES = ['rxjs', 'yaml', 'elkjs', 'prom-client', 'hono', '@hono/node-server', '@nats-io/jetstream', '@nats-io/kv'];
/** The package's surface and the parts of it that run elsewhere: drivers, the GCS, the CLI, local clusters. */
const FILES = ['index.ts', 'runtime/index.ts', 'lib/index.ts', 'runtime/rx.ts', 'runtime/client/', 'runtime/local/', 'runtime/gcs/', 'runtime/cli/', 'runtime/dashboard/', 'runtime/autoscaler/', 'lib/autoscaling/'];

const PROCESSES = [
  // The raylet forks its worker hosts; an inline host (memory clusters, specs) is loaded on first use.
  { entry: 'runtime/raylet/main.ts', packages: PACKAGES, files: [...FILES, 'runtime/worker/host.ts', 'runtime/worker/task-runner.ts', 'runtime/worker/main.ts'] },
  // A worker host runs actors and tasks; it schedules nothing and has no machine.
  { entry: 'runtime/worker/main.ts', packages: [...PACKAGES, 'xstate'], files: [...FILES, 'runtime/raylet/service.ts', 'lib/scheduling/', 'lib/cluster/'] },
];

for (const p of PROCESSES) {
  test(`${p.entry} loads none of: ${[...p.packages, ...p.files].join(', ')}`, () => {
    const { files, packages } = graph(p.entry);
    assert.ok(files.size > 10, `${p.entry}: followed ${files.size} files`);
    for (const [file, from] of files) {
      const banned = p.files.find((f) => (f.endsWith('/') ? file.startsWith(f) : file === f));
      assert.is(banned, undefined, `${p.entry} loads ${file} (imported by ${from})`);
    }
    for (const [name, from] of packages) assert.not.ok(p.packages.includes(name), `${p.entry} loads ${name} (imported by ${from})`);
  });
}

test('the package entry, which an actor module importing orrery loads into its worker host, loads neither the client, the local clusters, the NATS bus nor code shipping', () => {
  const { files, packages } = graph('index.ts');
  assert.ok(files.has('runtime/client/actor-class.ts') && files.has('runtime/errors.ts') && files.has('lib/scheduling/index.ts'), [...files.keys()].join(', '));
  const banned = ['runtime/client/index.ts', 'runtime/client/connect.ts', 'runtime/client/cluster.ts', 'runtime/client/actor-handle.ts', 'runtime/local/index.ts', 'runtime/bus/nats.ts', 'runtime/rx.ts', 'runtime/code/'];
  for (const [file, from] of files) {
    const hit = banned.find((f) => (f.endsWith('/') ? file.startsWith(f) : file === f));
    assert.is(hit, undefined, `index.ts loads ${file} (imported by ${from})`);
  }
  for (const name of ['rxjs', '@nats-io/transport-node', '@nats-io/jetstream', 'yaml']) assert.not.ok(packages.has(name), `index.ts loads ${name} (imported by ${packages.get(name)})`);
});

test('the walk sees what it guards against: the package reaches the client, the local cluster and runtime/rx.ts on first use, the dashboard hono, a raylet its inline host on first use', () => {
  const pkg = graph('index.ts', { dynamic: true });
  assert.ok(pkg.files.has('runtime/client/connect.ts') && pkg.files.has('runtime/local/index.ts'), [...pkg.files.keys()].join(', '));
  assert.ok(graph('runtime/raylet/main.ts', { dynamic: true }).files.has('runtime/worker/host.ts'));
  // rxjs is required by runtime/rx.ts when a stream is first followed: the file is what to keep out
  assert.ok(pkg.files.has('runtime/rx.ts'));
  assert.ok(graph('runtime/dashboard/server.ts').packages.has('hono'));
});

test('type-only imports are not followed; a side-effect import is', () => {
  const raylet = graph('runtime/raylet/main.ts');
  // host-launcher.ts names HostNode from the worker's host.ts only as a type
  assert.not.ok(raylet.files.has('runtime/worker/host.ts'));
  assert.ok(raylet.files.has('runtime/raylet/host-launcher.ts'));
});

test.run();
