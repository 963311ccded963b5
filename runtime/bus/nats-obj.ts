import { jetstream } from '@nats-io/jetstream';
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
  if (opts.create) return new JetStreamObjects(bucket, async () => createReplicated(objm, bucket));
  return new JetStreamObjects(bucket, async () => {
    try {
      return await objm.open(bucket);
    } catch (err) {
      if (/not found/i.test(err instanceof Error ? err.message : String(err))) return undefined;
      throw err;
    }
  });
}

const API_TIMEOUT_MS = 10_000;
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

  constructor(readonly name: string, private readonly open: () => Promise<ObjectStore | undefined>) {}

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

  async has(name: string): Promise<boolean> {
    const store = await this.opened();
    return store !== undefined && (await store.info(name)) !== null;
  }

  async put(name: string, data: Uint8Array): Promise<void> {
    const store = await this.opened();
    if (store === undefined) throw new OrreryError('OBJECT_STORE_MISSING', `object store ${this.name} does not exist`);
    await store.putBlob({ name }, data);
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    const store = await this.opened();
    if (store === undefined) return undefined;
    return (await store.getBlob(name)) ?? undefined;
  }
}
