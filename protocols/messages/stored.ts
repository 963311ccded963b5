import { bool, num, object, optional, str, type Infer } from '../validate.ts';
import { actorInfo, registerActor } from './actor.ts';
import { nodeInfo } from './cluster.ts';
import { registerNode } from './node.ts';
import { createPg, placementGroupInfo } from './placement-group.ts';
import { jobInfo } from './job.ts';

/**
 * The GCS's records as they are kept in its store (JetStream KV, runtime/gcs/kv-store.ts): the
 * same envelope as wire messages, so the codec makes and checks them and a record someone else
 * wrote into a bucket is refused like a malformed message, never trusted.
 */
export const storedNode = object({
  registration: registerNode,
  info: nodeInfo,
  registeredAt: num(),
});

export const storedActor = object({
  registration: registerActor,
  info: actorInfo,
  /** The Actor machine's incarnation: a restarted GCS asks raylets for exactly this one. */
  incarnation: num({ int: true, min: 0 }),
});

export const storedGroup = object({
  registration: createPg,
  info: placementGroupInfo,
});

/** A job (messages/job.ts) and the SHA-256 of its secret, hex: who may heartbeat or finish it. */
export const storedJob = object({
  info: jobInfo,
  secretHash: str({ min: 64, max: 64, pattern: /^[0-9a-f]{64}$/ }),
});

/** Small facts of the GCS (the event sequence, the leader epoch), one key each. */
export const storedMeta = object({
  value: num({ int: true, min: 0 }),
  note: optional(str({ max: 256 })),
});

/** The leader lease (runtime/gcs/leader.ts): who holds it, under which epoch. */
export const storedLease = object({
  holder: str({ min: 1, max: 256 }),
  epoch: num({ int: true, min: 1 }),
  /**
   * The holder stopped gracefully and handed the lease over (runtime/gcs/leader.ts, release()): a
   * standby takes it at once with the next epoch. A GCS from before it ignores the field and waits
   * out the ttl, as for a holder that died.
   */
  released: optional(bool()),
});
export type StoredLease = Infer<typeof storedLease>;

export const storedRecords = {
  stored_lease: storedLease,
  stored_node: storedNode,
  stored_actor: storedActor,
  stored_group: storedGroup,
  stored_meta: storedMeta,
  stored_job: storedJob,
} as const;
export type StoredNode = Infer<typeof storedNode>;
export type StoredActor = Infer<typeof storedActor>;
