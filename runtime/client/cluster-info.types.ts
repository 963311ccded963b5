import type { NODE_EVENT_TYPES } from '../../protocols/messages/cluster.ts';
import type { AutoscalerEventType } from '../../protocols/messages/autoscaling.ts';
/**
 * What a client sees of the cluster (API.md): actors, nodes and the events about them. Resource
 * quantities are user quantities ({ CPU: 0.5 }), not the wire's fixed-point units.
 */
export type { ActorState } from '../../protocols/messages/actor.ts';
import type { ActorState } from '../../protocols/messages/actor.ts';

export interface ActorInfo {
  actorId: string;
  name?: string;
  namespace: string;
  className: string;
  state: ActorState;
  nodeId?: string;
  numRestarts: number;
  /**
   * How many times the GCS has asked a raylet again to create this actor: each restart, and each
   * create that reached no raylet (the actor went back to PENDING without spending a restart).
   * Absent while 0.
   */
  incarnation?: number;
  labels: Record<string, string>;
  deathCause?: string;
  /** The last schedule-failed message while PENDING. */
  pendingReason?: string;
  /** The job (driver connection) that created it; absent for one created outside a job. */
  jobId?: string;
  /** 'detached': it outlives its job; absent: killed when `jobId` finishes (docs/jobs.md). */
  lifetime?: 'detached';
}

/**
 * A job: one driver connection (API.md, docs/jobs.md). Times in ms since epoch. Once FINISHED,
 * `endReason` says why (`closed`: the driver closed it; `heartbeat_timeout`: its heartbeats stopped)
 * and `endMessage` in words.
 */
export interface JobInfo {
  jobId: string;
  state: 'RUNNING' | 'FINISHED';
  host: string;
  pid: number;
  namespace: string;
  startedAt: number;
  endedAt?: number;
  name?: string;
  entrypoint?: string;
  endReason?: 'closed' | 'heartbeat_timeout';
  endMessage?: string;
}

export interface NodeInfo {
  nodeId: string;
  name: string;
  state: 'ALIVE' | 'DRAINING' | 'DEAD';
  labels: Record<string, string>;
  /** `key: value` or `key: "value:Effect"`. */
  taints: Record<string, string>;
  resources: { total: Record<string, number>; available: Record<string, number> };
  /**
   * Set when `resources` leaves out the node's placement-group bundle resources (`CPU_group_<pg>`, …):
   * how many names. A node holding thousands of bundles is too large for one message, so node events
   * and the answers to setNodeLabels / setNodeTaints carry it without them; `cluster.nodes()` always
   * has every name.
   */
  bundleResourcesOmitted?: number;
}

export type PlacementGroupState = 'PENDING' | 'PREPARED' | 'CREATED' | 'RESCHEDULING' | 'REMOVED';

export interface PlacementGroupInfo {
  id: string;
  name?: string;
  namespace: string;
  state: PlacementGroupState;
  strategy: 'PACK' | 'SPREAD' | 'STRICT_PACK' | 'STRICT_SPREAD';
  /** The bundles of the tier in use, with the node each is reserved on once placed. */
  bundles: { index: number; resources: Record<string, number>; nodeId?: string }[];
  /** Which bundle list is in use (or was last tried): 0 `bundles`, i ≥ 1 `fallbackStrategy[i-1]`. */
  tier: number;
  /** While PENDING or RESCHEDULING: the last schedule-failed message, or why a commit is retried. */
  pendingReason?: string;
  /** Once REMOVED: why. */
  removedCause?: string;
}

/** A handle to a placement group (API.md): `placementGroupStrategy(pg, i)` places work in its bundles. */
export interface PlacementGroup {
  readonly id: string;
  readonly name?: string;
  /** Resolves once the group is CREATED; TimeoutError after `timeoutMs`; PlacementGroupRemovedError once REMOVED. */
  ready(opts?: { timeoutMs?: number }): Promise<PlacementGroupInfo>;
  info(): Promise<PlacementGroupInfo>;
  /** Kills the group's actors and frees its bundles; resolves once the GCS has done so. */
  remove(): Promise<void>;
}

/**
 * Every event carries `time` (ms since epoch) and, from a GCS that keeps a recent-events ring,
 * `seq`: its number in the GCS's publish order (what `orrery events` uses to join history and the
 * live stream without gaps or repeats).
 */
export interface ScheduleFailedEvent {
  type: 'schedule_failed';
  /** ms since epoch */
  time: number;
  seq?: number;
  target: { kind: 'actor' | 'task' | 'placement_group'; id: string; name?: string };
  reason: 'constraints' | 'resources' | 'constraints_and_resources';
  /** "0/3 nodes are available: 2 node(s) …, 1 node(s) …." */
  message: string;
  /** Each node's reasons, for at most the first 100 nodes (`cluster.explain` gives every node). */
  nodes: { nodeId: string; reasons: string[] }[];
  /** How many more nodes were judged than `nodes` lists; absent when it lists them all. */
  nodesOmitted?: number;
}

/** node_draining: the node takes no new work; node_alive: it stopped draining. */
export interface NodeEvent {
  type: (typeof NODE_EVENT_TYPES)[number];
  time: number;
  seq?: number;
  node: NodeInfo;
}

export interface ActorStateEvent {
  type: 'actor_state';
  time: number;
  seq?: number;
  actor: ActorInfo;
}

/**
 * A running actor was moved off its node: a NoExecute taint it does not tolerate, or a constraint
 * it requires during execution (affinityDuringExecution: 'required') stopped holding. `actor` is its
 * state right after (RESTARTING, or DEAD with no restarts left); `message` says which taint or
 * constraint.
 */
export interface ActorEvictedEvent {
  type: 'actor_evicted';
  time: number;
  seq?: number;
  actor: ActorInfo;
  reason: 'no_execute_taint' | 'affinity_lost';
  message: string;
}

export interface PlacementGroupStateEvent {
  type: 'placement_group_state';
  time: number;
  seq?: number;
  placementGroup: PlacementGroupInfo;
}

/**
 * What the autoscaler did or decided (issue 16), published by the GCS from its reports:
 * node_launch_requested, node_launched, node_launch_failed, node_drained, node_terminated and
 * demand_infeasible. `nodeType` is the node type; `nodeName` / `nodeId` once the node has them;
 * `message` says what and why in one line. `time` is the autoscaler's.
 */
export interface AutoscalerClusterEvent {
  type: AutoscalerEventType;
  time: number;
  seq?: number;
  nodeType: string;
  nodeName?: string;
  nodeId?: string;
  message: string;
}

/** A job registered (job_started) or finished (job_finished): the job after the change. */
export interface JobEvent {
  type: 'job_started' | 'job_finished';
  time: number;
  seq?: number;
  job: JobInfo;
}

/**
 * A GCS opened its subjects as the cluster's GCS: it restarted, or a standby took over (`epoch`: its
 * leader lease's, one higher than the last leader's; 0 without JetStream). `message` says which.
 */
export interface GcsLeaderEvent {
  type: 'gcs_leader';
  time: number;
  seq?: number;
  epoch: number;
  message: string;
}

/** Every lifecycle event the GCS publishes, discriminated by `type`. */
export type ClusterEvent = NodeEvent | ActorStateEvent | ActorEvictedEvent | PlacementGroupStateEvent | ScheduleFailedEvent | AutoscalerClusterEvent | JobEvent | GcsLeaderEvent;

/**
 * What `cluster.gcsStatus()` answers: what the GCS is doing now. While it recovers what an earlier GCS
 * left (a restart, a standby taking over), reads such as `nodes()` and `actors()` wait for it;
 * this is answered at once and says how far the recovery is.
 */
export interface GcsStatus {
  /** The GCS's leader epoch (0: it runs without a leader lease, e.g. without JetStream). */
  epoch: number;
  state: 'RECOVERING' | 'SERVING' | 'STOPPING';
  /** While RECOVERING. */
  recovering?: {
    /** WAITING for the nodes the earlier GCS's tables held as live, at most `graceLeftMs` more; then RECONCILING the tables with what came back. */
    phase: 'WAITING' | 'RECONCILING';
    nodesExpected: number;
    nodesBack: number;
    graceLeftMs: number;
  };
}

/** What `cluster.recentEvents()` answers: the GCS's recent events, oldest first. */
export interface RecentEvents {
  events: ClusterEvent[];
  /** The seq of the newest event the GCS published (0: none yet). */
  lastSeq: number;
  /** Matching events left out: beyond the limit, over one reply's size, or no longer kept. */
  omitted: number;
}
