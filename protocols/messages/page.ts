import { array, num, object, optional, type Validator } from '../validate.ts';
import { id } from './common.ts';

/**
 * Paged lists (list_actors, list_nodes, list_placement_groups). A request may carry
 *
 *   limit   most items in the reply (1–10,000; default 1,000)
 *   after   the `next` of the previous page; absent: the first page
 *
 * and the reply is `{ items, next? }`: items in ascending order of their id, and `next` when more
 * items follow — pass it back as `after`. The cursor is the last id returned (opaque to clients), so
 * a page holds the items whose id sorts after it *at the time of that request*: an item present for
 * the whole walk is returned exactly once, whatever is added or removed meanwhile; an item added
 * during the walk appears when its id sorts after the cursor, one removed before its page does not
 * appear. (An offset would skip or repeat items as dead actors are forgotten.) Each item is as it
 * was when its page was made. The GCS also ends a page before the reply would pass the message size
 * limit (DEFAULT_MAX_BYTES), so a page may hold fewer than `limit` items; it holds at least one
 * while items remain.
 *
 * list_nodes: a node too large for a reply on its own (the bundles of thousands of placement groups
 * are thousands of resource names) comes as consecutive items with the same nodeId, each with a run
 * of its resource names in name order; a reader joins them (runtime/client/from-wire.ts,
 * joinNodeParts). Their cursors are `<nodeId> <last name sent>`.
 */
export const DEFAULT_PAGE_LIMIT = 1000;
export const MAX_PAGE_LIMIT = 10_000;

export const pageFields = {
  limit: optional(num({ int: true, min: 1, max: MAX_PAGE_LIMIT })),
  after: optional(id),
};

/** The reply of a paged list whose items `item` validates. */
export function page<T>(item: Validator<T>): Validator<{ items: T[]; next?: string }> {
  return object({ items: array(item, { max: MAX_PAGE_LIMIT }), next: optional(id) });
}

/** list_nodes and list_placement_groups: a page, nothing else. */
export const listPage = object(pageFields);
