import { toLabelRecord } from '../../lib/cluster/actor-label-counts.ts';
import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { SchedNode } from '../../lib/cluster/sched-node.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import { formatTaints } from '../../lib/scheduling/taints.ts';
import { DEFAULT_MAX_BYTES, encode, encodedSize } from '../../protocols/codec.ts';
import type { NodeView, ResourceChanges, ViewDelta } from '../../protocols/messages/view.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import { OrreryError } from '../../lib/errors.ts';
import { pageOf } from './paging.ts';
import { nameRuns, splitDelta } from './view-parts.ts';

export { splitDelta } from './view-parts.ts';

/**
 * The versioned cluster view the GCS broadcasts on `gcs.view` (ARCHITECTURE.md, "Cluster view"):
 * node resources, node labels, taints, each node's actor-label reference counts (seed 000's
 * namespace → key → value → count; never the actors) and the nodes' load reports.
 *
 * Whatever changes a node marks it dirty; a delta (`version` = `previous` + 1, the dirty live nodes
 * as upserts, the ones gone as removals) is published at most every `intervalMs` and only when
 * something is dirty or a load report came. Resources and actor labels travel as changes: the
 * broadcaster remembers, per node, its header and the value of each resource name it last sent, and
 * upserts a node only when those changed, with only the names whose value changed
 * (`resourcesChanged`, names gone in `removed`); the ClusterState sums, per node and label, how
 * placements and removals moved the counts since the last delta (`trackActorLabelChanges`), and
 * those sums go in the delta's `actorLabelsChanged` — one entry per label per period, however many
 * actors moved it, and no node upsert for it. A node's full sets and counts go only to a raylet that
 * has none: in snapshots, and the first time a node is sent. The names to compare are those the
 * ClusterState recorded as changed (`trackResourceChanges`), so a delta costs the GCS what changed,
 * not the nodes' sizes — and it is one broadcast, whatever the number of raylets.
 *
 * Load reports (`raylet.*.load`, which only the GCS subscribes: `load`) ride along: the latest report
 * of each node since the previous delta goes in its `loads`, so raylets learn each other's load from
 * one broadcast per period instead of every raylet hearing every other (N² messages).
 *
 * `snapshot()` first publishes what is pending, then answers the whole view at that version as a
 * delta from the empty view (`previous: 0`), with the last load report of each node.
 */
export const DEFAULT_VIEW_INTERVAL_MS = 100;
/** How long a snapshot being read in pages is kept after its last page was read. */
export const SNAPSHOT_TTL_MS = 30_000;
const MAX_SNAPSHOTS_KEPT = 4;

/**
 * A snapshot's nodes as page items, keyed by node id in id order. A node too large for half a page
 * (the resource names of thousands of bundles) is several items: the first keyed by its id, with its
 * header, label counts and a run of its names; the others keyed `<nodeId> <first name of the run>`
 * (a space sorts below every character of an id, so the parts follow the node and precede the next),
 * with the header and the next runs. A raylet joins consecutive upserts of one node (raylet-tasks.ts).
 * Without this a snapshot page with such a node could not be sent, and no raylet could load the view.
 */
function snapshotParts(nodes: readonly NodeView[], maxBytes: number): { key: string; node: NodeView }[] {
  const half = Math.floor((maxBytes - 1024) / 2);
  return nodes.flatMap((n) => {
    if (n.resources === undefined || encodedSize(n) <= half) return [{ key: n.nodeId, node: n }];
    const { resources, actorLabels, ...header } = n;
    const runs = nameRuns(resources.total, resources.available, [], Math.max(1024, half - encodedSize(header) - (actorLabels ? encodedSize(actorLabels) : 0)));
    return runs.map((run, i) => {
      const node: NodeView = Object.assign({}, header, { resources: { total: run.total, available: run.available } }, i === 0 && actorLabels ? { actorLabels } : {});
      return { key: i === 0 ? n.nodeId : `${n.nodeId} ${run.first}`, node };
    });
  });
}

/** A snapshot kept while raylets read it in pages: its node ids sorted, a lookup, their load reports. */
interface KeptSnapshot {
  readonly keys: readonly string[];
  readonly get: (id: string) => NodeView | undefined;
  readonly loads: Map<string, { seq: number; available: ResourceSet }>;
  /** Pages already made, by where they start and the size limit: raylets reading at once read the same ones. */
  readonly pages: Map<string, ViewDelta>;
  readAt: number;
}

export class ViewBroadcaster {
  #version = 0;
  readonly #dirty = new Set<string>();
  /** For each live node, the header (name, state, labels, taints) and resources the last published delta left it with. */
  readonly #sent = new Map<string, { header: NodeView; total: Record<string, number>; available: Record<string, number> }>();
  /** The last load report of each live node, with the GCS's own count of them as `seq`. */
  readonly #loads = new Map<string, { seq: number; available: ResourceSet }>();
  /** Nodes whose load report came since the last delta. */
  readonly #loadsDue = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  /** Snapshots being read in pages, by version. */
  readonly #snapshots = new Map<number, KeptSnapshot>();
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
    deps.state.trackActorLabelChanges();
  }

  get version(): number {
    return this.#version;
  }

  /** Something about this node changed (or it left the scheduler's state). */
  changed(nodeId: string): void {
    if (this.#stopped) return;
    this.#dirty.add(nodeId);
    this.#schedule();
  }

  /**
   * A raylet's load report (what its node has free): goes out in the next delta. A node the
   * scheduler does not hold (unknown, or gone) is ignored; false then.
   */
  load(nodeId: string, available: ResourceSet): boolean {
    const node = this.deps.state.node(nodeId);
    if (this.#stopped || !node || node.state === 'DEAD') return false;
    const last = this.#loads.get(nodeId);
    if (last && sameSet(last.available, available)) return true; // nothing new to pass on
    this.#loads.set(nodeId, { seq: (last?.seq ?? 0) + 1, available });
    this.#loadsDue.add(nodeId);
    this.#schedule();
    return true;
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    const wait = Math.max(0, this.#lastFlush + this.deps.intervalMs - Date.now());
    this.#timer = setTimeout(() => this.flush(), wait);
  }

  /** Publishes the pending changes as one delta, if there are any. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if ((this.#dirty.size === 0 && this.#loadsDue.size === 0) || this.#stopped) return;
    const upserts: NodeView[] = [];
    const removals: string[] = [];
    const actorLabelsChanged: NonNullable<ViewDelta['actorLabelsChanged']> = [];
    const { state } = this.deps;
    for (const id of [...this.#dirty].sort()) {
      const node = state.node(id);
      if (!node || node.state === 'DEAD') {
        removals.push(id);
        this.#sent.delete(id);
        this.#loads.delete(id);
        this.#loadsDue.delete(id);
        continue;
      }
      const sent = this.#sent.get(id);
      const names = state.takeResourceChanges(id);
      const labelChanges = state.takeActorLabelChanges(id);
      if (!sent) {
        const view = nodeView(state, node);
        upserts.push(view);
        this.#sent.set(id, { header: nodeHeader(node), total: { ...view.resources!.total }, available: { ...view.resources!.available } });
        continue;
      }
      const resourcesChanged = names === undefined ? undefined : changedResources(node, sent, names);
      const header = nodeHeader(node);
      // a node is upserted only when something of its own changed; label counts go on their own
      if (resourcesChanged || !sameHeader(header, sent.header)) {
        sent.header = header;
        // Object.assign, not a literal opening with `...header`: one hidden class per upsert on Node.js 20
        // (docs/benchmarks.md, "Object spreads on Node.js 20")
        upserts.push(
          Object.assign(
            {},
            header,
            resourcesChanged === 'all'
              ? { resources: { total: { ...sent.total }, available: { ...sent.available } } }
              : resourcesChanged
                ? { resourcesChanged }
                : {},
          ),
        );
      }
      const changes = labelChanges && toLabelRecord(labelChanges);
      if (changes) actorLabelsChanged.push({ nodeId: id, changes });
    }
    this.#dirty.clear();
    const loads = [...this.#loadsDue].sort().flatMap((nodeId) => {
      const load = this.#loads.get(nodeId);
      return load ? [{ nodeId, ...load }] : [];
    });
    this.#loadsDue.clear();
    const whole: ViewDelta = {
      version: this.#version + 1,
      previous: this.#version,
      upserts,
      removals,
      ...(actorLabelsChanged.length ? { actorLabelsChanged } : {}),
      ...(loads.length ? { loads } : {}),
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
   * each page is filled up to the message size limit (paging.ts). The copy and each of its pages are
   * made once per version: after an outage or a failover every raylet asks at once, and each used to
   * cost a copy of every node and a page measured afresh (18 ms with 1,000 nodes, against 0.7 ms now).
   */
  snapshotPage(query: { after?: string; version?: number }, opts: { maxBytes?: number } = {}): ViewDelta {
    const now = performance.now();
    for (const [version, kept] of this.#snapshots) if (now - kept.readAt > SNAPSHOT_TTL_MS) this.#snapshots.delete(version);
    let kept: KeptSnapshot | undefined;
    let version: number;
    if (query.after === undefined) {
      // what is pending goes out first; then a copy of this version, if one is kept, is the view as it
      // is — built again only when the view moved (every raylet reading at once after an outage or a
      // failover would otherwise cost a copy of every node each)
      this.flush();
      version = this.#version;
      kept = this.#snapshots.get(version);
      if (kept === undefined) {
        const whole = this.snapshot();
        const parts = snapshotParts(whole.upserts, Math.min(opts.maxBytes ?? DEFAULT_MAX_BYTES, this.deps.maxBytes ?? DEFAULT_MAX_BYTES, DEFAULT_MAX_BYTES));
        const byKey = new Map(parts.map((p) => [p.key, p.node] as const));
        kept = { keys: parts.map((p) => p.key), get: (key) => byKey.get(key), loads: new Map((whole.loads ?? []).map(({ nodeId, ...load }) => [nodeId, load])), pages: new Map(), readAt: now };
        this.#snapshots.set(version, kept);
        while (this.#snapshots.size > MAX_SNAPSHOTS_KEPT) this.#snapshots.delete(this.#snapshots.keys().next().value!);
      }
    } else {
      version = query.version ?? -1;
      kept = this.#snapshots.get(version);
      if (!kept) throw new OrreryError('SNAPSHOT_MOVED', `view snapshot ${query.version ?? '(no version)'} is no longer kept: read it again from the first page`, { detail: { version: query.version ?? null } });
    }
    kept.readAt = now;
    const pageKey = `${opts.maxBytes ?? ''}\u0000${query.after ?? ''}`;
    const made = kept.pages.get(pageKey);
    if (made !== undefined) return made;
    const { get, loads } = kept;
    // a node and its load report are measured together, so the page with both fits (a node in parts:
    // with its first part, the one keyed by its id)
    const withLoad = (key: string) => {
      const node = get(key);
      return node && { node, load: key === node.nodeId ? loads.get(key) : undefined };
    };
    const page = pageOf({ keys: kept.keys, get: withLoad }, { after: query.after, limit: Number.MAX_SAFE_INTEGER }, opts);
    const upserts = page.items.map((i) => i.node);
    const pageLoads = page.items.flatMap((i) => (i.load ? [{ nodeId: i.node.nodeId, ...i.load }] : []));
    const delta: ViewDelta = { version, previous: 0, upserts, removals: [], ...(pageLoads.length ? { loads: pageLoads } : {}), ...(page.next === undefined ? {} : { next: page.next }) };
    kept.pages.set(pageKey, delta);
    return delta;
  }

  snapshot(): ViewDelta {
    this.flush();
    const { state } = this.deps;
    const upserts = [...state.nodes.values()].filter((n) => n.state !== 'DEAD').sort((a, b) => (a.id < b.id ? -1 : 1)).map((n) => nodeView(state, n));
    const loads = loadsOf(upserts, this.#loads);
    return { version: this.#version, previous: 0, upserts, removals: [], ...(loads.length ? { loads } : {}) };
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
  const changed: ResourceChanges = {};
  if (Object.keys(total).length) changed.total = total;
  if (Object.keys(available).length) changed.available = available;
  if (removed.length) changed.removed = removed;
  return changed;
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

/** A node with its whole resource sets and actor-label counts (snapshots, and a node's first delta). */
export function nodeView(state: ClusterState, node: SchedNode): NodeView {
  const actorLabels = toLabelRecord(state.actorLabelCounts(node.id));
  return Object.assign(nodeHeader(node), { resources: { total: { ...node.total }, available: { ...node.available } } }, actorLabels ? { actorLabels } : {});
}

function sameHeader(a: NodeView, b: NodeView): boolean {
  return a.name === b.name && a.state === b.state && sameSet(a.labels, b.labels) && sameSet(a.taints, b.taints);
}

function sameSet<T extends string | number>(a: Readonly<Record<string, T>>, b: Readonly<Record<string, T>>): boolean {
  let n = 0;
  for (const k in a) {
    if (!Object.hasOwn(b, k) || a[k] !== b[k]) return false;
    n++;
  }
  return n === Object.keys(b).length;
}

/** The last load report of each of these nodes that has one. */
function loadsOf(nodes: readonly NodeView[], loads: ReadonlyMap<string, { seq: number; available: ResourceSet }>): NonNullable<ViewDelta['loads']> {
  return nodes.flatMap((n) => {
    const load = loads.get(n.nodeId);
    return load ? [{ nodeId: n.nodeId, ...load }] : [];
  });
}
