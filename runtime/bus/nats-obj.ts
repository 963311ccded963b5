import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';
import type { ObjectBucket, ObjectBucketOptions } from './objects.ts';

/**
 * A JetStream object store behind ObjectBucket (objects.ts). Loaded with a dynamic import by the
 * processes that ship or fetch code, so no other loads the object-store client. A bucket is made
 * with three replicas when the NATS cluster has three or more JetStream servers, else one — the
 * rule of the GCS's buckets (nats-kv.ts): asking is the only test that holds whatever the
 * servers' configuration says. A server without JetStream is JETSTREAM_UNAVAILABLE.
 */
export async function openJetStreamObjects(nc: NatsConnection, bucket: string, opts: ObjectBucketOptions): Promise<ObjectBucket> {
  const objm = new Objm(jetstream(nc, { timeout: API_TIMEOUT_MS }));
  const manager = () => jetstreamManager(nc, { timeout: API_TIMEOUT_MS, checkAPI: false });
  if (opts.create) return new JetStreamObjects(bucket, async () => createReplicated(objm, bucket), manager);
  return new JetStreamObjects(bucket, async () => {
    try {
      return await objm.open(bucket);
    } catch (err) {
      if (/not found/i.test(err instanceof Error ? err.message : String(err))) return undefined;
      throw err;
    }
  }, manager);
}

const API_TIMEOUT_MS = 10_000;
/** A read of an object that gets no chunk for this long is given up (see get). */
const READ_STALL_MS = 30_000;
/** Replicas of the code store on a NATS cluster that can hold them. */
export const OBJECT_REPLICAS = 3;

async function createReplicated(objm: Objm, name: string): Promise<ObjectStore> {
  try {
    return await objm.create(name, { replicas: OBJECT_REPLICAS, storage: StorageType.File });
  } catch (err) {
    const code = (err as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;
    const message = err instanceof Error ? err.message : String(err);
    if (code === 10074 || code === 10023 || code === 10058 || /non-clustered|insufficient resources|already in use/i.test(message)) return objm.create(name, { storage: StorageType.File });
    throw unavailable(err);
  }
}

/** JetStream not enabled (err_code 10039, or nobody answering its API) is JETSTREAM_UNAVAILABLE; anything else as it is. */
export function unavailable(err: unknown): unknown {
  const code = (err as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;
  const name = (err as Error | null)?.name;
  if (name === 'JetStreamNotEnabled' || name === 'NoRespondersError' || code === 10039 || /jetstream not enabled|no responders/i.test((err as Error)?.message ?? '')) {
    return new OrreryError('JETSTREAM_UNAVAILABLE', `the NATS server has no JetStream (start it with -js): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return err;
}

class JetStreamObjects implements ObjectBucket {
  private store: Promise<ObjectStore | undefined> | undefined;

  private jsm: Promise<JetStreamManager> | undefined;

  constructor(
    readonly name: string,
    private readonly open: () => Promise<ObjectStore | undefined>,
    private readonly manager: () => Promise<JetStreamManager>,
  ) {}

  /** The stream behind the bucket (nats.js's naming: protocols/code-store.ts). */
  private get stream(): string {
    return `OBJ_${this.name}`;
  }

  /** One JetStream manager for the sweeps; a failed start is tried again next time. */
  private managed(): Promise<JetStreamManager> {
    return (this.jsm ??= this.manager().catch((err: unknown) => {
      this.jsm = undefined;
      throw err;
    }));
  }

  private chunkSubject(id: string): string {
    return `$O.${this.name}.C.${id}`;
  }

  /** The store once it is open; a failed or empty opening is tried again next time. */
  private async opened(): Promise<ObjectStore | undefined> {
    const attempt = (this.store ??= this.open().catch((err: unknown) => Promise.reject(unavailable(err))));
    try {
      const store = await attempt;
      if (store === undefined) this.store = undefined;
      return store;
    } catch (err) {
      this.store = undefined;
      throw err;
    }
  }

  /**
   * Stored, not deleted, and whole: an object whose chunks are not all in the stream (removed by hand,
   * or by a sweep that took a stalled upload for a dead one: gcs/code-sweep.ts) counts as absent, so a
   * driver uploads it again over it, which mends it.
   */
  async has(name: string): Promise<boolean> {
    const store = await this.opened();
    if (store === undefined) return false;
    const info = await store.info(name);
    return info !== null && !info.deleted && (await this.missingChunks(info)) === 0;
  }

  async put(name: string, data: Uint8Array): Promise<void> {
    const store = await this.opened();
    if (store === undefined) throw new OrreryError('OBJECT_STORE_MISSING', `object store ${this.name} does not exist`);
    await store.putBlob({ name }, data);
  }

  /**
   * The object's bytes, verified against its digest. An object missing chunks is OBJECT_INCOMPLETE
   * rather than a read that never ends (nats.js waits for chunks that will not come); a read that
   * gets no chunk for READ_STALL_MS is given up as TIMEOUT (the chunks went away under it, or the
   * server for good: nats.js's reader rides out a server back within that time).
   */
  async get(name: string): Promise<Uint8Array | undefined> {
    const store = await this.opened();
    if (store === undefined) return undefined;
    const info = await store.info(name);
    if (info === null || info.deleted) return undefined;
    const missing = await this.missingChunks(info);
    if (missing > 0) {
      throw new OrreryError('OBJECT_INCOMPLETE', `object ${name} in ${this.name} is missing ${missing} of its ${info.chunks} chunk(s)`, { detail: { bucket: this.name, name, missing, chunks: info.chunks } });
    }
    const result = await store.get(name);
    if (result === null) return undefined;
    // settled with the read; held here so that a failure while the read is given up is not unhandled
    const failure = result.error.then(
      () => undefined,
      (err: unknown) => err,
    );
    const reader = result.data.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      let stalled: NodeJS.Timeout | undefined;
      const next = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => {
          stalled = setTimeout(() => reject(new OrreryError('TIMEOUT', `reading object ${name} from ${this.name}: no chunk for ${READ_STALL_MS} ms`)), READ_STALL_MS);
        }),
      ]).catch(async (err: unknown) => {
        await reader.cancel().catch(() => undefined);
        throw err;
      }).finally(() => clearTimeout(stalled));
      if (next.done) break;
      parts.push(next.value);
      size += next.value.byteLength;
    }
    const failed = await failure;
    if (failed) throw failed;
    return parts.length === 1 ? parts[0] : Buffer.concat(parts, size);
  }

  /** How many of the object's chunks the stream lacks (0 for an empty object). */
  private async missingChunks(info: { nuid: string; chunks: number }): Promise<number> {
    if (info.chunks === 0) return 0;
    const jsm = await this.managed();
    const subject = this.chunkSubject(info.nuid);
    const held = (await jsm.streams.info(this.stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
    return Math.max(0, info.chunks - held);
  }

  /** Chunk subjects from the stream's subject counts, less those the objects' metadata names. */
  async unnamedChunks(): Promise<Map<string, number>> {
    const store = await this.opened();
    if (store === undefined) return new Map();
    const jsm = await this.managed();
    const prefix = this.chunkSubject('');
    const info = await jsm.streams.info(this.stream, { subjects_filter: `${prefix}>` });
    const counts = new Map<string, number>();
    for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
      if (subject.startsWith(prefix) && n > 0) counts.set(subject.slice(prefix.length), n);
    }
    if (counts.size === 0) return counts;
    for (const id of await this.namedIds(store)) counts.delete(id);
    return counts;
  }

  async removeChunks(ids: readonly string[], keepGoing?: () => boolean): Promise<number> {
    const store = await this.opened();
    if (store === undefined || ids.length === 0) return 0;
    const jsm = await this.managed();
    const named = await this.namedIds(store);
    let removed = 0;
    for (const id of ids) {
      if (keepGoing !== undefined && !keepGoing()) break;
      if (named.has(id)) continue;
      removed += (await jsm.streams.purge(this.stream, { filter: this.chunkSubject(id) })).purged;
    }
    return removed;
  }

  /** The chunk-set ids the stored objects' metadata names (deleted objects are left out: their chunks go with them). */
  private async namedIds(store: ObjectStore): Promise<Set<string>> {
    return new Set((await store.list()).map((o) => o.nuid));
  }
}
