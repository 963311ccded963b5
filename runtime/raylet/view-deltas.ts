import { labelCount, labelCounts } from '../../lib/cluster/actor-label-counts.ts';
import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { SchedNode } from '../../lib/cluster/sched-node.ts';
import { formatTaints, parseTaints, type Taint } from '../../lib/scheduling/taints.ts';
import type { NodeView, ViewDelta } from '../../protocols/messages/view.ts';
import type { NodeLoads } from './node-loads.ts';

/**
 * How a raylet's view (cluster-view.ts) takes in what the GCS sends: whether a delta fits the view as
 * it stands, a delta applied, a snapshot replacing everything, and each node's upsert — its labels,
 * taints, state and actor-label counts here, another node's resources through its loads
 * (node-loads.ts) — then who is told that nodes joined or left, or that this node changed. Which
 * delta applies when (gaps, held deltas, snapshots) is the view's to say.
 */
export interface ViewDeltasDeps {
  readonly state: ClusterState;
  readonly localNodeId: string;
  readonly loads: NodeLoads;
  readonly log: (line: string) => void;
  /** Other nodes joined or left the view. */
  readonly onNodes?: (change: { added: string[]; removed: string[] }) => void;
  /** This node's labels, taints, state or placed actors changed (leases may no longer hold). */
  readonly onLocalChange?: () => void;
}

export class ViewDeltas {
  private applied = 0;
  /** Set while applying when something about this node that constraints read changed. */
  private localChanged = false;

  constructor(private readonly deps: ViewDeltasDeps) {}

  /** The version of the GCS view applied last (0: none yet). */
  get version(): number {
    return this.applied;
  }

  /**
   * Can this delta apply to the view as it is? An upsert without whole resources is about a node the
   * view must already hold (or an earlier upsert of the delta sends whole); one it does not hold
   * means something was missed. So does a label-count change that would take a count below zero.
   */
  applicable(delta: ViewDelta): boolean {
    const { state } = this.deps;
    const whole = new Map<string, NodeView>();
    for (const n of delta.upserts) {
      if (n.resources !== undefined) whole.set(n.nodeId, n);
      else if (!state.node(n.nodeId) && !whole.has(n.nodeId)) return false;
    }
    for (const { nodeId, changes } of delta.actorLabelsChanged ?? []) {
      const sent = whole.get(nodeId);
      const node = state.node(nodeId);
      if (!sent && !node) return false;
      const base = sent ? (id: [string, string, string]) => sent.actorLabels?.[id[0]]?.[id[1]]?.[id[2]] ?? 0 : (id: [string, string, string]) => labelCount(node!.actorLabels, ...id);
      for (const [namespace, key, value, by] of labelCounts(changes)) if (base([namespace, key, value]) + by < 0) return false;
    }
    return true;
  }

  /** The snapshot replaces the view: nodes it does not list go (this node stays). */
  replace(snapshot: ViewDelta): void {
    const { state, localNodeId, loads } = this.deps;
    const listed = new Set(snapshot.upserts.map((n) => n.nodeId));
    const removed = [...state.nodes.keys()].filter((id) => !listed.has(id) && id !== localNodeId);
    for (const id of removed) this.remove(id);
    // the snapshot's load reports replace every one known (their seqs are the GCS's, which may have restarted)
    loads.clearReports();
    const whole = snapshot.upserts.filter((n) => {
      if (n.resources !== undefined || n.nodeId === localNodeId) return true;
      this.deps.log(`view snapshot ${snapshot.version}: node ${n.nodeId} comes without its resources; left out`);
      return false;
    });
    // a snapshot's sets are whole: what a spill reserved on a node is forgotten, as a load report would
    const added = whole.filter((n) => this.upsert({ ...n, resourcesChanged: undefined }, { snapshot: true })).map((n) => n.nodeId);
    for (const load of snapshot.loads ?? []) loads.take(load.nodeId, load.seq, load.available);
    this.applied = snapshot.version;
    this.notify(added, removed);
  }

  apply(delta: ViewDelta): void {
    const { state, localNodeId, loads } = this.deps;
    const added = delta.upserts.filter((n) => this.upsert(n)).map((n) => n.nodeId);
    const removed = delta.removals.filter((id) => id !== localNodeId && state.node(id));
    for (const id of removed) this.remove(id);
    for (const { nodeId, changes } of delta.actorLabelsChanged ?? []) {
      if (!state.node(nodeId)) continue;
      // `applicable` checked that they fit
      if (!state.changeActorLabels(nodeId, changes)) this.deps.log(`view ${delta.version}: node ${nodeId}'s actor-label changes do not fit its counts; left as they were`);
      if (nodeId === localNodeId) this.localChanged = true;
    }
    for (const load of delta.loads ?? []) loads.take(load.nodeId, load.seq, load.available);
    this.applied = delta.version;
    this.notify(added, removed);
  }

  private remove(id: string): void {
    this.deps.state.removeNode(id);
    this.deps.loads.forget(id);
  }

  private notify(added: string[], removed: string[]): void {
    const others = added.filter((id) => id !== this.deps.localNodeId);
    if (others.length > 0 || removed.length > 0) this.deps.onNodes?.({ added: others, removed });
    if (this.localChanged) {
      this.localChanged = false;
      this.deps.onLocalChange?.();
    }
  }

  /** Adds or updates a node; true when it was not in the view before. A snapshot's node has its whole actor-label counts (none when absent). */
  private upsert(view: NodeView, opts: { snapshot?: boolean } = {}): boolean {
    const { state, loads } = this.deps;
    let taints: Taint[];
    try {
      taints = taintsOf(view.taints);
    } catch (err) {
      this.deps.log(`view: node ${view.nodeId} has unreadable taints (${err instanceof Error ? err.message : String(err)}); keeping the ones known`);
      taints = state.node(view.nodeId)?.taints.slice() ?? [];
    }
    const local = view.nodeId === this.deps.localNodeId;
    let node = state.node(view.nodeId);
    const isNew = !node;
    if (!node) {
      // a node new to the view comes with its whole sets (`applicable`); this node is always here
      const total = view.resources!.total;
      const available = loads.viewSets(view.nodeId, view.resources!);
      node = state.addNode({ nodeId: view.nodeId, name: view.name, state: view.state, labels: view.labels, taints, total, available });
    } else {
      let changed = false;
      if (!sameRecord(node.labels, view.labels)) {
        state.setNodeLabels(node.id, view.labels);
        changed = true;
      }
      if (!sameRecord(formatTaints(node.taints), formatTaints(taints))) {
        state.setNodeTaints(node.id, taints);
        changed = true;
      }
      if (node.state !== view.state) {
        state.setNodeState(node.id, view.state);
        changed = true;
      }
      // this node's total and available are its own accounting, whatever the view says
      if (!local && view.resources) {
        const available = loads.viewSets(node.id, view.resources);
        loads.unreserve(node.id);
        state.setTotal(node.id, view.resources.total, available);
      } else if (!local && view.resourcesChanged) {
        loads.applyChanges(node, view.resourcesChanged);
      }
      if (changed && local) this.localChanged = true;
    }
    if (this.syncLabels(node, view, opts.snapshot === true) && local) this.localChanged = true;
    return isNew;
  }

  /**
   * The node's whole actor-label counts from an upsert that carries them: they replace what it had
   * (so does a snapshot's node without any: it has none). True when they may have changed.
   */
  private syncLabels(node: SchedNode, view: NodeView, snapshot: boolean): boolean {
    if (view.actorLabels === undefined && !snapshot) return false;
    const had = (node.actorLabels?.size ?? 0) > 0;
    this.deps.state.setActorLabels(node.id, view.actorLabels ?? {});
    return had || view.actorLabels !== undefined;
  }
}

export function taintsOf(record: Readonly<Record<string, string>>): Taint[] {
  return parseTaints(record, { allowReserved: true });
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
