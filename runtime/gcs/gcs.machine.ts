import { fromPromise, setup, stopChild, type ActorRefFrom, type AnyActorRef, type SnapshotFrom } from 'xstate';
import { actorMachine } from './actor.machine.ts';
import { nodeMachine } from './node.machine.ts';

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
 * Node, Actor and PlacementGroup machines (ids `node-<nodeId>`, `actor-<actorId>`,
 * `placement-group-<pgId>`) are created with this actor as their parent (gcs-children.ts) — the same
 * actor system, so one inspection stream shows the whole control plane, and their done and error
 * events arrive here — but they are not kept in `children`: xstate copies that object on every spawn
 * and stop, a cost that grows with their number (a 100 ms stall per actor death at 1,000 actors; a
 * node joining a 5,000-node cluster copied 5,000 entries, bench/sim). gcs-children.ts refuses new ones
 * once this machine is stopping; a machine's last state lives on in the GCS's store.
 *
 * Opening and closing the request subjects and reconciling are the invoked `openSubjects` /
 * `closeSubjects` / `reconcile` promise actors, supplied with provide() in gcs-actor.ts; the defaults
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

export type GcsEvent =
  | { type: 'NODES_BACK' }
  | { type: 'STOP' }
  // what the machines created with this one as parent send it when they end
  | { type: `xstate.done.actor.${string}`; actorId: string }
  | { type: `xstate.error.actor.${string}`; actorId: string; error: unknown };

export const nodeChildId = (nodeId: string): string => `node-${nodeId}`;
export const actorChildId = (actorId: string): string => `actor-${actorId}`;
export const placementGroupChildId = (pgId: string): string => `placement-group-${pgId}`;

// xstate types wildcard handlers with the whole event union; this narrows.
/** `xstate.done.actor.<id>` / `xstate.error.actor.<id>` carry the child's id (and its error). */
const childOf = (event: unknown): { actorId: string; error?: unknown } => event as { actorId: string; error?: unknown };

export const gcsMachine = setup({
  types: {
    context: {} as GcsContext,
    events: {} as GcsEvent,
    input: {} as GcsMachineInput,
  },
  // the machines created with this one as parent (their done and error events arrive here)
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
  on: {
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
    },
    stopped: { type: 'final' },
    failed: { type: 'final' },
  },
});

export type GcsMachine = typeof gcsMachine;
export type GcsSnapshot = SnapshotFrom<GcsMachine>;
export type NodeRef = ActorRefFrom<typeof nodeMachine>;
export type ActorRef = ActorRefFrom<typeof actorMachine>;

/**
 * Stops a Node, Actor or PlacementGroup machine. They are started with the Gcs actor as their parent
 * but are not its spawned children (see above), so no stopChild action of the Gcs machine reaches
 * them, and xstate refuses stop() on any actor that has a parent ("A non-root actor cannot be stopped
 * directly"). `_stop` is what a parent's stopChild calls: it ends the machine at once (or after the
 * step it is in) and unregisters it from the system.
 */
export function stopMachine(ref: AnyActorRef): void {
  (ref as unknown as { _stop(): void })._stop();
}
