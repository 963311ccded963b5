import { LabelIndex } from './label-index.ts';

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

  /** The domain index for a key, created empty when first asked for (the caller fills it). */
  domains(topologyKey: string): LabelIndex {
    let index = this.#byKey.get(topologyKey);
    if (!index) this.#byKey.set(topologyKey, (index = new LabelIndex()));
    return index;
  }

  /** The keys tracked, to update on an actor or node-label change. */
  keys(): IterableIterator<string> {
    return this.#byKey.keys();
  }

  get size(): number {
    return this.#byKey.size;
  }
}
