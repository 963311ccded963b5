import { array, literal, num, object, optional, plainData, record, str, type Infer } from '../validate.ts';
import { epoch, id, resourceSet } from './common.ts';

/**
 * Placement groups on the wire (docs/placement-groups.md).
 *
 *   driver → GCS   create_pg, remove_pg, get_pg, list_placement_groups
 *   GCS → raylet   prepare_bundle, commit_bundle, cancel_bundle — the two-phase commit. Each message
 *                  carries a list of bundles, possibly of many groups: the GCS sends one request per
 *                  raylet per turn of its event loop, so creating a thousand groups is not four
 *                  thousand round trips.
 */
export const placementGroupState = literal('PENDING', 'PREPARED', 'CREATED', 'RESCHEDULING', 'REMOVED');

/** PlacementGroupInfo of API.md; resources in fixed-point units, as everywhere on the wire. */
export const placementGroupInfo = object({
  id,
  name: optional(str({ min: 1, max: 256 })),
  namespace: str({ min: 1, max: 256 }),
  state: placementGroupState,
  strategy: literal('PACK', 'SPREAD', 'STRICT_PACK', 'STRICT_SPREAD'),
  /** The bundles of the tier in use (tier 0 = `bundles`, i = fallbackStrategy[i-1]); nodeId once placed. */
  bundles: array(object({ index: num({ int: true, min: 0 }), resources: resourceSet, nodeId: optional(id) }), { max: 10_000 }),
  /** Which bundle list the group uses or last tried: 0 `bundles`, i ≥ 1 `fallbackStrategy[i-1]`. */
  tier: num({ int: true, min: 0 }),
  /** While PENDING or RESCHEDULING: the last schedule-failed message, or why a commit was retried. */
  pendingReason: optional(str({ max: 65_536 })),
  /** Once REMOVED: why (removed by the user, its creator's request was invalid, …). */
  removedCause: optional(str({ max: 4096 })),
});
export type PlacementGroupInfoWire = Infer<typeof placementGroupInfo>;

/**
 * driver → GCS (`gcs.create_pg`). `options` is the API's placementGroup() argument as plain data
 * (bundles as the user wrote them, not in units); the GCS validates it with lib's
 * compilePlacementGroup and answers INVALID_OPTION / INVALID_SELECTOR / … with nothing reserved.
 * The reply is the group's PlacementGroupInfo (PENDING, or CREATED for an id it already has).
 */
export const createPg = object({
  pgId: id,
  namespace: str({ min: 1, max: 256 }),
  name: optional(str({ min: 1, max: 256 })),
  options: record(plainData(), { maxKeys: 64 }),
  /** The job that creates it: owned by it (removed when it finishes) unless `options.lifetime` is 'detached'. */
  jobId: optional(id),
});
export type CreatePg = Infer<typeof createPg>;

/** driver → GCS (`gcs.remove_pg`): the reply is the group's info, REMOVED. */
export const removePg = object({ pgId: id });

/** driver → GCS (`gcs.get_pg`): by id, or by name within a namespace. */
export const getPg = object({
  pgId: optional(id),
  name: optional(str({ min: 1, max: 256 })),
  namespace: optional(str({ min: 1, max: 256 })),
});

const bundleRef = object({ pgId: id, index: num({ int: true, min: 0, max: 9_999 }) });
export type BundleRef = Infer<typeof bundleRef>;

/**
 * GCS → raylet (`raylet.<nodeId>.prepare_bundle`): lock these resources for these bundles. The
 * raylet checks them against what is free on its node (its running tasks included) and holds the
 * ones that fit; preparing a bundle it already holds is a no-op.
 */
export const prepareBundle = object({
  bundles: array(object({ pgId: id, index: num({ int: true, min: 0, max: 9_999 }), resources: resourceSet }), { min: 1, max: 100_000 }),
  epoch,
});
export type PrepareBundle = Infer<typeof prepareBundle>;

/** The value of a prepare_bundle reply: the bundles it could not lock and why; all others are held. */
export const prepareResult = object({
  refused: array(object({ pgId: id, index: num({ int: true, min: 0 }), reason: str({ max: 4096 }) }), { max: 100_000 }),
});
export type PrepareResult = Infer<typeof prepareResult>;

/**
 * GCS → raylet (`raylet.<nodeId>.commit_bundle`): prepared bundles become bundle resources
 * (`CPU_group_<pg>`, `CPU_group_<i>_<pg>`, lib/scheduling/bundle-resources.ts) that actors and tasks
 * of the group draw from. Committing a committed bundle is a no-op.
 */
export const commitBundle = object({ bundles: array(bundleRef, { min: 1, max: 100_000 }), epoch });

/** The value of a commit_bundle reply: bundles this raylet does not hold prepared (it restarted, or they were cancelled). */
export const commitResult = object({ missing: array(bundleRef, { max: 100_000 }) });
export type CommitResult = Infer<typeof commitResult>;

/**
 * GCS → raylet (`raylet.<nodeId>.cancel_bundle`): give back prepared or committed bundles (a failed
 * commit, a removed group). Cancelling a bundle the raylet does not hold is a no-op. The value of
 * the reply is `{ returned }`: how many it held.
 */
export const cancelBundle = object({ bundles: array(bundleRef, { min: 1, max: 100_000 }), epoch });
export const cancelResult = object({ returned: num({ int: true, min: 0 }) });
