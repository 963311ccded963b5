import { assign, setup, type SnapshotFrom } from 'xstate';

/**
 * One registered node as the GCS sees it:
 *
 *   ALIVE ──DRAIN──▶ DRAINING ──UNDRAIN──▶ ALIVE
 *     │                 │
 *     ├── TIMEOUT (while heard) ──▶ DEAD (final)
 *     └── LEAVE ──────────────────▶ DEAD
 *
 * TIMEOUT means no heartbeat reached the GCS for `nodeTimeoutMs`. The clock is kept outside the
 * machine (liveness.ts): a heartbeat only moves a deadline, so the GCS does not run a transition and
 * reset a timer for each of the thousands of heartbeats a second a large cluster sends, and the
 * machine's history shows what changed the node rather than every beat. While the GCS's own
 * connection to the bus is down (UNHEARD … HEARD) no heartbeat can reach it, so a TIMEOUT then does
 * not end the node: it is reported (`timeoutUnheard`) and the node waits, and HEARD gives every node
 * a fresh window. LEAVE is the raylet saying it stops (gcs.unregister_node, once its worker hosts
 * are stopped): the node is DEAD at once, whatever the GCS can hear. What a death means for the cluster (its actors fail, it leaves the scheduler's
 * view) is the GCS's business: it watches the snapshots. The context is plain data.
 */
export type NodeState = 'ALIVE' | 'DRAINING' | 'DEAD';

export interface NodeMachineInput {
  nodeId: string;
  nodeTimeoutMs: number;
}

export interface NodeContext extends NodeMachineInput {
  /** The GCS cannot hear heartbeats now (its connection is down): a TIMEOUT does not count. */
  unheard: boolean;
}

export type NodeEvent = { type: 'TIMEOUT' } | { type: 'LEAVE' } | { type: 'DRAIN' } | { type: 'UNDRAIN' } | { type: 'UNHEARD' } | { type: 'HEARD' };

/**
 * The timeout ends the node only while the GCS could have heard it; one that passes unheard is
 * reported (`timeoutUnheard`, the GCS logs it) and the node waits for HEARD.
 */
const timedOut = [{ guard: 'hearing' as const, target: 'DEAD' as const }, { actions: 'timeoutUnheard' as const }];

export const nodeMachine = setup({
  types: {
    context: {} as NodeContext,
    events: {} as NodeEvent,
    input: {} as NodeMachineInput,
  },
  actions: {
    unheard: assign({ unheard: true }),
    /** Supplied by the GCS: the timeout passed while it could not hear the node. */
    timeoutUnheard: () => {},
    heard: assign({ unheard: false }),
  },
  guards: {
    hearing: ({ context }) => !context.unheard,
  },
}).createMachine({
  id: 'node',
  context: ({ input }) => ({ ...input, unheard: false }),
  initial: 'ALIVE',
  states: {
    ALIVE: {
      on: {
        TIMEOUT: timedOut,
        LEAVE: 'DEAD',
        DRAIN: 'DRAINING',
        UNHEARD: { actions: 'unheard' },
        HEARD: { actions: 'heard' },
      },
    },
    DRAINING: {
      on: {
        TIMEOUT: timedOut,
        LEAVE: 'DEAD',
        UNDRAIN: 'ALIVE',
        UNHEARD: { actions: 'unheard' },
        HEARD: { actions: 'heard' },
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
