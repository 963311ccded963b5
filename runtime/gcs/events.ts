import type { JobInfoWire } from '../../protocols/messages/job.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import type { NODE_EVENT_TYPES } from '../../protocols/messages/cluster.ts';
import { encode } from '../../protocols/codec.ts';
import type { ActorInfoWire } from '../../protocols/messages/actor.ts';
import { MAX_EVENT_NODES, type ClusterEventWire, type NodeInfoWire } from '../../protocols/messages/cluster.ts';
import type { PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { AutoscalerEvent } from '../../protocols/messages/autoscaling.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import type { EventLog } from './event-log.ts';
import { fitNode } from './node-fit.ts';

/**
 * The GCS's lifecycle events, each an `event` message on `events.<type>` (docs/runtime.md):
 * node_added / node_dead / node_labels_changed / node_taints_changed / node_draining / node_alive
 * (with `node`; node_alive is a node that stopped draining), actor_state
 * (with `actor`), actor_evicted (with `actor`, `reason` and `message`: a running actor moved off
 * its node because a NoExecute taint or a constraint it requires during execution stopped holding —
 * docs/failover.md), placement_group_state (with `placementGroup`, on every state change), schedule_failed (the ScheduleFailedEvent fields of API.md)
 * and the autoscaler's events (node_launch_requested … demand_infeasible, with `nodeType` and
 * `message`: autoscaler-reports.ts publishes what the autoscaler reports). Each event is
 * numbered and kept in the recent-events ring (event-log.ts) before it is published. Publishing is
 * fire-and-forget: a failure is logged, never thrown into the GCS's state changes.
 */
export type NodeEventType = (typeof NODE_EVENT_TYPES)[number];

export type ScheduleTarget = { kind: 'actor' | 'task' | 'placement_group'; id: string; name?: string };

/** Why a running actor was moved off its node. */
export type EvictionReason = 'no_execute_taint' | 'affinity_lost';

export class EventPublisher {
  constructor(
    private readonly deps: { bus: Bus; subjects: ClusterSubjects; log: (line: string) => void; history: EventLog; now?: () => number },
  ) {}

  node(type: NodeEventType, node: NodeInfoWire): void {
    this.#publish({ type, time: this.#now(), node: fitNode(node) });
  }

  actorState(actor: ActorInfoWire): void {
    this.#publish({ type: 'actor_state', time: this.#now(), actor });
  }

  actorEvicted(actor: ActorInfoWire, reason: EvictionReason, message: string): void {
    this.#publish({ type: 'actor_evicted', time: this.#now(), actor, reason, message });
  }

  /** job_started / job_finished: the job after the change. */
  job(type: 'job_started' | 'job_finished', job: JobInfoWire): void {
    this.#publish({ type, time: this.#now(), job });
  }

  /** gcs_leader: this GCS has opened its subjects (a restart, a standby taking over). */
  leader(epoch: number, message: string): void {
    this.#publish({ type: 'gcs_leader', time: this.#now(), epoch, message });
  }

  placementGroupState(placementGroup: PlacementGroupInfoWire): void {
    this.#publish({ type: 'placement_group_state', time: this.#now(), placementGroup });
  }

  scheduleFailed(target: ScheduleTarget, failure: ScheduleFailure): void {
    this.#publish({
      type: 'schedule_failed',
      time: this.#now(),
      target: { ...target },
      reason: failure.reason,
      message: failure.message,
      // the first MAX_EVENT_NODES nodes; the reasons arrays are the failure's own, never changed
      nodes: failure.nodes.slice(0, MAX_EVENT_NODES).map((n) => ({ nodeId: n.nodeId, reasons: n.reasons as string[] })),
      ...(failure.nodes.length > MAX_EVENT_NODES ? { nodesOmitted: failure.nodes.length - MAX_EVENT_NODES } : {}),
    });
  }

  /** One of the autoscaler's events, with the time the autoscaler gave it. */
  autoscaler(event: AutoscalerEvent): void {
    this.#publish({
      type: event.type,
      time: event.time,
      nodeType: event.nodeType,
      message: event.message,
      ...(event.nodeName === undefined ? {} : { nodeName: event.nodeName }),
      ...(event.nodeId === undefined ? {} : { nodeId: event.nodeId }),
    });
  }

  #now(): number {
    return (this.deps.now ?? Date.now)();
  }

  #publish(event: Omit<ClusterEventWire, 'seq'>): void {
    const numbered = this.deps.history.append(event);
    try {
      this.deps.bus.publish(this.deps.subjects.event(event.type), encode('event', numbered));
    } catch (err) {
      this.deps.log(`cannot publish ${event.type}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
