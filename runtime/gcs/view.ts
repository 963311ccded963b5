import type { ClusterState, PlacedActor, SchedNode } from '../../lib/cluster/cluster-state.ts';
import { formatTaints } from '../../lib/scheduling/taints.ts';
import { DEFAULT_MAX_BYTES, encode, encodedSize } from '../../protocols/codec.ts';
import type { NodeView, ResourceChanges, ViewDelta } from '../../protocols/messages/view.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import { OrreryError } from '../../lib/errors.ts';
import { pageOf } from './paging.ts';

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
/** How long a snapshot being read in pages is kept after its last page was read. */
export const SNAPSHOT_TTL_MS = 30_000;
const MAX_SNAPSHOTS_KEPT = 4;

/** A lookup from node id to its view in a list sorted by id (a snapshot's upserts are). */
function indexed(nodes: readonly NodeView[]): (id: string) => NodeView | undefined {
  const byId = new Map(nodes.map((n) => [n.nodeId, n] as const));
  return (id) => byId.get(id);
}

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
  /** Snapshots being read in pages, by version. */
  readonly #snapshots = new Map<number, { nodes: NodeView[]; readAt: number }>();
  #lastFlush = Number.NEGATIVE_INFINITY;
  #stopped = false;

  constructor(
    private readonly deps: {
      bus: Bus;
      subjects: ClusterSubjects;
      state: ClusterState;
      intervalMs: number;
      log: (line: string) => void;
      /** Largest message; a delta that would be larger goes as several (default 1 MiB). */
      maxBytes?: number;
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
    const whole: ViewDelta = {
      version: this.#version + 1,
      previous: this.#version,
      upserts,
      removals,
      ...(actorsRemoved.length ? { actorsRemoved } : {}),
      ...(actorsPlaced.length ? { actorsPlaced } : {}),
    };
    this.#lastFlush = Date.now();
    const maxBytes = this.deps.maxBytes ?? DEFAULT_MAX_BYTES;
    let encoded: Uint8Array | undefined;
    try {
      encoded = encode('view_delta', whole, { maxBytes });
    } catch {
      encoded = undefined; // too large for one message: sent in parts below
    }
    const parts = encoded ? [{ delta: whole, bytes: encoded }] : splitDelta(whole, maxBytes);
    for (const { delta, bytes } of parts) {
      this.#version = delta.version;
      try {
        this.deps.bus.publish(this.deps.subjects.view(), bytes);
      } catch (err) {
        this.deps.log(`cannot publish view ${delta.version}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /**
   * One page of the whole view (`view_snapshot`). The first page freezes the view as it is (after
   * publishing what is pending) and the following ones read that same frozen copy, kept by version
   * until SNAPSHOT_TTL_MS after it was last read (a few at a time, for raylets reading at once);
   * each page is filled up to the message size limit (paging.ts).
   */
  snapshotPage(query: { after?: string; version?: number }, opts: { maxBytes?: number } = {}): ViewDelta {
    const now = performance.now();
    for (const [version, kept] of this.#snapshots) if (now - kept.readAt > SNAPSHOT_TTL_MS) this.#snapshots.delete(version);
    let kept: { nodes: NodeView[]; readAt: number } | undefined;
    let version: number;
    if (query.after === undefined) {
      const whole = this.snapshot();
      version = whole.version;
      kept = this.#snapshots.get(version) ?? { nodes: whole.upserts, readAt: now };
      this.#snapshots.set(version, kept);
      while (this.#snapshots.size > MAX_SNAPSHOTS_KEPT) this.#snapshots.delete(this.#snapshots.keys().next().value!);
    } else {
      version = query.version ?? -1;
      kept = this.#snapshots.get(version);
      if (!kept) throw new OrreryError('SNAPSHOT_MOVED', `view snapshot ${query.version ?? '(no version)'} is no longer kept: read it again from the first page`, { detail: { version: query.version ?? null } });
    }
    kept.readAt = now;
    const nodes = kept.nodes;
    const page = pageOf({ keys: nodes.map((n) => n.nodeId), get: indexed(nodes) }, { after: query.after, limit: Number.MAX_SAFE_INTEGER }, opts);
    return { version, previous: 0, upserts: page.items, removals: [], ...(page.next === undefined ? {} : { next: page.next }) };
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
 * A delta too large for one message, as several consecutive ones that add up to it: each part is a
 * delta of its own (`previous` = the part before), so a raylet applies them one after another as it
 * would any deltas, and a raylet that misses one asks for a snapshot as it would anyway. Node upserts
 * and removals go first, then actor removals, then placements — a placement only ever refers to a
 * node an earlier part (or an earlier delta) sent. Creating thousands of actors within one view
 * interval made a single delta of megabytes, over the bus's limit: it was dropped whole (bench/sim).
 */
export function splitDelta(delta: ViewDelta, maxBytes: number): { delta: ViewDelta; bytes: Uint8Array }[] {
  const budget = Math.max(1024, Math.floor(maxBytes * 0.9) - 256);
  type Item = { kind: 'upsert'; value: NodeView } | { kind: 'removal'; value: string } | { kind: 'removed'; value: { nodeId: string; actorId: string } } | { kind: 'placed'; value: NonNullable<ViewDelta['actorsPlaced']>[number] };
  const items: Item[] = [
    ...delta.upserts.map((value) => ({ kind: 'upsert' as const, value })),
    ...delta.removals.map((value) => ({ kind: 'removal' as const, value })),
    ...(delta.actorsRemoved ?? []).map((value) => ({ kind: 'removed' as const, value })),
    ...(delta.actorsPlaced ?? []).map((value) => ({ kind: 'placed' as const, value })),
  ];
  const out: { delta: ViewDelta; bytes: Uint8Array }[] = [];
  let version = delta.previous;
  let part: Item[] = [];
  let size = 0;
  const emit = (): void => {
    if (part.length === 0) return;
    const next: ViewDelta = {
      version: version + 1,
      previous: version,
      upserts: part.filter((i) => i.kind === 'upsert').map((i) => i.value as NodeView),
      removals: part.filter((i) => i.kind === 'removal').map((i) => i.value as string),
    };
    const removed = part.filter((i) => i.kind === 'removed').map((i) => i.value as { nodeId: string; actorId: string });
    const placed = part.filter((i) => i.kind === 'placed').map((i) => i.value as NonNullable<ViewDelta['actorsPlaced']>[number]);
    if (removed.length) next.actorsRemoved = removed;
    if (placed.length) next.actorsPlaced = placed;
    // a single item over the limit (a node with an enormous label set) throws here, as before
    out.push({ delta: next, bytes: encode('view_delta', next, { maxBytes }) });
    version = next.version;
    part = [];
    size = 0;
  };
  for (const item of items) {
    const itemSize = encodedSize(item.value);
    if (size + itemSize > budget) emit();
    part.push(item);
    size += itemSize;
  }
  emit();
  return out;
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
