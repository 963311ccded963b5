import { array, childPath, invalid, literal, object, optional, str, type Infer, type Validator } from '../validate.ts';
import { id, labels, MAX_RESOURCE_NAMES, resourceSet, seq, taints } from './common.ts';

/** An actor placed on a node, with its labels (including orrery.io/actor-id), for actor affinity. */
export const placedActorView = object({
  actorId: id,
  namespace: str({ min: 1, max: 256 }),
  labels,
});

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
  /** The actors placed on the node (optional: a GCS may leave it out). */
  actors: optional(array(placedActorView, { max: 100_000 })),
});

/** What raylets know of one node: enough to schedule tasks from their own copy of the view. */
export const nodeView: Validator<Infer<typeof nodeViewShape>> = (value, path) => {
  const node = nodeViewShape(value, path);
  if (node.resources && node.resourcesChanged) invalid(childPath(path, 'resourcesChanged'), 'expected either resources or resourcesChanged, not both');
  return node;
};
export type NodeView = Infer<typeof nodeView>;

/** One actor placed on a node, as a view delta reports it. */
export const actorPlacement = object({ nodeId: id, actorId: id, namespace: str({ min: 1, max: 256 }), labels });

/**
 * GCS → raylets (`gcs.view`): the changes from view `previous` to view `version`. A raylet whose own
 * version is not `previous` has missed a delta and asks for `gcs.view_snapshot`.
 *
 * Node upserts and actors travel as changes, so a delta's size follows what changed, not how big
 * the cluster is. A node upsert carries `resources` (the node's full sets) and `actors` (its full
 * list) only when the receiver has none for the node yet — in snapshots and for nodes the view did
 * not hold. Otherwise its resources change only by `resourcesChanged` (absent: unchanged; a node
 * holding the bundles of a thousand placement groups has thousands of resource names, and resending
 * them all made each delta, and applying it, grow with the number of groups), and its actor list only
 * by `actorsRemoved` then `actorsPlaced`. An upsert without `resources` for a node the receiver does
 * not hold means it missed something: it asks for a snapshot.
 */
export const viewDelta = object({
  version: seq,
  previous: seq,
  upserts: array(nodeView, { max: 100_000 }),
  removals: array(id, { max: 100_000 }),
  actorsRemoved: optional(array(object({ nodeId: id, actorId: id }), { max: 100_000 })),
  actorsPlaced: optional(array(actorPlacement, { max: 100_000 })),
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
