/**
 * Object buckets beside the bus: large values by name, in chunks (a JetStream object store on NATS,
 * nats-obj.ts). Shipped code lives in one (runtime/code/). The memory bus has none.
 */
export interface ObjectBucket {
  readonly name: string;
  /** Whether an object of this name is stored. */
  has(name: string): Promise<boolean>;
  /** Stores `data` under `name` (replacing what was there). */
  put(name: string, data: Uint8Array): Promise<void>;
  /** The object's bytes (verified against the digest the store keeps), or undefined when there is none. */
  get(name: string): Promise<Uint8Array | undefined>;
}

export interface ObjectBucketOptions {
  /**
   * Create the bucket when it does not exist (a writer). Without it a bucket that does not exist
   * reads as empty (a reader that may not create one), and is looked for again at the next read.
   */
  readonly create: boolean;
}
