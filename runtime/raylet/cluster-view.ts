import { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import type { ViewDelta } from '../../protocols/messages/view.ts';
import { remaining } from './leases.ts';
import { NodeLoads } from './node-loads.ts';
import { taintsOf, ViewDeltas } from './view-deltas.ts';

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
 * is handled as a gap, and nothing of it is applied. What a delta or snapshot does to the view once
 * it applies is view-deltas.ts.
 *
 * This node is always in the view, even before the GCS has described it. Its labels and taints come
 * from the view once there, but its total and available resources are always this raylet's own
 * accounting (`setLocalTotal`, `setLocalUsed`): exact, where the view's are one sync period old —
 * a placement-group bundle committed here is in the total at once, so a task of the group can be
 * decided here before the GCS's next delta.
 *
 * The GCS's view counts what actors hold, not running tasks: what other nodes have free is their
 * load reports and the GCS's view put together, less what spills reserved there (node-loads.ts).
 *
 * A node holding the bundles of many placement groups has thousands of resource names, so every
 * change here costs time in the names it changes, not the node's: a delta's `resourcesChanged`, a
 * load report (it names the node's own resources, not bundle ones) and this raylet's own lease
 * changes (`setLocalResources`) are applied name by name, in place; only a node's first upsert and
 * snapshots carry, and copy, whole sets.
 */
export class RayletView {
  readonly state = new ClusterState();
  private held: ViewDelta[] | undefined;
  private used: Readonly<Record<string, number>> = {};
  /** This node's total as its raylet keeps it (its own resources and its committed bundles'). */
  private localTotal: ResourceSet;
  private counts = { deltas: 0, gaps: 0, snapshots: 0 };
  private readonly loads: NodeLoads;
  private readonly deltas: ViewDeltas;
  private stopped = false;
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
    this.loads = new NodeLoads({ state: this.state, localNodeId: local.nodeId, onChange: opts.onChange, reservationMs: opts.reservationMs ?? RESERVATION_MS, now: opts.now });
    this.deltas = new ViewDeltas({ state: this.state, localNodeId: local.nodeId, loads: this.loads, log: opts.log, onNodes: opts.onNodes, onLocalChange: opts.onLocalChange });
  }

  get localNodeId(): string {
    return this.opts.local.nodeId;
  }

  stats(): ViewStats {
    return { version: this.deltas.version, nodes: this.state.nodes.size, ...this.counts, loads: this.loads.applied };
  }

  /**
   * Another node's load report: its available becomes the lower of the report and the GCS's view.
   * Only the names the report or the previous one name (and those a spill reserved) can change.
   */
  applyLoad(nodeId: string, seq: number, available: ResourceSet): void {
    if (this.loads.take(nodeId, seq, available)) this.opts.onChange();
  }

  /** A task was spilled to `nodeId`: its resources count as taken there until the node reports. */
  reserve(nodeId: string, resources: ResourceSet): void {
    this.loads.reserve(nodeId, resources);
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
    if (delta.previous !== this.deltas.version || !this.deltas.applicable(delta)) {
      this.counts.gaps++;
      this.resync([delta]);
      return;
    }
    this.deltas.apply(delta);
    this.opts.onChange();
  }

  stop(): void {
    this.stopped = true;
    this.loads.stop();
    this.settleSynced();
  }

  /** Lapses the spills' reservations that are due (node-loads.ts); a timer does it on its own. */
  lapseReservations(): void {
    this.loads.lapseReservations();
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
        this.deltas.replace(snapshot);
        this.settleSynced();
        const held = this.held ?? [];
        this.held = undefined;
        for (const [i, delta] of held.entries()) {
          if (delta.version <= this.deltas.version) continue;
          if (delta.previous !== this.deltas.version || !this.deltas.applicable(delta)) {
            this.counts.gaps++;
            this.opts.onChange();
            return this.resync(held.slice(i));
          }
          this.deltas.apply(delta);
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
}
