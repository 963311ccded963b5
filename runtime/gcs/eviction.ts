import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import type { EvictionReason } from './events.ts';
import { brokenConstraint, describeNoExecute, untoleratedNoExecute } from './running-constraints.ts';

/**
 * Moves running actors off nodes they may no longer run on (docs/failover.md):
 *
 *   NoExecute taint            every actor on the node that does not tolerate it
 *   affinityDuringExecution    an actor created with `'required'` whose hard constraint stopped
 *                              holding: its affinity peer left, the node's labels changed, an actor
 *                              it is anti-affine to arrived
 *
 * Whatever can break those — an actor placed on or gone from a node, a node's labels or taints
 * changed — marks the node; marked nodes are checked on a later turn, once the pending queue is idle,
 * so a peer that restarts and is placed straight back on the same node does not cost its followers a
 * restart. Nodes with no NoExecute taint are skipped while no actor requires its constraints during
 * execution, so the check costs nothing in the common case.
 */
export interface RunningActor {
  readonly request: SchedulingRequest;
  readonly namespace: string;
  /** affinityDuringExecution: 'required'. */
  readonly required: boolean;
}

export interface EvictionDeps {
  readonly state: ClusterState;
  /** The placed actor's request, or undefined when it is not an actor the GCS runs. */
  readonly running: (actorId: string) => RunningActor | undefined;
  readonly evict: (actorId: string, reason: EvictionReason, cause: string) => void;
  /** Runs `fn` once the pending queue is idle. */
  readonly whenSettled: (fn: () => void) => void;
}

export class EvictionGuard {
  readonly #marked = new Set<string>();
  #required = 0;
  #scheduled = false;
  #stopped = false;
  /** Evictions so far, by reason. */
  readonly counts: Record<EvictionReason, number> = { no_execute_taint: 0, affinity_lost: 0 };

  constructor(private readonly deps: EvictionDeps) {}

  /** An actor with affinityDuringExecution 'required' registered (+1) or died (-1). */
  requiredActors(delta: 1 | -1): void {
    this.#required += delta;
  }

  /** Something on the node changed that can break a running actor's constraints. */
  mark(nodeId: string): void {
    if (this.#stopped) return;
    const node = this.deps.state.node(nodeId);
    if (!node) return;
    if (this.#required === 0 && !node.taints.some((t) => t.effect === 'NoExecute')) return;
    this.#marked.add(nodeId);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.deps.whenSettled(() => this.#check()));
  }

  stop(): void {
    this.#stopped = true;
    this.#marked.clear();
  }

  #check(): void {
    this.#scheduled = false;
    if (this.#stopped) return;
    const nodes = [...this.#marked];
    this.#marked.clear();
    for (const nodeId of nodes) {
      const node = this.deps.state.node(nodeId);
      if (!node || node.state === 'DEAD') continue;
      const noExecute = node.taints.some((t) => t.effect === 'NoExecute');
      for (const placed of [...node.actors.values()]) {
        const actor = this.deps.running(placed.actorId);
        if (!actor || !node.actors.has(placed.actorId)) continue;
        const taint = noExecute ? untoleratedNoExecute(node, actor.request) : undefined;
        if (taint) {
          this.#evict(placed.actorId, 'no_execute_taint', describeNoExecute(node, taint));
          continue;
        }
        if (!actor.required) continue;
        const broken = brokenConstraint(node, { actorId: placed.actorId, namespace: actor.namespace }, actor.request);
        if (broken) this.#evict(placed.actorId, 'affinity_lost', `evicted: ${broken} (affinityDuringExecution: required)`);
      }
    }
  }

  #evict(actorId: string, reason: EvictionReason, cause: string): void {
    this.counts[reason]++;
    this.deps.evict(actorId, reason, cause);
  }
}
