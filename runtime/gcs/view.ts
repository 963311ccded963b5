import type { ClusterState, SchedNode } from '../../lib/cluster/cluster-state.ts';
import { formatTaints } from '../../lib/scheduling/taints.ts';
import { encode } from '../../protocols/codec.ts';
import type { NodeView, ViewDelta } from '../../protocols/messages/view.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';

/**
 * The versioned cluster view the GCS broadcasts on `gcs.view` (ARCHITECTURE.md, "Cluster view"):
 * node resources, node labels, taints and the actors placed on each node with their labels.
 *
 * Whatever changes a node marks it dirty; a delta (`version` = `previous` + 1, the dirty live nodes
 * as upserts, the ones gone as removals) is published at most every `intervalMs` and only when
 * something is dirty. `snapshot()` first publishes what is pending, then answers the whole view at
 * that version as a delta from the empty view (`previous: 0`, no removals).
 */
export const DEFAULT_VIEW_INTERVAL_MS = 100;

export class ViewBroadcaster {
  #version = 0;
  readonly #dirty = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #lastFlush = Number.NEGATIVE_INFINITY;
  #stopped = false;

  constructor(
    private readonly deps: {
      bus: Bus;
      subjects: ClusterSubjects;
      state: ClusterState;
      intervalMs: number;
      log: (line: string) => void;
    },
  ) {}

  get version(): number {
    return this.#version;
  }

  /** Something about this node changed (or it left the scheduler's state). */
  changed(nodeId: string): void {
    if (this.#stopped) return;
    this.#dirty.add(nodeId);
    if (this.#timer !== undefined) return;
    const wait = Math.max(0, this.#lastFlush + this.deps.intervalMs - Date.now());
    this.#timer = setTimeout(() => this.flush(), wait);
  }

  /** Publishes the pending changes as one delta, if there are any. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#dirty.size === 0 || this.#stopped) return;
    const upserts: NodeView[] = [];
    const removals: string[] = [];
    for (const id of [...this.#dirty].sort()) {
      const node = this.deps.state.node(id);
      if (node && node.state !== 'DEAD') upserts.push(nodeView(node));
      else removals.push(id);
    }
    this.#dirty.clear();
    const delta: ViewDelta = { version: this.#version + 1, previous: this.#version, upserts, removals };
    this.#version = delta.version;
    this.#lastFlush = Date.now();
    try {
      this.deps.bus.publish(this.deps.subjects.view(), encode('view_delta', delta));
    } catch (err) {
      this.deps.log(`cannot publish view ${delta.version}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  snapshot(): ViewDelta {
    this.flush();
    const upserts = [...this.deps.state.nodes.values()].filter((n) => n.state !== 'DEAD').sort((a, b) => (a.id < b.id ? -1 : 1)).map(nodeView);
    return { version: this.#version, previous: 0, upserts, removals: [] };
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

export function nodeView(node: SchedNode): NodeView {
  return {
    nodeId: node.id,
    name: node.name,
    state: node.state,
    labels: { ...node.labels },
    taints: formatTaints(node.taints),
    resources: { total: { ...node.total }, available: { ...node.available } },
    actors: [...node.actors.values()].map((a) => ({ actorId: a.actorId, namespace: a.namespace, labels: { ...a.labels } })),
  };
}
