import type { PlacedActor, SchedNode } from '../cluster/sched-node.ts';
import { labelCounts, type LabelCount } from '../cluster/actor-label-counts.ts';
import { LabelIndex, actorScope } from './label-index.ts';

/**
 * Actor labels aggregated per topology domain (Kubernetes' topologyKey): for a node label such as
 * `zone`, which actor labels some actor in each zone carries. It is the label index with domains in
 * place of nodes, so "is there an actor labelled app=web in zone a?" costs O(values), and the set
 * of domains with such an actor O(result).
 *
 * A topology key is tracked from the first request that names it (built once in O(actors) from
 * the cluster), then kept up to date by ClusterState as actors come and go and node labels change:
 * O(tracked keys × actor labels) per change. Domains are reference-counted like nodes, so two
 * actors with the same label in one zone keep it until both are gone.
 */
export class TopologyIndex {
  /** topology key → (domain value standing in for a node id) label index */
  readonly #byKey = new Map<string, LabelIndex>();

  has(topologyKey: string): boolean {
    return this.#byKey.has(topologyKey);
  }

  /** The domain index for a key; tracked from now on, built from `nodes` when first asked for. */
  track(topologyKey: string, nodes: Iterable<SchedNode>): LabelIndex {
    let index = this.#byKey.get(topologyKey);
    if (index) return index;
    this.#byKey.set(topologyKey, (index = new LabelIndex()));
    for (const node of nodes) {
      if (!Object.hasOwn(node.labels, topologyKey)) continue;
      for (const actor of node.actors.values()) index.add(actorScope(actor.namespace), node.labels[topologyKey], actor.labels);
      for (const [namespace, key, value, n] of labelCounts(node.actorLabels ?? new Map())) index.adjust(actorScope(namespace), node.labels[topologyKey], key, value, n);
    }
    return index;
  }

  /** An actor placed on (+1) or gone from (-1) a node: its labels in or out of the node's domains. */
  actor(node: SchedNode, actor: PlacedActor, sign: 1 | -1): void {
    for (const [key, index] of this.#byKey) {
      if (!Object.hasOwn(node.labels, key)) continue;
      if (sign > 0) index.add(actorScope(actor.namespace), node.labels[key], actor.labels);
      else index.remove(actorScope(actor.namespace), node.labels[key], actor.labels);
    }
  }

  /** One actor-label count of a node (held without its actors) moved by its count. */
  count(node: SchedNode, [namespace, key, value, by]: LabelCount): void {
    for (const [topologyKey, index] of this.#byKey) {
      if (Object.hasOwn(node.labels, topologyKey)) index.adjust(actorScope(namespace), node.labels[topologyKey], key, value, by);
    }
  }

  /** Every actor (and actor-label count) of a node, as when it leaves (-1) or joins (+1) domains with a label change. */
  node(node: SchedNode, sign: 1 | -1): void {
    if (this.#byKey.size === 0) return;
    for (const actor of node.actors.values()) this.actor(node, actor, sign);
    for (const [namespace, key, value, n] of labelCounts(node.actorLabels ?? new Map())) this.count(node, [namespace, key, value, sign * n]);
  }
}
