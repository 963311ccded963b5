import { decode, encode } from '../../protocols/codec.ts';
import { storedRecords } from '../../protocols/messages/stored.ts';
import { bucketName, kvKey, type KeyValue, type KvBucket } from '../bus/kv.ts';
import { WriteBehind } from './write-behind.ts';
import { MemoryStore, type ActorRecord, type GcsStore, type GroupRecord, type JobRecord, type MetaKey, type NodeRecord } from './store.ts';
import { withoutBundleResources } from '../../protocols/messages/cluster.ts';

/**
 * The GCS's tables in JetStream KV (one bucket per table: `orrery_<cluster>_nodes|actors|groups|jobs|meta`,
 * keys by id, values the codec's `stored_*` records). Reads come from a local copy (a MemoryStore)
 * loaded once at open; writes change the copy at once and go to the buckets behind it, gathered
 * per event-loop turn with only a key's latest value written, so an actor that changes state three
 * times in one turn costs one put (write-behind.ts). `durable()` resolves once everything written before it is
 * acknowledged by JetStream: the GCS answers register_actor, kill_actor and the like only then, so
 * nothing it acknowledged is lost with it. A put that fails (the server away for a moment, a NATS
 * cluster electing the bucket's stream leader) is tried again after `retryMs` unless a newer value
 * replaced it; durable() waits for it. While the GCS's leader lease has lapsed (`valid()` false: its
 * renewals could not reach JetStream) writes are held, not dropped: a renewal that goes through at
 * the same revision proves the tables are still this GCS's, and they are written then. Only
 * `close()` (the GCS stepped down) lets go of what is unwritten — the tables are the new leader's.
 *
 * Records read at open are validated like wire messages: one that does not decode (written by
 * someone else, or by a future version) is left out and counted in `refused`, never trusted.
 */
type Table = 'nodes' | 'actors' | 'groups' | 'jobs' | 'meta';

export interface KvStoreOptions {
  cluster: string;
  log: (line: string) => void;
  /** Pause before a failed write is tried again; default 500 ms. */
  retryMs?: number;
  /**
   * Whether this GCS may write now (its leader lease is valid, leader.ts); default always. While it
   * is false writes wait; a GCS that lost the lease for good closes the store instead.
   */
  valid?: () => boolean;
}

export class KvStore implements GcsStore {
  readonly persistent = true;
  readonly #local = new MemoryStore();
  readonly #writes: WriteBehind;
  /** Records read at open that did not validate. */
  refused = 0;

  private constructor(
    private readonly buckets: Record<Table, KvBucket>,
    private readonly opts: KvStoreOptions,
  ) {
    this.#writes = new WriteBehind({ log: opts.log, ...(opts.retryMs === undefined ? {} : { retryMs: opts.retryMs }), ...(opts.valid ? { mayWrite: opts.valid } : {}) });
  }

  /** Opens (creating when missing) the cluster's buckets and loads every record. */
  static async open(kv: KeyValue, opts: KvStoreOptions): Promise<KvStore> {
    const open = (table: Table) => kv.bucket(bucketName('orrery', opts.cluster, table));
    const [nodes, actors, groups, jobs, meta] = await Promise.all([open('nodes'), open('actors'), open('groups'), open('jobs'), open('meta')]);
    const store = new KvStore({ nodes, actors, groups, jobs, meta }, opts);
    await store.#load();
    return store;
  }

  async #load(): Promise<void> {
    const [nodes, actors, groups, jobs, meta] = await Promise.all([
      this.buckets.nodes.entries(),
      this.buckets.actors.entries(),
      this.buckets.groups.entries(),
      this.buckets.jobs.entries(),
      this.buckets.meta.entries(),
    ]);
    for (const { value } of nodes.values()) {
      const body = this.#read(value, 'stored_node');
      if (body) this.#local.putNode(body as NodeRecord);
    }
    for (const { value } of actors.values()) {
      const body = this.#read(value, 'stored_actor');
      if (body) this.#local.putActor(body as ActorRecord);
    }
    for (const { value } of groups.values()) {
      const body = this.#read(value, 'stored_group');
      if (body) this.#local.putGroup(body as GroupRecord);
    }
    for (const { value } of jobs.values()) {
      const body = this.#read(value, 'stored_job');
      if (body) this.#local.putJob(body as JobRecord);
    }
    for (const [key, { value }] of meta) {
      const body = this.#read(value, 'stored_meta') as { value: number } | undefined;
      if (body && key === 'eventSeq') this.#local.putMeta(key, body.value);
    }
    if (this.refused > 0) this.opts.log(`left out ${this.refused} stored record(s) that do not validate`);
  }

  #read(bytes: Uint8Array, type: keyof typeof storedRecords): unknown {
    try {
      const decoded = decode(bytes, { registry: { [type]: storedRecords[type] } });
      return decoded.body;
    } catch {
      this.refused++;
      return undefined;
    }
  }

  getNode(nodeId: string): NodeRecord | undefined {
    return this.#local.getNode(nodeId);
  }

  putNode(record: NodeRecord): void {
    this.#local.putNode(record);
    // without bundle resources: a restart takes a node's resources from its raylet's registration
    // and its bundles from the group table; stored, a node holding 5,000 bundles was ~1.2 MB, past
    // the message size limit, and none of it (labels and taints set by hand included) was kept
    this.#write('nodes', record.info.nodeId, () => encode('stored_node', Object.assign({}, record, { info: withoutBundleResources(record.info) })));
  }

  deleteNode(nodeId: string): void {
    this.#local.deleteNode(nodeId);
    this.#write('nodes', nodeId, () => undefined);
  }

  nodes(): NodeRecord[] {
    return this.#local.nodes();
  }

  getActor(actorId: string): ActorRecord | undefined {
    return this.#local.getActor(actorId);
  }

  putActor(record: ActorRecord): void {
    this.#local.putActor(record);
    this.#write('actors', record.info.actorId, () => encode('stored_actor', Object.assign({}, record, { incarnation: record.incarnation ?? 0 })));
  }

  deleteActor(actorId: string): void {
    this.#local.deleteActor(actorId);
    this.#write('actors', actorId, () => undefined);
  }

  actors(): ActorRecord[] {
    return this.#local.actors();
  }

  putGroup(record: GroupRecord): void {
    this.#local.putGroup(record);
    this.#write('groups', record.info.id, () => encode('stored_group', record));
  }

  deleteGroup(pgId: string): void {
    this.#local.deleteGroup(pgId);
    this.#write('groups', pgId, () => undefined);
  }

  groups(): GroupRecord[] {
    return this.#local.groups();
  }

  putJob(record: JobRecord): void {
    this.#local.putJob(record);
    this.#write('jobs', record.info.jobId, () => encode('stored_job', record));
  }

  deleteJob(jobId: string): void {
    this.#local.deleteJob(jobId);
    this.#write('jobs', jobId, () => undefined);
  }

  jobs(): JobRecord[] {
    return this.#local.jobs();
  }

  getMeta(key: MetaKey): number | undefined {
    return this.#local.getMeta(key);
  }

  putMeta(key: MetaKey, value: number): void {
    this.#local.putMeta(key, value);
    this.#write('meta', key, () => encode('stored_meta', { value }));
  }

  counts(): { nodes: number; actors: number } {
    return this.#local.counts();
  }

  durable(): Promise<void> {
    return this.#writes.durable();
  }

  /**
   * Stores what is pending while this GCS may still write, then lets go; a GCS without a valid
   * lease (it stepped down) drops it instead: waiting for a lease that will not come back would hang.
   */
  close(): Promise<void> {
    return this.#writes.close();
  }

  #write(table: Table, id: string, bytes: () => Uint8Array | undefined): void {
    this.#writes.write(this.buckets[table], kvKey(id), bytes);
  }
}
