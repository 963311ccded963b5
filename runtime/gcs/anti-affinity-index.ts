import { NODE_ID_LABEL } from '../../lib/labels/builtin.ts';
import type { LabelMatchExpression } from '../../lib/selectors/expression.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';

/**
 * Hard anti-affinity both ways, as Kubernetes' inter-pod anti-affinity: an actor is not placed on a
 * node where a running actor's hard anti-affinity matches the newcomer's labels. Seed 000's filter
 * checks only the newcomer's own terms; without this, an actor that restarts after a failure (its
 * node died) could land next to an actor that is anti-affine to it, and a hard constraint that held
 * would silently stop holding.
 *
 * The index holds the placed actors that have hard NOT_IN / DOES_NOT_EXIST actor-label terms (few,
 * in practice); for a placement it gives the nodes whose residents repel the newcomer, and the GCS
 * adds `orrery.io/node-id notin (…)` to the newcomer's hard node affinity — so the scheduler and its
 * explanations need nothing new.
 */
interface Resident {
  readonly nodeId: string;
  readonly namespace: string;
  readonly terms: readonly LabelMatchExpression[];
}

export class AntiAffinityIndex {
  readonly #residents = new Map<string, Resident>();

  /** An actor was placed on `nodeId` with this request: remember its hard anti-affinity terms. */
  placed(actorId: string, nodeId: string, namespace: string, request: SchedulingRequest): void {
    const terms = request.actorAffinity.filter((e) => !e.soft && (e.operator === 'NOT_IN' || e.operator === 'DOES_NOT_EXIST'));
    if (terms.length > 0) this.#residents.set(actorId, { nodeId, namespace, terms });
  }

  left(actorId: string): void {
    this.#residents.delete(actorId);
  }

  get size(): number {
    return this.#residents.size;
  }

  /** Nodes where a resident's hard anti-affinity matches an actor with these labels, sorted. */
  repelling(actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }): string[] {
    const nodes = new Set<string>();
    for (const [id, r] of this.#residents) {
      if (id === actor.actorId || nodes.has(r.nodeId)) continue;
      if (r.terms.some((t) => repels(t, r.namespace, actor))) nodes.add(r.nodeId);
    }
    return [...nodes].sort();
  }

  /**
   * The request with the repelling nodes — and any `alsoAvoid` — excluded through its hard node
   * affinity (unchanged when there are none).
   */
  constrain(request: SchedulingRequest, actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }, alsoAvoid: ReadonlySet<string> = new Set()): SchedulingRequest {
    if (this.#residents.size === 0 && alsoAvoid.size === 0) return request;
    const nodes = [...new Set([...this.repelling(actor), ...alsoAvoid])].sort();
    if (nodes.length === 0) return request;
    const away: LabelMatchExpression = { key: NODE_ID_LABEL, operator: 'NOT_IN', values: nodes, soft: false };
    return { ...request, nodeAffinity: [...request.nodeAffinity, away] };
  }
}

function repels(term: LabelMatchExpression, residentNamespace: string, actor: { namespace: string; labels: Readonly<Record<string, string>> }): boolean {
  if ((term.namespace ?? residentNamespace) !== actor.namespace || !Object.hasOwn(actor.labels, term.key)) return false;
  return term.operator === 'DOES_NOT_EXIST' || term.values.includes(actor.labels[term.key]);
}
