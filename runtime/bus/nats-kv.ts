import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';
import { KvConflictError, type KeyValue, type KvBucket, type KvValue } from './kv.ts';

/**
 * JetStream KV behind the KeyValue interface (kv.ts). Loaded with a dynamic import by the one
 * process that keeps tables (the GCS), so raylets and worker hosts never load the JetStream client.
 * Buckets keep one value per key (history 1) in file storage with one replica; `open` fails with
 * JETSTREAM_UNAVAILABLE when the server runs without JetStream.
 */
export async function openJetStreamKv(nc: NatsConnection): Promise<KeyValue> {
  try {
    await jetstreamManager(nc, { timeout: 5000 });
  } catch (err) {
    throw new OrreryError('JETSTREAM_UNAVAILABLE', `the NATS server has no JetStream (start it with -js): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const kvm = new Kvm(nc);
  return {
    async bucket(name: string): Promise<KvBucket> {
      return new JetStreamBucket(name, await kvm.create(name, { history: 1 }));
    },
  };
}

/** JetStream's "wrong last sequence" (err_code 10071) is how a failed compare-and-set reads. */
function isConflict(err: unknown): boolean {
  const e = err as { message?: string; api_error?: { err_code?: number } } | null;
  return e?.api_error?.err_code === 10071 || /wrong last sequence|key exists/i.test(e?.message ?? '');
}

class JetStreamBucket implements KvBucket {
  constructor(readonly name: string, private readonly kv: KV) {}

  put(key: string, value: Uint8Array): Promise<number> {
    return this.kv.put(key, value);
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    try {
      return await this.kv.create(key, value);
    } catch (err) {
      if (isConflict(err)) throw new KvConflictError(key, `key ${key} exists in ${this.name}`);
      throw err;
    }
  }

  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    try {
      return await this.kv.update(key, value, revision);
    } catch (err) {
      if (isConflict(err)) throw new KvConflictError(key, `key ${key} of ${this.name} is not at revision ${revision}`);
      throw err;
    }
  }

  async get(key: string): Promise<KvValue | undefined> {
    const e = await this.kv.get(key);
    if (!e || e.operation !== 'PUT') return undefined;
    return { value: e.value, revision: e.revision };
  }

  async delete(key: string): Promise<void> {
    await this.kv.delete(key);
  }

  /**
   * Every key's latest value, through one watcher: the stream's message count says whether there is
   * anything at all, and the watcher marks the last of the values present when it started with
   * `isUpdate` (what comes after it is not read).
   */
  async entries(): Promise<Map<string, KvValue>> {
    const out = new Map<string, KvValue>();
    if ((await this.kv.status()).values === 0) return out;
    const watch = await this.kv.watch();
    try {
      for await (const e of watch) {
        if (e.operation === 'PUT') out.set(e.key, { value: e.value, revision: e.revision });
        else out.delete(e.key);
        if (e.isUpdate) break;
      }
    } finally {
      watch.stop();
    }
    return out;
  }
}
