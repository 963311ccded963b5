import type { AutoscalerClusterEvent, ClusterEvent } from '../client/cluster-info.types.ts';
import { AUTOSCALER_EVENT_TYPES } from '../../protocols/messages/autoscaling.ts';
import { pairs } from './format.ts';

/**
 * One event as one line of `orrery events`: time, type, what it is about, what happened.
 *
 *   2026-05-01T10:00:00.000Z  schedule_failed  actor 3f2a9c0d1e2b4a5f (web)  constraints: 0/3 nodes are available: …
 *   2026-05-01T10:00:01.250Z  actor_state      actor 3f2a9c0d1e2b4a5f (web)  ALIVE on 8c1d… (restarts 1)
 *   2026-05-01T10:00:02.000Z  node_launch_requested  gpu:  launching gpu-1a2b (1 of 2) for 1 pending actor …
 *
 * The autoscaler's events (node_launch_requested … demand_infeasible) read as its node type, then
 * its own message, and the node's id when the message does not name it.
 */
export function describeEvent(event: ClusterEvent): string {
  const when = new Date(event.time).toISOString();
  return `${when}  ${event.type.padEnd(19)}  ${subjectOf(event)}  ${detailOf(event)}`.trimEnd();
}

const AUTOSCALER_EVENTS = new Set<string>(AUTOSCALER_EVENT_TYPES);

function isAutoscalerEvent(event: ClusterEvent): event is AutoscalerClusterEvent {
  return AUTOSCALER_EVENTS.has(event.type);
}

function subjectOf(event: ClusterEvent): string {
  if (isAutoscalerEvent(event)) return `${event.nodeType}:`;
  switch (event.type) {
    case 'schedule_failed':
      return `${event.target.kind} ${event.target.id}${event.target.name ? ` (${event.target.name})` : ''}`;
    case 'actor_state':
    case 'actor_evicted':
      return `actor ${event.actor.actorId}${event.actor.name ? ` (${event.actor.namespace}/${event.actor.name})` : ''}`;
    case 'placement_group_state':
      return `placement group ${event.placementGroup.id}`;
    case 'job_started':
    case 'job_finished':
      return `job ${event.job.jobId}${event.job.name ? ` (${event.job.name})` : ''}`;
    case 'gcs_leader':
      return `gcs (epoch ${event.epoch})`;
    default:
      return `node ${event.node.nodeId} (${event.node.name})`;
  }
}

function detailOf(event: ClusterEvent): string {
  if (isAutoscalerEvent(event)) return event.nodeId !== undefined && !event.message.includes(event.nodeId) ? `${event.message} (node ${event.nodeId})` : event.message;
  switch (event.type) {
    case 'schedule_failed':
      return `${event.reason}: ${event.message}`;
    case 'actor_state': {
      const a = event.actor;
      const where = a.nodeId ? ` on ${a.nodeId}` : '';
      const why = a.state === 'DEAD' ? `: ${a.deathCause ?? ''}` : a.state === 'PENDING' && a.pendingReason ? `: ${a.pendingReason}` : '';
      return `${a.className} ${a.state}${where} (restarts ${a.numRestarts})${why}`;
    }
    case 'actor_evicted':
      return `${event.reason}: ${event.message} → ${event.actor.state}`;
    case 'placement_group_state':
      return event.placementGroup.state;
    case 'job_started':
      return `RUNNING: pid ${event.job.pid} on ${event.job.host}${event.job.entrypoint ? `: ${event.job.entrypoint}` : ''}`;
    case 'job_finished':
      return `FINISHED (${event.job.endReason ?? 'ended'})${event.job.endMessage ? `: ${event.job.endMessage}` : ''}`;
    case 'gcs_leader':
      return event.message;
    case 'node_labels_changed':
      return `labels ${pairs(event.node.labels)}`;
    case 'node_taints_changed':
      return `taints ${pairs(event.node.taints)}`;
    default:
      return event.node.state;
  }
}
