import { NODE_ID_LABEL } from '../../lib/labels/builtin.ts';
import { validateLabelKey, validateLabels } from '../../lib/labels/validate.ts';
import { formatResources, parseResources, type ResourceSet } from '../../lib/resources/resource-set.ts';
import { parseTaints, rareResourceTaints, type Taint } from '../../lib/scheduling/taints.ts';
import type { RegisterNode } from '../../protocols/messages/node.ts';

/**
 * Checks what a raylet registers with and turns it into ClusterState input. Labels are taken as
 * sent (built-in `orrery.io/` labels included) but must follow the label syntax — except
 * `orrery.io/node-id`, which is the GCS's to say: it is always the id the node registers under, so a
 * raylet that leaves it out or names another node cannot slip past a node-id affinity or the
 * GCS's own "keep off this node" (placements after NO_RESPONDERS, anti-affinity.ts). Taints likewise;
 * resource names must be resource names. On top of the raylet's taints the GCS adds the
 * rare-resource taints (`orrery.io/rare-gpu=true` on a node with GPUs, with `rareResources: ['GPU']`).
 * Errors are lib's typed errors (INVALID_LABEL, INVALID_RESOURCE), answered as such.
 */
export interface NodeSetup {
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: Taint[];
  readonly total: ResourceSet;
  readonly available: ResourceSet;
}

export function nodeSetup(reg: RegisterNode, rareResources: readonly string[]): NodeSetup {
  const labels = validateLabels({ ...reg.labels, [NODE_ID_LABEL]: reg.nodeId }, { allowReserved: true });
  const total = checkedUnits(reg.resources.total, 'resources.total');
  checkedUnits(reg.resources.available, 'resources.available');
  const rare = rareResourceTaints(total, rareResources);
  const rareKeys = new Set(rare.map((t) => t.key));
  const taints = [...parseTaints(reg.taints, { allowReserved: true }).filter((t) => !rareKeys.has(t.key)), ...rare];
  // A fresh raylet reports everything free; one that registers again (the GCS restarted) may have
  // actors running. What it reports is never more than its total; a name it leaves out is free.
  const available: Record<string, number> = {};
  for (const [name, units] of Object.entries(total)) available[name] = Math.min(units, reg.resources.available[name] ?? units);
  return { labels, taints, total, available };
}

/** A change to a node's labels: users may not set or remove the built-in `orrery.io/` ones. */
export function changedLabels(current: Readonly<Record<string, string>>, change: { set?: Record<string, string>; remove?: string[] }): Record<string, string> {
  const set = validateLabels(change.set ?? {});
  const next: Record<string, string> = { ...current };
  for (const key of change.remove ?? []) delete next[validateLabelKey(key)];
  return Object.assign(next, set);
}

/** A change to a node's taints: by key, `add` wins over `remove`; built-in taints stay. */
export function changedTaints(current: readonly Taint[], change: { add?: Record<string, string>; remove?: string[] }): Taint[] {
  const added = parseTaints(change.add ?? {});
  const removed = new Set((change.remove ?? []).map((key) => validateLabelKey(key)));
  const replaced = new Set(added.map((t) => t.key));
  return [...current.filter((t) => !removed.has(t.key) && !replaced.has(t.key)), ...added];
}

/** Units as sent, with every name checked (a round trip through lib's parser). */
function checkedUnits(units: Readonly<Record<string, number>>, what: string): ResourceSet {
  parseResources(formatResources(units), what);
  return { ...units };
}
