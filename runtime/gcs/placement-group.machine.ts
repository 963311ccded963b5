import { assign, setup, type SnapshotFrom } from 'xstate';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';

/**
 * One placement group as the GCS sees it (docs/placement-groups.md). Its bundles are reserved by a
 * two-phase commit with the raylets that hold them:
 *
 *   PENDING.waiting ──PLACED──▶ PENDING.preparing ──PREPARED──▶ PREPARED ──COMMITTED──▶ CREATED
 *        ▲   ↺ UNSCHEDULABLE          │ PREPARE_FAILED              │ COMMIT_FAILED        │
 *        │     (reported when it      ▼                             │                      │ NODE_DIED (a node
 *        │      changes)        PENDING.backoff ◀───────────────────┘                      │ holding bundles)
 *        └──────(after backoff)───────┘                                                    ▼
 *                                                   RESCHEDULING.{waiting, preparing, prepared, backoff}
 *                                                   — the same steps for the lost bundles only ──▶ CREATED
 *   REMOVE, from any state ──▶ REMOVED (final)
 *
 * PLACED carries a whole assignment for the bundles being placed (`placing`): the GCS computed it
 * with lib's bundle policies and — in the same action, `reserve` — took those resources in its
 * cluster state, so no other decision can use them while the raylets are asked. `requestPrepare`
 * asks every raylet involved to lock its bundles; when all did, `requestCommit` turns them into
 * bundle resources (CPU_group_<pg>, CPU_group_<i>_<pg>); when all committed, `commitBundles` adds
 * those to the nodes in the GCS's cluster state and the group is CREATED. Any refusal, timeout or
 * lost node on the way runs `abandon`: what was prepared or committed in this round is cancelled on
 * the raylets and given back in the cluster state, and the group waits (a backoff that doubles per
 * failed round, or at once when a node died) and is placed again against the cluster as it then is.
 * So a group is never half reserved: either every bundle of the round is committed, or none is held.
 *
 * A node holding committed bundles dies: those bundles are lost (`loseNode`; the node is gone, there
 * is nothing to give back) and the group is RESCHEDULING — the lost bundles are placed again under the
 * same strategy, beside the bundles that survived; the actors that lived in them restart into the
 * bundles' new places on their own (their resources are bundle resources, which exist again once the
 * bundles are committed). REMOVE runs `release`: the group's actors are killed, every bundle it holds
 * anywhere is cancelled and given back.
 *
 * Every effect is a named action that does nothing here, so the machine can be stepped as a pure
 * reducer. The GCS does not run this xstate machine per group: it runs the same steps through
 * placement-group.step.ts (held equal to this definition by its spec), and placement-groups.ts
 * carries out the effects. `round` numbers placement rounds so a late answer to an abandoned round is
 * ignored. The context is plain data (resources in units).
 */
export type PlacementGroupState = 'PENDING' | 'PREPARED' | 'CREATED' | 'RESCHEDULING' | 'REMOVED';
export type BundleStrategyName = 'PACK' | 'SPREAD' | 'STRICT_PACK' | 'STRICT_SPREAD';

export interface PgBundle {
  readonly index: number;
  /** What the bundle reserves, in units. */
  readonly resources: Record<string, number>;
  /** Where it is reserved or being reserved; undefined while unplaced. */
  nodeId?: string;
  /** Committed on `nodeId`: its bundle resources exist there. */
  committed: boolean;
}

export interface PlacementGroupMachineInput {
  pgId: string;
  namespace: string;
  name?: string;
  strategy: BundleStrategyName;
  /** Every tier's bundles (0: `bundles`, i: fallbackStrategy[i-1]), in units. */
  tiers: Record<string, number>[][];
}

export interface PlacementGroupContext extends PlacementGroupMachineInput {
  /** The tier in use (or last tried). */
  tier: number;
  /** The bundles of that tier. */
  bundles: PgBundle[];
  /** Indexes of the bundles this round places. */
  placing: number[];
  /** Placement rounds started; answers carry the round they belong to. */
  round: number;
  /** Consecutive failed rounds (the backoff grows with it); 0 once CREATED. */
  failures: number;
  pendingReason?: string;
  removedCause?: string;
}

export type PlacementGroupEvent =
  /** A whole assignment for the bundles to place: nodeIds[i] for bundle i (only placing ones are read). */
  | { type: 'PLACED'; tier: number; nodeIds: readonly string[] }
  | { type: 'UNSCHEDULABLE'; tier: number; failure: ScheduleFailure }
  | { type: 'PREPARED'; round: number }
  | { type: 'PREPARE_FAILED'; round: number; cause: string }
  | { type: 'COMMITTED'; round: number }
  | { type: 'COMMIT_FAILED'; round: number; cause: string }
  | { type: 'NODE_DIED'; nodeId: string }
  | { type: 'REMOVE'; cause: string };

/** The removedCause of a group removed through remove_pg. */
export const REMOVED_BY_USER = 'removed';

/** Backoff after a failed round: 50 ms doubling per consecutive failure, at most 2 s. */
export function backoffMs(failures: number): number {
  return Math.min(2000, 50 * 2 ** Math.max(0, failures - 1));
}

/**
 * A bundle placed on `nodeId` (or unplaced), not committed. The context's objects are built with
 * Object.assign or field by field, never as a literal opening with a spread: on Node.js 20 such a
 * literal gets a hidden class of its own once optimized (docs/benchmarks.md, "Object spreads on Node.js 20").
 */
const placedBundle = (b: PgBundle, nodeId: string | undefined): PgBundle => Object.assign({}, b, { nodeId, committed: false });

const bundlesOfTier = (tiers: Record<string, number>[][], tier: number): PgBundle[] =>
  tiers[tier].map((resources, index) => ({ index, resources, committed: false }));

/**
 * What each assign action changes and what each guard checks, as plain functions of the context:
 * the machine below uses them, and so does the plain stepper the GCS runs
 * (placement-group.step.ts), so the two cannot drift apart in what a step computes.
 */
export const contextChanges = {
  useTier: (context: PlacementGroupContext, params: { tier: number }): Partial<PlacementGroupContext> =>
    params.tier === context.tier ? {} : { tier: params.tier, bundles: bundlesOfTier(context.tiers, params.tier), placing: context.tiers[params.tier].map((_, i) => i) },
  assignNodes: (context: PlacementGroupContext, params: { nodeIds: readonly string[] }): Partial<PlacementGroupContext> => ({
    round: context.round + 1,
    bundles: context.bundles.map((b) => (context.placing.includes(b.index) ? placedBundle(b, params.nodeIds[b.index]) : b)),
    pendingReason: undefined,
  }),
  /** The placing bundles are committed; the round is over. */
  markCommitted: (context: PlacementGroupContext): Partial<PlacementGroupContext> => ({
    bundles: context.bundles.map((b) => (context.placing.includes(b.index) ? Object.assign({}, b, { committed: true }) : b)),
    placing: [],
    failures: 0,
    pendingReason: undefined,
  }),
  /** The round is abandoned: its bundles are unplaced again. */
  unplace: (context: PlacementGroupContext): Partial<PlacementGroupContext> => ({
    bundles: context.bundles.map((b) => (context.placing.includes(b.index) ? placedBundle(b, undefined) : b)),
  }),
  countFailure: (context: PlacementGroupContext, params: { cause: string }): Partial<PlacementGroupContext> => ({ failures: context.failures + 1, pendingReason: params.cause }),
  /** Bundles on a dead node become unplaced and join the bundles to place. */
  dropNode: (context: PlacementGroupContext, params: { nodeId: string }): Partial<PlacementGroupContext> => {
    const lost = context.bundles.filter((b) => b.nodeId === params.nodeId).map((b) => b.index);
    return {
      bundles: context.bundles.map((b) => (b.nodeId === params.nodeId ? placedBundle(b, undefined) : b)),
      placing: [...new Set([...context.placing, ...lost])].sort((a, b) => a - b),
      pendingReason: `node ${params.nodeId} died`,
    };
  },
  /** Every unplaced bundle is to be placed (a fresh start after a failed round). */
  placeUnplaced: (context: PlacementGroupContext): Partial<PlacementGroupContext> => ({ placing: context.bundles.filter((b) => b.nodeId === undefined).map((b) => b.index) }),
  setPendingReason: (_context: PlacementGroupContext, params: { message: string }): Partial<PlacementGroupContext> => ({ pendingReason: params.message }),
  setRemovedCause: (_context: PlacementGroupContext, params: { cause: string }): Partial<PlacementGroupContext> => ({ removedCause: params.cause, pendingReason: undefined }),
};

export const groupGuards = {
  currentRound: (context: PlacementGroupContext, params: { round: number }): boolean => params.round === context.round,
  holds: (context: PlacementGroupContext, params: { nodeId: string }): boolean => context.bundles.some((b) => b.nodeId === params.nodeId),
  holdsPlacing: (context: PlacementGroupContext, params: { nodeId: string }): boolean => context.placing.some((i) => context.bundles[i].nodeId === params.nodeId),
  explanationChanged: (context: PlacementGroupContext, params: { message: string }): boolean => params.message !== context.pendingReason,
};

/** The context a new group's machine starts with. */
export function initialContext(input: PlacementGroupMachineInput): PlacementGroupContext {
  return Object.assign({}, input, { tier: 0, bundles: bundlesOfTier(input.tiers, 0), placing: input.tiers[0].map((_, i) => i), round: 0, failures: 0 });
}

export const placementGroupMachine = setup({
  types: {
    context: {} as PlacementGroupContext,
    events: {} as PlacementGroupEvent,
    input: {} as PlacementGroupMachineInput,
  },
  actions: {
    /** PLACED: take the placing bundles' resources on their nodes in the GCS's cluster state. */
    reserve: () => {},
    /** Ask each raylet involved to lock its placing bundles (prepare_bundle). */
    requestPrepare: () => {},
    /** Ask each raylet involved to commit its placing bundles (commit_bundle). */
    requestCommit: () => {},
    /** All committed: add the placing bundles' bundle resources to their nodes in the cluster state. */
    commitBundles: () => {},
    /** A round failed: cancel its bundles on the raylets and give their resources back. */
    abandon: () => {},
    /** `nodeId` died: forget what was reserved there (nothing to give back on a dead node). */
    loseNode: (_, _params: { nodeId: string }) => {},
    /** REMOVE: kill the group's actors, cancel and give back every bundle it holds. */
    release: () => {},
    /** The explanation changed while waiting: publish a schedule_failed event. */
    reportScheduleFailed: (_, _params: { failure: ScheduleFailure }) => {},

    useTier: assign(({ context }, params: { tier: number }) => contextChanges.useTier(context, params)),
    assignNodes: assign(({ context }, params: { nodeIds: readonly string[] }) => contextChanges.assignNodes(context, params)),
    markCommitted: assign(({ context }) => contextChanges.markCommitted(context)),
    unplace: assign(({ context }) => contextChanges.unplace(context)),
    countFailure: assign(({ context }, params: { cause: string }) => contextChanges.countFailure(context, params)),
    dropNode: assign(({ context }, params: { nodeId: string }) => contextChanges.dropNode(context, params)),
    placeUnplaced: assign(({ context }) => contextChanges.placeUnplaced(context)),
    setPendingReason: assign(({ context }, params: { message: string }) => contextChanges.setPendingReason(context, params)),
    setRemovedCause: assign(({ context }, params: { cause: string }) => contextChanges.setRemovedCause(context, params)),
  },
  guards: {
    currentRound: ({ context }, params: { round: number }) => groupGuards.currentRound(context, params),
    holds: ({ context }, params: { nodeId: string }) => groupGuards.holds(context, params),
    holdsPlacing: ({ context }, params: { nodeId: string }) => groupGuards.holdsPlacing(context, params),
    explanationChanged: ({ context }, params: { message: string }) => groupGuards.explanationChanged(context, params),
  },
  delays: {
    backoff: ({ context }) => backoffMs(context.failures),
  },
}).createMachine({
  id: 'placement-group',
  context: ({ input }) => initialContext(input),
  initial: 'PENDING',
  on: {
    REMOVE: { target: '.REMOVED', actions: ['release', { type: 'setRemovedCause', params: ({ event }) => ({ cause: event.cause }) }] },
  },
  states: {
    PENDING: {
      initial: 'waiting',
      states: {
        waiting: {
          on: {
            PLACED: {
              target: 'preparing',
              actions: [
                { type: 'useTier', params: ({ event }) => ({ tier: event.tier }) },
                { type: 'assignNodes', params: ({ event }) => ({ nodeIds: event.nodeIds }) },
                'reserve',
              ],
            },
            UNSCHEDULABLE: {
              guard: { type: 'explanationChanged', params: ({ event }) => ({ message: event.failure.message }) },
              actions: [
                { type: 'useTier', params: ({ event }) => ({ tier: event.tier }) },
                { type: 'setPendingReason', params: ({ event }) => ({ message: event.failure.message }) },
                { type: 'reportScheduleFailed', params: ({ event }) => ({ failure: event.failure }) },
              ],
            },
          },
        },
        preparing: {
          entry: 'requestPrepare',
          on: {
            PREPARED: { guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) }, target: '#placement-group.PREPARED' },
            PREPARE_FAILED: {
              guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) },
              target: 'backoff',
              actions: ['abandon', 'unplace', { type: 'countFailure', params: ({ event }) => ({ cause: event.cause }) }],
            },
            NODE_DIED: {
              guard: { type: 'holdsPlacing', params: ({ event }) => ({ nodeId: event.nodeId }) },
              target: 'waiting',
              actions: [{ type: 'loseNode', params: ({ event }) => ({ nodeId: event.nodeId }) }, 'abandon', 'unplace', { type: 'setPendingReason', params: ({ event }) => ({ message: `node ${event.nodeId} died while its bundles were prepared` }) }],
            },
          },
        },
        backoff: {
          after: { backoff: 'waiting' },
        },
      },
    },
    PREPARED: {
      entry: 'requestCommit',
      on: {
        COMMITTED: { guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) }, target: 'CREATED', actions: ['commitBundles', 'markCommitted'] },
        COMMIT_FAILED: {
          guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) },
          target: 'PENDING.backoff',
          actions: ['abandon', 'unplace', { type: 'countFailure', params: ({ event }) => ({ cause: event.cause }) }],
        },
        NODE_DIED: {
          guard: { type: 'holdsPlacing', params: ({ event }) => ({ nodeId: event.nodeId }) },
          target: 'PENDING.waiting',
          actions: [{ type: 'loseNode', params: ({ event }) => ({ nodeId: event.nodeId }) }, 'abandon', 'unplace', { type: 'setPendingReason', params: ({ event }) => ({ message: `node ${event.nodeId} died while its bundles were committed` }) }],
        },
      },
    },
    CREATED: {
      on: {
        NODE_DIED: {
          guard: { type: 'holds', params: ({ event }) => ({ nodeId: event.nodeId }) },
          target: 'RESCHEDULING',
          actions: [{ type: 'loseNode', params: ({ event }) => ({ nodeId: event.nodeId }) }, { type: 'dropNode', params: ({ event }) => ({ nodeId: event.nodeId }) }],
        },
      },
    },
    RESCHEDULING: {
      initial: 'waiting',
      on: {
        // a node holding a surviving (committed) bundle dies too: lose it as well, start the round over
        NODE_DIED: {
          guard: { type: 'holds', params: ({ event }) => ({ nodeId: event.nodeId }) },
          target: '.waiting',
          actions: [
            { type: 'loseNode', params: ({ event }) => ({ nodeId: event.nodeId }) },
            'abandon',
            'unplace',
            { type: 'dropNode', params: ({ event }) => ({ nodeId: event.nodeId }) },
            'placeUnplaced',
          ],
        },
      },
      states: {
        waiting: {
          on: {
            PLACED: { target: 'preparing', actions: [{ type: 'assignNodes', params: ({ event }) => ({ nodeIds: event.nodeIds }) }, 'reserve'] },
            UNSCHEDULABLE: {
              guard: { type: 'explanationChanged', params: ({ event }) => ({ message: event.failure.message }) },
              actions: [
                { type: 'setPendingReason', params: ({ event }) => ({ message: event.failure.message }) },
                { type: 'reportScheduleFailed', params: ({ event }) => ({ failure: event.failure }) },
              ],
            },
          },
        },
        preparing: {
          entry: 'requestPrepare',
          on: {
            PREPARED: { guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) }, target: 'prepared' },
            PREPARE_FAILED: {
              guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) },
              target: 'backoff',
              actions: ['abandon', 'unplace', { type: 'countFailure', params: ({ event }) => ({ cause: event.cause }) }],
            },
          },
        },
        prepared: {
          entry: 'requestCommit',
          on: {
            COMMITTED: { guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) }, target: '#placement-group.CREATED', actions: ['commitBundles', 'markCommitted'] },
            COMMIT_FAILED: {
              guard: { type: 'currentRound', params: ({ event }) => ({ round: event.round }) },
              target: 'backoff',
              actions: ['abandon', 'unplace', { type: 'countFailure', params: ({ event }) => ({ cause: event.cause }) }],
            },
          },
        },
        backoff: {
          after: { backoff: 'waiting' },
        },
      },
    },
    REMOVED: { type: 'final' },
  },
});

export type PlacementGroupMachine = typeof placementGroupMachine;
export type PlacementGroupSnapshot = SnapshotFrom<PlacementGroupMachine>;

/** A state value of this machine: a top-level state, or one with its child ({ PENDING: 'waiting' }). */
export type PlacementGroupValue = PlacementGroupState | { readonly [state: string]: string };

/** The PlacementGroupInfo state of a snapshot (the machine's, or the stepper's): its top-level state. */
export function placementGroupStateOf(snapshot: { readonly value: PlacementGroupValue }): PlacementGroupState {
  const value = snapshot.value;
  return (typeof value === 'string' ? value : Object.keys(value)[0]) as PlacementGroupState;
}

/** Whether the group waits for a placement decision (the pending queue tries it). */
export function awaitsPlacement(snapshot: { readonly value: PlacementGroupValue }): boolean {
  const value = snapshot.value;
  return typeof value !== 'string' && (value.PENDING === 'waiting' || value.RESCHEDULING === 'waiting');
}
