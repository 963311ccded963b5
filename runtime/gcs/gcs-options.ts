// What a GCS service (service.ts) is started with: its bus and cluster, the pacing, timeouts and
// retention limits of its parts, its leader epoch and store, each with its default; and how the
// service reads the integer ones, each checked where it is read.
import type { InspectionEvent } from 'xstate';
import { InvalidOptionError } from '../../lib/errors.ts';
import type { Rng } from '../../lib/random.ts';
import type { Bus } from '../bus/bus.ts';
import type { GcsStore } from './store.ts';

export interface GcsOptions {
  bus: Bus;
  /** The cluster name, the second subject token; default 'default'. */
  cluster?: string;
  /** How often raylets heartbeat (told to them at registration); default 500 ms. */
  heartbeatMs?: number;
  /** A node with no heartbeat for this long is DEAD; default 3,000 ms. */
  nodeTimeoutMs?: number;
  /** Resources whose nodes get a rare-resource taint (`['GPU']` → `orrery.io/rare-gpu=true`). */
  rareResources?: string[];
  /** Randomness of the scheduler; default Math.random. */
  rng?: Rng;
  /** Where the GCS reports what an operator should know; default: nowhere. */
  log?: (line: string) => void;
  /** How long a raylet may take to create an actor (constructor included); default 30,000 ms. */
  createTimeoutMs?: number;
  /** How long kill_actor waits for the raylet; default 5,000 ms. */
  killTimeoutMs?: number;
  /** How long one prepare/commit/cancel_bundle request waits for its raylet; default 5,000 ms. */
  bundleTimeoutMs?: number;
  /** Least time between two cluster-view deltas; default 100 ms. */
  viewIntervalMs?: number;
  /** Largest accepted message; default 1 MiB (nats-server's default max_payload). */
  maxMessageBytes?: number;
  /** The node and actor tables; default a fresh MemoryStore. */
  store?: GcsStore;
  /**
   * How many dead actors the GCS remembers (listed, answering get_actor); older deaths are forgotten,
   * from memory and the store. Default 100,000, Ray's `maximum_gcs_destroyed_actor_cached_count`.
   */
  maxDeadActors?: number;
  /**
   * How many dead nodes the node table keeps (listed, answering get_node); older deaths are
   * forgotten, from memory and the store. Default 1,000, Ray's `maximum_gcs_dead_node_cached_count`.
   */
  maxDeadNodes?: number;
  /** How many REMOVED placement groups stay listed (answering get_pg); older removals are forgotten. Default 10,000. */
  maxRemovedGroups?: number;
  /** How many recent events the GCS keeps for `list_events` (`orrery events`); default 10,000. */
  eventHistory?: number;
  /**
   * Longest stretch of one pending-queue pass, or of registrations handled back to back, before the
   * GCS yields to the event loop; default 5 ms.
   */
  queueSliceMs?: number;
  /** The leader epoch this GCS holds (leader.ts); every message to raylets carries it. Default 0: no lease. */
  epoch?: number;
  /** A raylet refused a message as STALE_EPOCH: a newer leader runs and this one must step down. */
  onStaleEpoch?: () => void;
  /**
   * Longest a GCS that found live nodes or actors in its store waits for raylets to register again
   * before it reconciles (the grace window); default 3,000 ms (docs/failover.md).
   */
  graceMs?: number;
  /**
   * How long an unplaceable actor's reason waits before it is worked out again (explain-backoff.ts,
   * EXPLAIN_BACKOFF_MS: 1 s doubling to 30 s); `initial: 0` explains on every attempt.
   */
  explainBackoffMs?: { initial: number; max: number };
  /**
   * A job (a driver connection) with no heartbeat for this long is FINISHED and what it owns is
   * killed; default 30,000 ms (docs/jobs.md). Drivers are told to beat six times per timeout.
   */
  jobTimeoutMs?: number;
  /** Finished jobs the GCS keeps listed; default 10,000. */
  maxFinishedJobs?: number;
  /** xstate inspection of the Gcs machine and every Node and Actor machine it spawned. */
  inspect?: (event: InspectionEvent) => void;
}

/** The options that are integers: read through `intOptions`. */
export type GcsIntOption = { [K in keyof GcsOptions]-?: NonNullable<GcsOptions[K]> extends number ? K : never }[keyof GcsOptions];

/** Reads one integer option: see intOptions. */
export type IntOptionReader = (name: GcsIntOption, fallback: number, min: number) => number;

/**
 * Reads `opts`' integer options: one not given is `fallback`; one given must be an integer of at
 * least `min`, or the read throws INVALID_OPTION naming it.
 */
export function intOptions(opts: GcsOptions): IntOptionReader {
  return (name, fallback, min) => {
    const value = opts[name];
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < min) throw new InvalidOptionError(name, value, `expected an integer >= ${min}`);
    return value;
  };
}
