import { ClusterState, type SchedNode } from '../../lib/cluster/cluster-state.ts';
import { ACTOR_ID_LABEL } from '../../lib/labels/builtin.ts';
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
}

/**
 * A raylet's copy of the cluster (ARCHITECTURE.md, "Cluster view and label sync"): a lib
 * ClusterState built from the GCS's versioned view deltas — nodes, their labels, taints, resources
 * and the actors placed on each (with their labels, so actor affinity works in raylet mode). Tasks
 * are decided on it.
 *
 * Deltas apply in order: one whose `previous` is this view's version is applied; any other means
 * one was missed (or the GCS restarted and counts from 0 again), so the raylet asks for a snapshot
 * (a delta from the empty view) through `requestSnapshot` and holds the deltas that arrive
 * meanwhile; the snapshot replaces everything, then the held deltas newer than it apply in order.
 *
 * This node is always in the view, even before the GCS has described it. Its labels, taints and
 * total come from the view once there, but its available resources are always this raylet's own
 * accounting (`setLocalUsed`): exact, where the view's are one sync period old.
 */
export class RayletView {
  readonly state = new ClusterState();
  private version = 0;
  private held: ViewDelta[] | undefined;
  private used: Readonly<Record<string, number>> = {};
  private counts = { deltas: 0, gaps: 0, snapshots: 0 };
  private stopped = false;

  constructor(
    private readonly opts: {
      local: LocalNode;
      /** Asks the GCS for the whole view; the view calls it again (after `retryMs`) when it fails. */
      requestSnapshot: () => Promise<ViewDelta>;
      /** Something in the view changed: queued tasks may be decided differently now. */
      onChange: () => void;
      log: (line: string) => void;
      retryMs?: number;
    },
  ) {
    const { local } = opts;
    this.state.addNode({ nodeId: local.nodeId, name: local.name, labels: local.labels, taints: taintsOf(local.taints), total: local.total });
  }

  get localNodeId(): string {
    return this.opts.local.nodeId;
  }

  stats(): ViewStats {
    return { version: this.version, nodes: this.state.nodes.size, ...this.counts };
  }

  /** What this raylet's leases hold on its node: the local node's available is its total minus this. */
  setLocalUsed(used: Readonly<Record<string, number>>): void {
    this.used = used;
    const node = this.state.node(this.localNodeId)!;
    this.state.setTotal(node.id, node.total, remaining(node.total, used));
  }

  /** A delta published on `gcs.view`. */
  receive(delta: ViewDelta): void {
    if (this.stopped) return;
    this.counts.deltas++;
    if (this.held) {
      this.held.push(delta);
      return;
    }
    if (delta.previous !== this.version) {
      this.counts.gaps++;
      this.resync([delta]);
      return;
    }
    this.apply(delta);
    this.opts.onChange();
  }

  stop(): void {
    this.stopped = true;
  }

  /** Asks for a snapshot, holding `pending` and whatever arrives until it is applied. */
  private resync(pending: ViewDelta[]): void {
    this.held = pending;
    this.opts.requestSnapshot().then(
      (snapshot) => {
        if (this.stopped) return;
        this.counts.snapshots++;
        this.replace(snapshot);
        const held = this.held ?? [];
        this.held = undefined;
        for (const [i, delta] of held.entries()) {
          if (delta.version <= this.version) continue;
          if (delta.previous !== this.version) {
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

  /** The snapshot replaces the view: nodes it does not list go (this node stays). */
  private replace(snapshot: ViewDelta): void {
    const listed = new Set(snapshot.upserts.map((n) => n.nodeId));
    for (const id of [...this.state.nodes.keys()]) if (!listed.has(id) && id !== this.localNodeId) this.state.removeNode(id);
    for (const node of snapshot.upserts) this.upsert(node);
    this.version = snapshot.version;
  }

  private apply(delta: ViewDelta): void {
    for (const node of delta.upserts) this.upsert(node);
    for (const id of delta.removals) if (id !== this.localNodeId && this.state.node(id)) this.state.removeNode(id);
    this.version = delta.version;
  }

  private upsert(view: NodeView): void {
    let taints: Taint[];
    try {
      taints = taintsOf(view.taints);
    } catch (err) {
      this.opts.log(`view: node ${view.nodeId} has unreadable taints (${err instanceof Error ? err.message : String(err)}); keeping the ones known`);
      taints = this.state.node(view.nodeId)?.taints.slice() ?? [];
    }
    const local = view.nodeId === this.localNodeId;
    const total = view.resources.total;
    const available = local ? remaining(total, this.used) : view.resources.available;
    let node = this.state.node(view.nodeId);
    if (!node) {
      node = this.state.addNode({ nodeId: view.nodeId, name: view.name, state: view.state, labels: view.labels, taints, total, available });
    } else {
      if (!sameRecord(node.labels, view.labels)) this.state.setNodeLabels(node.id, view.labels);
      if (!sameRecord(formatTaints(node.taints), formatTaints(taints))) this.state.setNodeTaints(node.id, taints);
      if (node.state !== view.state) this.state.setNodeState(node.id, view.state);
      this.state.setTotal(node.id, total, available);
    }
    if (view.actors !== undefined) this.syncActors(node, view.actors);
  }

  /** Makes the node's placed actors those of the view: gone ones leave, new or relabelled ones join. */
  private syncActors(node: SchedNode, actors: NonNullable<NodeView['actors']>): void {
    const next = new Map(actors.map((a) => [a.actorId, a]));
    for (const [id, placed] of [...node.actors]) {
      const now = next.get(id);
      if (!now || now.namespace !== placed.namespace || !sameRecord(withoutId(placed.labels), withoutId(now.labels))) this.state.removeActor(node.id, id);
    }
    for (const actor of actors) if (!node.actors.has(actor.actorId)) this.state.addActor(node.id, actor);
  }
}

function taintsOf(record: Readonly<Record<string, string>>): Taint[] {
  return parseTaints(record, { allowReserved: true });
}

function withoutId(labels: Readonly<Record<string, string>>): Record<string, string> {
  const { [ACTOR_ID_LABEL]: _, ...rest } = labels;
  return rest;
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
