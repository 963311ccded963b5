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

/**
 * Where a resident's term repels: its node (`n\0<node>`), or with a topologyKey every node of its
 * domain (`t\0<topologyKey>\0<value>`, Kubernetes' InterPodAffinity for existing pods). A resident
 * on a node without the topology label has no domain there, and repels nobody with that term.
 */
const nodePlace = (nodeId: string): string => `n\u0000${nodeId}`;
const domainPlace = (key: string, value: string): string => `t\u0000${key}\u0000${value}`;

/** The repelling places for one newcomer: nodes, and topology domains, with the residents there. */
export interface Repellers {
  readonly nodes: Record<string, string[]>;
  readonly domains: { topologyKey: string; domain: string; actors: string[] }[];
}

export class AntiAffinityIndex {
  readonly #residents = new Map<string, Resident>();
  /** bucket → resident actor id → the places its terms in that bucket repel from. */
  readonly #buckets = new Map<string, Map<string, string[]>>();

  /**
   * An actor was placed on `nodeId` (with those node labels) with this request: remember its hard
   * anti-affinity terms. A topology domain is taken as the node's label value now; a later relabel
   * of the node is not followed.
   */
  placed(actorId: string, nodeId: string, namespace: string, request: SchedulingRequest, nodeLabels: Readonly<Record<string, string>> = {}): void {
    const terms = request.actorAffinity.filter((e) => !e.soft && (e.operator === 'NOT_IN' || e.operator === 'DOES_NOT_EXIST'));
    if (terms.length === 0) return;
    this.left(actorId);
    const places = new Map<string, Set<string>>();
    for (const t of terms) {
      const ns = t.namespace ?? namespace;
      const topo = t.topologyKey;
      if (topo !== undefined && !Object.hasOwn(nodeLabels, topo)) continue;
      const place = topo === undefined ? nodePlace(nodeId) : domainPlace(topo, nodeLabels[topo]);
      const buckets = t.operator === 'DOES_NOT_EXIST' ? [keyBucket(ns, t.key)] : t.values.map((v) => valueBucket(ns, t.key, v));
      for (const b of buckets) {
        if (!places.has(b)) places.set(b, new Set());
        places.get(b)!.add(place);
      }
    }
    for (const [b, at] of places) {
      let members = this.#buckets.get(b);
      if (!members) this.#buckets.set(b, (members = new Map()));
      members.set(actorId, [...at]);
    }
    this.#residents.set(actorId, { nodeId, buckets: [...places.keys()] });
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

  /** Nodes where a resident's hard anti-affinity (without a topology key) matches an actor with these labels, sorted. */
  repelling(actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }): string[] {
    return Object.keys(this.repellers(actor).nodes).sort();
  }

  /** The nodes and topology domains that repel the actor, with the residents doing it (ids sorted). */
  repellers(actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }): Repellers {
    const byPlace = new Map<string, string[]>();
    const add = (members: Map<string, string[]> | undefined): void => {
      if (!members) return;
      for (const [id, places] of members) {
        if (id === actor.actorId) continue;
        for (const place of places) {
          let list = byPlace.get(place);
          if (!list) byPlace.set(place, (list = []));
          if (!list.includes(id)) list.push(id);
        }
      }
    };
    for (const key of Object.keys(actor.labels)) {
      add(this.#buckets.get(valueBucket(actor.namespace, key, actor.labels[key])));
      add(this.#buckets.get(keyBucket(actor.namespace, key)));
    }
    const out: Repellers = { nodes: {}, domains: [] };
    for (const [place, actors] of byPlace) {
      actors.sort();
      const [kind, a, b] = place.split('\u0000');
      if (kind === 'n') out.nodes[a] = actors;
      else out.domains.push({ topologyKey: a, domain: b, actors });
    }
    out.domains.sort((x, y) => (x.topologyKey + '\u0000' + x.domain < y.topologyKey + '\u0000' + y.domain ? -1 : 1));
    return out;
  }

  /**
   * The request with the repelling nodes in `repelledBy` (so the explanation names the residents'
   * rule), and any `alsoAvoid` excluded through its hard node affinity; unchanged when there are none.
   */
  constrain(request: SchedulingRequest, actor: { actorId: string; namespace: string; labels: Readonly<Record<string, string>> }, alsoAvoid: ReadonlySet<string> = new Set()): SchedulingRequest {
    if (this.#residents.size === 0 && alsoAvoid.size === 0) return request;
    const repelled: Repellers = this.#residents.size === 0 ? { nodes: {}, domains: [] } : this.repellers(actor);
    const byNode = Object.keys(repelled.nodes).length > 0;
    const byDomain = repelled.domains.length > 0;
    if (!byNode && !byDomain && alsoAvoid.size === 0) return request;
    let out: SchedulingRequest = request;
    if (byNode) out = Object.assign({}, out, { repelledBy: repelled.nodes });
    if (byDomain) out = Object.assign({}, out, { repelledIn: repelled.domains });
    if (alsoAvoid.size > 0) {
      const away: LabelMatchExpression = { key: NODE_ID_LABEL, operator: 'NOT_IN', values: [...alsoAvoid].sort(), soft: false };
      out = Object.assign({}, out, { nodeAffinity: [...out.nodeAffinity, away] });
    }
    return out;
  }
}
