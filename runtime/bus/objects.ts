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
  /**
   * The chunk sets no stored object names, by id, each with how many chunks it holds: what a put
   * cut off midway left behind (its name is written after its chunks), or chunks written by hand.
   * A put still running shows here too until its name is written; the caller tells them apart
   * (runtime/gcs/code-sweep.ts). Empty when the bucket does not exist.
   */
  unnamedChunks?(): Promise<Map<string, number>>;
  /**
   * Removes the chunk sets of these ids, skipping any an object has come to name since they were
   * listed; resolves to how many chunks went. `keepGoing`, asked before each set, stops the
   * removal when it says no (a GCS that no longer holds its lease: runtime/gcs/code-sweep.ts).
   */
  removeChunks?(ids: readonly string[], keepGoing?: () => boolean): Promise<number>;
}

export interface ObjectBucketOptions {
  /**
   * Create the bucket when it does not exist (a writer). Without it a bucket that does not exist
   * reads as empty (a reader that may not create one), and is looked for again at the next read.
   */
  readonly create: boolean;
}
