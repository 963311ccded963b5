import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { SchedNode } from '../../lib/cluster/sched-node.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import type { NodeView } from '../../protocols/messages/view.ts';

/**
 * What other nodes have free in a raylet's view (cluster-view.ts). The GCS's view counts what actors
 * hold, not running tasks. So other raylets' load reports (`applyLoad`: each raylet publishes its own
 * on `raylet.<nodeId>.load` to the GCS, which forwards the latest of each node in its next delta,
 * `loads`) say what each node has free, and a node's available is, per resource name, the lower of
 * the two, clamped to [0, total]. A spill reserves the task's resources on its target at once
 * (`reserve`, as Ray does), until the target's next report says how it really stands — or for
 * RESERVATION_MS at most: a node reports only when what it has free changes, and the GCS passes on
 * only a report that differs from the last, so a task that ran and ended there between two reports
 * leaves no report behind it. Without the bound such a reservation stayed until the node's next
 * change, and a task waiting here for that node's room waited for good.
 *
 * This node's total and available are the view's own accounting (cluster-view.ts), never set here.
 */
export interface NodeLoadsDeps {
  readonly state: ClusterState;
  readonly localNodeId: string;
  /** Reservations lapsed: queued tasks may be decided differently now. */
  readonly onChange: () => void;
  /** How long a spill's reservation on another node lasts without a report from it. */
  readonly reservationMs: number;
  /** The clock reservations lapse by (ms); default performance.now. */
  readonly now?: () => number;
}

/** A node's whole resource sets as an upsert of the GCS's view carries them. */
type WholeResources = NonNullable<NodeView['resources']>;

export class NodeLoads {
  /** The last load report of each other node, and its available as the GCS's view says (kept up to date by name). */
  private readonly loads = new Map<string, { seq: number; available: ResourceSet }>();
  private readonly viewAvailable = new Map<string, Record<string, number>>();
  /** The names a spill reserved on each other node since its last load report. */
  private readonly reserved = new Map<string, Set<string>>();
  /** When each node's reservations lapse (the last spill to it, plus reservationMs). */
  private readonly reservedUntil = new Map<string, number>();
  private lapse: NodeJS.Timeout | undefined;
  private stopped = false;
  private taken = 0;

  constructor(private readonly deps: NodeLoadsDeps) {}

  /** Load reports of other raylets applied (ViewStats.loads). */
  get applied(): number {
    return this.taken;
  }

  /** A load report, without telling anyone; true when it changed the view. */
  take(nodeId: string, seq: number, available: ResourceSet): boolean {
    const node = this.deps.state.node(nodeId);
    if (this.stopped || !node || nodeId === this.deps.localNodeId) return false;
    const last = this.loads.get(nodeId);
    if (last && last.seq >= seq) return false;
    this.taken++;
    this.loads.set(nodeId, { seq, available });
    const names = new Set(Object.keys(available));
    for (const name in last?.available) names.add(name);
    for (const name of this.reserved.get(nodeId) ?? []) names.add(name);
    this.unreserve(nodeId);
    this.deps.state.setResources(nodeId, this.freeOf(node, names));
    return true;
  }

  /** A task was spilled to `nodeId`: its resources count as taken there until the node reports. */
  reserve(nodeId: string, resources: ResourceSet): void {
    const node = this.deps.state.node(nodeId);
    if (!node || nodeId === this.deps.localNodeId) return;
    const left: Record<string, number> = {};
    let reserved = this.reserved.get(nodeId);
    if (!reserved) this.reserved.set(nodeId, (reserved = new Set()));
    for (const name in resources) {
      if (!Object.hasOwn(node.available, name)) continue;
      left[name] = node.available[name] - Math.min(resources[name], node.available[name]);
      reserved.add(name);
    }
    this.deps.state.setResources(nodeId, { available: left });
    this.reservedUntil.set(nodeId, this.now() + this.deps.reservationMs);
    this.armLapse();
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
      const node = this.deps.state.node(nodeId);
      this.unreserve(nodeId);
      if (!node || names === undefined) continue;
      this.deps.state.setResources(nodeId, this.freeOf(node, names));
      changed = true;
    }
    this.armLapse();
    if (changed) this.deps.onChange();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.lapse);
    this.lapse = undefined;
  }

  /**
   * The view's whole sets of another node (new to the view, or sent whole again): its available as
   * the view says is kept, and what it has free by the rule is returned.
   */
  viewSets(nodeId: string, resources: WholeResources): Record<string, number> {
    this.viewAvailable.set(nodeId, { ...resources.available });
    return lower(resources.total, resources.available, this.loads.get(nodeId)?.available ?? {});
  }

  /** A delta's `resourcesChanged` for another node: only the names it gives change (their available by the lower-of rule). */
  applyChanges(node: SchedNode, changes: NonNullable<NodeView['resourcesChanged']>): void {
    let viewAvailable = this.viewAvailable.get(node.id);
    if (!viewAvailable) this.viewAvailable.set(node.id, (viewAvailable = {}));
    for (const name of changes.removed ?? []) delete viewAvailable[name];
    for (const name in changes.available) viewAvailable[name] = changes.available[name];
    this.deps.state.setResources(node.id, { total: changes.total, removed: changes.removed });
    const names = new Set(Object.keys(changes.available ?? {}));
    for (const name in changes.total) names.add(name);
    this.deps.state.setResources(node.id, this.freeOf(node, names));
  }

  /** Forgets every node's last load report (a snapshot's replace them). */
  clearReports(): void {
    this.loads.clear();
  }

  /** The node left the view: its report, its view available and its reservations go. */
  forget(nodeId: string): void {
    this.loads.delete(nodeId);
    this.viewAvailable.delete(nodeId);
    this.unreserve(nodeId);
  }

  unreserve(nodeId: string): void {
    this.reserved.delete(nodeId);
    this.reservedUntil.delete(nodeId);
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : performance.now();
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
}

/** Per resource of `total`: the lower of two available sets, clamped to [0, total]. */
function lower(total: ResourceSet, a: ResourceSet, b: ResourceSet): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name in total) out[name] = Math.max(0, Math.min(total[name], a[name] ?? total[name], b[name] ?? total[name]));
  return out;
}
