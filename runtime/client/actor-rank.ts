import type { ActorInfo, ActorState } from './cluster-info.types.ts';

/**
 * Where an ActorInfo sits in its actor's life. The GCS's transitions only move forward in this order:
 * within one incarnation RESTARTING, PENDING, SCHEDULED, ALIVE; a new incarnation (a restart, or a
 * create that reached no raylet and sent the actor back to PENDING) starts a higher band; DEAD is
 * final. So of two infos the one with the higher rank is the newer — whatever order they arrive in.
 * That matters: a get_actor answer computed before a transition can arrive after its event.
 * `incarnation` is absent while it is 0, and from a GCS that predates it (numRestarts is then a
 * lower bound that moved the same way).
 */
const ORDER: Record<ActorState, number> = { RESTARTING: 0, DEPENDENCIES_UNREADY: 1, PENDING: 2, SCHEDULED: 3, ALIVE: 4, DEAD: 5 };

export function actorRank(info: ActorInfo): number {
  if (info.state === 'DEAD') return Number.POSITIVE_INFINITY;
  return Math.max(info.incarnation ?? 0, info.numRestarts) * 10 + ORDER[info.state];
}
