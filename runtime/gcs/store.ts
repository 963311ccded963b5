import type { ActorInfoWire, RegisterActor } from '../../protocols/messages/actor.ts';
import type { NodeInfoWire } from '../../protocols/messages/cluster.ts';
import type { RegisterNode } from '../../protocols/messages/node.ts';
import type { CreatePg, PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { JobInfoWire } from '../../protocols/messages/job.ts';

/**
 * The GCS's tables: every node and every actor it has known, with what is needed to rebuild them
 * after a restart (docs/failover.md, "Control-plane faults"). Reads are synchronous and writes
 * fire-and-forget, so a persistent implementation keeps a local copy and writes behind
 * (kv-store.ts, JetStream KV); `durable()` is how a caller waits for what it wrote to be stored
 * before it answers a request. The memory implementation below is that local copy alone.
 * Records are plain data (they survive msgpackr).
 *
 * What is not a table is derived from these on recovery: the pending queue (actors PENDING or
 * RESTARTING), named actors (names of actors not DEAD), namespaces (the actors').
 */
export interface NodeRecord {
  /** What the raylet registered with (labels as sent, taints before rare-resource taints). */
  readonly registration: RegisterNode;
  /** The node as the GCS reports it now (state, labels, taints, resources in units). */
  readonly info: NodeInfoWire;
  /** ms since epoch. */
  readonly registeredAt: number;
}

export interface ActorRecord {
  /** The register_actor request: code, namespace, name, options as plain data. */
  readonly registration: RegisterActor;
  /** The actor as the GCS reports it now. */
  readonly info: ActorInfoWire;
  /** The Actor machine's incarnation (0 until a restart); default 0. */
  readonly incarnation?: number;
}

export interface GroupRecord {
  /** The create_pg request: bundles, strategy, options as plain data. */
  readonly registration: CreatePg;
  /** The group as the GCS reports it now (state, and where each bundle is). */
  readonly info: PlacementGroupInfoWire;
}

export interface JobRecord {
  /** The job as the GCS reports it now. */
  readonly info: JobInfoWire;
  /** SHA-256 of the job's secret, hex (jobs.ts): the secret itself is never stored. */
  readonly secretHash: string;
}

/** Small counters kept across restarts. */
export type MetaKey = 'eventSeq';

export interface GcsStore {
  getNode(nodeId: string): NodeRecord | undefined;
  putNode(record: NodeRecord): void;
  /** Forgets a node: a dead node past the retention bound (nodes.ts). A no-op for an id not held. */
  deleteNode(nodeId: string): void;
  nodes(): NodeRecord[];
  getActor(actorId: string): ActorRecord | undefined;
  putActor(record: ActorRecord): void;
  /**
   * Forgets an actor: the GCS no longer reports it (a dead actor past the retention bound,
   * dead-actors.ts). Deleting an id the store does not hold is a no-op. Fire-and-forget like puts.
   */
  deleteActor(actorId: string): void;
  actors(): ActorRecord[];
  putGroup(record: GroupRecord): void;
  /** Forgets a group: a REMOVED one past the retention bound (placement-groups.ts). */
  deleteGroup(pgId: string): void;
  groups(): GroupRecord[];
  putJob(record: JobRecord): void;
  /** Forgets a job (a finished one past the retention bound); fire-and-forget like puts. */
  deleteJob(jobId: string): void;
  jobs(): JobRecord[];
  getMeta(key: MetaKey): number | undefined;
  putMeta(key: MetaKey, value: number): void;
  /** Table sizes, for snapshots and specs. */
  counts(): { nodes: number; actors: number };
  /** Resolves once every write made before the call is stored; rejects when one failed. */
  durable(): Promise<void>;
  /** Whether the tables outlive this GCS (a restarted GCS recovers from them). */
  readonly persistent: boolean;
  /** Stores what is still pending, then lets go. */
  close(): Promise<void>;
}

export class MemoryStore implements GcsStore {
  readonly persistent: boolean = false;
  readonly #nodes = new Map<string, NodeRecord>();
  readonly #actors = new Map<string, ActorRecord>();
  readonly #meta = new Map<MetaKey, number>();
  readonly #groups = new Map<string, GroupRecord>();
  readonly #jobs = new Map<string, JobRecord>();

  getNode(nodeId: string): NodeRecord | undefined {
    return this.#nodes.get(nodeId);
  }

  putNode(record: NodeRecord): void {
    this.#nodes.set(record.info.nodeId, record);
  }

  deleteNode(nodeId: string): void {
    this.#nodes.delete(nodeId);
  }

  nodes(): NodeRecord[] {
    return [...this.#nodes.values()];
  }

  getActor(actorId: string): ActorRecord | undefined {
    return this.#actors.get(actorId);
  }

  putActor(record: ActorRecord): void {
    this.#actors.set(record.info.actorId, record);
  }

  deleteActor(actorId: string): void {
    this.#actors.delete(actorId);
  }

  actors(): ActorRecord[] {
    return [...this.#actors.values()];
  }

  putGroup(record: GroupRecord): void {
    this.#groups.set(record.info.id, record);
  }

  deleteGroup(pgId: string): void {
    this.#groups.delete(pgId);
  }

  groups(): GroupRecord[] {
    return [...this.#groups.values()];
  }

  putJob(record: JobRecord): void {
    this.#jobs.set(record.info.jobId, record);
  }

  deleteJob(jobId: string): void {
    this.#jobs.delete(jobId);
  }

  jobs(): JobRecord[] {
    return [...this.#jobs.values()];
  }

  getMeta(key: MetaKey): number | undefined {
    return this.#meta.get(key);
  }

  putMeta(key: MetaKey, value: number): void {
    this.#meta.set(key, value);
  }

  counts(): { nodes: number; actors: number } {
    return { nodes: this.#nodes.size, actors: this.#actors.size };
  }

  durable(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {}
}
