import { array, bool, num, object, optional, str, type Infer } from '../validate.ts';
import { id, labels, resourceSet, seq, taints } from './common.ts';

/** A node's secret (see registerNode): 32 to 128 URL-safe characters. */
export const nodeSecret = str({ min: 32, max: 128 });

/**
 * A raylet's request to the GCS may carry a fresh `nonce` (protocols/answer-proof.ts): the GCS then
 * proves its answer under the node's secret, naming the nonce, so a peer can neither make nor
 * reuse one. A GCS from before proofs drops the field.
 */
export const requestNonce = str({ min: 16, max: 64 });

/** Where a raylet runs, for operators and the CLI's `--node-ip`; requests still travel over NATS. */
export const nodeAddress = object({
  ip: str({ min: 1, max: 64 }),
  hostname: str({ max: 255 }),
  pid: num({ int: true, min: 0 }),
});

/**
 * An actor incarnation a raylet runs, or is starting: `starting` while its constructor has not
 * returned (absent once it has, and from raylets that predate it). A GCS that recovers puts a
 * starting actor back SCHEDULED and asks for its create again, rather than taking it as ALIVE.
 */
export const runningActor = object({ actorId: id, incarnation: num({ int: true, min: 0 }), starting: optional(bool()) });

/** A placement-group bundle a raylet holds: prepared, or committed (its bundle resources exist there). */
export const heldBundle = object({ pgId: id, index: num({ int: true, min: 0, max: 9_999 }), committed: bool() });

/** Drawn by a raylet per registration attempt that goes in parts (register_running). */
export const runningBatch = str({ min: 8, max: 64 });

/** Most parts one registration may come in: 100 parts of ~512 KiB hold well over a million actors. */
export const MAX_RUNNING_PARTS = 100;

/**
 * raylet → GCS (`gcs.register_running`): one part of what a raylet that registers again still runs,
 * sent ahead of its register_node when the whole list would not fit in one message (the bus refuses
 * messages over its max_payload, 1 MiB by default: ~26,000 actors). Parts `0 … n-1` go first, in
 * order, each answered `{ staged }` (how many items the GCS holds for the batch); the register_node
 * that follows carries the last part and `running.earlier: { batch, parts: n }`, and the GCS joins
 * them before it takes the registration — so it reconciles against the whole list, never half of
 * it. Taken only with the node's secret while the node is live; a new batch from the same raylet
 * replaces an unfinished one (runtime/gcs/running-parts.ts).
 */
export const registerRunning = object({
  nodeId: id,
  batch: runningBatch,
  index: num({ int: true, min: 0, max: MAX_RUNNING_PARTS - 2 }),
  actors: array(runningActor, { max: 100_000 }),
  bundles: array(heldBundle, { max: 100_000 }),
  secret: optional(nodeSecret),
  nonce: optional(requestNonce),
});
export type RegisterRunning = Infer<typeof registerRunning>;

/**
 * raylet → GCS (`gcs.register_node`): a node joins with its labels, taints and resources. A raylet
 * that registers again — the GCS restarted, or declared the node dead while it was cut off — says
 * what it still runs in `running`; the GCS keeps what it agrees with and has the raylet kill the rest
 * (docs/failover.md, "Control-plane faults").
 */
export const registerNode = object({
  nodeId: id,
  name: str({ min: 1, max: 256 }),
  labels,
  taints,
  resources: object({ total: resourceSet, available: resourceSet }),
  address: nodeAddress,
  running: optional(
    object({
      actors: array(runningActor, { max: 100_000 }),
      bundles: optional(array(heldBundle, { max: 100_000 })),
      /**
       * What this message carries is the last part: `parts` earlier ones went ahead as
       * register_running under `batch` (a node running more than one message holds).
       */
      earlier: optional(object({ batch: runningBatch, parts: num({ int: true, min: 1, max: MAX_RUNNING_PARTS - 1 }) })),
    }),
  ),
  /**
   * A secret the raylet draws when it starts and sends with every registration, heartbeat and
   * actor_died: the GCS takes messages about this node only with it (runtime/gcs/node-owner.ts).
   */
  secret: optional(nodeSecret),
  nonce: optional(requestNonce),
});
export type RegisterNode = Infer<typeof registerNode>;

/** raylet → GCS (`gcs.heartbeat`): the node is alive; `seq` grows by one per beat. */
export const heartbeat = object({
  nodeId: id,
  seq,
  available: resourceSet,
  secret: optional(nodeSecret),
  nonce: optional(requestNonce),
});
export type Heartbeat = Infer<typeof heartbeat>;

/**
 * raylet → GCS (`gcs.unregister_node`): the raylet is stopping gracefully (SIGTERM, `orrery stop`)
 * and has stopped its worker hosts, so nothing of the node answers any more. The GCS declares the
 * node DEAD at once, as if its heartbeats had stopped, and restarts its actors elsewhere without
 * waiting out the node timeout. Answered `{ known }`: false when the GCS has no live node by that
 * id (it died already, or this GCS never heard of it). Taken only with the node's secret.
 */
export const unregisterNode = object({
  nodeId: id,
  secret: optional(nodeSecret),
  nonce: optional(requestNonce),
});
export type UnregisterNode = Infer<typeof unregisterNode>;
