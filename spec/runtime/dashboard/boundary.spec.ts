// What the cluster's own processes load: the GCS, the raylet and the worker host never import the
// dashboard (runtime/dashboard) nor its HTTP framework (hono, @hono/node-server), directly or
// through another file — those stay in the processes that serve a page (`orrery dashboard`).
// Follows every static and dynamic import of a relative path from each process's entry file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRIES = ['runtime/gcs/main.ts', 'runtime/raylet/main.ts', 'runtime/worker/main.ts'];
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

/** Every file reachable from `entry`, and every package it names, with the file that imports it first. */
function closure(entry: string): { files: Map<string, string>; packages: Map<string, string> } {
  const files = new Map<string, string>([[resolve(ROOT, entry), '(entry)']]);
  const packages = new Map<string, string>();
  const queue = [resolve(ROOT, entry)];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec.startsWith('.')) {
        if (!spec.startsWith('node:') && !packages.has(spec)) packages.set(spec, relative(ROOT, file));
        continue;
      }
      const target = resolve(dirname(file), spec);
      if (!existsSync(target) || files.has(target)) continue;
      files.set(target, relative(ROOT, file));
      queue.push(target);
    }
  }
  return { files, packages };
}

test('the GCS, the raylet and the worker host import neither runtime/dashboard nor hono', () => {
  for (const entry of ENTRIES) {
    const { files, packages } = closure(entry);
    assert.ok(files.size > 10, `${entry}: followed ${files.size} files`);
    for (const [file, from] of files) {
      assert.not.ok(relative(ROOT, file).startsWith('runtime/dashboard/'), `${entry} loads ${relative(ROOT, file)} (imported by ${from})`);
    }
    for (const [pkg, from] of packages) {
      assert.not.ok(pkg === 'hono' || pkg.startsWith('hono/') || pkg.startsWith('@hono/'), `${entry} loads ${pkg} (imported by ${from})`);
    }
  }
});

test('the walk sees an import: the dashboard server itself loads hono', () => {
  const { packages } = closure('runtime/dashboard/server.ts');
  assert.ok(packages.has('hono') && packages.has('@hono/node-server'), [...packages.keys()].join(', '));
});

test.run();
