/**
 * The cluster-wide label index: which nodes carry which labels, in scopes.
 *
 *   node labels       scope NODE_SCOPE
 *   taints            scope TAINT_SCOPE (key → taint value)
 *   actor labels      scope actorScope(namespace): the labels of the actors placed on each node,
 *                     including every actor's automatic orrery.io/actor-id label
 *
 * Entries are reference-counted per node: two actors with the same label on one node keep the
 * node in that label's set until both are gone. Lookups cost O(result) and membership checks O(1);
 * adding or removing a label map costs O(labels).
 */
export const NODE_SCOPE = 'node';
export const TAINT_SCOPE = 'taint';
export const actorScope = (namespace: string): string => `actor/${namespace}`;

type NodeCounts = Map<string, number>;
/**
 * The nodes holding one (scope, key, value): most values are held once on one node — every actor's
 * own `orrery.io/actor-id` is — so that case is the node id alone, and only a value held more than
 * once becomes a counting Map. A Map per actor was ~0.4 KB of the GCS's memory per actor (bench/sim).
 */
type ValueNodes = string | NodeCounts;

function valueHas(nodes: ValueNodes, nodeId: string): boolean {
  return typeof nodes === 'string' ? nodes === nodeId : nodes.has(nodeId);
}
function valueSize(nodes: ValueNodes): number {
  return typeof nodes === 'string' ? 1 : nodes.size;
}
function valueCount(nodes: ValueNodes, nodeId: string): number {
  return typeof nodes === 'string' ? (nodes === nodeId ? 1 : 0) : (nodes.get(nodeId) ?? 0);
}
function* valueIds(nodes: ValueNodes): Iterable<string> {
  if (typeof nodes === 'string') yield nodes;
  else yield* nodes.keys();
}

export class LabelIndex {
  /** scope \0 key → value → node → count */
  readonly #byValue = new Map<string, Map<string, ValueNodes>>();
  /** scope \0 key → node → count */
  readonly #byKey = new Map<string, NodeCounts>();

  add(scope: string, nodeId: string, labels: Readonly<Record<string, string>>): void {
    for (const key in labels) {
      const k = scope + '\0' + key;
      let values = this.#byValue.get(k);
      if (!values) this.#byValue.set(k, (values = new Map()));
      const value = labels[key];
      const nodes = values.get(value);
      if (nodes === undefined) values.set(value, nodeId);
      else if (typeof nodes === 'string') values.set(value, new Map(nodes === nodeId ? [[nodeId, 2]] : [[nodes, 1], [nodeId, 1]]));
      else nodes.set(nodeId, (nodes.get(nodeId) ?? 0) + 1);
      let keyNodes = this.#byKey.get(k);
      if (!keyNodes) this.#byKey.set(k, (keyNodes = new Map()));
      keyNodes.set(nodeId, (keyNodes.get(nodeId) ?? 0) + 1);
    }
  }

  remove(scope: string, nodeId: string, labels: Readonly<Record<string, string>>): void {
    for (const key in labels) {
      const k = scope + '\0' + key;
      const values = this.#byValue.get(k);
      const nodes = values?.get(labels[key]);
      if (!values || nodes === undefined || !valueHas(nodes, nodeId)) continue;
      if (typeof nodes === 'string') values.delete(labels[key]);
      else {
        decrement(nodes, nodeId);
        if (nodes.size === 0) values.delete(labels[key]);
        else if (nodes.size === 1) {
          const [[only, n]] = nodes;
          if (n === 1) values.set(labels[key], only);
        }
      }
      if (values.size === 0) this.#byValue.delete(k);
      const keyNodes = this.#byKey.get(k)!;
      decrement(keyNodes, nodeId);
      if (keyNodes.size === 0) this.#byKey.delete(k);
    }
  }

  /**
   * Moves the reference count of one (scope, key, value) on a node by `by` (either sign), as `by`
   * adds or removes of a label map holding it would: a raylet's view applies actor-label counts
   * (seed 000's per-node refcounts) this way, without the actors behind them. A count never goes
   * below zero; the caller checks first (`refCount`).
   */
  adjust(scope: string, nodeId: string, key: string, value: string, by: number): void {
    if (by === 0) return;
    const k = scope + '\0' + key;
    let values = this.#byValue.get(k);
    if (!values) this.#byValue.set(k, (values = new Map()));
    const nodes = values.get(value);
    const before = nodes === undefined ? 0 : valueCount(nodes, nodeId);
    const after = Math.max(0, before + by);
    if (after === before) {
      if (values.size === 0) this.#byValue.delete(k);
      return;
    }
    if (nodes === undefined) values.set(value, after === 1 ? nodeId : new Map([[nodeId, after]]));
    else if (typeof nodes === 'string') {
      const counts: NodeCounts = new Map(nodes === nodeId ? [] : [[nodes, 1]]);
      if (after > 0) counts.set(nodeId, after);
      setValue(values, value, counts);
    } else {
      if (after > 0) nodes.set(nodeId, after);
      else nodes.delete(nodeId);
      setValue(values, value, nodes);
    }
    if (values.size === 0) this.#byValue.delete(k);
    let keyNodes = this.#byKey.get(k);
    if (!keyNodes) this.#byKey.set(k, (keyNodes = new Map()));
    const keyCount = (keyNodes.get(nodeId) ?? 0) + after - before;
    if (keyCount > 0) keyNodes.set(nodeId, keyCount);
    else keyNodes.delete(nodeId);
    if (keyNodes.size === 0) this.#byKey.delete(k);
  }

  /** Nodes with `key` set to any of `values` in `scope`. */
  nodesByKeyValue(scope: string, key: string, values: readonly string[]): Set<string> {
    const byValue = this.#byValue.get(scope + '\0' + key);
    const out = new Set<string>();
    if (!byValue) return out;
    for (const value of values) {
      const nodes = byValue.get(value);
      if (nodes !== undefined) for (const id of valueIds(nodes)) out.add(id);
    }
    return out;
  }

  /** Nodes with `key` set to any value in `scope`. */
  nodesByKey(scope: string, key: string): Set<string> {
    return new Set(this.#byKey.get(scope + '\0' + key)?.keys());
  }

  /** An upper bound of |nodesByKeyValue(...)| in O(|values|), to judge how selective a lookup is. */
  countByKeyValue(scope: string, key: string, values: readonly string[]): number {
    const byValue = this.#byValue.get(scope + '\0' + key);
    let n = 0;
    if (byValue) for (const value of values) {
      const nodes = byValue.get(value);
      if (nodes !== undefined) n += valueSize(nodes);
    }
    return n;
  }

  /** The values `key` has on some node in `scope`. */
  valuesOf(scope: string, key: string): string[] {
    return [...(this.#byValue.get(scope + '\0' + key)?.keys() ?? [])];
  }

  countByKey(scope: string, key: string): number {
    return this.#byKey.get(scope + '\0' + key)?.size ?? 0;
  }

  /** Does the node carry `key` (with one of `values`, when given) in `scope`? O(|values|). */
  nodeHas(scope: string, nodeId: string, key: string, values?: readonly string[]): boolean {
    const k = scope + '\0' + key;
    if (values === undefined) return this.#byKey.get(k)?.has(nodeId) ?? false;
    const byValue = this.#byValue.get(k);
    if (!byValue) return false;
    for (const value of values) {
      const nodes = byValue.get(value);
      if (nodes !== undefined && valueHas(nodes, nodeId)) return true;
    }
    return false;
  }

  /** How many entries of (scope, key, value) the node holds — the reference count. */
  refCount(scope: string, nodeId: string, key: string, value: string): number {
    const nodes = this.#byValue.get(scope + '\0' + key)?.get(value);
    return nodes === undefined ? 0 : valueCount(nodes, nodeId);
  }
}

/** Stores a value's node counts in their smallest form: gone when empty, the node id alone for one node holding it once. */
function setValue(values: Map<string, ValueNodes>, value: string, counts: NodeCounts): void {
  if (counts.size === 0) values.delete(value);
  else if (counts.size === 1) {
    const [[only, n]] = counts;
    values.set(value, n === 1 ? only : counts);
  } else values.set(value, counts);
}

function decrement(map: NodeCounts, nodeId: string): void {
  const n = map.get(nodeId)! - 1;
  if (n === 0) map.delete(nodeId);
  else map.set(nodeId, n);
}
