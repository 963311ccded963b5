// Bundles of shipped code (protocols/code-bundle.ts, runtime/code/bundle.ts): a module and its
// relative imports, content-hashed; verified on decode; a working directory with its size limit.
import { mkdtempSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BundleCorruptError, decodeBundle, encodeBundle } from '../../../protocols/code-bundle.ts';
import { InvalidOptionError } from '../../../lib/errors.ts';
import { moduleBundle, resolveRelative, SourceFiles, workingDirBundle } from '../../../runtime/code/bundle.ts';

const dir = mkdtempSync(join(tmpdir(), 'orrery-bundle-spec-'));
const write = (rel: string, text: string): string => {
  const path = join(dir, rel);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
};

write('app/actors/counter.ts', `import { step } from '../lib/step.js';\nimport type { Shape } from '../lib/types.ts';\nimport { of } from 'rxjs';\nexport class Counter {}\n`);
write('app/lib/step.ts', `export * from './deep/index';\nexport const step = 1;\n`);
write('app/lib/deep/index.ts', `export const deep = await import('../data.json', { with: { type: 'json' } });\n`);
write('app/lib/data.json', `{"n":1}`);
write('app/lib/types.ts', `import './never-shipped.ts';\nexport type Shape = 1;\n`);
write('app/unrelated.ts', `export {}`);

test('a module bundle holds the module and its relative imports, transitively, rooted at their common directory', () => {
  const b = moduleBundle(join(dir, 'app/actors/counter.ts'), new SourceFiles());
  assert.is(b.root, join(dir, 'app'));
  assert.is(b.modulePath, 'actors/counter.ts');
  const paths = decodeBundle(b.hash, b.bytes).map((f) => f.path);
  // .js names the .ts source; an extensionless directory import finds index.ts; type-only imports are left out
  assert.equal(paths, ['actors/counter.ts', 'lib/data.json', 'lib/deep/index.ts', 'lib/step.ts']);
});

test('the hash is the content: the same files give the same hash, a changed byte another', () => {
  const sources = new SourceFiles();
  const a = moduleBundle(join(dir, 'app/actors/counter.ts'), sources);
  assert.is(moduleBundle(join(dir, 'app/actors/counter.ts'), new SourceFiles()).hash, a.hash);
  const step = write('app/lib/step.ts', `export * from './deep/index';\nexport const step = 2;\n`);
  utimesSync(step, new Date(), new Date(Date.now() + 5000));
  const b = moduleBundle(join(dir, 'app/actors/counter.ts'), sources);
  assert.is.not(b.hash, a.hash);
  assert.match(b.hash, /^[0-9a-f]{64}$/);
});

test('encoding is independent of the order files are given in', () => {
  const files = [{ path: 'b.ts', data: Buffer.from('b') }, { path: 'a/x.ts', data: Buffer.from('x') }];
  assert.is(encodeBundle(files).hash, encodeBundle([...files].reverse()).hash);
});

test('decoding verifies: a changed byte, a wrong name, a truncated bundle are BUNDLE_CORRUPT', () => {
  const { hash, bytes } = encodeBundle([{ path: 'm.ts', data: Buffer.from('export const x = 1;') }]);
  const flipped = Buffer.from(bytes);
  flipped[flipped.length - 2] ^= 1;
  for (const [name, h, b] of [['a flipped byte', hash, flipped], ['another name', 'f'.repeat(64), bytes], ['truncated', hash, bytes.subarray(0, bytes.length - 3)], ['not a bundle', hash, Buffer.from('hello')]] as const) {
    assert.throws(() => decodeBundle(h, b), (err: unknown) => err instanceof BundleCorruptError && err.code === 'BUNDLE_CORRUPT', name);
  }
  assert.equal(decodeBundle(hash, bytes).map((f) => Buffer.from(f.data).toString()), ['export const x = 1;']);
});

test('paths that would leave the bundle are refused when encoding', () => {
  for (const path of ['../x.ts', '/abs.ts', 'a/./b.ts', 'a//b.ts', 'a\\b.ts', '']) {
    assert.throws(() => encodeBundle([{ path, data: Buffer.from('') }]), /not a path inside a bundle/, path);
  }
});

test('relative specifiers resolve as Node, TypeScript and tsx find them; a missing file resolves to nothing', () => {
  assert.is(resolveRelative(join(dir, 'app/actors'), '../lib/step.js'), join(dir, 'app/lib/step.ts'));
  assert.is(resolveRelative(join(dir, 'app/lib'), './deep'), join(dir, 'app/lib/deep/index.ts'));
  assert.is(resolveRelative(join(dir, 'app/lib'), './data.json'), join(dir, 'app/lib/data.json'));
  assert.is(resolveRelative(join(dir, 'app'), './missing.js'), undefined);
});

test('a bundle of an ES-module package carries {"type":"module"} at its root, so its files load as they do on the driver', () => {
  write('esm/package.json', '{ "name": "p", "type": "module" }');
  const entry = write('esm/src/actor.ts', `import './util.js';\nexport class A {}`);
  write('esm/src/util.ts', 'export {}');
  const b = moduleBundle(entry, new SourceFiles());
  const files = decodeBundle(b.hash, b.bytes);
  assert.equal(files.map((f) => f.path), ['actor.ts', 'package.json', 'util.ts']);
  assert.equal(JSON.parse(Buffer.from(files[1].data).toString()), { type: 'module' });
  // a package without "type" (CommonJS, Node's default) gets none: the cache has no package.json above it either
  write('cjs/package.json', '{ "name": "q" }');
  const cjs = moduleBundle(write('cjs/actor.ts', 'export class B {}'), new SourceFiles());
  assert.equal(decodeBundle(cjs.hash, cjs.bytes).map((f) => f.path), ['actor.ts']);
});

test('a working directory: every file but node_modules and .git, paths relative to it', () => {
  const wd = join(dir, 'wd');
  write('wd/main.ts', 'export {}');
  write('wd/sub/helper.ts', 'export {}');
  write('wd/node_modules/pkg/index.js', 'x'.repeat(1000));
  write('wd/.git/HEAD', 'ref');
  const b = workingDirBundle(wd, new SourceFiles());
  assert.is(b.root, wd);
  assert.equal(decodeBundle(b.hash, b.bytes).map((f) => f.path), ['main.ts', 'sub/helper.ts']);
});

test('a working directory past the size limit is InvalidOptionError naming runtimeEnv.workingDir', () => {
  write('big/a.bin', 'x'.repeat(600));
  write('big/b.bin', 'y'.repeat(600));
  assert.throws(
    () => workingDirBundle(join(dir, 'big'), new SourceFiles(), 1000),
    (err: unknown) => err instanceof InvalidOptionError && err.code === 'INVALID_OPTION' && err.option === 'runtimeEnv.workingDir' && /more than 1000 bytes/.test(err.message),
  );
  assert.is(workingDirBundle(join(dir, 'big'), new SourceFiles(), 1200).files.length, 2);
  assert.throws(() => workingDirBundle(join(dir, 'nope'), new SourceFiles()), (err: unknown) => err instanceof InvalidOptionError && /no such directory/.test(err.message));
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
