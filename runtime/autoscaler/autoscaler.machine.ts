import { assign, setup, type SnapshotFrom } from 'xstate';

/**
 * The autoscaler process's lifecycle:
 *
 *   waiting ──TICK──▶ updating ──UPDATED──▶ waiting
 *      ▲                 │
 *      └───(backoff)─────┴──FAILED (the GCS did not answer)
 *   any ──STOP──▶ stopped (final)
 *
 * One round (updating) reads the demands from the GCS, decides with lib/autoscaling, asks the
 * provider for launches and drains idle nodes; launches run on after the round (a provider may take
 * minutes) and report back as LAUNCHED / LAUNCH_FAILED, which only count here — the nodes themselves
 * are tracked by the Autoscaler service. The context is plain data, for the inspection stream.
 */
export interface AutoscalerMachineInput {
  cluster: string;
}

export interface AutoscalerContext extends AutoscalerMachineInput {
  rounds: number;
  failures: number;
  launched: number;
  launchFailures: number;
  lastError?: string;
}

export type AutoscalerEvent =
  | { type: 'TICK' }
  | { type: 'UPDATED' }
  | { type: 'FAILED'; error: string }
  | { type: 'LAUNCHED' }
  | { type: 'LAUNCH_FAILED'; error: string }
  | { type: 'STOP' };

export const autoscalerMachine = setup({
  types: {
    context: {} as AutoscalerContext,
    events: {} as AutoscalerEvent,
    input: {} as AutoscalerMachineInput,
  },
  actions: {
    /** Supplied by the service: runs one round and answers UPDATED or FAILED. */
    update: () => {},
    counted: assign({ rounds: ({ context }) => context.rounds + 1 }),
    failed: assign({
      failures: ({ context }) => context.failures + 1,
      lastError: ({ event }) => (event.type === 'FAILED' ? event.error : undefined),
    }),
    launched: assign({ launched: ({ context }) => context.launched + 1 }),
    launchFailed: assign({
      launchFailures: ({ context }) => context.launchFailures + 1,
      lastError: ({ event }) => (event.type === 'LAUNCH_FAILED' ? event.error : undefined),
    }),
  },
}).createMachine({
  id: 'autoscaler',
  context: ({ input }) => ({ ...input, rounds: 0, failures: 0, launched: 0, launchFailures: 0 }),
  initial: 'waiting',
  on: {
    LAUNCHED: { actions: 'launched' },
    LAUNCH_FAILED: { actions: 'launchFailed' },
    STOP: '.stopped',
  },
  states: {
    waiting: { on: { TICK: 'updating' } },
    updating: {
      entry: 'update',
      on: {
        UPDATED: { target: 'waiting', actions: 'counted' },
        FAILED: { target: 'waiting', actions: 'failed' },
      },
    },
    stopped: { type: 'final' },
  },
});

export type AutoscalerMachine = typeof autoscalerMachine;
export type AutoscalerSnapshot = SnapshotFrom<AutoscalerMachine>;
