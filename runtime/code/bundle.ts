import { readFileSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { InvalidOptionError } from '../../lib/errors.ts';
import { encodeBundle, type BundleFile, type EncodedBundle } from '../../protocols/code-bundle.ts';
import { scanImports } from './scan.ts';

/**
 * What a driver ships (docs/code-shipping.md): a module and every file it imports by a relative
 * path, transitively (moduleBundle), or a whole working directory (workingDirBundle). Files are read
 * through a SourceFiles cache: a file whose modification time and size are unchanged is not read,
 * hashed or scanned again.
 */
export interface CollectedBundle extends EncodedBundle {
  /** The directory the bundle's paths are relative to. */
  readonly root: string;
  /** Absolute paths of the files in it, with the size and mtime they were read at. */
  readonly files: readonly { readonly abs: string; readonly size: number; readonly mtimeMs: number }[];
}

/** Extensions whose files are scanned for imports. */
const CODE = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);
/** What a specifier without a known extension may name, in the order TypeScript and tsx try. */
const TRY_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json'];
/** A `.js` specifier in TypeScript source names the `.ts` file (NodeNext style). */
const SOURCE_OF: Record<string, readonly string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] };

interface SourceFile {
  readonly mtimeMs: number;
  readonly size: number;
  readonly data: Buffer;
  /** Absolute paths of the files it imports by relative path (those that exist). */
  readonly imports: readonly string[];
}

/** Files read, by absolute path; one per driver process (shipper.ts). */
export class SourceFiles {
  private readonly known = new Map<string, SourceFile>();

  /** The file as it is now on disk (read again only when its mtime or size changed). */
  read(abs: string, stat: Stats = statSync(abs)): SourceFile {
    const cached = this.known.get(abs);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached;
    const data = readFileSync(abs);
    const imports = CODE.has(extname(abs)) ? relativeImports(abs, data.toString('utf8')) : [];
    const file = { mtimeMs: stat.mtimeMs, size: stat.size, data, imports };
    this.known.set(abs, file);
    return file;
  }
}

function relativeImports(abs: string, source: string): string[] {
  const out: string[] = [];
  for (const spec of scanImports(source)) {
    if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
    const found = resolveRelative(dirname(abs), spec.replace(/[?#].*$/, ''));
    if (found !== undefined) out.push(found);
  }
  return out;
}

/** The file a relative specifier names, as Node, TypeScript and tsx would find it; undefined when none exists (the import fails on the node as it would here). */
export function resolveRelative(fromDir: string, spec: string): string | undefined {
  const base = resolve(fromDir, spec);
  const ext = extname(base);
  const candidates = [base, ...(SOURCE_OF[ext] ?? []).map((e) => base.slice(0, -ext.length) + e), ...TRY_EXTENSIONS.map((e) => base + e), ...TRY_EXTENSIONS.map((e) => join(base, `index${e}`))];
  for (const c of candidates) if (isFile(c)) return c;
  return undefined;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The module `entry` (absolute path) and its relative imports, transitively, rooted at their deepest common directory. */
export function moduleBundle(entry: string, sources: SourceFiles): CollectedBundle & { readonly modulePath: string } {
  const seen = new Map<string, SourceFile>();
  const queue = [resolve(entry)];
  while (queue.length > 0) {
    const abs = queue.pop()!;
    if (seen.has(abs)) continue;
    const file = sources.read(abs);
    seen.set(abs, file);
    for (const next of file.imports) if (!seen.has(next)) queue.push(next);
  }
  const root = commonDir([...seen.keys()]);
  const bundle = encodeBundle(withModuleType(root, [...seen].map(([abs, f]) => ({ path: bundlePath(root, abs), data: f.data }))));
  return { ...bundle, root, modulePath: bundlePath(root, resolve(entry)), files: [...seen].map(([abs, f]) => ({ abs, size: f.size, mtimeMs: f.mtimeMs })) };
}

/** Default limit of a working directory: Ray's too. */
export const WORKING_DIR_MAX_BYTES = 100 * 1024 * 1024;
/** Never shipped with a working directory: the node has its own packages; history is not code. */
const EXCLUDED = new Set(['node_modules', '.git']);

/**
 * Every file under `dir` but node_modules and .git (symbolic links to files followed, to
 * directories not), at most `maxBytes` in all: past it InvalidOptionError naming
 * `runtimeEnv.workingDir`, with the size found and the limit.
 */
export function workingDirBundle(dir: string, sources: SourceFiles, maxBytes = WORKING_DIR_MAX_BYTES): CollectedBundle {
  const root = resolve(dir);
  let rootStat: Stats;
  try {
    rootStat = statSync(root);
  } catch {
    throw new InvalidOptionError('runtimeEnv.workingDir', dir, 'no such directory');
  }
  if (!rootStat.isDirectory()) throw new InvalidOptionError('runtimeEnv.workingDir', dir, 'not a directory');
  const found: { abs: string; stat: Stats }[] = [];
  let total = 0;
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (EXCLUDED.has(entry.name)) continue;
      const abs = join(at, entry.name);
      if (entry.isDirectory()) walk(abs);
      else if (entry.isFile() || entry.isSymbolicLink()) {
        const stat = statOrUndefined(abs);
        if (!stat?.isFile()) continue;
        total += stat.size;
        if (total > maxBytes) {
          throw new InvalidOptionError('runtimeEnv.workingDir', dir, `more than ${formatBytes(maxBytes)} to ship (node_modules and .git excluded); ship a smaller directory or name modules by file: URL on every node`);
        }
        found.push({ abs, stat });
      }
    }
  };
  walk(root);
  const files = found.map(({ abs, stat }) => ({ abs, file: sources.read(abs, stat) }));
  const bundle = encodeBundle(withModuleType(root, files.map(({ abs, file }) => ({ path: bundlePath(root, abs), data: file.data }))));
  return { ...bundle, root, files: files.map(({ abs, file }) => ({ abs, size: file.size, mtimeMs: file.mtimeMs })) };
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The files, with a `package.json` of `{"type":"module"}` added at the bundle's root when the
 * package the root lies in says so and the bundle has none of its own: `.js` and `.ts` files are ES
 * modules on the node as they are on the driver (the cache directory has no package.json above it,
 * which makes them CommonJS, Node's default — as a driver without one has them).
 */
function withModuleType(root: string, files: BundleFile[]): BundleFile[] {
  if (files.some((f) => f.path === 'package.json') || packageType(root) !== 'module') return files;
  return [...files, { path: 'package.json', data: Buffer.from('{"type":"module"}\n') }];
}

/** The `type` of the nearest package.json at or above `dir`. */
function packageType(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const manifest = join(at, 'package.json');
    if (isFile(manifest)) {
      try {
        const type = (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type;
        return typeof type === 'string' ? type : undefined;
      } catch {
        return undefined;
      }
    }
    if (dirname(at) === at) return undefined;
  }
}

/** `abs` relative to `root`, `/`-separated. */
export function bundlePath(root: string, abs: string): string {
  return relative(root, abs).split(sep).join('/');
}

/** The deepest directory holding every path. */
export function commonDir(paths: readonly string[]): string {
  let common = dirname(paths[0]);
  for (const p of paths) while (relative(common, p).startsWith('..')) common = dirname(common);
  return common;
}

function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}

