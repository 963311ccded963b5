import { join, relative, isAbsolute, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidOptionError, OrreryError } from '../../lib/errors.ts';
import { isBundlePath, parseShippedCode, shippedCodeUrl, SHIPPED_CODE_SCHEME } from '../../protocols/code-source.ts';
import { codeBucketName } from '../../protocols/code-store.ts';
import type { Bus } from '../bus/bus.ts';
import type { ObjectBucket } from '../bus/objects.ts';
import { moduleBundle, SourceFiles, workingDirBundle, WORKING_DIR_MAX_BYTES, type CollectedBundle } from './bundle.ts';
import { codeCacheRoot } from './cache.ts';
import { throughOutages } from './store-outage.ts';
import { statSync } from 'node:fs';

/**
 * The driver's side of code shipping (docs/code-shipping.md): turns the `file:` URL an actor class
 * or task function was defined with into `orrery-code:<hash>/<path>` once its bundle is in the
 * cluster's code store — the module with its relative imports, or the connection's working
 * directory when the module lies in it. One shipper per bus (a connection): bundles are made once
 * and uploaded once per process, and an upload is skipped when the store already has the hash.
 *
 * Shipping is used when it is available: on the memory transport, on a server without JetStream,
 * or on a connection refused the store's subjects (a worker host's, whose role may only read), the
 * `file:` URL is sent as it is and every node must have the file at that path, as before.
 */
export class CodeShipper {
  private readonly sources = new SourceFiles();
  /** The last bundle of each module path, with when its files were last checked. */
  private readonly modules = new Map<string, { bundle: CollectedBundle & { modulePath: string }; checkedAt: number }>();
  /**
   * Uploads by hash, done or under way (a failed one is forgotten), with when the store was last seen
   * to have it; one done longer than STORE_RECHECK_MS ago is looked at again in the background.
   */
  private readonly uploads = new Map<string, { done: Promise<void>; at: number; settled: boolean; rechecking: boolean }>();
  private bucket: Promise<ObjectBucket | undefined> | undefined;
  /** Shipping is not available on this connection: send file: URLs (see the class comment). */
  private off = false;
  private workingDir: CollectedBundle | undefined;
  /** The store has answered once: JetStream runs there, so its absence later is an outage, not a server without it. */
  private storeAnswered = false;

  constructor(private readonly opts: { bus: Bus; cluster: string; now?: () => number }) {}

  /** Ships this working directory (packWorkingDir) instead of single modules for whatever lies in it: Ray's runtime_env working_dir. */
  useWorkingDir(bundle: CollectedBundle): void {
    this.workingDir = bundle;
  }

  /** What to put in a message for the code at `moduleUrl`. */
  async codeUrl(moduleUrl: string): Promise<string> {
    if (this.off || !moduleUrl.startsWith('file:')) return moduleUrl;
    const path = fileURLToPath(new URL(moduleUrl));
    const cached = fromCache(path, this.opts.cluster);
    if (cached !== undefined) return cached;
    const bucket = await this.openBucket();
    if (bucket === undefined) return moduleUrl;
    const wd = this.workingDir;
    const inDir = wd === undefined ? undefined : within(wd.root, path);
    const shipped = inDir !== undefined ? { bundle: wd!, modulePath: inDir } : { bundle: this.moduleBundle(path), modulePath: undefined };
    const modulePath = shipped.modulePath ?? (shipped.bundle as CollectedBundle & { modulePath: string }).modulePath;
    try {
      await this.upload(bucket, shipped.bundle);
    } catch (err) {
      if (!isPermissionError(err) && !(err instanceof OrreryError && err.code === 'JETSTREAM_UNAVAILABLE' && !this.storeAnswered)) throw new OrreryError('CODE_SHIP_FAILED', `cannot ship ${moduleUrl} to the code store: ${err instanceof Error ? err.message : String(err)}`, { cause: err, detail: { moduleUrl } });
      this.off = true;
      return moduleUrl;
    }
    return shippedCodeUrl({ hash: shipped.bundle.hash, path: modulePath });
  }

  /** The module's bundle: made again only when one of its files changed (checked at most once a second); the last one when the module is gone from disk. */
  private moduleBundle(path: string): CollectedBundle & { modulePath: string } {
    const now = this.now();
    const known = this.modules.get(path);
    if (known && now - known.checkedAt < RECHECK_MS) return known.bundle;
    if (known && (unchanged(known.bundle) || !exists(path))) {
      known.checkedAt = now;
      return known.bundle;
    }
    const bundle = moduleBundle(path, this.sources);
    this.modules.set(path, { bundle, checkedAt: now });
    return bundle;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private upload(bucket: ObjectBucket, bundle: CollectedBundle): Promise<void> {
    const now = this.now();
    const known = this.uploads.get(bundle.hash);
    if (known) {
      // stored a while ago: look again, in the background, whether the store still has it whole
      // (deleted or purged by hand, its chunks swept): a later create then ships it again
      if (known.settled && !known.rechecking && now - known.at >= STORE_RECHECK_MS) {
        known.rechecking = true;
        this.uploadThroughOutages(bucket, bundle).then(
          () => ((known.at = this.now()), (known.rechecking = false)),
          () => this.uploads.delete(bundle.hash),
        );
      }
      return known.done;
    }
    const entry = { done: this.uploadThroughOutages(bucket, bundle), at: now, settled: false, rechecking: false };
    this.uploads.set(bundle.hash, entry);
    entry.done.then(
      () => ((entry.settled = true), (entry.at = this.now())),
      () => this.uploads.delete(bundle.hash),
    );
    return entry.done;
  }

  /**
   * The upload, started again while the store does not answer (store-outage.ts): a creation rides a
   * NATS blip out as its register_actor does. A put cut off midway stored no object (its metadata
   * comes last), so starting again from `has` is safe; what it had written is left in the store's
   * stream, unnamed.
   */
  private uploadThroughOutages(bucket: ObjectBucket, bundle: CollectedBundle): Promise<void> {
    return throughOutages(async () => {
      const stored = await bucket.has(bundle.hash);
      this.storeAnswered = true;
      if (stored) return;
      await bucket.put(bundle.hash, bundle.bytes);
      // the GCS's sweep may have taken chunks of an upload that stalled past its grace for a dead
      // one's (gcs/code-sweep.ts): a bundle stored without them is put again, once
      if (!(await bucket.has(bundle.hash))) await bucket.put(bundle.hash, bundle.bytes);
    }, () => this.storeAnswered);
  }

  private async openBucket(): Promise<ObjectBucket | undefined> {
    this.bucket ??= (async () => {
      try {
        return (await this.opts.bus.objectBucket?.(codeBucketName(this.opts.cluster), { create: true })) ?? undefined;
      } catch (err) {
        if (err instanceof OrreryError && err.code === 'JETSTREAM_UNAVAILABLE') return undefined;
        if (isPermissionError(err)) return undefined;
        throw err;
      }
    })();
    try {
      const bucket = await this.bucket;
      if (bucket === undefined) this.off = true;
      return bucket;
    } catch (err) {
      this.bucket = undefined;
      throw new OrreryError('CODE_SHIP_FAILED', `cannot open the code store: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
}

/** How long a module's files are taken as unchanged without looking (a driver submitting many tasks stats them once a second). */
const RECHECK_MS = 1000;
/** How long a bundle this process stored is taken as still in the store without looking (one has() per bundle per 30 s). */
export const STORE_RECHECK_MS = 30_000;

function unchanged(bundle: CollectedBundle): boolean {
  return bundle.files.every((f) => {
    try {
      const s = statSync(f.abs);
      return s.size === f.size && s.mtimeMs === f.mtimeMs;
    } catch {
      return false;
    }
  });
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** `path` relative to `root` (`/`-separated) when it lies under it. */
function within(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
  const bundlePath = rel.split(sep).join('/');
  return isBundlePath(bundlePath) ? bundlePath : undefined;
}

/** A module of a bundle this node fetched (code inside a worker defining actors of its own module): named by that bundle again. */
function fromCache(path: string, cluster: string): string | undefined {
  const rel = within(join(codeCacheRoot(), codeBucketName(cluster)), path);
  if (rel === undefined) return undefined;
  const url = `${SHIPPED_CODE_SCHEME}${rel}`;
  return parseShippedCode(url) === undefined ? undefined : url;
}

function isPermissionError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string } | null;
  return e?.name === 'PermissionViolationError' || e?.code === 'PERMISSION_DENIED' || /permissions? violation|authorization violation/i.test(e?.message ?? '');
}

const shippers = new WeakMap<Bus, CodeShipper>();

/** The shipper of a connection's bus, made on first use. */
export function codeShipper(bus: Bus, cluster: string): CodeShipper {
  let found = shippers.get(bus);
  if (!found) shippers.set(bus, (found = new CodeShipper({ bus, cluster })));
  return found;
}

/** `moduleUrl` as a create or submit message names it on the cluster of `ctx` (see CodeShipper). */
export function shipCode(ctx: { readonly bus: Bus; readonly subjects: { readonly cluster: string } }, moduleUrl: string): Promise<string> {
  return codeShipper(ctx.bus, ctx.subjects.cluster).codeUrl(moduleUrl);
}

/**
 * A working directory as it is now, packed (node_modules and .git left out): what a connection
 * with `runtimeEnv: { workingDir }` ships — a snapshot taken at connect(). InvalidOptionError naming
 * `runtimeEnv.workingDir` when it is not a directory or holds more than `maxBytes`.
 */
export function packWorkingDir(dir: string, maxBytes = WORKING_DIR_MAX_BYTES): CollectedBundle {
  return workingDirBundle(dir, new SourceFiles(), maxBytes);
}

/** `runtimeEnv` of connect(), checked (InvalidOptionError naming the option). */
export function checkRuntimeEnv(value: unknown): { workingDir?: string } {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidOptionError('runtimeEnv', value, 'expected { workingDir?: string }');
  for (const key of Object.keys(value)) if (key !== 'workingDir') throw new InvalidOptionError(`runtimeEnv.${key}`, (value as Record<string, unknown>)[key], 'unknown runtimeEnv option; expected workingDir');
  const { workingDir } = value as { workingDir?: unknown };
  if (workingDir === undefined) return {};
  if (typeof workingDir !== 'string' || workingDir === '') throw new InvalidOptionError('runtimeEnv.workingDir', workingDir, 'expected the path of a directory');
  return { workingDir };
}

/** `runtimeEnv` of connect(), checked, with its working directory packed when it names one. */
export function packRuntimeEnv(value: unknown): CollectedBundle | undefined {
  const { workingDir } = checkRuntimeEnv(value);
  return workingDir === undefined ? undefined : packWorkingDir(workingDir);
}
