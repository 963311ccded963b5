import type { ActorInfoWire } from '../../protocols/messages/actor.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import { ActorNotFoundError } from '../errors.ts';
import type { ActorContext } from './actor.machine.ts';
import { contextOf } from './actor-entry.ts';
import type { ActorIndexes } from './actor-indexes.ts';
import type { ActorTable } from './actor-table.ts';
import type { EventPublisher, EvictionReason } from './events.ts';
import type { RayletClient } from './raylets.ts';

/**
 * What moves the actor directory's actors (actors.ts) on from outside their machines: kill_actor, a
 * placement group removed, a job finished, actor_died, a node's death, an eviction and a registering
 * raylet's strays — each waking a sleeping actor to hear it — and the kill_actor requests sent to
 * raylets, which the kills above wait on.
 */
export interface ActorKillsDeps {
  readonly raylets: Pick<RayletClient, 'kill'>;
  readonly events: Pick<EventPublisher, 'actorEvicted'>;
  readonly log: (line: string) => void;
}

/** The table the actors are found in and woken through, and its group and owner indexes. */
export interface ActorKillsParts {
  readonly table: ActorTable;
  readonly indexes: ActorIndexes;
}

export class ActorKills {
  /** Each actor's kill_actor still unanswered by its raylet. */
  readonly #kills = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: ActorKillsDeps,
    private readonly parts: ActorKillsParts,
  ) {}

  /**
   * What a registering raylet still runs, while the GCS serves: only the incarnation the GCS has
   * placed on that node stays; every other one is killed there (the node was declared dead and its
   * actors restarted elsewhere, or the GCS never knew them). Answers how many were killed.
   */
  reconcileNode(nodeId: string, running: readonly { actorId: string; incarnation: number }[]): number {
    let killed = 0;
    for (const { actorId, incarnation } of running) {
      const context = contextOf(this.parts.table.entry(actorId));
      if (context?.nodeId === nodeId && context.incarnation === incarnation) continue;
      void this.deps.raylets.kill(nodeId, actorId, incarnation);
      killed++;
    }
    return killed;
  }

  /** kill_actor: moves the actor on at once, then waits for its raylet to drop the instance. */
  async kill(body: MessageBody<'kill_actor'>): Promise<ActorInfoWire> {
    const entry = this.parts.table.entry(body.actorId);
    if (!entry) throw new ActorNotFoundError({ actorId: body.actorId });
    this.parts.table.awake(entry)?.send({ type: 'KILL', noRestart: body.noRestart });
    await this.#kills.get(body.actorId);
    return entry.info;
  }

  /** actor_died: a raylet reports actors whose worker host exited. */
  died(body: MessageBody<'actor_died'>): { failed: number } {
    let failed = 0;
    for (const { actorId, incarnation } of body.actors) {
      const entry = this.parts.table.entry(actorId);
      const context = contextOf(entry);
      if (context?.nodeId !== body.nodeId || context.incarnation !== incarnation) continue;
      this.parts.table.awake(entry)!.send({ type: 'FAILED', incarnation, cause: body.cause });
      failed++;
    }
    return { failed };
  }

  /**
   * Kills every live actor placed in (or waiting for) a placement group's bundles: the group is gone.
   * Resolves once their raylets dropped them (as kill_actor does), so an answer to remove_pg means
   * no call can reach them any more.
   */
  killInGroup(pgId: string, cause: string): Promise<void> {
    const kills: Promise<void>[] = [];
    // a copy: a KILL may take an actor DEAD (and out of the index) at once
    for (const actorId of this.parts.indexes.inGroup(pgId)) {
      const entry = this.parts.table.entry(actorId);
      if (entry === undefined || entry.placementGroupId !== pgId) continue;
      const ref = this.parts.table.awake(entry);
      if (!ref) continue;
      ref.send({ type: 'KILL', noRestart: true, cause });
      const kill = this.#kills.get(entry.registration.actorId);
      if (kill) kills.push(kill);
    }
    return Promise.all(kills).then(() => undefined);
  }

  /**
   * A job finished: every live actor it owns (created under it, not detached) is killed with
   * `cause(jobId)`, so its name is free at once, pausing whenever `breathe` says (intake-queue.ts, slicer). Resolves once their raylets dropped them. Answers
   * how many were killed.
   */
  async killOwnedBy(jobIds: ReadonlySet<string>, cause: (jobId: string) => string, breathe: () => Promise<void> | undefined = () => undefined): Promise<number> {
    const kills: Promise<void>[] = [];
    let killed = 0;
    const owned = this.parts.indexes.ownedBy(jobIds);
    for (const actorId of owned) {
      const entry = this.parts.table.entry(actorId);
      if (entry === undefined) continue;
      const { jobId } = entry.registration;
      if (jobId === undefined || !jobIds.has(jobId) || entry.info.state === 'DEAD' || entry.registration.options.lifetime === 'detached') continue;
      const ref = this.parts.table.awake(entry);
      if (!ref) continue;
      ref.send({ type: 'KILL', noRestart: true, cause: cause(jobId) });
      killed++;
      const kill = this.#kills.get(entry.registration.actorId);
      if (kill) kills.push(kill);
      const pause = breathe();
      if (pause) await pause;
    }
    await Promise.all(kills);
    return killed;
  }

  /** Every actor placed on a node that died (or stopped) fails with `cause`, and restarts elsewhere when it may. */
  failOnNode(nodeId: string, cause = `node ${nodeId} died`): void {
    for (const entry of this.parts.table.values()) {
      // the info says where an actor is as its machine does (actor-table.ts #observe, on every step;
      // a sleeping actor's context is made from it): checked first, so a death costs a field read per
      // actor, not a context made for each sleeping one (330 ms per node with 100,000 actors; a zone
      // of 1,000 nodes lost at once held the GCS for minutes)
      if (entry.info.nodeId !== nodeId) continue;
      const context = contextOf(entry);
      if (context?.nodeId === nodeId) this.parts.table.awake(entry)!.send({ type: 'FAILED', incarnation: context.incarnation, cause });
    }
  }

  /**
   * Moves a running actor off its node (eviction.ts): it restarts elsewhere when it may, else dies
   * with `cause`; an actor_evicted event says why.
   */
  evict(actorId: string, reason: EvictionReason, cause: string): void {
    const entry = this.parts.table.entry(actorId);
    const from = contextOf(entry)?.nodeId;
    if (entry === undefined || from === undefined) return;
    this.parts.table.awake(entry)!.send({ type: 'EVICT', cause });
    this.deps.log(`actor ${actorId} left node ${from}: ${cause}`);
    this.deps.events.actorEvicted(entry.info, reason, cause);
  }

  /** The kill the Actor machine asks for (actor-effects.ts), kept until its raylet answered. */
  requestKill(context: ActorContext): void {
    if (context.nodeId === undefined) return;
    const kill = this.deps.raylets.kill(context.nodeId, context.actorId, context.incarnation);
    this.#kills.set(context.actorId, kill);
    void kill.finally(() => {
      if (this.#kills.get(context.actorId) === kill) this.#kills.delete(context.actorId);
    });
  }
}
