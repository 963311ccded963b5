import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { Rng } from '../../lib/random.ts';
import { dryRun, type DryRun } from '../../lib/scheduling/dry-run.ts';
import { schedule, type Decision } from '../../lib/scheduling/schedule.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import type { CompiledActor } from './actor-options.ts';
import { AntiAffinityIndex } from './anti-affinity-index.ts';

/**
 * The GCS's placement decisions for actors: lib's schedule(), with what the GCS knows beyond one
 * request —
 *
 *   - nodes whose running actors are hard anti-affine to this one are excluded (hard anti-affinity
 *     both ways, anti-affinity-index.ts), and so are nodes whose raylet did not answer a
 *     create_actor since its last heartbeat (nodes.ts);
 *   - an actor whose placement shape already proved unschedulable in this generation of the pending
 *     queue (nothing was placed, freed or changed since: every such change kicks the queue) gets that
 *     decision again without another search and explanation — so a storm of identical unplaceable
 *     actors costs one explanation per pass, not one per actor. A request narrowed by the first rule
 *     is particular to the moment and is not shared.
 */
export interface PlacementDeps {
  readonly state: ClusterState;
  readonly rng: Rng;
  /** The pending queue's generation: raised by every change that can alter a decision. */
  readonly generation: () => number;
  readonly unreachableNodes: () => ReadonlySet<string>;
}

export interface Placeable {
  readonly actorId: string;
  readonly namespace: string;
  readonly compiled: CompiledActor;
}

export class Placement {
  readonly #anti = new AntiAffinityIndex();
  readonly #unplaceable = new Map<string, Decision>();
  #generation = -1;

  constructor(private readonly deps: PlacementDeps) {}

  decide(actor: Placeable): Decision {
    const { compiled } = actor;
    const request = this.#anti.constrain(compiled.request, { actorId: actor.actorId, namespace: actor.namespace, labels: compiled.labels }, this.deps.unreachableNodes());
    if (request !== compiled.request) return this.#schedule(request);
    const gen = this.deps.generation();
    if (gen !== this.#generation) {
      this.#unplaceable.clear();
      this.#generation = gen;
    }
    const known = this.#unplaceable.size === 0 ? undefined : this.#unplaceable.get(compiled.shape);
    if (known) return known;
    const decision = this.#schedule(request);
    if (decision.status === 'unschedulable') this.#unplaceable.set(compiled.shape, decision);
    return decision;
  }

  /** What decide() would do, as a dry run: the same constraints, nothing placed, nothing cached. */
  explain(actor: Placeable): DryRun {
    const request = this.#anti.constrain(actor.compiled.request, { actorId: actor.actorId, namespace: actor.namespace, labels: actor.compiled.labels }, this.deps.unreachableNodes());
    return dryRun(this.deps.state, request, { rng: this.deps.rng });
  }

  /** The actor now runs on `nodeId`: its hard anti-affinity keeps others away from there. */
  placed(actor: Placeable, nodeId: string): void {
    this.#anti.placed(actor.actorId, nodeId, actor.namespace, actor.compiled.request, this.deps.state.node(nodeId)?.labels);
  }

  left(actorId: string): void {
    this.#anti.left(actorId);
  }

  #schedule(request: SchedulingRequest): Decision {
    return schedule(this.deps.state, request, { rng: this.deps.rng });
  }
}
