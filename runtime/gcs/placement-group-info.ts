import type { PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import { placementGroupStateOf } from './placement-group.machine.ts';
import type { GroupSnapshot } from './placement-group.step.ts';

/**
 * The PlacementGroupInfo a group machine's snapshot reads as: what the placement-group table
 * (placement-group-table.ts) holds for each group, stores, lists and publishes in
 * `placement_group_state`.
 */
export function groupInfoOf(snapshot: GroupSnapshot): PlacementGroupInfoWire {
  const c = snapshot.context;
  const state = placementGroupStateOf(snapshot);
  return {
    id: c.pgId,
    ...(c.name === undefined ? {} : { name: c.name }),
    namespace: c.namespace,
    state,
    strategy: c.strategy,
    bundles: c.bundles.map((b) => ({ index: b.index, resources: { ...b.resources }, ...(b.nodeId === undefined ? {} : { nodeId: b.nodeId }) })),
    tier: c.tier,
    ...((state === 'PENDING' || state === 'RESCHEDULING') && c.pendingReason !== undefined ? { pendingReason: c.pendingReason } : {}),
    ...(c.removedCause === undefined ? {} : { removedCause: c.removedCause }),
  };
}
