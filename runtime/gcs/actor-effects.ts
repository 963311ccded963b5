import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import { actorMachine, type ActorContext, type ActorMachine } from './actor.machine.ts';

/**
 * The Actor machine's named actions, implemented against the GCS's ClusterState and peers. The
 * machine decides when they run; this decides what they do:
 *
 *   placeOnNode     allocate the actor's resources and add its labels on its node — the only place
 *                   either happens — and remember what was taken
 *   removeFromNode  give back exactly what placeOnNode took (a node already gone has nothing to
 *                   give back to), then tell the pending queue resources were freed
 *   requestCreate / requestKill / reportScheduleFailed   handed to the GCS's actor directory
 *
 * An action never throws: an xstate action that throws stops its actor, and one broken actor must
 * not take the control plane's bookkeeping with it. Problems are logged.
 */
export interface ActorEffectsDeps {
  readonly state: ClusterState;
  readonly log: (line: string) => void;
  /** A node's resources or actor labels changed (view broadcast, node table). */
  nodeChanged(nodeId: string): void;
  resourcesFreed(): void;
  requestCreate(context: ActorContext): void;
  requestKill(context: ActorContext): void;
  scheduleFailed(context: ActorContext, failure: ScheduleFailure): void;
  /** The actor now runs on `context.nodeId` (after its labels were added there). */
  actorPlaced(context: ActorContext): void;
  /** The actor left its node (before resourcesFreed). */
  actorLeft(context: ActorContext): void;
}

interface Placement {
  readonly nodeId: string;
  readonly resources: ResourceSet;
}

export function provideActorEffects(deps: ActorEffectsDeps): ActorMachine {
  const placements = new Map<string, Placement>();
  const guarded = (what: string, context: ActorContext, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      deps.log(`${what} for actor ${context.actorId} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  return actorMachine.provide({
    actions: {
      placeOnNode: ({ context }) =>
        guarded('placeOnNode', context, () => {
          const nodeId = context.nodeId;
          if (nodeId === undefined || placements.has(context.actorId)) return;
          deps.state.allocate(nodeId, context.resources);
          deps.state.addActor(nodeId, { actorId: context.actorId, namespace: context.namespace, labels: context.labels });
          placements.set(context.actorId, { nodeId, resources: context.resources });
          deps.actorPlaced(context);
          deps.nodeChanged(nodeId);
        }),
      removeFromNode: ({ context }) =>
        guarded('removeFromNode', context, () => {
          const placed = placements.get(context.actorId);
          if (placed === undefined) return;
          placements.delete(context.actorId);
          deps.actorLeft(context);
          if (deps.state.node(placed.nodeId) !== undefined) {
            deps.state.removeActor(placed.nodeId, context.actorId);
            deps.state.release(placed.nodeId, placed.resources);
          }
          deps.nodeChanged(placed.nodeId);
          deps.resourcesFreed();
        }),
      requestCreate: ({ context }) => guarded('requestCreate', context, () => deps.requestCreate(context)),
      requestKill: ({ context }) => guarded('requestKill', context, () => deps.requestKill(context)),
      reportScheduleFailed: ({ context }, params) => guarded('reportScheduleFailed', context, () => deps.scheduleFailed(context, params.failure)),
    },
  });
}
