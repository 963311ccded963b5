import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import { bundleResources } from '../../lib/scheduling/bundle-resources.ts';

/** What a group holds on one node for one bundle, as the GCS's cluster state has it. */
interface Held {
  readonly nodeId: string;
  readonly resources: ResourceSet;
  committed: boolean;
}

export interface BundleLedgerDeps {
  readonly state: ClusterState;
  /** A node's resources changed (view broadcast, node table): told once per node per run of microtasks. */
  readonly nodeChanged: (nodeId: string) => void;
  /** Resources were freed or bundle resources appeared: waiting actors and groups may fit now. */
  readonly resourcesChanged: () => void;
  readonly log: (line: string) => void;
}

/**
 * What placement groups hold in the GCS's cluster state, bundle by bundle — the one record every
 * give-back reads, so nothing is released twice or left behind. A reserved bundle takes its
 * resources from its node's available; a committed one adds its bundle resources (`CPU_group_<pg>`,
 * `CPU_group_<i>_<pg>`) to the node's total, for the actors and tasks placed in the group.
 *
 * The cluster state changes at once, so placements see it; the GCS is told of each node changed
 * once at the end of the run of microtasks (#touch) — each telling copies the node's resources,
 * which carry every committed bundle's.
 */
export class BundleLedger {
  readonly #held = new Map<string, Map<number, Held>>();
  /** Nodes whose resources changed since the last #flushTouched. */
  readonly #touched = new Set<string>();

  constructor(private readonly deps: BundleLedgerDeps) {}

  /** Takes the bundles at `placing` (those with a node, not already held) from their nodes' available resources. */
  reserve(pgId: string, placing: readonly number[], bundles: readonly { readonly nodeId?: string; readonly resources: ResourceSet }[]): void {
    const held = this.#heldOf(pgId);
    for (const i of placing) {
      const b = bundles[i];
      if (b.nodeId === undefined || held.has(i)) continue;
      this.deps.state.allocate(b.nodeId, b.resources);
      held.set(i, { nodeId: b.nodeId, resources: b.resources, committed: false });
      this.#touch(b.nodeId);
    }
  }

  /** Every raylet committed: the bundles' resources appear on their (live) nodes. */
  commit(pgId: string, placing: readonly number[]): void {
    const held = this.#heldOf(pgId);
    // one growTotal per node for all of the group's bundles there: a node's total carries every
    // committed bundle's resources, so each change copies a record that grows with the groups
    const extras = new Map<string, Record<string, number>>();
    for (const i of placing) {
      const h = held.get(i);
      if (!h || h.committed || !this.alive(h.nodeId)) continue;
      const extra = bundleResources(h.resources, pgId, i);
      const sum = extras.get(h.nodeId);
      // added in place: a copy per bundle made a group of 10,000 bundles on one node quadratic (35 s)
      if (sum === undefined) extras.set(h.nodeId, extra);
      else addInPlace(sum, extra);
      h.committed = true;
    }
    for (const [nodeId, extra] of extras) {
      this.deps.state.growTotal(nodeId, extra);
      this.#touch(nodeId);
    }
    this.deps.resourcesChanged();
  }

  /**
   * Gives back the given bundles (all when undefined) in the cluster state, per node in one step;
   * answers the bundles on live nodes, which their raylets must cancel.
   */
  giveBack(pgId: string, indexes: readonly number[] | undefined): { nodeId: string; index: number }[] {
    const toCancel: { nodeId: string; index: number }[] = [];
    const held = this.#held.get(pgId);
    if (!held) return toCancel;
    const perNode = new Map<string, { extra?: Record<string, number>; raw: Record<string, number> }>();
    for (const i of indexes ?? [...held.keys()]) {
      const h = held.get(i);
      if (!h) continue;
      held.delete(i);
      if (!this.alive(h.nodeId)) continue;
      let sums = perNode.get(h.nodeId);
      if (!sums) perNode.set(h.nodeId, (sums = { raw: {} }));
      if (h.committed) {
        const extra = bundleResources(h.resources, pgId, i);
        if (sums.extra === undefined) sums.extra = extra;
        else addInPlace(sums.extra, extra);
      }
      addInPlace(sums.raw, h.resources);
      toCancel.push({ nodeId: h.nodeId, index: i });
    }
    for (const [nodeId, { extra, raw }] of perNode) {
      if (extra !== undefined) this.deps.state.shrinkTotal(nodeId, extra);
      this.deps.state.release(nodeId, raw);
      this.#touch(nodeId);
    }
    if (held.size === 0) this.#held.delete(pgId);
    if (perNode.size > 0) this.deps.resourcesChanged();
    return toCancel;
  }

  /** A dead node's bundles are forgotten: the node leaves the cluster state with everything on it. */
  lose(pgId: string, nodeId: string): void {
    const held = this.#held.get(pgId);
    if (!held) return;
    for (const [i, h] of held) if (h.nodeId === nodeId) held.delete(i);
  }

  /** The node a group's bundle is held on, if it is held. */
  nodeOf(pgId: string, index: number): string | undefined {
    return this.#held.get(pgId)?.get(index)?.nodeId;
  }

  /** Bundles reserved or committed on each node. */
  countsByNode(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const held of this.#held.values()) for (const h of held.values()) counts.set(h.nodeId, (counts.get(h.nodeId) ?? 0) + 1);
    return counts;
  }

  alive(nodeId: string): boolean {
    const node = this.deps.state.node(nodeId);
    return node !== undefined && node.state !== 'DEAD';
  }

  #heldOf(pgId: string): Map<number, Held> {
    let held = this.#held.get(pgId);
    if (!held) this.#held.set(pgId, (held = new Map()));
    return held;
  }

  /**
   * Tells the GCS (node table, view, eviction) of a changed node once, at the end of the current run
   * of microtasks: before any later message is handled, and before the events published in this run
   * are delivered.
   */
  #touch(nodeId: string): void {
    if (this.#touched.size === 0) queueMicrotask(() => this.#flushTouched());
    this.#touched.add(nodeId);
  }

  #flushTouched(): void {
    const nodes = [...this.#touched];
    this.#touched.clear();
    for (const nodeId of nodes) {
      // a node that left the cluster meanwhile was synced by its removal
      if (this.deps.state.node(nodeId) === undefined) continue;
      try {
        this.deps.nodeChanged(nodeId);
      } catch (err) {
        this.deps.log(`node ${nodeId} change after placement-group work failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}

/** `into` += `more`, name by name: `into` is a sum the ledger owns. */
function addInPlace(into: Record<string, number>, more: ResourceSet): void {
  for (const name in more) into[name] = (into[name] ?? 0) + more[name];
}
