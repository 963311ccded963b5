import { assign, setup, type SnapshotFrom } from 'xstate';

/**
 * One registered node as the GCS sees it:
 *
 *   ALIVE ──DRAIN──▶ DRAINING ──UNDRAIN──▶ ALIVE
 *     │                 │
 *     └── no HEARTBEAT for `nodeTimeoutMs` (while heard) ──▶ DEAD (final)
 *
 * Each HEARTBEAT re-enters the current state, which restarts its `nodeTimeout` delay (moving
 * between ALIVE and DRAINING starts a fresh window too). While the GCS's own connection to the bus
 * is down (UNHEARD … HEARD) no heartbeat can reach it, so the silence does not count: the timeout
 * cannot end the node then, and HEARD starts a fresh window — a NATS outage is not a node death. The delay is read from the context, so the
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
  /** The GCS cannot hear heartbeats now (its connection is down): the timeout does not count. */
  unheard: boolean;
}

export type NodeEvent = { type: 'HEARTBEAT'; seq: number } | { type: 'DRAIN' } | { type: 'UNDRAIN' } | { type: 'UNHEARD' } | { type: 'HEARD' };

/** The GCS's connection is back: a fresh timeout window, from now. */
const heard = { reenter: true, actions: 'heard' as const };
/**
 * The timeout ends the node only while the GCS could have heard it; one that passes unheard is
 * reported (`timeoutUnheard`, the GCS logs it) and the node waits for HEARD.
 */
const timedOut = [{ guard: 'hearing' as const, target: 'DEAD' as const }, { actions: 'timeoutUnheard' as const }];

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
    unheard: assign({ unheard: true }),
    /** Supplied by the GCS: the timeout passed while it could not hear the node. */
    timeoutUnheard: () => {},
    heard: assign({ unheard: false }),
  },
  guards: {
    hearing: ({ context }) => !context.unheard,
  },
  delays: {
    nodeTimeout: ({ context }) => context.nodeTimeoutMs,
  },
}).createMachine({
  id: 'node',
  context: ({ input }) => ({ ...input, lastSeq: -1, heartbeats: 0, unheard: false }),
  initial: 'ALIVE',
  states: {
    ALIVE: {
      after: { nodeTimeout: timedOut },
      on: {
        HEARTBEAT: { target: 'ALIVE', ...heartbeat },
        DRAIN: 'DRAINING',
        UNHEARD: { actions: 'unheard' },
        HEARD: { target: 'ALIVE', ...heard },
      },
    },
    DRAINING: {
      after: { nodeTimeout: timedOut },
      on: {
        HEARTBEAT: { target: 'DRAINING', ...heartbeat },
        UNDRAIN: 'ALIVE',
        UNHEARD: { actions: 'unheard' },
        HEARD: { target: 'DRAINING', ...heard },
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
