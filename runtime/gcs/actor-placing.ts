import type { DryRun } from '../../lib/scheduling/dry-run.ts';
import type { Decision } from '../../lib/scheduling/schedule.ts';
import type { RegisterActor } from '../../protocols/messages/actor.ts';
import { actorStateOf, type ActorContext } from './actor.machine.ts';
import type { ActorEntry } from './actor-entry.ts';
import { compileActor, SCHEDULING_DEFAULT_CPUS, type CompiledActor } from './actor-options.ts';
import type { WaitingActor } from './demands.ts';
import type { ExplainBackoff } from './explain-backoff.ts';
import type { ActorRef } from './gcs.machine.ts';
import type { PendingQueue, PlaceOutcome } from './pending-queue.ts';
import type { Placeable, Placement } from './placement.ts';
import { describe } from './raylets.ts';

/**
 * Placing the actor directory's actors (actors.ts): the decision at registration and the pending
 * queue's later attempts, each sent to the actor's machine as PLACED, UNSCHEDULABLE or REJECTED; the
 * explanations of those that stay unplaceable, refreshed after a backoff (explain-backoff.ts), and
 * what resource_demands and explain read of them.
 */
export interface ActorPlacingDeps {
  readonly queue: () => PendingQueue;
  readonly rareResources: readonly string[];
}

/** The decisions (placement.ts) and the explanations of unplaceable actors (explain-backoff.ts), built by the directory. */
export interface ActorPlacingParts {
  readonly placement: Placement;
  readonly explanations: ExplainBackoff;
}

/** The id a dry run's request carries (an actor that does not exist; never placed). */
const EXPLAIN_ACTOR_ID = 'dry-run';

export class ActorPlacing {
  readonly #placement: Placement;
  /** Unplaceable actors' explanations, refreshed after a backoff (explain-backoff.ts). */
  readonly #explanations: ExplainBackoff;

  constructor(
    private readonly deps: ActorPlacingDeps,
    parts: ActorPlacingParts,
  ) {
    this.#placement = parts.placement;
    this.#explanations = parts.explanations;
  }

  /** Where a registering actor goes, decided at once. */
  decide(actor: Placeable): Decision {
    return this.#placement.decide(actor);
  }

  /** Sends a registering actor's machine the decision taken at once. */
  registered(ref: ActorRef, actorId: string, decision: Decision): void {
    this.#apply(ref, decision);
    // decided against the cluster as it is: the queue need not try it again until something changes
    if (decision.status === 'unschedulable') {
      this.deps.queue().tried(actorId);
      this.#explanations.explained(actorId, decision.failure, this.#explanations.now());
    }
  }

  /**
   * A PENDING or RESTARTING actor as resource_demands groups it (demands.ts): its options as sent,
   * and whether its last explanation found it infeasible rather than waiting for resources.
   */
  waiting(actorId: string, entry: ActorEntry | undefined): WaitingActor | undefined {
    if (entry === undefined || (entry.info.state !== 'PENDING' && entry.info.state !== 'RESTARTING')) return undefined;
    const explained = this.#explanations.last(actorId);
    // one object of one shape per actor: resource_demands asks for ten thousand at a time
    return {
      actorId,
      namespace: entry.registration.namespace,
      options: entry.registration.options,
      compiled: entry.compiled,
      defaultCpus: SCHEDULING_DEFAULT_CPUS,
      infeasible: explained?.code === 'infeasible',
      reason: entry.info.pendingReason ?? explained?.reason,
      explainedAt: explained?.at,
    };
  }

  /** The pending queue's attempt to place one waiting actor. */
  tryPlace(actorId: string, entry: ActorEntry | undefined): PlaceOutcome {
    const state = entry?.ref ? actorStateOf(entry.ref.getSnapshot()) : 'DEAD';
    if (!entry?.ref || (state !== 'PENDING' && state !== 'RESTARTING')) {
      this.#explanations.forget(actorId);
      return 'gone';
    }
    const decision = this.#placement.decide({ actorId, namespace: entry.registration.namespace, compiled: entry.compiled });
    if (decision.status === 'unschedulable') {
      // still unplaceable: its reason is refreshed only once its backoff has run
      const now = this.#explanations.now();
      if (!this.#explanations.mayRefresh(actorId, now)) return 'waiting';
      this.#apply(entry.ref, decision);
      this.#explanations.explained(actorId, decision.failure, now);
      return 'waiting';
    }
    this.#explanations.forget(actorId);
    this.#apply(entry.ref, decision);
    return decision.status === 'placed' ? 'placed' : 'gone';
  }

  /** The actor now runs on `context.nodeId`, with these compiled options. */
  placed(context: ActorContext, compiled: CompiledActor): void {
    if (context.nodeId !== undefined) this.#placement.placed({ actorId: context.actorId, namespace: context.namespace, compiled }, context.nodeId);
  }

  left(actorId: string): void {
    this.#placement.left(actorId);
  }

  /** Drops an actor's explanation: it no longer waits. */
  forget(actorId: string): void {
    this.#explanations.forget(actorId);
  }

  /**
   * explain: where an actor with these options would be placed now (a dry run, changing nothing):
   * compiled and constrained exactly as register does (anti-affinity of residents, nodes that did
   * not answer), then lib's dryRun.
   */
  explain(namespace: string, options: Record<string, unknown>): DryRun {
    const reg: RegisterActor = { actorId: EXPLAIN_ACTOR_ID, code: { moduleUrl: 'file:///explain', className: 'Explain', args: [] }, namespace, options };
    const compiled = compileActor(reg, { rareResources: this.deps.rareResources });
    return this.#placement.explain({ actorId: EXPLAIN_ACTOR_ID, namespace, compiled });
  }

  /** Stops the refresh timer (the GCS stops). */
  stop(): void {
    this.#explanations.stop();
  }

  #apply(ref: ActorRef, decision: Decision): void {
    if (decision.status === 'placed') ref.send({ type: 'PLACED', nodeId: decision.nodeId });
    else if (decision.status === 'unschedulable') ref.send({ type: 'UNSCHEDULABLE', failure: decision.failure });
    else ref.send({ type: 'REJECTED', cause: describe(decision.error) });
  }
}
