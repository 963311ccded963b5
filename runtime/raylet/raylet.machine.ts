import { assign, fromPromise, setup } from 'xstate';

/**
 * The Raylet machine: the node's life toward the GCS. Logic only — the service supplies the I/O
 * with provide(): `connect` (subscribe the raylet's own subjects), `register` (gcs.register_node),
 * `heartbeat` (gcs.heartbeat), and the `forgetActors` action.
 *
 *   connecting ─▶ registering ─▶ running ─(no answer)─▶ reconnecting ─(answer)─▶ running
 *                     ▲  │          │                         │
 *                     │  └(refused)─┼─▶ stopped ◀── STOP      │
 *                     └──── known:false ◀─────────────────────┘
 *
 * A registration that finds no GCS (NO_RESPONDERS, TIMEOUT) is retried every `retryMs`; one the GCS
 * refuses (a bad label, …) stops the raylet with the error. While running, a heartbeat goes out every
 * `heartbeatMs` (from the registration reply) with a `seq` that grows by one per beat; a heartbeat
 * nobody answers moves to reconnecting, which keeps beating at the same pace until the GCS answers.
 * An answer of `known: false` means the GCS has forgotten the node: the raylet drops its actors
 * (the GCS no longer knows them) and registers again.
 */
export interface RayletContext {
  readonly nodeId: string;
  heartbeatMs: number;
  readonly retryMs: number;
  /** The seq of the last heartbeat sent. */
  seq: number;
  registrations: number;
  /** Heartbeats and registrations that got no answer, in a row. */
  misses: number;
  /** Why the raylet stopped, when a registration was refused. */
  error?: { code: string; message: string };
}

export interface RayletInput {
  nodeId: string;
  /** Pace of heartbeats until the GCS says otherwise; default 500 ms. */
  heartbeatMs?: number;
  /** Pause before retrying a registration nobody answered; default 500 ms. */
  retryMs?: number;
}

export type RayletEvent = { type: 'STOP' };

export interface Registered {
  heartbeatMs: number;
}

export interface HeartbeatAnswer {
  known: boolean;
}

/** Codes that mean "no GCS answered (yet)", as opposed to a GCS that refused the request. */
// STALE_EPOCH: an answer from a GCS that lost its lease (it should never send one) is as good as none
const UNANSWERED = new Set(['NO_RESPONDERS', 'TIMEOUT', 'BUS_ERROR', 'INTERNAL', 'STALE_EPOCH']);

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'INTERNAL';
}

function notProvided(what: string): never {
  throw new Error(`the Raylet machine's ${what} is not provided`);
}

export const rayletMachine = setup({
  types: {
    context: {} as RayletContext,
    input: {} as RayletInput,
    events: {} as RayletEvent,
  },
  actors: {
    connect: fromPromise<void, void>(async () => notProvided('connect')),
    register: fromPromise<Registered, { registrations: number }>(async () => notProvided('register')),
    heartbeat: fromPromise<HeartbeatAnswer, { seq: number }>(async () => notProvided('heartbeat')),
  },
  actions: {
    forgetActors: () => {},
    nextSeq: assign({ seq: ({ context }) => context.seq + 1 }),
    miss: assign({ misses: ({ context }) => context.misses + 1 }),
    answered: assign({ misses: 0 }),
    registered: assign({
      heartbeatMs: (_, params: Registered) => params.heartbeatMs,
      registrations: ({ context }) => context.registrations + 1,
      misses: 0,
    }),
    refused: assign({ error: (_, params: { error: unknown }) => ({ code: codeOf(params.error), message: String((params.error as Error)?.message ?? params.error) }) }),
  },
  guards: {
    unanswered: (_, params: { error: unknown }) => UNANSWERED.has(codeOf(params.error)),
    forgotten: (_, params: HeartbeatAnswer) => !params.known,
  },
  delays: {
    heartbeat: ({ context }) => context.heartbeatMs,
    retry: ({ context }) => context.retryMs,
  },
}).createMachine({
  id: 'raylet',
  initial: 'connecting',
  context: ({ input }) => ({
    nodeId: input.nodeId,
    heartbeatMs: input.heartbeatMs ?? 500,
    retryMs: input.retryMs ?? 500,
    seq: 0,
    registrations: 0,
    misses: 0,
  }),
  on: { STOP: '.stopped' },
  states: {
    connecting: {
      invoke: {
        src: 'connect',
        onDone: 'registering',
        onError: { target: 'stopped', actions: { type: 'refused', params: ({ event }) => ({ error: event.error }) } },
      },
    },
    registering: {
      initial: 'requesting',
      states: {
        requesting: {
          invoke: {
            src: 'register',
            input: ({ context }) => ({ registrations: context.registrations }),
            onDone: { target: '#raylet.running', actions: { type: 'registered', params: ({ event }) => event.output } },
            onError: [
              { guard: { type: 'unanswered', params: ({ event }) => ({ error: event.error }) }, target: 'waiting', actions: 'miss' },
              { target: '#raylet.stopped', actions: { type: 'refused', params: ({ event }) => ({ error: event.error }) } },
            ],
          },
        },
        waiting: { after: { retry: 'requesting' } },
      },
    },
    running: {
      initial: 'waiting',
      states: {
        waiting: { after: { heartbeat: 'beating' } },
        beating: {
          entry: 'nextSeq',
          invoke: {
            src: 'heartbeat',
            input: ({ context }) => ({ seq: context.seq }),
            onDone: [
              { guard: { type: 'forgotten', params: ({ event }) => event.output }, target: '#raylet.registering', actions: 'forgetActors' },
              { target: 'waiting' },
            ],
            onError: { target: '#raylet.reconnecting', actions: 'miss' },
          },
        },
      },
    },
    reconnecting: {
      initial: 'waiting',
      states: {
        waiting: { after: { heartbeat: 'beating' } },
        beating: {
          entry: 'nextSeq',
          invoke: {
            src: 'heartbeat',
            input: ({ context }) => ({ seq: context.seq }),
            onDone: [
              { guard: { type: 'forgotten', params: ({ event }) => event.output }, target: '#raylet.registering', actions: ['answered', 'forgetActors'] },
              { target: '#raylet.running', actions: 'answered' },
            ],
            onError: { target: 'waiting', actions: 'miss' },
          },
        },
      },
    },
    stopped: { type: 'final' },
  },
});

export type RayletMachine = typeof rayletMachine;
