import { fromPromise, setup, spawnChild, stopChild, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import { actorMachine } from './actor.machine.ts';
import { nodeMachine, type NodeMachineInput } from './node.machine.ts';

/**
 * The GCS itself:
 *
 *   starting ──(subjects open)──▶ recovering ──────────────────────────▶ serving ──STOP──▶ stopping ──▶ stopped
 *       │                          grace ──(window over, or NODES_BACK)──▶ reconciling ──┘
 *       └──(cannot open)──▶ failed   └──(nothing to recover)───────────────▶ ┘
 *
 * `recovering` is where a GCS that found tables from an earlier one (a restart, a standby taking
 * over) gives raylets a grace window to register again with what they still run, then reconciles
 * (recovery.ts) before it schedules anything; with nothing to recover it passes straight through.
 * The window ends early on NODES_BACK (every node the table held as live is back). Mutating
 * requests that arrive before `serving` wait for it; queries and registrations are answered.
 *
 * While starting and serving it spawns one Node machine per registered node as its children (ids
 * `node-<nodeId>`). Actor and PlacementGroup machines (ids `actor-<actorId>`, `placement-group-<pgId>`) are created by the service with this
 * actor as their parent — the same actor system, so one inspection stream shows the whole control
 * plane, and their done and error events arrive here — but they are not kept in `children`: xstate
 * copies that object on every spawn and stop, a cost that grows with the number of actors (a 100 ms
 * stall per actor death at 1,000 actors). A child that reaches its final state (a DEAD node) is
 * stopped and dropped from `children`; its last state lives on in the GCS's store.
 *
 * Opening and closing the request subjects and reconciling are the invoked `openSubjects` /
 * `closeSubjects` / `reconcile` promise actors, supplied with provide() by the service; the defaults
 * here do nothing.
 */
export interface GcsMachineInput {
  cluster: string;
  /** Whether the store holds live nodes or actors from an earlier GCS; default false. */
  recover?: boolean;
  /** Longest wait for raylets to register again when recovering; default 3,000 ms. */
  graceMs?: number;
}

export interface GcsContext {
  cluster: string;
  recover: boolean;
  graceMs: number;
}

export type GcsEvent = { type: 'NODE_REGISTERED'; node: NodeMachineInput } | { type: 'NODES_BACK' } | { type: 'STOP' };

export const nodeChildId = (nodeId: string): string => `node-${nodeId}`;
export const actorChildId = (actorId: string): string => `actor-${actorId}`;
export const placementGroupChildId = (pgId: string): string => `placement-group-${pgId}`;

// xstate types spawnChild's mappers and wildcard handlers with the whole event union; these narrow.
const nodeOf = (event: GcsEvent): NodeMachineInput => (event as Extract<GcsEvent, { type: 'NODE_REGISTERED' }>).node;
/** `xstate.done.actor.<id>` / `xstate.error.actor.<id>` carry the child's id (and its error). */
const childOf = (event: unknown): { actorId: string; error?: unknown } => event as { actorId: string; error?: unknown };

export const gcsMachine = setup({
  types: {
    context: {} as GcsContext,
    events: {} as GcsEvent,
    input: {} as GcsMachineInput,
  },
  actors: {
    node: nodeMachine,
    actor: actorMachine,
    openSubjects: fromPromise<void, GcsContext>(async () => {}),
    closeSubjects: fromPromise<void, GcsContext>(async () => {}),
    reconcile: fromPromise<void, GcsContext>(async () => {}),
  },
  guards: {
    nothingToRecover: ({ context }) => !context.recover,
  },
  delays: {
    graceWindow: ({ context }) => context.graceMs,
  },
  actions: {
    /** A child machine threw (an action implementation failed): report it; the child is dropped. */
    reportChildError: (_, _params: { childId: string; error: unknown }) => {},
    reportStartFailure: (_, _params: { error: unknown }) => {},
    reportReconcileFailure: (_, _params: { error: unknown }) => {},
  },
}).createMachine({
  id: 'gcs',
  context: ({ input }) => ({ cluster: input.cluster, recover: input.recover ?? false, graceMs: input.graceMs ?? 3000 }),
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
        onDone: 'recovering',
        onError: { target: 'failed', actions: { type: 'reportStartFailure', params: ({ event }) => ({ error: event.error }) } },
      },
    },
    recovering: {
      initial: 'grace',
      on: { STOP: 'stopping' },
      states: {
        grace: {
          always: { guard: 'nothingToRecover', target: '#gcs.serving' },
          after: { graceWindow: 'reconciling' },
          on: { NODES_BACK: 'reconciling' },
        },
        reconciling: {
          invoke: {
            src: 'reconcile',
            input: ({ context }) => context,
            onDone: '#gcs.serving',
            // a reconciliation that failed part-way still leaves a GCS that can serve: said, not fatal
            onError: { target: '#gcs.serving', actions: { type: 'reportReconcileFailure', params: ({ event }) => ({ error: event.error }) } },
          },
        },
      },
    },
    serving: {
      on: { STOP: 'stopping', NODES_BACK: {} },
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
