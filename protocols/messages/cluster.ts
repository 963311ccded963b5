import { array, bool, invalid, literal, num, object, optional, record, str, unknown, type Infer, type Validator } from '../validate.ts';
import { actorInfo } from './actor.ts';
import { placementGroupInfo } from './placement-group.ts';
import { id, labels, resourceSet, taints } from './common.ts';
import { AUTOSCALER_EVENT_TYPES } from './autoscaling.ts';
import { jobInfo } from './job.ts';

/** NodeInfo of API.md; resources in fixed-point units. */
export const nodeInfo = object({
  nodeId: id,
  name: str({ min: 1, max: 256 }),
  state: literal('ALIVE', 'DRAINING', 'DEAD'),
  labels,
  taints,
  resources: object({ total: resourceSet, available: resourceSet }),
  /**
   * How many placement-group bundle resource names `resources` leaves out (withoutBundleResources):
   * a node event, the answer to a label, taint or drain request and the stored node record carry a
   * node holding thousands of bundles without them. list_nodes carries every name (in parts).
   */
  bundleResourcesOmitted: optional(num({ int: true, min: 1 })),
});
export type NodeInfoWire = Infer<typeof nodeInfo>;

/** Whether a resource name is a placement-group bundle's (`CPU_group_<pg>`, `CPU_group_<i>_<pg>`: lib/scheduling/bundle-resources.ts). */
export function isBundleResourceName(name: string): boolean {
  return name.includes('_group_');
}

/** The node without its bundle resource names, counting them in `bundleResourcesOmitted`; the node itself when it has none. */
export function withoutBundleResources(node: NodeInfoWire): NodeInfoWire {
  const total: Record<string, number> = {};
  const available: Record<string, number> = {};
  const omitted = new Set<string>();
  for (const name in node.resources.total) {
    if (isBundleResourceName(name)) omitted.add(name);
    else total[name] = node.resources.total[name]!;
  }
  for (const name in node.resources.available) {
    if (isBundleResourceName(name)) omitted.add(name);
    else available[name] = node.resources.available[name]!;
  }
  if (omitted.size === 0) return node;
  return Object.assign({}, node, { resources: { total, available }, bundleResourcesOmitted: omitted.size + (node.bundleResourcesOmitted ?? 0) });
}

/**
 * GCS → raylet, the answer to register_node: what the cluster expects of every raylet.
 * `nodeTimeoutMs` (optional: a GCS from before fencing leaves it out) is how long the GCS waits for
 * a heartbeat before it declares the node DEAD; the raylet fences itself well before that
 * (runtime/raylet/fence.ts).
 */
export const registered = object({
  nodeId: id,
  heartbeatMs: num({ int: true, min: 10 }),
  rareResources: array(str({ min: 1, max: 128 }), { max: 64 }),
  /** The leader epoch of the GCS that answered (absent without a lease). */
  epoch: optional(num({ int: true, min: 0 })),
  nodeTimeoutMs: optional(num({ int: true, min: 1 })),
});

export const scheduleFailed = object({
  type: literal('schedule_failed'),
  time: num(),
  target: object({ kind: literal('actor', 'task', 'placement_group'), id, name: optional(str({ max: 256 })) }),
  reason: literal('constraints', 'resources', 'constraints_and_resources'),
  message: str({ max: 65_536 }),
  nodes: array(object({ nodeId: id, reasons: array(str({ max: 1024 }), { max: 64 }) }), { max: 100_000 }),
  /** How many more nodes the failure judged than `nodes` lists (the GCS lists at most MAX_EVENT_NODES). */
  nodesOmitted: optional(num({ int: true, min: 1 })),
});

/**
 * The most nodes a schedule_failed event lists with their reasons; `message` counts every node, and
 * `explain` gives every node's reason. Without the bound one event at 5,000 nodes carried 5,000
 * entries (hundreds of KB on the wire), and the GCS's recent-events ring held thousands of them.
 */
export const MAX_EVENT_NODES = 100;

/**
 * Everything on `events.<type>`: `type` says which; schedule_failed has the API.md shape.
 * `seq` (optional; added with the GCS's recent-events ring) numbers the GCS's events in publish
 * order, so a reader of `list_events` and of the live stream can tell which it has seen.
 * actor_evicted carries `actor`, `reason` (`no_execute_taint` | `affinity_lost`) and `message`.
 * placement_group_state carries `placementGroup` (its PlacementGroupInfo after the change).
 * job_started and job_finished carry `job` (its JobInfo after the change).
 * gcs_leader carries `epoch` and `message`: a GCS has opened its subjects as the cluster's GCS — a
 * restart, or a standby taking over (epoch: its leader lease's, 0 without one). A client sends again
 * at once the requests it has not had answered: the GCS they went to may be frozen or cut off.
 */
/** Node events: the node after the change. */
export const NODE_EVENT_TYPES = ['node_added', 'node_dead', 'node_labels_changed', 'node_taints_changed', 'node_draining', 'node_alive'] as const;
/**
 * Every event type published on `events.<type>`, the one list the GCS, the raylets, the client, the
 * CLI's --type and the dashboard's ?types use. lease_revoked is a raylet's (a task host that held
 * leases died); the autoscaler's (AUTOSCALER_EVENT_TYPES: node_launch_requested … demand_infeasible)
 * are published by the GCS from its autoscaler_report; the rest are the GCS's.
 */
export const CLUSTER_EVENT_TYPES = [...NODE_EVENT_TYPES, 'actor_state', 'actor_evicted', 'schedule_failed', 'placement_group_state', 'lease_revoked', 'job_started', 'job_finished', 'gcs_leader', ...AUTOSCALER_EVENT_TYPES] as const;
export type ClusterEventType = (typeof CLUSTER_EVENT_TYPES)[number];

/** What each type of event must carry besides `type` and `time`. */
const PAYLOAD: Readonly<Record<ClusterEventType, readonly string[]>> = {
  ...(Object.fromEntries(NODE_EVENT_TYPES.map((t) => [t, ['node']])) as unknown as Record<(typeof NODE_EVENT_TYPES)[number], readonly string[]>),
  actor_state: ['actor'],
  actor_evicted: ['actor', 'reason', 'message'],
  schedule_failed: ['target', 'reason', 'message', 'nodes'],
  placement_group_state: ['placementGroup'],
  lease_revoked: ['target', 'reason', 'message'],
  job_started: ['job'],
  job_finished: ['job'],
  gcs_leader: ['epoch', 'message'],
  ...(Object.fromEntries(AUTOSCALER_EVENT_TYPES.map((t) => [t, ['nodeType', 'message']])) as unknown as Record<(typeof AUTOSCALER_EVENT_TYPES)[number], readonly string[]>),
};

const eventShape = object({
  type: literal(...CLUSTER_EVENT_TYPES),
  time: num(),
  seq: optional(num({ int: true, min: 0 })),
  node: optional(nodeInfo),
  actor: optional(actorInfo),
  placementGroup: optional(placementGroupInfo),
  /** job_started, job_finished: the job after the change. */
  job: optional(jobInfo),
  target: optional(record(unknown())),
  reason: optional(str({ max: 64 })),
  message: optional(str({ max: 65_536 })),
  nodes: optional(array(unknown(), { max: 100_000 })),
  nodesOmitted: optional(num({ int: true, min: 1 })),
  /** The autoscaler's events: the node type, and the node once it has a name or an id. */
  nodeType: optional(str({ min: 1, max: 256 })),
  nodeName: optional(str({ min: 1, max: 256 })),
  nodeId: optional(id),
  /** gcs_leader: the new GCS's leader epoch. */
  epoch: optional(num({ int: true, min: 0 })),
});

/** One event: its type from the list above, and the payload that type carries. */
export const clusterEvent: Validator<Infer<typeof eventShape>> = (value, path) => {
  const event = eventShape(value, path);
  for (const field of PAYLOAD[event.type]) {
    if ((event as Record<string, unknown>)[field] === undefined) invalid(path ? `${path}.${field}` : field, `a ${event.type} event carries its ${field}`);
  }
  return event;
};
export type ClusterEventWire = Infer<typeof eventShape>;

/**
 * driver → GCS (`gcs.list_events`): the GCS's recent events (a bounded ring), oldest first: those
 * with `seq` > `afterSeq` whose type is one of `types` (all when absent). By default the newest
 * `limit` of them that fit in one reply (the tail). With `fromOldest` the reply is a page instead:
 * the oldest ones after `afterSeq`, at most `limit`, and `next` in the reply when more follow — pass
 * it back as `afterSeq`. seq only grows, so this cursor is stable while events are published.
 */
export const listEvents = object({
  types: optional(array(str({ min: 1, max: 64 }), { max: 64 })),
  afterSeq: optional(num({ int: true, min: 0 })),
  limit: optional(num({ int: true, min: 1, max: 100_000 })),
  fromOldest: optional(bool()),
});

/**
 * The answer to list_events. `lastSeq`: the seq of the newest event published (0: none yet);
 * `omitted`: matching events left out (the tail: older than the newest `limit` or over the reply's
 * size budget; either way: already gone from the ring). `next` (pages only): the afterSeq of the
 * next page, when matching events follow this one.
 */
export const recentEvents = object({
  events: array(clusterEvent, { max: 100_000 }),
  lastSeq: num({ int: true, min: 0 }),
  omitted: num({ int: true, min: 0 }),
  next: optional(num({ int: true, min: 0 })),
});
export type RecentEventsWire = Infer<typeof recentEvents>;

/** Bodies of requests that carry nothing. */
export const empty = object({});

export const nodeRef = object({ nodeId: id });
export const labelsChange = object({ nodeId: id, set: optional(labels), remove: optional(array(str({ min: 1, max: 317 }), { max: 1024 })) });
export const taintsChange = object({ nodeId: id, add: optional(taints), remove: optional(array(str({ min: 1, max: 317 }), { max: 1024 })) });
export { resourceSet };

/**
 * The answer to gcs_status (body `{}`): what the GCS is doing now, answered at once in every state in
 * which its subjects are open — where the reads (list_nodes, list_actors, …) wait while it recovers.
 * `epoch`: its leader epoch (0 without a lease). `recovering` (state RECOVERING only): the nodes the
 * earlier GCS's tables held as live (`nodesExpected`) and how many have registered again
 * (`nodesBack`); `phase` WAITING — for them, at most `graceLeftMs` more — or RECONCILING (the grace
 * window is over: the tables are being rebuilt from what came back).
 */
export const gcsStatus = object({
  epoch: num({ int: true, min: 0 }),
  state: literal('RECOVERING', 'SERVING', 'STOPPING'),
  recovering: optional(
    object({
      phase: literal('WAITING', 'RECONCILING'),
      nodesExpected: num({ int: true, min: 0 }),
      nodesBack: num({ int: true, min: 0 }),
      graceLeftMs: num({ min: 0 }),
    }),
  ),
});
export type GcsStatusWire = Infer<typeof gcsStatus>;
