import { assign, setup, type SnapshotFrom } from 'xstate';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import type { ActorState as WireActorState } from '../../protocols/messages/actor.ts';

/**
 * One actor as the GCS sees it (docs/runtime.md, "Actor lifecycle"):
 *
 *              PLACED                    CREATED
 *   PENDING ──────────▶ onNode.SCHEDULED ─────────▶ onNode.ALIVE
 *    ▲  │ ↺ UNSCHEDULABLE     │  (from SCHEDULED or ALIVE:)
 *    │  │   (reported when    │  FAILED / KILL / EVICT, restarts left ──▶ RESTARTING
 *    │  │    it changes)      │  FAILED / KILL / EVICT, none left ──────▶ DEAD
 *    │  │                     │  CREATE_FAILED (SCHEDULED) ─────▶ DEAD
 *    │  │                     │  FAILED (SCHEDULED), the 2nd creation in a row ──▶ DEAD
 *    │  │                     │  UNDELIVERED (SCHEDULED) ──▶ PENDING (no restart counted)
 *    │  └── REJECTED / KILL ──▶ DEAD (final)
 *    └── UNSCHEDULABLE ── RESTARTING ── PLACED ──▶ onNode.SCHEDULED
 *                              └── REJECTED / KILL ──▶ DEAD
 *   PENDING ── ADOPTED ──▶ onNode.ALIVE   (a restarted GCS's actor that its raylet still runs)
 *
 * SCHEDULED and ALIVE sit inside `onNode`: entering SCHEDULED is the one place an actor's resources
 * are allocated and its labels added on its node (`placeOnNode`); leaving `onNode` — for RESTARTING
 * or DEAD, whatever the cause — is the one place they are removed (`removeFromNode`). Both, and
 * every other effect (`requestCreate`, `requestKill`, `reportScheduleFailed`), are named actions
 * whose implementations the GCS supplies with provide(); here they do nothing, so the machine can
 * be stepped as a pure reducer.
 *
 * `nodeId` is set on PLACED and cleared on entering RESTARTING or DEAD — after the exit and
 * transition actions, so removeFromNode and requestKill still see where the actor was.
 *
 * EVICT moves a running actor off its node because the node stopped being a place it may run (a
 * NoExecute taint it does not tolerate, or a constraint it requires during execution that no longer
 * holds — docs/failover.md): like a failure it counts a restart, and with none left the actor dies
 * with the eviction's cause; unlike a failure its instance is still running, so it is killed
 * (`requestKill`).
 *
 * UNDELIVERED says the create_actor never reached a raylet (NO_RESPONDERS: nothing subscribes the
 * node's subject — its raylet is reconnecting after a NATS outage, or gone). The constructor did not
 * run, so nothing failed: the actor goes back to PENDING as if it had never been placed, with no
 * restart counted (Ray keeps such an actor pending creation too). `incarnation` still rises, so a
 * stray answer about the undelivered attempt can never be taken for the next one.
 *
 * ADOPTED is how a GCS that restarted takes back an actor a raylet reported still running, with the
 * very incarnation the store holds (recovery.ts): placed on that node and ALIVE at once, without a
 * create_actor — its constructor ran long ago. Through SCHEDULED it would read SCHEDULED to anyone
 * who asked, and publish a SCHEDULED event, until the raylet answered a create it did not need.
 *
 * RESTARTING is a waiting state like PENDING: the pending queue tries to place it at once and sends
 * PLACED (straight to SCHEDULED) or UNSCHEDULABLE (to PENDING, with its explanation). A restart
 * raises `incarnation`, so replies and reports about an older incarnation are ignored.
 *
 * The context is plain data (it survives msgpackr): resource sets in fixed-point units.
 */
/** The states the GCS's machine has: all of protocols' but DEPENDENCIES_UNREADY (no actor waits on dependencies yet). */
export type ActorState = Exclude<WireActorState, 'DEPENDENCIES_UNREADY'>;

export interface ActorMachineInput {
  actorId: string;
  namespace: string;
  name?: string;
  className: string;
  /** The actor's labels including its automatic orrery.io/actor-id label. */
  labels: Record<string, string>;
  /** What the actor holds on its node while placed, in units. */
  resources: Record<string, number>;
  /** 0: never restarted; -1: restarted without limit. */
  maxRestarts: number;
  /** Where a recovered actor's count stands (a GCS restarted, docs/failover.md); default 0 each. */
  numRestarts?: number;
  incarnation?: number;
}

export interface ActorContext extends ActorMachineInput {
  numRestarts: number;
  incarnation: number;
  /**
   * Creations in a row that failed with the process hosting them gone (FAILED while SCHEDULED:
   * the node died, its worker host exited; a create_actor that goes unanswered is asked again instead: raylets.ts); back to 0 once one succeeds. The second such
   * failure is fatal (CREATION_CRASHES): an actor whose constructor or arguments bring down their
   * host must not hop from node to node taking each one down, restarts left or not.
   */
  creationFailures: number;
  nodeId?: string;
  deathCause?: string;
  pendingReason?: string;
}

export type ActorEvent =
  | { type: 'PLACED'; nodeId: string }
  /** Recovery: the actor runs on `nodeId` already, this very incarnation (no create_actor). */
  | { type: 'ADOPTED'; nodeId: string }
  | { type: 'UNSCHEDULABLE'; failure: ScheduleFailure }
  /** The scheduler says it can never be placed (NODE_NOT_FOUND, NODE_UNAVAILABLE): it dies. */
  | { type: 'REJECTED'; cause: string }
  | { type: 'CREATED'; incarnation: number }
  /** The raylet answered create_actor with an error (constructor threw, code not loadable). */
  | { type: 'CREATE_FAILED'; incarnation: number; cause: string }
  /** The worker or the node died, or the raylet answered create_actor with an error that is not the actor's (NODE_STOPPING, an unreadable answer). */
  | { type: 'FAILED'; incarnation: number; cause: string }
  /** create_actor reached no raylet (NO_RESPONDERS): the constructor never ran. */
  | { type: 'UNDELIVERED'; incarnation: number; cause: string }
  /** `cause`: the death cause when it dies of it (default KILLED). */
  | { type: 'KILL'; noRestart: boolean; cause?: string }
  /** The actor may no longer run where it is (NoExecute taint, a required constraint broke). */
  | { type: 'EVICT'; cause: string };

/** Creations in a row that may fail with their host gone before the actor dies of it. */
export const CREATION_CRASHES = 2;

/** The death cause of an actor killed through kill_actor. */
export const KILLED = 'killed';

type Ctx = { context: ActorContext };

const restartsLeft = ({ context }: Ctx): boolean => context.maxRestarts === -1 || context.numRestarts < context.maxRestarts;

export const actorMachine = setup({
  types: {
    context: {} as ActorContext,
    events: {} as ActorEvent,
    input: {} as ActorMachineInput,
  },
  actions: {
    /** SCHEDULED entry (and ADOPTED): allocate `resources` and add `labels` on `nodeId` in the cluster state. */
    placeOnNode: () => {},
    /** Leaving SCHEDULED/ALIVE: remove the labels and release the resources on `nodeId`. */
    removeFromNode: () => {},
    /** SCHEDULED entry: ask the raylet of `nodeId` to create this incarnation. */
    requestCreate: () => {},
    /** A KILL while placed: ask the raylet to drop this incarnation. */
    requestKill: () => {},
    /** The explanation changed while waiting: publish a schedule_failed event. */
    reportScheduleFailed: (_, _params: { failure: ScheduleFailure }) => {},
    setNode: assign({ nodeId: (_, params: { nodeId: string }) => params.nodeId, pendingReason: undefined }),
    clearNode: assign({ nodeId: undefined }),
    setPendingReason: assign({ pendingReason: (_, params: { message: string }) => params.message }),
    countRestart: assign({
      numRestarts: ({ context }) => context.numRestarts + 1,
      incarnation: ({ context }) => context.incarnation + 1,
      pendingReason: undefined,
    }),
    /** An undelivered create: a new attempt number, no restart counted, the cause kept as why it waits. */
    retryCreate: assign({
      incarnation: ({ context }) => context.incarnation + 1,
      pendingReason: (_, params: { cause: string }) => params.cause,
    }),
    countCreationFailure: assign({ creationFailures: ({ context }) => context.creationFailures + 1 }),
    resetCreationFailures: assign({ creationFailures: 0 }),
    setDeathCause: assign({ deathCause: (_, params: { cause: string }) => params.cause, pendingReason: undefined }),
  },
  guards: {
    restartsLeft,
    /** KILL with noRestart false, and restarts remain. */
    restartAfterKill: ({ context }, params: { noRestart: boolean }) => !params.noRestart && restartsLeft({ context }),
    currentIncarnation: ({ context }, params: { incarnation: number }) => params.incarnation === context.incarnation,
    /** A failure of the current incarnation while it was being created, after one such before. */
    secondCreationFailure: ({ context }, params: { incarnation: number }) => params.incarnation === context.incarnation && context.creationFailures + 1 >= CREATION_CRASHES,
    /** A failure of the current incarnation, and restarts remain. */
    restartableFailure: ({ context }, params: { incarnation: number }) => params.incarnation === context.incarnation && restartsLeft({ context }),
    explanationChanged: ({ context }, params: { message: string }) => params.message !== context.pendingReason,
  },
}).createMachine({
  id: 'actor',
  context: ({ input }) => Object.assign({}, input, { numRestarts: input.numRestarts ?? 0, incarnation: input.incarnation ?? 0, creationFailures: 0 }),
  initial: 'PENDING',
  states: {
    PENDING: {
      on: {
        PLACED: { target: 'onNode', actions: { type: 'setNode', params: ({ event }) => ({ nodeId: event.nodeId }) } },
        ADOPTED: { target: 'onNode.ALIVE', actions: [{ type: 'setNode', params: ({ event }) => ({ nodeId: event.nodeId }) }, 'placeOnNode'] },
        UNSCHEDULABLE: {
          guard: { type: 'explanationChanged', params: ({ event }) => ({ message: event.failure.message }) },
          actions: [
            { type: 'setPendingReason', params: ({ event }) => ({ message: event.failure.message }) },
            { type: 'reportScheduleFailed', params: ({ event }) => ({ failure: event.failure }) },
          ],
        },
        REJECTED: { target: 'DEAD', actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause }) } },
        KILL: [
          { guard: { type: 'restartAfterKill', params: ({ event }) => ({ noRestart: event.noRestart }) }, target: 'RESTARTING' },
          { target: 'DEAD', actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause ?? KILLED }) } },
        ],
      },
    },
    onNode: {
      initial: 'SCHEDULED',
      exit: 'removeFromNode',
      states: {
        SCHEDULED: {
          entry: ['placeOnNode', 'requestCreate'],
          on: {
            CREATED: { guard: { type: 'currentIncarnation', params: ({ event }) => ({ incarnation: event.incarnation }) }, target: 'ALIVE', actions: 'resetCreationFailures' },
            FAILED: [
              {
                guard: { type: 'secondCreationFailure', params: ({ event }) => ({ incarnation: event.incarnation }) },
                target: '#actor.DEAD',
                actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: `${CREATION_CRASHES} creations in a row failed with their host gone; the last: ${event.cause}` }) },
              },
              {
                guard: { type: 'restartableFailure', params: ({ event }) => ({ incarnation: event.incarnation }) },
                target: '#actor.RESTARTING',
                actions: 'countCreationFailure',
              },
              {
                guard: { type: 'currentIncarnation', params: ({ event }) => ({ incarnation: event.incarnation }) },
                target: '#actor.DEAD',
                actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause }) },
              },
            ],
            CREATE_FAILED: {
              guard: { type: 'currentIncarnation', params: ({ event }) => ({ incarnation: event.incarnation }) },
              target: '#actor.DEAD',
              actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause }) },
            },
            UNDELIVERED: {
              guard: { type: 'currentIncarnation', params: ({ event }) => ({ incarnation: event.incarnation }) },
              target: '#actor.PENDING',
              actions: ['clearNode', { type: 'retryCreate', params: ({ event }) => ({ cause: event.cause }) }],
            },
          },
        },
        ALIVE: {},
      },
      on: {
        FAILED: [
          {
            guard: { type: 'restartableFailure', params: ({ event }) => ({ incarnation: event.incarnation }) },
            target: 'RESTARTING',
          },
          {
            guard: { type: 'currentIncarnation', params: ({ event }) => ({ incarnation: event.incarnation }) },
            target: 'DEAD',
            actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause }) },
          },
        ],
        KILL: [
          {
            guard: { type: 'restartAfterKill', params: ({ event }) => ({ noRestart: event.noRestart }) },
            target: 'RESTARTING',
            actions: 'requestKill',
          },
          { target: 'DEAD', actions: ['requestKill', { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause ?? KILLED }) }] },
        ],
        EVICT: [
          { guard: 'restartsLeft', target: 'RESTARTING', actions: 'requestKill' },
          { target: 'DEAD', actions: ['requestKill', { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause }) }] },
        ],
      },
    },
    RESTARTING: {
      entry: ['clearNode', 'countRestart'],
      on: {
        PLACED: { target: 'onNode', actions: { type: 'setNode', params: ({ event }) => ({ nodeId: event.nodeId }) } },
        UNSCHEDULABLE: {
          target: 'PENDING',
          actions: [
            { type: 'setPendingReason', params: ({ event }) => ({ message: event.failure.message }) },
            { type: 'reportScheduleFailed', params: ({ event }) => ({ failure: event.failure }) },
          ],
        },
        REJECTED: { target: 'DEAD', actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause }) } },
        KILL: [
          { guard: { type: 'restartAfterKill', params: ({ event }) => ({ noRestart: event.noRestart }) }, target: 'RESTARTING', reenter: true },
          { target: 'DEAD', actions: { type: 'setDeathCause', params: ({ event }) => ({ cause: event.cause ?? KILLED }) } },
        ],
      },
    },
    DEAD: { type: 'final', entry: 'clearNode' },
  },
});

export type ActorMachine = typeof actorMachine;
export type ActorSnapshot = SnapshotFrom<ActorMachine>;

/** The ActorInfo state of a snapshot: the leaf state's name (SCHEDULED and ALIVE sit in onNode). */
export function actorStateOf(snapshot: ActorSnapshot): ActorState {
  const value = snapshot.value;
  if (typeof value === 'string') return value as ActorState;
  return (value as { onNode: 'SCHEDULED' | 'ALIVE' }).onNode;
}
