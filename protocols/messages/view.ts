import { array, childPath, invalid, isPlainObject, literal, object, optional, record, str, type Infer, type Validator } from '../validate.ts';
import { id, labels, MAX_RESOURCE_NAMES, resourceSet, seq, taints } from './common.ts';

/** Most distinct values one label key may count on one node (every actor's own actor-id is one). */
export const MAX_LABEL_VALUES = 1_000_000;

/**
 * Seed 000's actor-label reference counts of one node (lib/cluster/actor-label-counts.ts):
 * namespace → label key → value → count, with each actor's `orrery.io/actor-id`. `count` validates
 * each count: positive for a node's whole counts, a non-zero signed change in a delta.
 */
function labelCounts(signed: boolean): Validator<Record<string, Record<string, Record<string, number>>>> {
  return record(record(labelValues(signed), { maxKeys: 4096, key: str({ min: 1, max: 317 }) }), { maxKeys: 4096, key: str({ min: 1, max: 256 }) });
}
const FORBIDDEN = new Set(['__proto__', '__proto_', 'constructor', 'prototype']);
/**
 * value → count of one label key. Every actor's id is a value of its own, so a delta carries one
 * per actor placed: checked in one loop, the path of a value formed only when it is refused.
 */
function labelValues(signed: boolean): Validator<Record<string, number>> {
  return (value, path) => {
    if (!isPlainObject(value)) return invalid(path, 'expected an object');
    const out: Record<string, number> = {};
    let keys = 0;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      if (++keys > MAX_LABEL_VALUES) return invalid(path, `expected at most ${MAX_LABEL_VALUES} key(s)`);
      const n = value[k];
      if (FORBIDDEN.has(k)) return invalid(childPath(path, k), 'forbidden key');
      if (k.length > 256) return invalid(childPath(path, k), 'expected at most 256 character(s)');
      if (typeof n !== 'number' || !Number.isSafeInteger(n)) return invalid(childPath(path, k), 'expected an integer');
      if (signed ? n === 0 : n < 1) return invalid(childPath(path, k), signed ? 'expected a non-zero change' : 'expected a number >= 1');
      out[k] = n;
    }
    return out;
  };
}
export const actorLabelCounts = labelCounts(false);
export const actorLabelChanges = labelCounts(true);

/**
 * What changed in a node's resources since the view the receiver holds: the names whose total or
 * available has a new value (a name new to the node comes in both), and the names the node no longer
 * has (gone from both sets). A name may not be both set and removed.
 */
const resourceChangesShape = object({
  total: optional(resourceSet),
  available: optional(resourceSet),
  removed: optional(array(str({ min: 1, max: 128 }), { max: MAX_RESOURCE_NAMES })),
});
export type ResourceChanges = Infer<typeof resourceChangesShape>;
export const resourceChanges: Validator<ResourceChanges> = (value, path) => {
  const changes = resourceChangesShape(value, path);
  for (const [i, name] of (changes.removed ?? []).entries()) {
    if ((changes.total && Object.hasOwn(changes.total, name)) || (changes.available && Object.hasOwn(changes.available, name))) {
      invalid(childPath(childPath(path, 'removed'), i), `${JSON.stringify(name)} is both set and removed`);
    }
  }
  return changes;
};

const nodeViewShape = object({
  nodeId: id,
  name: str({ min: 1, max: 256 }),
  state: literal('ALIVE', 'DRAINING', 'DEAD'),
  labels,
  taints,
  /**
   * The node's whole resource sets: in snapshots and the first time a delta sends the node. A delta
   * upsert of a node already sent carries `resourcesChanged` instead, or neither when its resources
   * did not change.
   */
  resources: optional(object({ total: resourceSet, available: resourceSet })),
  /** Only the resource names that changed since the previous view (never with `resources`). */
  resourcesChanged: optional(resourceChanges),
  /**
   * The node's whole actor-label counts: in snapshots and the first time a delta sends the node
   * (absent: none). The actors themselves never travel: raylets decide on the counts alone.
   */
  actorLabels: optional(actorLabelCounts),
});

/** What raylets know of one node: enough to schedule tasks from their own copy of the view. */
export const nodeView: Validator<Infer<typeof nodeViewShape>> = (value, path) => {
  const node = nodeViewShape(value, path);
  if (node.resources && node.resourcesChanged) invalid(childPath(path, 'resourcesChanged'), 'expected either resources or resourcesChanged, not both');
  return node;
};
export type NodeView = Infer<typeof nodeView>;

/**
 * A node's latest load report as the GCS forwards it (the raylet's own `raylet_load`, with a `seq`
 * the GCS counts per node, so a raylet that restarts does not count from 1 under an old report).
 */
export const forwardedLoad = object({ nodeId: id, seq, available: resourceSet });

/**
 * GCS → raylets (`gcs.view`): the changes from view `previous` to view `version`. A raylet whose own
 * version is not `previous` has missed a delta and asks for `gcs.view_snapshot`.
 *
 * Nodes travel as changes, so a delta's size follows what changed, not how big the cluster is. A
 * node upsert carries `resources` (the node's full sets) and `actorLabels` (its whole actor-label
 * counts) only when the receiver has none for the node yet — in snapshots and for nodes the view did
 * not hold; otherwise it comes only when the node's name, state, labels, taints or resources changed,
 * and its resources change only by `resourcesChanged` (absent: unchanged; a node holding the bundles
 * of a thousand placement groups has thousands of resource names, and resending them all made each
 * delta, and applying it, grow with the number of groups). Actor-label counts change by
 * `actorLabelsChanged`, per node one signed change per label for the whole period however many
 * actors moved it, without an upsert of the node. An upsert without `resources`, or a label change,
 * for a node the receiver does not hold, or a change that would take a count below zero, means it
 * missed something: it asks for a snapshot. `loads` are the nodes' load reports the GCS received
 * since the previous view (in a snapshot: the last one of each node it lists). A delta applies as:
 * upserts, removals, label changes, loads.
 */
export const viewDelta = object({
  version: seq,
  previous: seq,
  upserts: array(nodeView, { max: 100_000 }),
  removals: array(id, { max: 100_000 }),
  actorLabelsChanged: optional(array(object({ nodeId: id, changes: actorLabelChanges }), { max: 100_000 })),
  loads: optional(array(forwardedLoad, { max: 100_000 })),
  /** Snapshot pages only: the last node id of this page, for the next request; absent on the last page. */
  next: optional(id),
});
export type ViewDelta = Infer<typeof viewDelta>;

/**
 * raylet → GCS (`gcs.view_snapshot`): one page of the whole view. The first request names nothing;
 * the next ones give the `next` of the page before and the `version` of the first page, so every
 * page comes from the same snapshot (the GCS keeps it while it is being read). A snapshot the GCS no
 * longer keeps is SNAPSHOT_MOVED: the reader starts again from the first page.
 */
export const viewSnapshotQuery = object({ after: optional(id), version: optional(seq) });
