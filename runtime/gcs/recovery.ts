import { performance } from 'node:perf_hooks';
import type { ActorDirectory } from './actors.ts';
import type { NodeDirectory, Running } from './nodes.ts';
import type { PlacementGroupDirectory } from './placement-groups.ts';
import type { GcsStore } from './store.ts';

/**
 * What a GCS that finds tables from an earlier one does with them (docs/failover.md, "Control-plane
 * faults"). The Gcs machine holds `recovering` while raylets register again, each saying which
 * actor incarnations it still runs; `registered` collects those answers, and says when every node
 * the table held as live is back (the grace window may end early). Then `reconcile`:
 *
 *   - a CREATED placement group whose bundles are still committed on the nodes that are back comes
 *     back CREATED (bundles on nodes that did not come back are rescheduled); any other group that
 *     is not REMOVED is placed again; a bundle a raylet holds that no group kept is cancelled there —
 *     groups come first, so the bundle resources their actors hold exist again when actors return;
 *   - an actor SCHEDULED or ALIVE on a node that is back and runs exactly its incarnation stays as
 *     it is: same node, same incarnation, no restart, its state kept;
 *   - one the GCS thinks runs but no raylet reports is restarted per its maxRestarts (or DEAD);
 *   - an incarnation a raylet runs but the GCS does not know (or knows as another) is killed there;
 *   - PENDING and RESTARTING actors wait in the queue again; DEAD ones stay records;
 *   - a node the table held as live that did not come back is DEAD.
 *
 * Named actors come back with their actors (a name belongs to an actor not DEAD). Once the GCS
 * serves, a raylet that registers again (it was cut off and declared dead) is reconciled at once.
 */
export interface RecoveryDeps {
  readonly store: GcsStore;
  readonly nodes: NodeDirectory;
  readonly actors: ActorDirectory;
  readonly groups: PlacementGroupDirectory;
  readonly log: (line: string) => void;
  /** Every node the table held as live has registered again. */
  readonly allBack: () => void;
}

type Tally = { kept: number; restarted: number; waiting: number; killed: number; nodesLost: number; groupsKept: number; groupsAgain: number; bundlesCancelled: number };

interface Reported {
  readonly actors: Map<string, number>;
  /** Those of `actors` whose constructor had not returned yet when the raylet registered. */
  readonly starting: Set<string>;
  /** Committed bundles, as `pgId/index`. */
  readonly committed: Set<string>;
  readonly bundles: readonly { pgId: string; index: number }[];
}

export class Recovery {
  /** Nodes the table holds as live: those the grace window waits for. */
  readonly expected: ReadonlySet<string>;
  readonly #reported = new Map<string, Reported>();
  /** Whether there is anything to recover: live nodes, or actors not DEAD. */
  readonly needed: boolean;
  #active: boolean;
  #reconciling = false;

  constructor(private readonly deps: RecoveryDeps) {
    this.expected = new Set(deps.store.nodes().filter((n) => n.info.state !== 'DEAD').map((n) => n.info.nodeId));
    this.needed =
      this.expected.size > 0 || deps.store.actors().some((a) => a.info.state !== 'DEAD') || deps.store.groups().some((g) => g.info.state !== 'REMOVED');
    this.#active = this.needed;
  }

  /** How many of the expected nodes have registered again (gcs_status). */
  get nodesBack(): number {
    let back = 0;
    for (const id of this.expected) if (this.#reported.has(id)) back++;
    return back;
  }

  /** A raylet registered: remembered until the reconciliation while recovering, else reconciled now. */
  registered(nodeId: string, running: Running): void {
    const bundles = running.bundles ?? [];
    if (!this.#active) {
      const killed = this.deps.actors.reconcileNode(nodeId, running.actors);
      const cancelled = this.deps.groups.reconcileNode(nodeId, bundles);
      if (killed + cancelled > 0) this.deps.log(`node ${nodeId} registered again with ${killed} actor incarnation(s) and ${cancelled} bundle(s) the GCS had moved on from: dropped there`);
      return;
    }
    this.#reported.set(nodeId, {
      actors: new Map(running.actors.map((r) => [r.actorId, r.incarnation])),
      starting: new Set(running.actors.filter((r) => r.starting === true).map((r) => r.actorId)),
      committed: new Set(bundles.filter((b) => b.committed).map((b) => `${b.pgId}/${b.index}`)),
      bundles,
    });
    if ([...this.expected].every((id) => this.#reported.has(id))) this.deps.allBack();
  }

  /**
   * The reconciliation, once: afterwards every registration is reconciled as it comes. It yields to
   * the event loop every `sliceMs` (`pause()`; false: the GCS is stopping, give up): with 10,000
   * actors it is a second of work, and a leader that holds its event loop that long cannot renew its
   * lease in time — its fenced bus then drops the raylets' heartbeats (fenced-bus.ts) and the nodes
   * it just recovered are declared DEAD. Registrations that arrive meanwhile are recorded as before.
   */
  async reconcile(slice: { sliceMs: number; pause: () => Promise<boolean> }): Promise<Tally> {
    const tally: Tally = { kept: 0, restarted: 0, waiting: 0, killed: 0, nodesLost: 0, groupsKept: 0, groupsAgain: 0, bundlesCancelled: 0 };
    if (!this.#active || this.#reconciling) return tally;
    this.#reconciling = true;
    const { store, nodes, actors, groups } = this.deps;
    for (const nodeId of this.expected) {
      if (nodes.has(nodeId)) continue;
      nodes.lost(nodeId);
      tally.nodesLost++;
    }
    let sliceStart = performance.now();
    /** False once the GCS stops: give up. Between slices, the event loop renews the lease and hears heartbeats. */
    const onward = async (): Promise<boolean> => {
      if (performance.now() - sliceStart < slice.sliceMs) return true;
      if (!(await slice.pause())) return false;
      sliceStart = performance.now();
      return true;
    };
    const keptBundles = new Set<string>();
    for (const record of [...store.groups()]) {
      // 30,000 groups took 0.5 s in one go, with the node's registration before it: the lease lapsed
      if (!(await onward())) return tally;
      let restored: ReturnType<typeof groups.restore>;
      try {
        restored = groups.restore(
          record,
          (nodeId) => nodes.has(nodeId),
          (nodeId, index) => this.#reported.get(nodeId)?.committed.has(`${record.info.id}/${index}`) ?? false,
        );
      } catch (err) {
        // one record must not stop the rest: a throw here once left every group and actor after it
        // unrestored, their bundles leased on the raylets for good (its bundles are cancelled below)
        this.deps.log(`placement group ${record.info.id} could not be restored: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const { how, kept } = restored;
      for (const k of kept) keptBundles.add(`${k}/${record.info.id}`);
      if (how === 'kept') tally.groupsKept++;
      else if (how === 'again') tally.groupsAgain++;
    }
    for (const [nodeId, reported] of this.#reported) {
      if (!nodes.has(nodeId)) continue;
      const strays = reported.bundles.filter((b) => !keptBundles.has(`${nodeId}/${b.index}/${b.pgId}`));
      tally.bundlesCancelled += groups.reconcileNode(nodeId, strays);
    }
    for (const record of [...store.actors()]) {
      if (!(await onward())) return tally;
      const { info } = record;
      const incarnation = record.incarnation ?? 0;
      if (info.state === 'DEAD') {
        actors.restore(record, { kind: 'dead' });
        continue;
      }
      if (info.state === 'PENDING' || info.state === 'RESTARTING' || info.state === 'DEPENDENCIES_UNREADY' || info.nodeId === undefined) {
        actors.restore(record, { kind: 'waiting' });
        tally.waiting++;
        continue;
      }
      const nodeId = info.nodeId;
      const reported = this.#reported.get(nodeId);
      if (reported?.actors.get(info.actorId) === incarnation && nodes.has(nodeId)) {
        // a constructor still running there: SCHEDULED on that node, its create asked again
        actors.restore(record, reported.starting.has(info.actorId) ? { kind: 'starting', nodeId } : { kind: 'running', nodeId });
        tally.kept++;
        continue;
      }
      const cause = nodes.has(nodeId) ? `not running on node ${nodeId} when the GCS restarted` : `node ${nodeId} did not come back after the GCS restarted`;
      actors.restore(record, { kind: 'lost', cause });
      tally.restarted++;
    }
    // what was kept is placed on its node by now; every other incarnation a raylet runs is a stray
    this.#active = false;
    for (const [nodeId, running] of this.#reported) {
      if (nodes.has(nodeId)) tally.killed += actors.reconcileNode(nodeId, [...running.actors].map(([actorId, incarnation]) => ({ actorId, incarnation })));
    }
    this.#reported.clear();
    this.deps.log(
      `recovered: ${tally.kept} actor(s) kept where they run, ${tally.restarted} restarted or lost, ${tally.waiting} waiting, ` +
        `${tally.killed} stray incarnation(s) killed, ${tally.nodesLost} node(s) did not come back; ` +
        `${tally.groupsKept} placement group(s) kept, ${tally.groupsAgain} placed again, ${tally.bundlesCancelled} stray bundle(s) cancelled`,
    );
    return tally;
  }
}
