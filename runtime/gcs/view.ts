import type { ClusterState, PlacedActor, SchedNode } from '../../lib/cluster/cluster-state.ts';
import { formatTaints } from '../../lib/scheduling/taints.ts';
import { encode } from '../../protocols/codec.ts';
import type { NodeView, ResourceChanges, ViewDelta } from '../../protocols/messages/view.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';

/**
 * The versioned cluster view the GCS broadcasts on `gcs.view` (ARCHITECTURE.md, "Cluster view"):
 * node resources, node labels, taints and the actors placed on each node with their labels.
 *
 * Whatever changes a node marks it dirty; a delta (`version` = `previous` + 1, the dirty live nodes
 * as upserts, the ones gone as removals) is published at most every `intervalMs` and only when
 * something is dirty. Resources and actors travel as changes: the broadcaster remembers, per node,
 * the value of each resource name and which actors it last sent, and puts only the names whose
 * value changed (`resourcesChanged`, names gone in `removed`) and the actors placed and removed in
 * the delta, so a delta stays small when nodes hold the bundles of thousands of placement groups or
 * the cluster runs many actors (a node's full sets and list go only to a raylet that has none: in
 * snapshots, and the first time a node is sent). The names to compare are those the ClusterState
 * recorded as changed (`trackResourceChanges`), so a delta costs the GCS what changed, not the
 * nodes' sizes — and it is one broadcast, whatever the number of raylets. `snapshot()` first publishes
 * what is pending, then answers the whole view at that version as a delta from the empty view
 * (`previous: 0`).
 */
export const DEFAULT_VIEW_INTERVAL_MS = 100;

export class ViewBroadcaster {
  #version = 0;
  readonly #dirty = new Set<string>();
  /**
   * For each live node, the actors and resources the last published delta left it with. An actor is
   * kept as the ClusterState's own placement entry: a new entry is made on every placement and never
   * changed, so the same object means the same namespace and labels (no per-flush serialising).
   */
  readonly #sent = new Map<string, { actors: Map<string, PlacedActor>; total: Record<string, number>; available: Record<string, number> }>();
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
  ) {
    deps.state.trackResourceChanges();
  }

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
    const actorsRemoved: { nodeId: string; actorId: string }[] = [];
    const actorsPlaced: { nodeId: string; actorId: string; namespace: string; labels: Record<string, string> }[] = [];
    for (const id of [...this.#dirty].sort()) {
      const node = this.deps.state.node(id);
      if (!node || node.state === 'DEAD') {
        removals.push(id);
        this.#sent.delete(id);
        continue;
      }
      const sent = this.#sent.get(id);
      const names = this.deps.state.takeResourceChanges(id);
      if (!sent) {
        const view = nodeView(node);
        upserts.push(view);
        this.#sent.set(id, {
          actors: new Map(node.actors),
          total: { ...view.resources!.total },
          available: { ...view.resources!.available },
        });
        continue;
      }
      const resourcesChanged = names === undefined ? undefined : changedResources(node, sent, names);
      upserts.push({
        ...nodeHeader(node),
        ...(resourcesChanged === 'all'
          ? { resources: { total: { ...sent.total }, available: { ...sent.available } } }
          : resourcesChanged
            ? { resourcesChanged }
            : {}),
      });
      const actors = sent.actors;
      for (const [actorId, placed] of actors) {
        if (node.actors.get(actorId) !== placed) {
          actorsRemoved.push({ nodeId: id, actorId });
          actors.delete(actorId);
        }
      }
      for (const a of node.actors.values()) {
        if (actors.has(a.actorId)) continue;
        actorsPlaced.push({ nodeId: id, actorId: a.actorId, namespace: a.namespace, labels: { ...a.labels } });
        actors.set(a.actorId, a);
      }
    }
    this.#dirty.clear();
    const delta: ViewDelta = {
      version: this.#version + 1,
      previous: this.#version,
      upserts,
      removals,
      ...(actorsRemoved.length ? { actorsRemoved } : {}),
      ...(actorsPlaced.length ? { actorsPlaced } : {}),
    };
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

/**
 * Of `names` (all the node's names when 'all'), those whose value differs from what was last sent
 * for the node, and those it no longer has; `sent` is brought up to date. Undefined when nothing
 * changed; 'all' when the change cannot be told by names (a name left one set but not the other):
 * then the node's whole sets go.
 */
function changedResources(
  node: SchedNode,
  sent: { total: Record<string, number>; available: Record<string, number> },
  names: Iterable<string> | 'all',
): ResourceChanges | 'all' | undefined {
  const total: Record<string, number> = {};
  const available: Record<string, number> = {};
  const removed: string[] = [];
  let some = false;
  for (const name of names === 'all' ? allNames(node, sent) : names) {
    const inTotal = Object.hasOwn(node.total, name);
    const inAvailable = Object.hasOwn(node.available, name);
    if (!inTotal && !inAvailable) {
      if (Object.hasOwn(sent.total, name) || Object.hasOwn(sent.available, name)) {
        removed.push(name);
        delete sent.total[name];
        delete sent.available[name];
        some = true;
      }
      continue;
    }
    if ((!inTotal && Object.hasOwn(sent.total, name)) || (!inAvailable && Object.hasOwn(sent.available, name))) {
      sent.total = { ...node.total };
      sent.available = { ...node.available };
      return 'all';
    }
    if (inTotal && sent.total[name] !== node.total[name]) {
      total[name] = sent.total[name] = node.total[name];
      some = true;
    }
    if (inAvailable && sent.available[name] !== node.available[name]) {
      available[name] = sent.available[name] = node.available[name];
      some = true;
    }
  }
  if (!some) return undefined;
  return {
    ...(Object.keys(total).length ? { total } : {}),
    ...(Object.keys(available).length ? { available } : {}),
    ...(removed.length ? { removed } : {}),
  };
}

/** Every name the node has or was last sent with. */
function allNames(node: SchedNode, sent: { total: Record<string, number>; available: Record<string, number> }): Set<string> {
  const names = new Set(Object.keys(node.total));
  for (const name in node.available) names.add(name);
  for (const name in sent.total) names.add(name);
  for (const name in sent.available) names.add(name);
  return names;
}

/** A node as an upsert names it, without its resources or actors. */
function nodeHeader(node: SchedNode): NodeView {
  return { nodeId: node.id, name: node.name, state: node.state, labels: { ...node.labels }, taints: formatTaints(node.taints) };
}

/** A node with its whole resource sets and actor list (snapshots, and a node's first delta). */
export function nodeView(node: SchedNode): NodeView {
  return {
    ...nodeHeader(node),
    resources: { total: { ...node.total }, available: { ...node.available } },
    actors: [...node.actors.values()].map((a) => ({ actorId: a.actorId, namespace: a.namespace, labels: { ...a.labels } })),
  };
}
