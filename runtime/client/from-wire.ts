import { formatResources } from '../../lib/resources/resource-set.ts';
import type { ActorInfoWire } from '../../protocols/messages/actor.ts';
import { scheduleFailed, type ClusterEventWire, type NodeInfoWire } from '../../protocols/messages/cluster.ts';
import type { PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import { AUTOSCALER_EVENT_TYPES, type AutoscalerEventType } from '../../protocols/messages/autoscaling.ts';
import type { ActorInfo, ClusterEvent, NodeInfo, PlacementGroupInfo } from './cluster-info.types.ts';

/**
 * Wire shapes → what the client API returns. The wire carries resources in fixed-point units; users
 * see the quantities they asked for ({ CPU: 0.5 }).
 */
export function nodeFromWire(wire: NodeInfoWire): NodeInfo {
  return {
    nodeId: wire.nodeId,
    name: wire.name,
    state: wire.state,
    labels: { ...wire.labels },
    taints: { ...wire.taints },
    resources: { total: formatResources(wire.resources.total), available: formatResources(wire.resources.available) },
    ...(wire.bundleResourcesOmitted === undefined ? {} : { bundleResourcesOmitted: wire.bundleResourcesOmitted }),
  };
}

/**
 * list_nodes' items with the parts of one node joined: a node too large for one reply comes as
 * consecutive parts, each with a run of its resource names (runtime/gcs/paging.ts, nodesPage).
 */
export function joinNodeParts(items: readonly NodeInfoWire[]): NodeInfoWire[] {
  const out: NodeInfoWire[] = [];
  /** The last node of `out` when it is a join made here (its sets are ours to add to). */
  let joined: NodeInfoWire | undefined;
  for (const item of items) {
    const last = out.at(-1);
    if (last === undefined || last.nodeId !== item.nodeId) {
      out.push(item);
      joined = undefined;
      continue;
    }
    // the later part is the newer picture of the node's other fields; the names add up
    const total = joined === last ? last.resources.total : Object.assign({}, last.resources.total);
    const available = joined === last ? last.resources.available : Object.assign({}, last.resources.available);
    Object.assign(total, item.resources.total);
    Object.assign(available, item.resources.available);
    joined = Object.assign({}, item, { resources: { total, available } });
    out[out.length - 1] = joined;
  }
  return out;
}

export function actorFromWire(wire: ActorInfoWire): ActorInfo {
  return Object.assign({}, wire, { labels: { ...wire.labels } });
}

/** A placement group as users see it: bundle resources in user quantities ({ CPU: 0.5 }). */
export function placementGroupFromWire(wire: PlacementGroupInfoWire): PlacementGroupInfo {
  return Object.assign({}, wire, {
    bundles: wire.bundles.map((b) => ({ index: b.index, resources: formatResources(b.resources), ...(b.nodeId === undefined ? {} : { nodeId: b.nodeId }) })),
  });
}

const NODE_EVENTS = new Set(['node_added', 'node_dead', 'node_labels_changed', 'node_taints_changed', 'node_draining', 'node_alive']);
const EVICTION_REASONS = new Set(['no_execute_taint', 'affinity_lost']);
const AUTOSCALER_EVENTS = new Set<string>(AUTOSCALER_EVENT_TYPES);

/**
 * One event as the API types it, or undefined for an event this client does not know (a newer GCS)
 * or one that lacks the fields its type needs. Unknown events are dropped rather than passed on
 * untyped, so `switch (event.type)` over ClusterEvent stays exhaustive.
 */
export function eventFromWire(wire: ClusterEventWire): ClusterEvent | undefined {
  const { type, time } = wire;
  const seq = wire.seq === undefined ? {} : { seq: wire.seq };
  if (NODE_EVENTS.has(type) && wire.node) return { type: type as 'node_added', time, ...seq, node: nodeFromWire(wire.node) };
  if (type === 'actor_state' && wire.actor) return { type, time, ...seq, actor: actorFromWire(wire.actor) };
  if (type === 'actor_evicted' && wire.actor && wire.reason !== undefined && EVICTION_REASONS.has(wire.reason)) {
    return { type, time, ...seq, actor: actorFromWire(wire.actor), reason: wire.reason as 'affinity_lost', message: wire.message ?? '' };
  }
  if ((type === 'job_started' || type === 'job_finished') && wire.job) return { type, time, ...seq, job: { ...wire.job } };
  if (type === 'gcs_leader' && wire.epoch !== undefined && wire.message !== undefined) return { type, time, ...seq, epoch: wire.epoch, message: wire.message };
  if (type === 'placement_group_state' && wire.placementGroup) {
    return { type, time, ...seq, placementGroup: placementGroupFromWire(wire.placementGroup) };
  }
  if (AUTOSCALER_EVENTS.has(type) && wire.nodeType !== undefined && wire.message !== undefined) {
    return {
      type: type as AutoscalerEventType,
      time,
      ...seq,
      nodeType: wire.nodeType,
      ...(wire.nodeName === undefined ? {} : { nodeName: wire.nodeName }),
      ...(wire.nodeId === undefined ? {} : { nodeId: wire.nodeId }),
      message: wire.message,
    };
  }
  if (type === 'schedule_failed') {
    try {
      return Object.assign({}, scheduleFailed(wire, 'event'), seq);
    } catch {
      return undefined;
    }
  }
  return undefined;
}
