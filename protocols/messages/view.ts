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

/**
 * GCS → raylets (`gcs.view`): the changes from view `previous` to view `version`. A raylet whose own
 * version is not `previous` has missed a delta and asks for `gcs.view_snapshot`, whose reply value
 * is a view_delta body from the empty view (`previous: 0`, every live node in `upserts`, no
 * removals): the raylet clears its copy and applies it.
 */
export const viewDelta = object({
  version: seq,
  previous: seq,
  upserts: array(nodeView, { max: 100_000 }),
  removals: array(id, { max: 100_000 }),
});
export type ViewDelta = Infer<typeof viewDelta>;
