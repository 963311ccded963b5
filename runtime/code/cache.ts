import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash, randomBytes } from 'node:crypto';
import { OrreryError } from '../../lib/errors.ts';
import { decodeBundle } from '../../protocols/code-bundle.ts';
import type { ShippedCode, ShippedCodeSource } from '../../protocols/code-source.ts';
import { codeBucketName } from '../../protocols/code-store.ts';
import type { ObjectBucket } from '../bus/objects.ts';
import { throughOutages } from './store-outage.ts';
import type { Bus } from '../bus/bus.ts';

/**
 * A node's cache of shipped code (docs/code-shipping.md): each bundle fetched from the cluster's
 * code store once, verified against its hash, written out at its relative layout under
 * `<root>/<bucket>/<hash>/`, and loaded from there. The root is env ORRERY_CODE_CACHE, else
 * `<os.tmpdir()>/orrery-code`.
 *
 * One fetch per bundle: in a process, concurrent asks share one promise; across the worker hosts
 * of a node, a lock file (`<hash>.lock`, holding the fetcher's pid) makes the others wait for the
 * directory to appear — a lock whose process is gone is taken over. A bundle is written to a
 * temporary directory and renamed into place, so a directory that exists is complete.
 *
 * Packages: the code's bare imports (`rxjs`) resolve from `<root>/<bucket>/node_modules`, a link to
 * the node_modules that holds orrery on this node (env ORRERY_CODE_NODE_MODULES to name another):
 * Node looks for node_modules in every directory above the importing file, so the link serves every
 * bundle. A node needs orrery and the packages its code imports installed side by side.
 *
 * `orrery` itself: where orrery is installed (`node_modules/orrery`) the link above finds it too.
 * Run from its own checkout (this repository's examples import 'orrery' by the package's name, which
 * Node resolves for files inside the package only), orrery is not in any node_modules, so the cache
 * root gets `node_modules/orrery`, a link to the checkout, one directory above the link to its
 * packages. The default root is per install (`<tmpdir>/orrery-code/<install>`), so two checkouts or
 * installs on one machine never resolve each other's packages.
 */
export class CodeCache implements ShippedCodeSource {
  readonly dir: string;
  private readonly fetching = new Map<string, Promise<string>>();
  private bucket: Promise<ObjectBucket | undefined> | undefined;

  constructor(private readonly opts: { bus: Bus; cluster: string; root?: string; nodeModules?: string | null; log?: (line: string) => void }) {
    this.dir = join(opts.root ?? codeCacheRoot(), codeBucketName(opts.cluster));
  }

  async materialize(code: ShippedCode): Promise<string> {
    return join(await this.bundleDir(code.hash), ...code.path.split('/'));
  }

  /** The bundle's directory, fetched first when this node does not have it. */
  bundleDir(hash: string): Promise<string> {
    let found = this.fetching.get(hash);
    if (!found) {
      found = this.fetch(hash);
      this.fetching.set(hash, found);
      found.catch(() => this.fetching.delete(hash));
    }
    return found;
  }

  private async fetch(hash: string): Promise<string> {
    const final = join(this.dir, hash);
    if (existsSync(final)) return final;
    mkdirSync(this.dir, { recursive: true });
    this.linkPackages();
    this.linkSelf();
    const lock = join(this.dir, `${hash}.lock`);
    if (!(await acquire(lock, () => existsSync(final)))) return final;
    try {
      if (existsSync(final)) return final;
      // a fetcher killed while it wrote this bundle out left its temporary copy (no finally ran); only
      // the lock's holder writes one, so whatever is there now is such a leftover
      for (const name of readdirSync(this.dir)) if (name.startsWith(`${hash}.tmp-`)) rmSync(join(this.dir, name), { recursive: true, force: true });
      const bucket = await (this.bucket ??= this.openBucket());
      if (bucket === undefined) throw new OrreryError('CODE_NOT_FOUND', `shipped code ${hash} cannot be fetched: the NATS server has no JetStream, so this cluster has no code store`, { detail: { hash } });
      // a message named this hash: the store exists, so JetStream away is an outage to ride out
      const bytes = await throughOutages(() => bucket.get(hash), () => true).catch((err: unknown) => {
        if (!(err instanceof OrreryError) || err.code !== 'OBJECT_INCOMPLETE') throw err;
        throw new OrreryError('CODE_NOT_FOUND', `shipped code ${hash} is in the code store ${bucket.name} but not whole: ${err.message} (an upload that never finished, or chunks removed by hand); a driver that ships it again mends it`, { detail: { hash, bucket: bucket.name }, cause: err });
      });
      if (bytes === undefined) throw new OrreryError('CODE_NOT_FOUND', `shipped code ${hash} is not in the code store ${bucket.name}`, { detail: { hash, bucket: bucket.name } });
      const files = decodeBundle(hash, bytes);
      const tmp = join(this.dir, `${hash}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
      try {
        for (const f of files) {
          const to = join(tmp, ...f.path.split('/'));
          mkdirSync(dirname(to), { recursive: true });
          writeFileSync(to, f.data);
        }
        if (files.length === 0) mkdirSync(tmp, { recursive: true });
        renameSync(tmp, final);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
      this.opts.log?.(`fetched shipped code ${hash.slice(0, 12)} (${files.length} files, ${bytes.byteLength} bytes) into ${final}`);
      return final;
    } finally {
      rmSync(lock, { force: true });
    }
  }

  private openBucket(): Promise<ObjectBucket | undefined> {
    const open = this.opts.bus.objectBucket?.(codeBucketName(this.opts.cluster), { create: false });
    return open ?? Promise.resolve(undefined);
  }

  /** `<root>/node_modules/orrery` → orrery's checkout, when orrery does not run from a node_modules. */
  private linkSelf(): void {
    if (this.opts.nodeModules === null) return;
    const pkg = orreryPackageRoot();
    if (pkg === undefined || pkg.split(sep).includes('node_modules')) return;
    const link = join(dirname(this.dir), 'node_modules', 'orrery');
    mkdirSync(dirname(link), { recursive: true });
    try {
      symlinkSync(pkg, link, 'junction');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }

  private linkPackages(): void {
    const target = this.opts.nodeModules === undefined ? nodeModulesOfOrrery() : this.opts.nodeModules;
    if (target === null || target === undefined) return;
    try {
      symlinkSync(target, join(this.dir, 'node_modules'), 'junction');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * Where shipped code is cached on this node: env ORRERY_CODE_CACHE, else
 * `<tmpdir>/orrery-code/<install>`, `<install>` naming the orrery package this process runs from.
 * The default is worked out once per process: a driver asks on every remote() (shipper.ts), and
 * finding the package (a walk up the directories reading package.json files), hashing it and
 * reading the temp directory's variables cost ~50 µs each time — a fifth of the driver's CPU per
 * created actor.
 */
export function codeCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.ORRERY_CODE_CACHE?.trim();
  if (named) return named;
  return (defaultCacheRoot ??= join(tmpdir(), 'orrery-code', createHash('sha256').update(orreryPackageRoot() ?? '').digest('hex').slice(0, 12)));
}
let defaultCacheRoot: string | undefined;

const HERE = dirname(fileURLToPath(import.meta.url));
/** orreryPackageRoot() from this file: the same answer for the life of the process. */
let ownPackageRoot: { readonly dir: string | undefined } | undefined;

/** The directory of the orrery package this file belongs to (its package.json names orrery). */
export function orreryPackageRoot(from: string = HERE): string | undefined {
  if (from !== HERE) return findPackageRoot(from);
  return (ownPackageRoot ??= { dir: findPackageRoot(from) }).dir;
}

function findPackageRoot(from: string): string | undefined {
  for (let dir = from; dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    try {
      if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'orrery') return dir;
    } catch {
      // not JSON: keep looking above
    }
  }
  return undefined;
}

/**
 * The node_modules shipped code resolves packages from: env ORRERY_CODE_NODE_MODULES, else the
 * node_modules directory orrery is installed in (`…/node_modules/orrery/dist/…`), else — orrery run
 * from its own checkout — the nearest node_modules above this file.
 */
export function nodeModulesOfOrrery(env: NodeJS.ProcessEnv = process.env, from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  const named = env.ORRERY_CODE_NODE_MODULES?.trim();
  if (named) return named;
  for (let dir = from; dirname(dir) !== dir; dir = dirname(dir)) if (basename(dir) === 'node_modules') return dir;
  for (let dir = from; dirname(dir) !== dir; dir = dirname(dir)) if (isDir(join(dir, 'node_modules'))) return join(dir, 'node_modules');
  return undefined;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A lock held longer than this by a live process is taken over all the same (a fetch stuck for minutes). */
const STALE_LOCK_MS = 120_000;

/**
 * Takes the lock file `lock` (created exclusively, holding this pid): true. While another process
 * holds it, waits until the lock is freed or stale — or `done()`, that process finished the work:
 * false, the lock not taken.
 */
async function acquire(lock: string, done: () => boolean): Promise<boolean> {
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (done()) return false;
    if (isStale(lock)) rmSync(lock, { force: true });
    else await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Whether lock file `lock` may be taken over: old, its process gone, or its pid now another process's. */
export function isStale(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, 'utf8'));
    const written = statSync(lock).mtimeMs;
    if (Date.now() - written > STALE_LOCK_MS) return true;
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    // alive — but a process that started after the lock was written holds a recycled pid: the
    // fetcher that wrote it is gone (killed while it fetched), and nobody would free the lock
    const started = startedAtMs(pid);
    return started !== undefined && started > written + 1000;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** When process `pid` started (ms since the epoch), from /proc; undefined where /proc cannot tell. */
function startedAtMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": field 22, starttime, in clock ticks since boot (USER_HZ, 100 on Linux)
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}
