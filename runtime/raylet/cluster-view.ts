import { labelCount, labelCounts } from '../../lib/cluster/actor-label-counts.ts';
import { ClusterState, type SchedNode } from '../../lib/cluster/cluster-state.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import { formatTaints, parseTaints, type Taint } from '../../lib/scheduling/taints.ts';
import type { NodeView, ViewDelta } from '../../protocols/messages/view.ts';
import { remaining } from './leases.ts';

/** What the raylet knows of its own node before (or without) the GCS's view of it. */
export interface LocalNode {
  readonly nodeId: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** `key: value` or `key: "value:Effect"`. */
  readonly taints: Readonly<Record<string, string>>;
  readonly total: ResourceSet;
}

export interface ViewStats {
  /** The version of the GCS view applied last (0: none yet). */
  readonly version: number;
  readonly nodes: number;
  readonly deltas: number;
  /** Deltas whose `previous` was not this view's version. */
  readonly gaps: number;
  readonly snapshots: number;
  /** Load reports of other raylets applied (forwarded in the GCS's view). */
  readonly loads: number;
}

/**
 * How long a spill's reservation on another node lasts when no report from that node replaces it:
 * several report rounds (a node reports at most every 50 ms after a change; the GCS forwards reports
 * in its next delta, every 100 ms).
 */
export const RESERVATION_MS = 1_000;

/**
 * A raylet's copy of the cluster (ARCHITECTURE.md, "Cluster view and label sync"): a lib
 * ClusterState built from the GCS's versioned view deltas — nodes, their labels, taints, resources
 * and each node's actor-label reference counts (seed 000: namespace → key → value → count, with
 * every actor's `orrery.io/actor-id`; `ClusterState.changeActorLabels`), which is all actor affinity
 * and anti-affinity ask, so actor affinity works in raylet mode without the actors: the view's
 * memory follows nodes and distinct labels, and a period's placements arrive as one change per
 * label. Tasks are decided on it.
 *
 * Deltas apply in order: one whose `previous` is this view's version is applied; any other means
 * one was missed (or the GCS restarted and counts from 0 again), so the raylet asks for a snapshot
 * (a delta from the empty view) through `requestSnapshot` and holds the deltas that arrive
 * meanwhile; the snapshot replaces everything, then the held deltas newer than it apply in order.
 * A delta whose label-count change would take a count below zero does not fit this view either: it
 * is handled as a gap, and nothing of it is applied.
 *
 * This node is always in the view, even before the GCS has described it. Its labels and taints come
 * from the view once there, but its total and available resources are always this raylet's own
 * accounting (`setLocalTotal`, `setLocalUsed`): exact, where the view's are one sync period old —
 * a placement-group bundle committed here is in the total at once, so a task of the group can be
 * decided here before the GCS's next delta.
 *
 * The GCS's view counts what actors hold, not running tasks. So other raylets' load reports
 * (`applyLoad`: each raylet publishes its own on `raylet.<nodeId>.load` to the GCS, which forwards
 * the latest of each node in its next delta, `loads`) say what each node has free,
 * and a node's available is, per resource name, the lower of the two, clamped to [0, total]. A spill
 * reserves the task's resources on its target at once (`reserve`, as Ray does), until the target's
 * next report says how it really stands — or for RESERVATION_MS at most: a node reports only when what
 * it has free changes, and the GCS passes on only a report that differs from the last, so a task
 * that ran and ended there between two reports leaves no report behind it. Without the bound such a
 * reservation stayed until the node's next change, and a task waiting here for that node's room
 * waited for good.
 *
 * A node holding the bundles of many placement groups has thousands of resource names, so every
 * change here costs time in the names it changes, not the node's: a delta's `resourcesChanged`, a
 * load report (it names the node's own resources, not bundle ones) and this raylet's own lease
 * changes (`setLocalResources`) are applied name by name, in place; only a node's first upsert and
 * snapshots carry, and copy, whole sets.
 */
export class RayletView {
  readonly state = new ClusterState();
  private version = 0;
  private held: ViewDelta[] | undefined;
  private used: Readonly<Record<string, number>> = {};
  /** This node's total as its raylet keeps it (its own resources and its committed bundles'). */
  private localTotal: ResourceSet;
  private counts = { deltas: 0, gaps: 0, snapshots: 0, loads: 0 };
  /** The last load report of each other node, and its available as the GCS's view says (kept up to date by name). */
  private readonly loads = new Map<string, { seq: number; available: ResourceSet }>();
  private readonly viewAvailable = new Map<string, Record<string, number>>();
  /** The names a spill reserved on each other node since its last load report. */
  private readonly reserved = new Map<string, Set<string>>();
  /** When each node's reservations lapse (the last spill to it, plus reservationMs). */
  private readonly reservedUntil = new Map<string, number>();
  private lapse: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Set while applying when something about this node that constraints read changed. */
  private localChanged = false;
  /** refresh() callers waiting for the next snapshot to be applied. */
  private synced: (() => void)[] = [];

  constructor(
    private readonly opts: {
      local: LocalNode;
      /** Asks the GCS for the whole view; the view calls it again (after `retryMs`) when it fails. */
      requestSnapshot: () => Promise<ViewDelta>;
      /** Something in the view changed: queued tasks may be decided differently now. */
      onChange: () => void;
      log: (line: string) => void;
      retryMs?: number;
      /** Other nodes joined or left the view. */
      onNodes?: (change: { added: string[]; removed: string[] }) => void;
      /** This node's labels, taints, state or placed actors changed (leases may no longer hold). */
      onLocalChange?: () => void;
      /** How long a spill's reservation on another node lasts without a report from it; default RESERVATION_MS. */
      reservationMs?: number;
      /** The clock reservations lapse by (ms); default performance.now. */
      now?: () => number;
    },
  ) {
    const { local } = opts;
    this.localTotal = local.total;
    this.state.addNode({ nodeId: local.nodeId, name: local.name, labels: local.labels, taints: taintsOf(local.taints), total: local.total });
  }

  get localNodeId(): string {
    return this.opts.local.nodeId;
  }

  stats(): ViewStats {
    return { version: this.version, nodes: this.state.nodes.size, ...this.counts };
  }

  /**
   * Another node's load report: its available becomes the lower of the report and the GCS's view.
   * Only the names the report or the previous one name (and those a spill reserved) can change.
   */
  applyLoad(nodeId: string, seq: number, available: ResourceSet): void {
    if (this.takeLoad(nodeId, seq, available)) this.opts.onChange();
  }

  /** applyLoad without telling anyone; true when it changed the view. */
  private takeLoad(nodeId: string, seq: number, available: ResourceSet): boolean {
    const node = this.state.node(nodeId);
    if (this.stopped || !node || nodeId === this.localNodeId) return false;
    const last = this.loads.get(nodeId);
    if (last && last.seq >= seq) return false;
    this.counts.loads++;
    this.loads.set(nodeId, { seq, available });
    const names = new Set(Object.keys(available));
    for (const name in last?.available) names.add(name);
    for (const name of this.reserved.get(nodeId) ?? []) names.add(name);
    this.unreserve(nodeId);
    this.state.setResources(nodeId, this.freeOf(node, names));
    return true;
  }

  /** A task was spilled to `nodeId`: its resources count as taken there until the node reports. */
  reserve(nodeId: string, resources: ResourceSet): void {
    const node = this.state.node(nodeId);
    if (!node || nodeId === this.localNodeId) return;
    const left: Record<string, number> = {};
    let reserved = this.reserved.get(nodeId);
    if (!reserved) this.reserved.set(nodeId, (reserved = new Set()));
    for (const name in resources) {
      if (!Object.hasOwn(node.available, name)) continue;
      left[name] = node.available[name] - Math.min(resources[name], node.available[name]);
      reserved.add(name);
    }
    this.state.setResources(nodeId, { available: left });
    this.reservedUntil.set(nodeId, this.now() + (this.opts.reservationMs ?? RESERVATION_MS));
    this.armLapse();
  }

  /** What this raylet's leases hold on its node: the local node's available is its total minus this. */
  setLocalUsed(used: Readonly<Record<string, number>>): void {
    this.used = used;
    const node = this.state.node(this.localNodeId)!;
    this.state.setTotal(node.id, node.total, remaining(node.total, used));
  }

  /** This node's total changed (a placement-group bundle was committed or cancelled here). */
  setLocalTotal(total: ResourceSet): void {
    this.localTotal = total;
    this.state.setTotal(this.localNodeId, total, remaining(total, this.used));
  }

  /**
   * This node's leases changed these names ('all': too many to say): the local node takes their
   * total and what is left of them, in time proportional to the names. `total` and `used` are the
   * leases' own (live) sets.
   */
  setLocalResources(total: ResourceSet, used: Readonly<Record<string, number>>, names: Iterable<string> | 'all'): void {
    this.localTotal = total;
    this.used = used;
    if (names === 'all') {
      this.state.setTotal(this.localNodeId, total, remaining(total, used));
      return;
    }
    const changedTotal: Record<string, number> = {};
    const available: Record<string, number> = {};
    const removed: string[] = [];
    for (const name of names) {
      if (Object.hasOwn(total, name)) {
        changedTotal[name] = total[name];
        available[name] = Math.max(0, total[name] - (used[name] ?? 0));
      } else removed.push(name);
    }
    this.state.setResources(this.localNodeId, { total: changedTotal, available, removed });
  }

  /** A delta published on `gcs.view`. */
  receive(delta: ViewDelta): void {
    if (this.stopped) return;
    this.counts.deltas++;
    if (this.held) {
      this.held.push(delta);
      return;
    }
    if (delta.previous !== this.version || !this.applicable(delta)) {
      this.counts.gaps++;
      this.resync([delta]);
      return;
    }
    this.apply(delta);
    this.opts.onChange();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.lapse);
    this.lapse = undefined;
    this.settleSynced();
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : performance.now();
  }

  private unreserve(nodeId: string): void {
    this.reserved.delete(nodeId);
    this.reservedUntil.delete(nodeId);
  }

  /** A timer at the earliest lapse, while any reservation is held. */
  private armLapse(): void {
    if (this.lapse !== undefined || this.stopped || this.reservedUntil.size === 0) return;
    let first = Number.POSITIVE_INFINITY;
    for (const at of this.reservedUntil.values()) first = Math.min(first, at);
    this.lapse = setTimeout(() => {
      this.lapse = undefined;
      this.lapseReservations();
    }, Math.max(1, Math.ceil(first - this.now())));
    this.lapse.unref();
  }

  /**
   * Reservations no report has replaced in time lapse: those names are what the view and the node's
   * last report say again, and queued tasks are decided anew.
   */
  lapseReservations(): void {
    if (this.stopped) return;
    const now = this.now();
    let changed = false;
    for (const [nodeId, until] of this.reservedUntil) {
      if (until > now) continue;
      const names = this.reserved.get(nodeId);
      const node = this.state.node(nodeId);
      this.unreserve(nodeId);
      if (!node || names === undefined) continue;
      this.state.setResources(nodeId, this.freeOf(node, names));
      changed = true;
    }
    this.armLapse();
    if (changed) this.opts.onChange();
  }

  /**
   * Brings the view up to date from a snapshot (its raylet starts following `gcs.view` again after
   * a pause, and has missed what happened meanwhile); resolves once one has been applied — at once
   * when one is already being read — or the view stops. A snapshot that fails is asked for again
   * after `retryMs`, as for a gap; deltas arriving meanwhile are held and applied after it.
   */
  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.synced.push(resolve));
    if (!this.held) this.resync([]);
    return done;
  }

  private settleSynced(): void {
    const waiting = this.synced;
    this.synced = [];
    for (const resolve of waiting) resolve();
  }

  /** Asks for a snapshot, holding `pending` and whatever arrives until it is applied. */
  private resync(pending: ViewDelta[]): void {
    this.held = pending;
    this.opts.requestSnapshot().then(
      (snapshot) => {
        if (this.stopped) return;
        this.counts.snapshots++;
        this.replace(snapshot);
        this.settleSynced();
        const held = this.held ?? [];
        this.held = undefined;
        for (const [i, delta] of held.entries()) {
          if (delta.version <= this.version) continue;
          if (delta.previous !== this.version || !this.applicable(delta)) {
            this.counts.gaps++;
            this.opts.onChange();
            return this.resync(held.slice(i));
          }
          this.apply(delta);
        }
        this.opts.onChange();
      },
      (err: unknown) => {
        if (this.stopped) return;
        this.opts.log(`view snapshot failed (${err instanceof Error ? err.message : String(err)}); asking again in ${this.opts.retryMs ?? 500} ms`);
        const held = this.held ?? [];
        setTimeout(() => {
          if (!this.stopped) this.resync([...held, ...(this.held ?? [])]);
        }, this.opts.retryMs ?? 500).unref();
        this.held = [];
      },
    );
  }

  /**
   * Can this delta apply to the view as it is? An upsert without whole resources is about a node the
   * view must already hold (or an earlier upsert of the delta sends whole); one it does not hold
   * means something was missed. So does a label-count change that would take a count below zero.
   */
  private applicable(delta: ViewDelta): boolean {
    const whole = new Map<string, NodeView>();
    for (const n of delta.upserts) {
      if (n.resources !== undefined) whole.set(n.nodeId, n);
      else if (!this.state.node(n.nodeId) && !whole.has(n.nodeId)) return false;
    }
    for (const { nodeId, changes } of delta.actorLabelsChanged ?? []) {
      const sent = whole.get(nodeId);
      const node = this.state.node(nodeId);
      if (!sent && !node) return false;
      const base = sent ? (id: [string, string, string]) => sent.actorLabels?.[id[0]]?.[id[1]]?.[id[2]] ?? 0 : (id: [string, string, string]) => labelCount(node!.actorLabels, ...id);
      for (const [namespace, key, value, by] of labelCounts(changes)) if (base([namespace, key, value]) + by < 0) return false;
    }
    return true;
  }

  /** The snapshot replaces the view: nodes it does not list go (this node stays). */
  private replace(snapshot: ViewDelta): void {
    const listed = new Set(snapshot.upserts.map((n) => n.nodeId));
    const removed = [...this.state.nodes.keys()].filter((id) => !listed.has(id) && id !== this.localNodeId);
    for (const id of removed) this.remove(id);
    // the snapshot's load reports replace every one known (their seqs are the GCS's, which may have restarted)
    this.loads.clear();
    const whole = snapshot.upserts.filter((n) => {
      if (n.resources !== undefined || n.nodeId === this.localNodeId) return true;
      this.opts.log(`view snapshot ${snapshot.version}: node ${n.nodeId} comes without its resources; left out`);
      return false;
    });
    // a snapshot's sets are whole: what a spill reserved on a node is forgotten, as a load report would
    const added = whole.filter((n) => this.upsert({ ...n, resourcesChanged: undefined }, { snapshot: true })).map((n) => n.nodeId);
    for (const load of snapshot.loads ?? []) this.takeLoad(load.nodeId, load.seq, load.available);
    this.version = snapshot.version;
    this.notify(added, removed);
  }

  private apply(delta: ViewDelta): void {
    const added = delta.upserts.filter((n) => this.upsert(n)).map((n) => n.nodeId);
    const removed = delta.removals.filter((id) => id !== this.localNodeId && this.state.node(id));
    for (const id of removed) this.remove(id);
    for (const { nodeId, changes } of delta.actorLabelsChanged ?? []) {
      if (!this.state.node(nodeId)) continue;
      // `applicable` checked that they fit
      if (!this.state.changeActorLabels(nodeId, changes)) this.opts.log(`view ${delta.version}: node ${nodeId}'s actor-label changes do not fit its counts; left as they were`);
      if (nodeId === this.localNodeId) this.localChanged = true;
    }
    for (const load of delta.loads ?? []) this.takeLoad(load.nodeId, load.seq, load.available);
    this.version = delta.version;
    this.notify(added, removed);
  }

  private remove(id: string): void {
    this.state.removeNode(id);
    this.loads.delete(id);
    this.viewAvailable.delete(id);
    this.unreserve(id);
  }

  private notify(added: string[], removed: string[]): void {
    const others = added.filter((id) => id !== this.localNodeId);
    if (others.length > 0 || removed.length > 0) this.opts.onNodes?.({ added: others, removed });
    if (this.localChanged) {
      this.localChanged = false;
      this.opts.onLocalChange?.();
    }
  }

  /** Adds or updates a node; true when it was not in the view before. A snapshot's node has its whole actor-label counts (none when absent). */
  private upsert(view: NodeView, opts: { snapshot?: boolean } = {}): boolean {
    let taints: Taint[];
    try {
      taints = taintsOf(view.taints);
    } catch (err) {
      this.opts.log(`view: node ${view.nodeId} has unreadable taints (${err instanceof Error ? err.message : String(err)}); keeping the ones known`);
      taints = this.state.node(view.nodeId)?.taints.slice() ?? [];
    }
    const local = view.nodeId === this.localNodeId;
    let node = this.state.node(view.nodeId);
    const isNew = !node;
    if (!node) {
      // a node new to the view comes with its whole sets (`applicable`); this node is always here
      const total = view.resources!.total;
      this.viewAvailable.set(view.nodeId, { ...view.resources!.available });
      const available = lower(total, view.resources!.available, this.loads.get(view.nodeId)?.available ?? {});
      node = this.state.addNode({ nodeId: view.nodeId, name: view.name, state: view.state, labels: view.labels, taints, total, available });
    } else {
      let changed = false;
      if (!sameRecord(node.labels, view.labels)) {
        this.state.setNodeLabels(node.id, view.labels);
        changed = true;
      }
      if (!sameRecord(formatTaints(node.taints), formatTaints(taints))) {
        this.state.setNodeTaints(node.id, taints);
        changed = true;
      }
      if (node.state !== view.state) {
        this.state.setNodeState(node.id, view.state);
        changed = true;
      }
      // this node's total and available are its own accounting, whatever the view says
      if (!local && view.resources) {
        this.viewAvailable.set(node.id, { ...view.resources.available });
        this.unreserve(node.id);
        this.state.setTotal(node.id, view.resources.total, lower(view.resources.total, view.resources.available, this.loads.get(node.id)?.available ?? {}));
      } else if (!local && view.resourcesChanged) {
        this.applyChanges(node, view.resourcesChanged);
      }
      if (changed && local) this.localChanged = true;
    }
    if (this.syncLabels(node, view, opts.snapshot === true) && local) this.localChanged = true;
    return isNew;
  }

  /** A delta's `resourcesChanged` for another node: only the names it gives change (their available by the lower-of rule). */
  private applyChanges(node: SchedNode, changes: NonNullable<NodeView['resourcesChanged']>): void {
    let viewAvailable = this.viewAvailable.get(node.id);
    if (!viewAvailable) this.viewAvailable.set(node.id, (viewAvailable = {}));
    for (const name of changes.removed ?? []) delete viewAvailable[name];
    for (const name in changes.available) viewAvailable[name] = changes.available[name];
    this.state.setResources(node.id, { total: changes.total, removed: changes.removed });
    const names = new Set(Object.keys(changes.available ?? {}));
    for (const name in changes.total) names.add(name);
    this.state.setResources(node.id, this.freeOf(node, names));
  }

  /**
   * The available of these names of another node by the rule — per name of its total, the lower of
   * the view's available and its last load report, clamped to [0, total] — and the names it does
   * not have (they leave its available).
   */
  private freeOf(node: SchedNode, names: Iterable<string>): { available: Record<string, number>; removed: string[] } {
    const view = this.viewAvailable.get(node.id);
    const load = this.loads.get(node.id)?.available;
    const available: Record<string, number> = {};
    const removed: string[] = [];
    for (const name of names) {
      if (!Object.hasOwn(node.total, name)) {
        if (Object.hasOwn(node.available, name)) removed.push(name);
        continue;
      }
      const total = node.total[name];
      available[name] = Math.max(0, Math.min(total, view?.[name] ?? total, load?.[name] ?? total));
    }
    return { available, removed };
  }

  /**
   * The node's whole actor-label counts from an upsert that carries them: they replace what it had
   * (so does a snapshot's node without any: it has none). True when they may have changed.
   */
  private syncLabels(node: SchedNode, view: NodeView, snapshot: boolean): boolean {
    if (view.actorLabels === undefined && !snapshot) return false;
    const had = (node.actorLabels?.size ?? 0) > 0;
    this.state.setActorLabels(node.id, view.actorLabels ?? {});
    return had || view.actorLabels !== undefined;
  }
}

/** Per resource of `total`: the lower of two available sets, clamped to [0, total]. */
function lower(total: ResourceSet, a: ResourceSet, b: ResourceSet): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name in total) out[name] = Math.max(0, Math.min(total[name], a[name] ?? total[name], b[name] ?? total[name]));
  return out;
}

function taintsOf(record: Readonly<Record<string, string>>): Taint[] {
  return parseTaints(record, { allowReserved: true });
}


function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
