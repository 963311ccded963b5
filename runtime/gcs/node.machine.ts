import { assign, setup, type SnapshotFrom } from 'xstate';

/**
 * One registered node as the GCS sees it:
 *
 *   ALIVE ──DRAIN──▶ DRAINING ──UNDRAIN──▶ ALIVE
 *     │                 │
 *     └── no HEARTBEAT for `nodeTimeoutMs` ──▶ DEAD (final)
 *
 * Each HEARTBEAT re-enters the current state, which restarts its `nodeTimeout` delay (moving
 * between ALIVE and DRAINING starts a fresh window too). The delay is read from the context, so the
 * clock (real, or xstate's SimulatedClock in specs) is the only timer. What a death means for the cluster (its actors fail, it leaves the scheduler's view) is
 * the GCS's business: it watches the snapshots. The context is plain data.
 */
export type NodeState = 'ALIVE' | 'DRAINING' | 'DEAD';

export interface NodeMachineInput {
  nodeId: string;
  nodeTimeoutMs: number;
}

export interface NodeContext extends NodeMachineInput {
  /** The sequence number of the last heartbeat (-1 before the first). */
  lastSeq: number;
  heartbeats: number;
}

export type NodeEvent = { type: 'HEARTBEAT'; seq: number } | { type: 'DRAIN' } | { type: 'UNDRAIN' };

const heartbeat = {
  reenter: true,
  actions: { type: 'recordHeartbeat' as const, params: ({ event }: { event: NodeEvent }) => ({ seq: event.type === 'HEARTBEAT' ? event.seq : -1 }) },
};

export const nodeMachine = setup({
  types: {
    context: {} as NodeContext,
    events: {} as NodeEvent,
    input: {} as NodeMachineInput,
  },
  actions: {
    recordHeartbeat: assign({
      lastSeq: (_, params: { seq: number }) => params.seq,
      heartbeats: ({ context }) => context.heartbeats + 1,
    }),
  },
  delays: {
    nodeTimeout: ({ context }) => context.nodeTimeoutMs,
  },
}).createMachine({
  id: 'node',
  context: ({ input }) => ({ ...input, lastSeq: -1, heartbeats: 0 }),
  initial: 'ALIVE',
  states: {
    ALIVE: {
      after: { nodeTimeout: 'DEAD' },
      on: {
        HEARTBEAT: { target: 'ALIVE', ...heartbeat },
        DRAIN: 'DRAINING',
      },
    },
    DRAINING: {
      after: { nodeTimeout: 'DEAD' },
      on: {
        HEARTBEAT: { target: 'DRAINING', ...heartbeat },
        UNDRAIN: 'ALIVE',
      },
    },
    DEAD: { type: 'final' },
  },
});

export type NodeMachine = typeof nodeMachine;
export type NodeSnapshot = SnapshotFrom<NodeMachine>;

export function nodeStateOf(snapshot: NodeSnapshot): NodeState {
  return snapshot.value as NodeState;
}
