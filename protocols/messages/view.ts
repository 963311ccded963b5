import { array, literal, object, str, type Infer } from '../validate.ts';
import { id, labels, resourceSet, seq, taints } from './common.ts';

/** What raylets know of one node: enough to schedule tasks from their own copy of the view. */
export const nodeView = object({
  nodeId: id,
  name: str({ min: 1, max: 256 }),
  state: literal('ALIVE', 'DRAINING', 'DEAD'),
  labels,
  taints,
  resources: object({ total: resourceSet, available: resourceSet }),
});
export type NodeView = Infer<typeof nodeView>;

/**
 * GCS → raylets (`gcs.view`): the changes from view `previous` to view `version`. A raylet whose own
 * version is not `previous` has missed a delta and asks for `gcs.view_snapshot`.
 */
export const viewDelta = object({
  version: seq,
  previous: seq,
  upserts: array(nodeView, { max: 100_000 }),
  removals: array(id, { max: 100_000 }),
});
export type ViewDelta = Infer<typeof viewDelta>;
