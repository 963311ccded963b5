/**
 * Key-value buckets beside the bus: what the GCS keeps its tables in (runtime/gcs/kv-store.ts) and
 * holds its leader lease with (runtime/gcs/leader.ts). On NATS they are JetStream KV buckets
 * (nats-kv.ts, loaded only by the processes that ask for them); `MemoryKeyValue` keeps them in this
 * process, for specs and the simulator.
 *
 * Keys are what JetStream allows in a key (`[-/_=.a-zA-Z0-9]`, not starting or ending with '.');
 * `kvKey` makes one of any id. Values are opaque bytes (msgpackr records, made by their owner).
 * Every write resolves with the key's new revision once it is stored (on NATS: acknowledged by
 * JetStream); `create` and `update` are the compare-and-set pair a lease needs.
 */
export interface KvBucket {
  readonly name: string;
  put(key: string, value: Uint8Array): Promise<number>;
  /** Fails with KvConflictError when the key exists (and is not deleted). */
  create(key: string, value: Uint8Array): Promise<number>;
  /** Fails with KvConflictError unless `revision` is the key's latest revision. */
  update(key: string, value: Uint8Array, revision: number): Promise<number>;
  get(key: string): Promise<KvValue | undefined>;
  delete(key: string): Promise<void>;
  /** Every key's latest value (deleted keys left out). */
  entries(): Promise<Map<string, KvValue>>;
}

export interface KvValue {
  readonly value: Uint8Array;
  readonly revision: number;
}

export interface KeyValue {
  /** Opens the bucket, creating it (one value per key) when it does not exist. */
  bucket(name: string): Promise<KvBucket>;
}

export class KvConflictError extends Error {
  override name = 'KvConflictError';
  readonly code = 'KV_CONFLICT';
  constructor(readonly key: string, message: string) {
    super(message);
  }
}

const KEY_OK = /^[-/_=a-zA-Z0-9][-/_=.a-zA-Z0-9]*$/;

/** A valid key for any id: the id itself when JetStream allows it, else `_x` + its UTF-8 in hex. */
export function kvKey(id: string): string {
  if (KEY_OK.test(id) && !id.endsWith('.') && !id.includes('..')) return id;
  return `_x${Buffer.from(id, 'utf8').toString('hex')}`;
}

/** A valid bucket name (`[a-zA-Z0-9_-]`) from any text: other characters become '_'. */
export function bucketName(...parts: string[]): string {
  return parts.map((p) => p.replace(/[^a-zA-Z0-9_-]/g, '_')).join('_');
}

/** Buckets in this process: the same semantics as JetStream KV, revisions per bucket. */
export class MemoryKeyValue implements KeyValue {
  readonly #buckets = new Map<string, MemoryBucket>();

  async bucket(name: string): Promise<KvBucket> {
    let b = this.#buckets.get(name);
    if (!b) this.#buckets.set(name, (b = new MemoryBucket(name)));
    return b;
  }
}

class MemoryBucket implements KvBucket {
  readonly #values = new Map<string, KvValue>();
  #revision = 0;

  constructor(readonly name: string) {}

  async put(key: string, value: Uint8Array): Promise<number> {
    return this.#set(key, value);
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    if (this.#values.has(key)) throw new KvConflictError(key, `key ${key} exists in ${this.name}`);
    return this.#set(key, value);
  }

  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    const current = this.#values.get(key);
    if (current?.revision !== revision) throw new KvConflictError(key, `key ${key} of ${this.name} is at revision ${current?.revision ?? 0}, not ${revision}`);
    return this.#set(key, value);
  }

  async get(key: string): Promise<KvValue | undefined> {
    return this.#values.get(key);
  }

  async delete(key: string): Promise<void> {
    this.#revision++;
    this.#values.delete(key);
  }

  async entries(): Promise<Map<string, KvValue>> {
    return new Map(this.#values);
  }

  #set(key: string, value: Uint8Array): number {
    const revision = ++this.#revision;
    this.#values.set(key, { value: value.slice(), revision });
    return revision;
  }
}
