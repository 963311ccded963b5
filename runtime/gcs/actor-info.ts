import type { ActorInfoWire, RegisterActor } from '../../protocols/messages/actor.ts';
import { actorStateOf, type ActorSnapshot } from './actor.machine.ts';

/**
 * The ActorInfo an Actor machine's snapshot reads as: what the actor table (actors.ts) holds for each
 * actor, stores, lists and publishes in `actor_state`. Made once per state change, so it shares what
 * never changes rather than copying it.
 */
export function infoOf(reg: RegisterActor, snapshot: ActorSnapshot): ActorInfoWire {
  const state = actorStateOf(snapshot);
  const c = snapshot.context;
  return {
    actorId: c.actorId,
    ...(reg.name === undefined ? {} : { name: reg.name }),
    namespace: c.namespace,
    className: c.className,
    state,
    ...((state === 'SCHEDULED' || state === 'ALIVE') && c.nodeId !== undefined ? { nodeId: c.nodeId } : {}),
    numRestarts: c.numRestarts,
    ...(c.incarnation > 0 ? { incarnation: c.incarnation } : {}),
    // the compiled labels, never changed after registration: shared, not copied, by every info
    // (the actor table's and the event log's) — a copy per transition was ~200 B each
    labels: c.labels,
    ...(c.deathCause === undefined ? {} : { deathCause: c.deathCause }),
    ...(state === 'PENDING' && c.pendingReason !== undefined ? { pendingReason: c.pendingReason } : {}),
    ...(reg.jobId === undefined ? {} : { jobId: reg.jobId }),
    ...(reg.options.lifetime === 'detached' ? { lifetime: 'detached' as const } : {}),
  };
}
