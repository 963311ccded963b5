import { array, bool, bytes, literal, num, object, optional, plainData, record, str, unknown, type Infer } from '../validate.ts';
import { codeModuleUrl } from '../code-source.ts';
import { cancelKey, epoch, id, labels, resourceSet } from './common.ts';
import { pageFields } from './page.ts';

/** Every state an actor is reported in (API.md), in lifecycle order: the one list the runtime, the client, the CLI and the dashboard use. */
export const ACTOR_STATES = ['DEPENDENCIES_UNREADY', 'PENDING', 'SCHEDULED', 'ALIVE', 'RESTARTING', 'DEAD'] as const;
export type ActorState = (typeof ACTOR_STATES)[number];
export const actorState = literal(...ACTOR_STATES);

/** ActorInfo of API.md, as the GCS reports it. */
export const actorInfo = object({
  actorId: id,
  name: optional(str({ min: 1, max: 256 })),
  namespace: str({ min: 1, max: 256 }),
  className: str({ min: 1, max: 256 }),
  state: actorState,
  nodeId: optional(id),
  numRestarts: num({ int: true, min: 0 }),
  incarnation: optional(num({ int: true, min: 1 })),
  labels,
  deathCause: optional(str({ max: 4096 })),
  pendingReason: optional(str({ max: 65_536 })),
  /** The job that created it (docs/jobs.md); absent for an actor created outside a job. */
  jobId: optional(id),
  /** 'detached': it outlives its job; absent: owned by `jobId` (killed when that job finishes). */
  lifetime: optional(literal('detached')),
});
export type ActorInfoWire = Infer<typeof actorInfo>;

/**
 * How to construct an actor anywhere: the module that exports the class under its own name (a
 * `file:` URL: see code-source.ts for what is accepted), and the constructor arguments (any
 * msgpack-encodable values).
 */
export const actorCode = object({
  moduleUrl: codeModuleUrl,
  className: str({ min: 1, max: 256 }),
  args: array(plainData(), { max: 10_000 }),
});

/**
 * driver → GCS (`gcs.register_actor`). `options` carries the API's ActorOptions as plain data; the
 * GCS validates them with lib's compileRequest and answers INVALID_OPTION / INVALID_SELECTOR / …
 */
export const registerActor = object({
  actorId: id,
  code: actorCode,
  namespace: str({ min: 1, max: 256 }),
  name: optional(str({ min: 1, max: 256 })),
  options: record(plainData(), { maxKeys: 64 }),
  /**
   * The job that creates it (messages/job.ts): the actor is owned by it unless `options.lifetime` is
   * 'detached'. Absent: created outside a job (the CLI, an old client), owned by nobody.
   */
  jobId: optional(id),
});
export type RegisterActor = Infer<typeof registerActor>;

/** driver → GCS (`gcs.get_actor`): by id, or by name within a namespace. */
export const getActor = object({
  actorId: optional(id),
  name: optional(str({ min: 1, max: 256 })),
  namespace: optional(str({ min: 1, max: 256 })),
});

/**
 * driver → GCS (`gcs.list_actors`): one page of the actor table (page.ts), optionally only actors in
 * one of `states` — `orrery list actors --state ALIVE` need not walk thousands of dead ones. The
 * filter applies when each page is made: an actor that changes state during a walk may be missed
 * or listed in its new state.
 */
export const listActors = object({ ...pageFields, states: optional(array(actorState, { min: 1, max: 6 })) });

/** driver → GCS (`gcs.kill_actor`). */
export const killActor = object({ actorId: id, noRestart: bool() });

/** GCS → raylet (`raylet.<nodeId>.create_actor`): start the actor in a worker host. */
export const createActor = object({
  actorId: id,
  code: actorCode,
  namespace: str({ min: 1, max: 256 }),
  name: optional(str({ min: 1, max: 256 })),
  labels,
  resources: resourceSet,
  maxConcurrency: num({ int: true, min: 1, max: 100_000 }),
  isolation: literal('shared', 'process'),
  /** Incarnation number: a restart gets a higher one, so a late reply from an old one is ignored. */
  incarnation: num({ int: true, min: 0 }),
  epoch,
  /**
   * The job that owns it (absent when detached or created outside a job): what it creates through
   * connect() inside the worker is owned by that job too.
   */
  jobId: optional(id),
});
export type CreateActor = Infer<typeof createActor>;

/** GCS → raylet (`raylet.<nodeId>.kill_actor`). */
export const rayletKillActor = object({ actorId: id, incarnation: num({ int: true, min: 0 }), epoch });

/**
 * raylet → GCS (`gcs.actor_died`): actors whose worker host exited or whose constructor failed
 * after creation was acknowledged.
 */
export const actorDied = object({
  nodeId: id,
  actors: array(object({ actorId: id, incarnation: num({ int: true, min: 0 }) }), { max: 100_000 }),
  cause: str({ max: 4096 }),
  /** The reporting node's secret (messages/node.ts). */
  secret: optional(str({ min: 32, max: 128 })),
  /** The answer's nonce (messages/node.ts, requestNonce). */
  nonce: optional(str({ min: 16, max: 64 })),
});

/**
 * caller → actor (`actor.<actorId>.call`): one method call. A call made with an AbortSignal carries
 * `callId` and `cancelKey` (both drawn by its caller; one without neither): a cancel_call naming
 * both stops it (below). Calls without them travel as before, on the fast path (fast-path.ts).
 */
export const actorCall = object({
  method: str({ min: 1, max: 256 }),
  args: array(unknown(), { max: 100_000 }),
  callId: optional(cancelKey),
  cancelKey: optional(cancelKey),
});
export type ActorCall = Infer<typeof actorCall>;

/**
 * caller → actor (`actor.<actorId>.call`), published, not a request: the caller aborted a call it
 * had sent (its AbortSignal). A host holding that call in the actor's mailbox, not started, with
 * this `cancelKey`, drops it and answers it ABORTED: it never runs. A running one has its runtime
 * context's signal aborted (nothing is interrupted: the method decides how to end). A cancel for
 * no such call, or with another key, changes nothing.
 */
export const cancelCall = object({ callId: cancelKey, cancelKey });
export type CancelCall = Infer<typeof cancelCall>;

/** The most calls one call_batch (and its reply_batch) carries. */
export const MAX_BATCH_CALLS = 1024;
/** A request token of the caller's multiplexer: what its inbox subscription tells answers apart by. */
export const CALL_TOKEN = /^[0-9a-z]{1,16}$/;
const batchToken = str({ min: 1, max: 16, pattern: CALL_TOKEN });

/**
 * caller → actor (`actor.<actorId>.call`): calls one handle made in the same turn, in call order,
 * in one message (protocols/call-batch.ts). `calls[i]` is the bytes of one actor_call; `tokens[i]`
 * names its answer in the reply_batch that answers it.
 */
export const callBatch = object({
  tokens: array(batchToken, { min: 1, max: MAX_BATCH_CALLS }),
  calls: array(bytes(), { min: 1, max: MAX_BATCH_CALLS }),
});
export type CallBatch = Infer<typeof callBatch>;

/**
 * actor → caller (the call_batch's reply subject): answers to calls of one call_batch, each the
 * bytes of a reply; calls answered in different turns come in different reply_batch messages.
 */
export const replyBatch = object({
  tokens: array(batchToken, { min: 1, max: MAX_BATCH_CALLS }),
  replies: array(bytes(), { min: 1, max: MAX_BATCH_CALLS }),
});
export type ReplyBatch = Infer<typeof replyBatch>;

/**
 * driver → GCS (`gcs.explain`): where an actor with these options — or a placement group with these
 * options — would be placed now, and why not elsewhere, without creating anything (a dry run:
 * lib/scheduling/dry-run.ts). Exactly one of `options` and `placementGroup`.
 */
export const explainRequest = object({
  namespace: str({ min: 1, max: 256 }),
  options: optional(record(plainData(), { maxKeys: 64 })),
  placementGroup: optional(record(plainData(), { maxKeys: 64 })),
});
export type ExplainRequest = Infer<typeof explainRequest>;
