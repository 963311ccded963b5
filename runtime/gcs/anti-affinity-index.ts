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
 * passes them in the request's `repelledBy`, which lib's resident-anti-affinity filter refuses with
 * a reason that names the residents' rule.
 */
interface Resident {
  readonly nodeId: string;
  /** The buckets it is filed under (see AntiAffinityIndex), to take it out again. */
  readonly buckets: readonly string[];
}

/**
 * Residents are filed by what they repel, so a placement looks up only the residents its own labels
 * can match — a few buckets per label — instead of scanning every resident (which made creating n
 * actors with anti-affinity cost O(n²): bench:e2e measured a fifth of the GCS's time there):
 *
 *   `v\0<namespace>\0<key>\0<value>`  a NOT_IN term on `key` listing `value`
 *   `k\0<namespace>\0<key>`            a DOES_NOT_EXIST term on `key`
 *
 * `namespace` is the term's own, or the resident's when the term names none. A newcomer with labels
 * {k: v} in namespace ns is repelled exactly by the residents in buckets `v\0ns\0k\0v` and `k\0ns\0k`.
 */
const valueBucket = (namespace: string, key: string, value: string): string => `v\u0000${namespace}\u0000${key}\u0000${value}`;
const keyBucket = (namespace: string, key: string): string => `k\u0000${namespace}\u0000${key}`;

export class AntiAffinityIndex {
  readonly #residents = new Map<string, Resident>();
  /** bucket → resident actor id → its node. */
  readonly #buckets = new Map<string, Map<string, string>>();

  /** An actor was placed on `nodeId` with this request: remember its hard anti-affinity terms. */
  placed(actorId: string, nodeId: string, namespace: string, request: SchedulingRequest): void {
    // a term with a topologyKey repels from the resident's node only, not its whole domain (docs/scheduling.md)
    const terms = request.actorAffinity.filter((e) => !e.soft && (e.operator === 'NOT_IN' || e.operator === 'DOES_NOT_EXIST'));
    if (terms.length === 0) return;
    this.left(actorId);
    const buckets = new Set<string>();
    for (const t of terms) {
      const ns = t.namespace ?? namespace;
      if (t.operator === 'DOES_NOT_EXIST') buckets.add(keyBucket(ns, t.key));
      else for (const v of t.values) buckets.add(valueBucket(ns, t.key, v));
    }
    for (const b of buckets) {
      let members = this.#buckets.get(b);
      if (!members) this.#buckets.set(b, (members = new Map()));
      members.set(actorId, nodeId);
    }
    this.#residents.set(actorId, { nodeId, buckets: [...buckets] });
  }

  left(actorId: string): void {
    const r = this.#residents.get(actorId);
    if (!r) return;
    this.#residents.delete(actorId);
    for (const b of r.buckets) {
      const members = this.#buckets.get(b);
      if (!members) continue;
      members.delete(actorId);
      if (members.size === 0) this.#buckets.delete(b);
    }
  }

  get size(): number {
    return this.#residents.size;
  }

  /** Nodes where a resident's hard anti-affinity matches an actor with these labels, sorted. */
  repelling(actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }): string[] {
    return Object.keys(this.repellers(actor)).sort();
  }

  /** Those nodes with the residents that repel the actor there (actor ids sorted). */
  repellers(actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    const add = (members: Map<string, string> | undefined): void => {
      if (!members) return;
      for (const [id, nodeId] of members) {
        if (id === actor.actorId) continue;
        const list = (out[nodeId] ??= []);
        if (!list.includes(id)) list.push(id);
      }
    };
    for (const key of Object.keys(actor.labels)) {
      add(this.#buckets.get(valueBucket(actor.namespace, key, actor.labels[key])));
      add(this.#buckets.get(keyBucket(actor.namespace, key)));
    }
    for (const list of Object.values(out)) list.sort();
    return out;
  }

  /**
   * The request with the repelling nodes in `repelledBy` (so the explanation names the residents'
   * rule), and any `alsoAvoid` excluded through its hard node affinity; unchanged when there are none.
   */
  constrain(request: SchedulingRequest, actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }, alsoAvoid: ReadonlySet<string> = new Set()): SchedulingRequest {
    if (this.#residents.size === 0 && alsoAvoid.size === 0) return request;
    const repelled = this.#residents.size === 0 ? {} : this.repellers(actor);
    const any = Object.keys(repelled).length > 0;
    if (!any && alsoAvoid.size === 0) return request;
    let out: SchedulingRequest = any ? { ...request, repelledBy: repelled } : request;
    if (alsoAvoid.size > 0) {
      const away: LabelMatchExpression = { key: NODE_ID_LABEL, operator: 'NOT_IN', values: [...alsoAvoid].sort(), soft: false };
      out = { ...out, nodeAffinity: [...out.nodeAffinity, away] };
    }
    return out;
  }
}
