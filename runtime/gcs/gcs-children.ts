import { createActor, type Actor, type AnyActorRef, type AnyStateMachine, type Snapshot } from 'xstate';
import { OrreryError } from '../../lib/errors.ts';
import { RESUMED_INPUT } from '../inspect/mapper.ts';
import type { ActorContext, ActorMachine, ActorMachineInput } from './actor.machine.ts';
import { actorChildId, nodeChildId, stopMachine, type ActorRef, type GcsMachine, type NodeRef } from './gcs.machine.ts';
import type { NodeMachine, NodeMachineInput } from './node.machine.ts';

/**
 * The Actor and Node machines the GCS starts with the Gcs actor as their parent — not spawned
 * children (gcs.machine.ts says why) — for its actor and node directories: none once the GCS stops,
 * and each one still running stopped when it closes.
 */
export interface GcsChildrenDeps {
  /** Their parent: read as each machine starts (the Gcs actor is created after the parts that start them). */
  readonly parent: () => Actor<GcsMachine>;
  readonly actorLogic: ActorMachine;
  readonly nodeLogic: NodeMachine;
}

/** One machine to start: its id, its input, the snapshot it resumes from, and whether this follows it. */
interface ChildStart {
  readonly id: string;
  readonly input: ActorMachineInput | NodeMachineInput;
  readonly snapshot?: Snapshot<unknown>;
  readonly track: boolean;
}

export class GcsChildren {
  /** The Node machines running now: stopped at close. */
  readonly #tracked = new Set<AnyActorRef>();

  constructor(private readonly deps: GcsChildrenDeps) {}

  /** Starts an Actor machine; it is stopped when the GCS stops. */
  startActor(input: ActorMachineInput): ActorRef {
    // The actor directory holds every live Actor machine (until DEAD) and stops them at close, so
    // this does not follow it too: one subscription per actor fewer on the register path.
    return this.#start(this.deps.actorLogic, { id: actorChildId(input.actorId), input, track: false }) as ActorRef;
  }

  /**
   * Starts the Actor machine of a sleeping actor (actor-entry.ts, ActorEntry) again from its ALIVE
   * snapshot: no entry action runs again, and the inspection mapper does not record the restart of
   * the machine as a transition (RESUMED_INPUT).
   */
  wakeActor(context: ActorContext): ActorRef {
    const snapshot = this.deps.actorLogic.resolveState({ value: { onNode: 'ALIVE' }, context });
    return this.#start(this.deps.actorLogic, { id: actorChildId(context.actorId), input: RESUMED_INPUT as never, snapshot, track: false }) as ActorRef;
  }

  /** Starts a Node machine; it is stopped when the GCS stops. */
  startNode(input: NodeMachineInput): NodeRef {
    return this.#start(this.deps.nodeLogic, { id: nodeChildId(input.nodeId), input, track: true }) as NodeRef;
  }

  /** Throws GCS_STOPPING once the GCS stops: it takes no new nodes, actors or placement groups. */
  accepting(): void {
    const value = this.deps.parent().getSnapshot().value;
    if (value === 'stopping' || value === 'stopped' || value === 'failed') throw new OrreryError('GCS_STOPPING', 'the GCS is stopping and takes no new nodes, actors or placement groups');
  }

  /** Stops every machine this follows (gcs.machine.ts, stopMachine), and forgets them. */
  stop(): void {
    for (const ref of this.#tracked) stopMachine(ref);
    this.#tracked.clear();
  }

  /** Starts an Actor or Node machine with the Gcs actor as its parent (not a spawned child). */
  #start(logic: ActorMachine | NodeMachine, { id, input, snapshot, track }: ChildStart): AnyActorRef {
    this.accepting();
    const ref: AnyActorRef = createActor(logic as AnyStateMachine, { parent: this.deps.parent(), id, input, ...(snapshot ? { snapshot } : {}) });
    if (track) {
      this.#tracked.add(ref);
      ref.subscribe({ complete: () => this.#tracked.delete(ref), error: () => this.#tracked.delete(ref) });
    }
    ref.start();
    return ref;
  }
}
