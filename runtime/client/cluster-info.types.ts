/**
 * What a client sees of the cluster (API.md): actors, nodes and the events about them. Resource
 * quantities are user quantities ({ CPU: 0.5 }), not the wire's fixed-point units.
 */
export type ActorState = 'DEPENDENCIES_UNREADY' | 'PENDING' | 'SCHEDULED' | 'ALIVE' | 'RESTARTING' | 'DEAD';

export interface ActorInfo {
  actorId: string;
  name?: string;
  namespace: string;
  className: string;
  state: ActorState;
  nodeId?: string;
  numRestarts: number;
  labels: Record<string, string>;
  deathCause?: string;
  /** The last schedule-failed message while PENDING. */
  pendingReason?: string;
}

export interface NodeInfo {
  nodeId: string;
  name: string;
  state: 'ALIVE' | 'DRAINING' | 'DEAD';
  labels: Record<string, string>;
  /** `key: value` or `key: "value:Effect"`. */
  taints: Record<string, string>;
  resources: { total: Record<string, number>; available: Record<string, number> };
}

export type PlacementGroupState = 'PENDING' | 'PREPARED' | 'CREATED' | 'RESCHEDULING' | 'REMOVED';

export interface PlacementGroupInfo {
  id: string;
  name?: string;
  state: PlacementGroupState;
  strategy: string;
  bundles: { index: number; resources: Record<string, number>; nodeId?: string }[];
}

export interface ScheduleFailedEvent {
  type: 'schedule_failed';
  /** ms since epoch */
  time: number;
  target: { kind: 'actor' | 'task' | 'placement_group'; id: string; name?: string };
  reason: 'constraints' | 'resources' | 'constraints_and_resources';
  /** "0/3 nodes are available: 2 node(s) …, 1 node(s) …." */
  message: string;
  nodes: { nodeId: string; reasons: string[] }[];
}

export interface NodeEvent {
  type: 'node_added' | 'node_dead' | 'node_labels_changed' | 'node_taints_changed';
  time: number;
  node: NodeInfo;
}

export interface ActorStateEvent {
  type: 'actor_state';
  time: number;
  actor: ActorInfo;
}

export interface PlacementGroupStateEvent {
  type: 'placement_group_state';
  time: number;
  placementGroup: PlacementGroupInfo;
}

/** Every lifecycle event the GCS publishes, discriminated by `type`. */
export type ClusterEvent = NodeEvent | ActorStateEvent | PlacementGroupStateEvent | ScheduleFailedEvent;
