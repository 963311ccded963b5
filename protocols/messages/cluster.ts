import { array, literal, num, object, optional, record, str, unknown, type Infer } from '../validate.ts';
import { actorInfo } from './actor.ts';
import { id, labels, resourceSet, taints } from './common.ts';

/** NodeInfo of API.md; resources in fixed-point units. */
export const nodeInfo = object({
  nodeId: id,
  name: str({ min: 1, max: 256 }),
  state: literal('ALIVE', 'DRAINING', 'DEAD'),
  labels,
  taints,
  resources: object({ total: resourceSet, available: resourceSet }),
});
export type NodeInfoWire = Infer<typeof nodeInfo>;

/** GCS → raylet, the answer to register_node: what the cluster expects of every raylet. */
export const registered = object({
  nodeId: id,
  heartbeatMs: num({ int: true, min: 10 }),
  rareResources: array(str({ min: 1, max: 128 }), { max: 64 }),
});

export const scheduleFailed = object({
  type: literal('schedule_failed'),
  time: num(),
  target: object({ kind: literal('actor', 'task', 'placement_group'), id, name: optional(str({ max: 256 })) }),
  reason: literal('constraints', 'resources', 'constraints_and_resources'),
  message: str({ max: 65_536 }),
  nodes: array(object({ nodeId: id, reasons: array(str({ max: 1024 }), { max: 64 }) }), { max: 100_000 }),
});

/** Everything on `events.<type>`: `type` says which; schedule_failed has the API.md shape. */
export const clusterEvent = object({
  type: str({ min: 1, max: 64 }),
  time: num(),
  node: optional(nodeInfo),
  actor: optional(actorInfo),
  target: optional(record(unknown())),
  reason: optional(str({ max: 64 })),
  message: optional(str({ max: 65_536 })),
  nodes: optional(array(unknown(), { max: 100_000 })),
});
export type ClusterEventWire = Infer<typeof clusterEvent>;

/** Bodies of requests that carry nothing. */
export const empty = object({});

export const nodeRef = object({ nodeId: id });
export const labelsChange = object({ nodeId: id, set: optional(labels), remove: optional(array(str({ min: 1, max: 317 }), { max: 1024 })) });
export const taintsChange = object({ nodeId: id, add: optional(taints), remove: optional(array(str({ min: 1, max: 317 }), { max: 1024 })) });
export { resourceSet };
