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
 * A registration that finds no GCS (NO_RESPONDERS, TIMEOUT, CONNECTION_LOST) is retried every
 * `retryMs`; one the GCS refuses (a bad label, …) stops the raylet with the error. While running, a
 * heartbeat goes out every `heartbeatMs` (from the registration reply) with a `seq` that grows by
 * one per beat. The pace does not wait for answers: `beating` is re-entered `heartbeatMs` after a
 * beat went out, answered or not, so one slow or lost answer never delays the next beat (when it
 * did, a 2 s request timeout plus the pace reached the GCS's 3 s node timeout in a 1 s NATS
 * outage). A beat still unanswered when the next is due is abandoned (its late answer is ignored)
 * and moves the raylet to reconnecting, which sends that next beat at once; a beat that fails
 * outright (NO_RESPONDERS, CONNECTION_LOST) moves there at once. Reconnecting keeps the same pace
 * until the GCS answers. A beat's request may wait two periods (`timeoutMs` of its input), so the
 * beat timer, not the request's, is what decides it went unanswered.
 * An answer of `known: false` means the GCS has forgotten the node: the raylet drops its actors
 * (the GCS no longer knows them) and registers again.
 *
 * GCS_ANNOUNCED (a GCS opened its subjects: the gcs_leader event) sends the next beat — or the next
 * registration attempt — at once instead of when it is due, and the beat or registration in flight,
 * if any, is forgotten: it went to a GCS that is gone, restarted, or frozen, and no answer will come
 * (a registration answered twice is one registration: nodes.ts takes its own raylet's repeat). So a
 * standby that takes over, or a restarted GCS, hears from every raylet within a round trip and ends
 * its grace window early, not up to a heartbeat period later. Misses are not counted for it.
 */
export interface RayletContext {
  readonly nodeId: string;
  heartbeatMs: number;
  readonly retryMs: number;
  /** The seq of the last heartbeat sent. */
  seq: number;
  /** The seq of the last heartbeat answered or failed; behind `seq` while a beat is in flight. */
  settledSeq: number;
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

export type RayletEvent = { type: 'STOP' } | { type: 'GCS_ANNOUNCED' };

export interface Registered {
  heartbeatMs: number;
}

/** What the heartbeat actor is given: the beat's seq and how long its request may wait. */
export interface HeartbeatInput {
  seq: number;
  timeoutMs: number;
}

export interface HeartbeatAnswer {
  known: boolean;
}

/** Codes that mean "no GCS answered (yet)", as opposed to a GCS that refused the request. */
// STALE_EPOCH: an answer from a GCS that lost its lease (it should never send one) is as good as none
/**
 * Registration errors tried again after `retryMs`: no answer; NODE_NAME_TAKEN — the name is a live
 * node's, most often this raylet's own predecessor on the host, not yet declared dead; and
 * REGISTRATION_INCOMPLETE — a registration in parts whose earlier parts the GCS does not hold (it
 * restarted, or a standby took over, between them): the next attempt sends them all again.
 */
const UNANSWERED = new Set(['NO_RESPONDERS', 'TIMEOUT', 'CONNECTION_LOST', 'BUS_ERROR', 'INTERNAL', 'STALE_EPOCH', 'NODE_NAME_TAKEN', 'REGISTRATION_INCOMPLETE']);

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'INTERNAL';
}

function notProvided(what: string): never {
  throw new Error(`the Raylet machine's ${what} is not provided`);
}

/** A beat's request may wait two periods: the next beat, not the request's timer, ends it (see above). */
const beatInput = ({ context }: { context: RayletContext }): HeartbeatInput => ({ seq: context.seq, timeoutMs: 2 * context.heartbeatMs });

export const rayletMachine = setup({
  types: {
    context: {} as RayletContext,
    input: {} as RayletInput,
    events: {} as RayletEvent,
  },
  actors: {
    connect: fromPromise<void, void>(async () => notProvided('connect')),
    register: fromPromise<Registered, { registrations: number }>(async () => notProvided('register')),
    heartbeat: fromPromise<HeartbeatAnswer, HeartbeatInput>(async () => notProvided('heartbeat')),
  },
  actions: {
    forgetActors: () => {},
    nextSeq: assign({ seq: ({ context }) => context.seq + 1 }),
    miss: assign({ misses: ({ context }) => context.misses + 1 }),
    /** A beat failed outright: a miss, and no longer in flight. */
    beatFailed: assign({ misses: ({ context }) => context.misses + 1, settledSeq: ({ context }) => context.seq }),
    /** The next beat is due and the last is still in flight: it is abandoned as a miss. */
    abandonBeat: assign({ misses: ({ context }) => context.misses + (context.settledSeq === context.seq ? 0 : 1), settledSeq: ({ context }) => context.seq }),
    answered: assign({ misses: 0, settledSeq: ({ context }) => context.seq }),
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
    beatInFlight: ({ context }) => context.settledSeq !== context.seq,
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
    settledSeq: 0,
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
          // one in flight went to a GCS that may be frozen: sent again (the GCS takes its own raylet's repeat as the same registration)
          on: { GCS_ANNOUNCED: { target: 'requesting', reenter: true } },
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
        waiting: { after: { retry: 'requesting' }, on: { GCS_ANNOUNCED: 'requesting' } },
      },
    },
    running: {
      initial: 'waiting',
      states: {
        waiting: { after: { heartbeat: 'beating' }, on: { GCS_ANNOUNCED: 'beating' } },
        beating: {
          on: { GCS_ANNOUNCED: { target: 'beating', reenter: true } },
          entry: 'nextSeq',
          invoke: {
            src: 'heartbeat',
            input: beatInput,
            onDone: [
              { guard: { type: 'forgotten', params: ({ event }) => event.output }, target: '#raylet.registering', actions: 'forgetActors' },
              // stays: the next beat is due heartbeatMs after this one went out
              { actions: 'answered' },
            ],
            onError: { target: '#raylet.reconnecting', actions: 'beatFailed' },
          },
          after: {
            heartbeat: [
              { guard: 'beatInFlight', target: '#raylet.reconnecting.beating', actions: 'abandonBeat' },
              { target: 'beating', reenter: true },
            ],
          },
        },
      },
    },
    reconnecting: {
      initial: 'waiting',
      states: {
        waiting: { after: { heartbeat: 'beating' }, on: { GCS_ANNOUNCED: 'beating' } },
        beating: {
          on: { GCS_ANNOUNCED: { target: 'beating', reenter: true } },
          entry: 'nextSeq',
          invoke: {
            src: 'heartbeat',
            input: beatInput,
            onDone: [
              { guard: { type: 'forgotten', params: ({ event }) => event.output }, target: '#raylet.registering', actions: ['answered', 'forgetActors'] },
              { target: '#raylet.running', actions: 'answered' },
            ],
            onError: { actions: 'beatFailed' },
          },
          after: { heartbeat: { target: 'beating', reenter: true, actions: 'abandonBeat' } },
        },
      },
    },
    stopped: { type: 'final' },
  },
});

export type RayletMachine = typeof rayletMachine;
