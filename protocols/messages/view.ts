import { array, literal, object, optional, str, type Infer } from '../validate.ts';
import { id, labels, resourceSet, seq, taints } from './common.ts';

/** An actor placed on a node, with its labels (including orrery.io/actor-id), for actor affinity. */
export const placedActorView = object({
  actorId: id,
  namespace: str({ min: 1, max: 256 }),
  labels,
});

/** What raylets know of one node: enough to schedule tasks from their own copy of the view. */
export const nodeView = object({
  nodeId: id,
  name: str({ min: 1, max: 256 }),
  state: literal('ALIVE', 'DRAINING', 'DEAD'),
  labels,
  taints,
  resources: object({ total: resourceSet, available: resourceSet }),
  /** The actors placed on the node (optional: a GCS may leave it out). */
  actors: optional(array(placedActorView, { max: 100_000 })),
});
export type NodeView = Infer<typeof nodeView>;

/** One actor placed on a node, as a view delta reports it. */
export const actorPlacement = object({ nodeId: id, actorId: id, namespace: str({ min: 1, max: 256 }), labels });

/**
 * GCS → raylets (`gcs.view`): the changes from view `previous` to view `version`. A raylet whose own
 * version is not `previous` has missed a delta and asks for `gcs.view_snapshot`.
 *
 * A node upsert carries `actors` (the node's full list) only when the receiver has no list for the
 * node yet — in snapshots and for nodes the view did not hold; otherwise the node's actor list is
 * unchanged except for `actorsRemoved` then `actorsPlaced`, so a delta's size follows what changed,
 * not how many actors the cluster runs.
 */
export const viewDelta = object({
  version: seq,
  previous: seq,
  upserts: array(nodeView, { max: 100_000 }),
  removals: array(id, { max: 100_000 }),
  actorsRemoved: optional(array(object({ nodeId: id, actorId: id }), { max: 100_000 })),
  actorsPlaced: optional(array(actorPlacement, { max: 100_000 })),
});
export type ViewDelta = Infer<typeof viewDelta>;
