import type { ActorInfoWire, RegisterActor } from '../../protocols/messages/actor.ts';
import type { NodeInfoWire } from '../../protocols/messages/cluster.ts';
import type { RegisterNode } from '../../protocols/messages/node.ts';

/**
 * The GCS's tables: every node and every actor it has known, with what is needed to rebuild them.
 * Reads are synchronous and writes fire-and-forget, so a persistent implementation (JetStream KV)
 * keeps a local copy and writes behind; the memory implementation below is that local copy alone.
 * Records are plain data (they survive msgpackr).
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
}

export interface GcsStore {
  getNode(nodeId: string): NodeRecord | undefined;
  putNode(record: NodeRecord): void;
  nodes(): NodeRecord[];
  getActor(actorId: string): ActorRecord | undefined;
  putActor(record: ActorRecord): void;
  /**
   * Forgets an actor: the GCS no longer reports it (a dead actor past the retention bound,
   * dead-actors.ts). Deleting an id the store does not hold is a no-op. Fire-and-forget like puts.
   */
  deleteActor(actorId: string): void;
  actors(): ActorRecord[];
  /** Table sizes, for snapshots and specs. */
  counts(): { nodes: number; actors: number };
}

export class MemoryStore implements GcsStore {
  readonly #nodes = new Map<string, NodeRecord>();
  readonly #actors = new Map<string, ActorRecord>();

  getNode(nodeId: string): NodeRecord | undefined {
    return this.#nodes.get(nodeId);
  }

  putNode(record: NodeRecord): void {
    this.#nodes.set(record.info.nodeId, record);
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

  counts(): { nodes: number; actors: number } {
    return { nodes: this.#nodes.size, actors: this.#actors.size };
  }
}
