import { num, optional, record, str, type Validator } from '../validate.ts';

/**
 * Field validators shared by several messages. Resource quantities travel as fixed-point units
 * (lib/resources/quantity.ts: 1 CPU = 10,000 units, memory in bytes), so they are whole numbers.
 */
export const id: Validator<string> = str({ min: 1, max: 256 });
/**
 * What a cancel must name to stop a task or call (submit_task's and actor_call's `cancelKey`): 32
 * lowercase hex characters its driver drew. Only the driver that sent the work knows it.
 */
export const cancelKey: Validator<string> = str({ min: 32, max: 32, pattern: /^[0-9a-f]{32}$/ });
export const labels: Validator<Record<string, string>> = record(str({ max: 63 }), { maxKeys: 1024, key: str({ min: 1, max: 317 }) });
/** Taints as NodeInfo shows them: `key: value` or `key: "value:Effect"`. */
export const taints: Validator<Record<string, string>> = record(str({ max: 80 }), { maxKeys: 256, key: str({ min: 1, max: 317 }) });
/**
 * Most resource names in one set. Committed placement-group bundles add names to their node
 * (`CPU_group_<pg>`, `CPU_group_<i>_<pg>`: three for a 2-bundle group packed on one node), so a node
 * holding a thousand groups carries thousands of names; the message size limit is the real bound.
 */
export const MAX_RESOURCE_NAMES = 65_536;
export const resourceSet: Validator<Record<string, number>> = record(num({ int: true, min: 0 }), { maxKeys: MAX_RESOURCE_NAMES, key: str({ min: 1, max: 128 }) });
export const seq: Validator<number> = num({ int: true, min: 0 });

/**
 * The leader epoch of the GCS that sent a message (runtime/gcs/leader.ts): optional, absent from a
 * GCS without a lease. A raylet refuses a message with an epoch older than one it has seen
 * (STALE_EPOCH) and changes nothing.
 */
export const epoch = optional(num({ int: true, min: 0 }));
