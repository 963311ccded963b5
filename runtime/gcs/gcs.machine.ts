import { fromPromise, setup, spawnChild, stopChild, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import { actorMachine } from './actor.machine.ts';
import { nodeMachine, type NodeMachineInput } from './node.machine.ts';

/**
 * The GCS itself:
 *
 *   starting ──(subjects open)──▶ serving ──STOP──▶ stopping ──(subjects closed)──▶ stopped
 *       └──(cannot open)──▶ failed
 *
 * While starting and serving it spawns one Node machine per registered node as its children (ids
 * `node-<nodeId>`). Actor and PlacementGroup machines (ids `actor-<actorId>`, `placement-group-<pgId>`) are created by the service with this
 * actor as their parent — the same actor system, so one inspection stream shows the whole control
 * plane, and their done and error events arrive here — but they are not kept in `children`: xstate
 * copies that object on every spawn and stop, a cost that grows with the number of actors (a 100 ms
 * stall per actor death at 1,000 actors). A child that reaches its final state (a DEAD node) is
 * stopped and dropped from `children`; its last state lives on in the GCS's store.
 *
 * Opening and closing the request subjects are the invoked `openSubjects` / `closeSubjects` promise
 * actors, supplied with provide() by the service; the defaults here do nothing.
 */
export interface GcsMachineInput {
  cluster: string;
}

export type GcsEvent = { type: 'NODE_REGISTERED'; node: NodeMachineInput } | { type: 'STOP' };

export const nodeChildId = (nodeId: string): string => `node-${nodeId}`;
export const actorChildId = (actorId: string): string => `actor-${actorId}`;
export const placementGroupChildId = (pgId: string): string => `placement-group-${pgId}`;

// xstate types spawnChild's mappers and wildcard handlers with the whole event union; these narrow.
const nodeOf = (event: GcsEvent): NodeMachineInput => (event as Extract<GcsEvent, { type: 'NODE_REGISTERED' }>).node;
/** `xstate.done.actor.<id>` / `xstate.error.actor.<id>` carry the child's id (and its error). */
const childOf = (event: unknown): { actorId: string; error?: unknown } => event as { actorId: string; error?: unknown };

export const gcsMachine = setup({
  types: {
    context: {} as GcsMachineInput,
    events: {} as GcsEvent,
    input: {} as GcsMachineInput,
  },
  actors: {
    node: nodeMachine,
    actor: actorMachine,
    openSubjects: fromPromise<void, GcsMachineInput>(async () => {}),
    closeSubjects: fromPromise<void, GcsMachineInput>(async () => {}),
  },
  actions: {
    /** A child machine threw (an action implementation failed): report it; the child is dropped. */
    reportChildError: (_, _params: { childId: string; error: unknown }) => {},
    reportStartFailure: (_, _params: { error: unknown }) => {},
  },
}).createMachine({
  id: 'gcs',
  context: ({ input }) => ({ cluster: input.cluster }),
  initial: 'starting',
  // Nodes are spawned while starting (a request may arrive between the first subscription and the
  // last) and serving; `stopping` refuses them, so the service can tell a stopping GCS.
  on: {
    NODE_REGISTERED: {
      actions: spawnChild('node', { id: ({ event }) => nodeChildId(nodeOf(event).nodeId), input: ({ event }) => nodeOf(event) }),
    },
    'xstate.done.actor.*': { actions: stopChild(({ event }) => childOf(event).actorId) },
    'xstate.error.actor.*': {
      actions: [
        { type: 'reportChildError', params: ({ event }: { event: GcsEvent }) => ({ childId: childOf(event).actorId, error: childOf(event).error }) },
        stopChild(({ event }) => childOf(event).actorId),
      ],
    },
  },
  states: {
    starting: {
      invoke: {
        src: 'openSubjects',
        input: ({ context }) => context,
        onDone: 'serving',
        onError: { target: 'failed', actions: { type: 'reportStartFailure', params: ({ event }) => ({ error: event.error }) } },
      },
    },
    serving: {
      on: { STOP: 'stopping' },
    },
    stopping: {
      invoke: { src: 'closeSubjects', input: ({ context }) => context, onDone: 'stopped', onError: 'stopped' },
      on: { NODE_REGISTERED: {} },
    },
    stopped: { type: 'final' },
    failed: { type: 'final' },
  },
});

export type GcsMachine = typeof gcsMachine;
export type GcsSnapshot = SnapshotFrom<GcsMachine>;
export type NodeRef = ActorRefFrom<typeof nodeMachine>;
export type ActorRef = ActorRefFrom<typeof actorMachine>;
