/**
 * Seed 000's actor-label reference counts of one node: namespace → label key → value → how many
 * actors placed there carry that label (each actor's own `orrery.io/actor-id` counts once). This is
 * all that actor affinity and anti-affinity ask of the actors on a node, so a raylet's copy of the
 * cluster holds these, never the actors: its memory follows nodes and distinct labels, and what
 * changes in one view period is one count per (node, label), however many actors moved it.
 */
export type ActorLabelCounts = Map<string, Map<string, Map<string, number>>>;

/** The same counts (or signed changes of them) as plain records, as the cluster view carries them. */
export type ActorLabelRecord = Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, number>>>>>>;

/** One count: (namespace, key, value, count). */
export type LabelCount = readonly [namespace: string, key: string, value: string, count: number];

/** The count of one label in `counts` (0 when absent). */
export function labelCount(counts: ActorLabelCounts | undefined, namespace: string, key: string, value: string): number {
  return counts?.get(namespace)?.get(key)?.get(value) ?? 0;
}

/** Moves one count by `by`; a count reaching zero leaves the maps (and emptied maps with it) unless `keepZero`. */
export function addLabelCount(counts: ActorLabelCounts, entry: LabelCount, opts: { keepZero?: boolean } = {}): void {
  const [namespace, key, value, by] = entry;
  let keys = counts.get(namespace);
  if (!keys) counts.set(namespace, (keys = new Map()));
  let values = keys.get(key);
  if (!values) keys.set(key, (values = new Map()));
  const next = (values.get(value) ?? 0) + by;
  if (next !== 0 || opts.keepZero) {
    values.set(value, next);
    return;
  }
  values.delete(value);
  if (values.size === 0) keys.delete(key);
  if (keys.size === 0) counts.delete(namespace);
}

/** Every count of a map or a record, zeros left out. */
export function* labelCounts(counts: ActorLabelCounts | ActorLabelRecord): Generator<LabelCount> {
  if (counts instanceof Map) {
    for (const [namespace, keys] of counts) for (const [key, values] of keys) for (const [value, n] of values) if (n !== 0) yield [namespace, key, value, n];
    return;
  }
  for (const namespace in counts) {
    const keys = counts[namespace];
    for (const key in keys) {
      const values = keys[key];
      for (const value in values) if (values[value] !== 0) yield [namespace, key, value, values[value]];
    }
  }
}

/** The counts as records, zeros left out; undefined when there are none. */
export function toLabelRecord(counts: ActorLabelCounts): ActorLabelRecord | undefined {
  const out: Record<string, Record<string, Record<string, number>>> = {};
  let some = false;
  for (const [namespace, key, value, n] of labelCounts(counts)) {
    ((out[namespace] ??= {})[key] ??= {})[value] = n;
    some = true;
  }
  return some ? out : undefined;
}

/** The counts of some actors' labels (their labels as placed, with `orrery.io/actor-id`). */
export function countActorLabels(actors: Iterable<{ readonly namespace: string; readonly labels: Readonly<Record<string, string>> }>, into: ActorLabelCounts = new Map()): ActorLabelCounts {
  for (const actor of actors) for (const key in actor.labels) addLabelCount(into, [actor.namespace, key, actor.labels[key], 1]);
  return into;
}
