import { DEFAULT_MAX_BYTES, encodedSize } from '../../protocols/codec.ts';
import { DEFAULT_PAGE_LIMIT } from '../../protocols/messages/page.ts';

/**
 * One page of a table for list_actors, list_nodes and list_placement_groups (protocols/messages/
 * page.ts has the contract): the items whose key sorts after `after`, in key order, until `limit`
 * items or the byte budget. Each item's encoded size is measured as it is added — an array's msgpack
 * is its header followed by its items' — so the reply stays under the message size limit whatever
 * the records hold. A page always takes the first remaining item, so a walk cannot stall (an item
 * too large for any message on its own still fails as TOO_LARGE, as a whole list did).
 */
export interface PageQuery {
  readonly limit?: number;
  readonly after?: string;
}

export interface Page<T> {
  items: T[];
  next?: string;
}

/** Room left in a reply for its envelope (`{v,t,b:{ok,value:{items,next}}}`), the array header and a cursor of 256 characters. */
export const PAGE_OVERHEAD_BYTES = 1024;

export interface PageSource<T> {
  /** Every key, ascending (string order). */
  readonly keys: readonly string[];
  /** The item under a key, undefined when it is gone or filtered out. */
  readonly get: (key: string) => T | undefined;
}

export function pageOf<T>(source: PageSource<T>, query: PageQuery, opts: { maxBytes?: number } = {}): Page<T> {
  const { keys, get } = source;
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const budget = Math.min(opts.maxBytes ?? DEFAULT_MAX_BYTES, DEFAULT_MAX_BYTES) - PAGE_OVERHEAD_BYTES;
  const items: T[] = [];
  let bytes = 0;
  let i = query.after === undefined ? 0 : firstAfter(keys, query.after);
  let last: string | undefined;
  for (; i < keys.length; i++) {
    const item = get(keys[i]!);
    if (item === undefined) continue;
    if (items.length >= limit) break;
    const size = encodedSize(item);
    if (items.length > 0 && bytes + size > budget) break;
    items.push(item);
    bytes += size;
    last = keys[i];
  }
  // stopped before the end: is there another item to come?
  for (; i < keys.length; i++) if (get(keys[i]!) !== undefined) return { items, next: last! };
  return { items };
}

/** A page of a small table held as a list (nodes, placement groups): sorted by `key` per request. */
export function pageOfList<T>(list: readonly T[], key: (item: T) => string, query: PageQuery, opts: { maxBytes?: number } = {}): Page<T> {
  const byKey = new Map(list.map((item) => [key(item), item] as const));
  return pageOf({ keys: [...byKey.keys()].sort(compare), get: (k) => byKey.get(k) }, query, opts);
}

/** The index of the first key greater than `key`, or not less with `orEqual` (binary search). */
function firstAfter(keys: readonly string[], key: string, orEqual = false): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key || (!orEqual && keys[mid] === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A table's keys, sorted once and then kept in order key by key (`added`, `removed`), so a walk over a
 * big table sorts it once — also while keys come and go: each of those used to throw the order away,
 * and every page of a walk over 100,000 actors being created sorted them all again.
 */
export class SortedKeys {
  #sorted: string[] | undefined;

  constructor(private readonly keys: () => Iterable<string>) {}

  /** The key set changed in a way not told key by key: sorted afresh on the next read. */
  changed(): void {
    this.#sorted = undefined;
  }

  /** A key joined the table (a no-op when it is already there). */
  added(key: string): void {
    const sorted = this.#sorted;
    if (sorted === undefined) return;
    const i = firstAfter(sorted, key, true);
    if (sorted[i] !== key) sorted.splice(i, 0, key);
  }

  /** A key left the table. */
  removed(key: string): void {
    const sorted = this.#sorted;
    if (sorted === undefined) return;
    const i = firstAfter(sorted, key, true);
    if (sorted[i] === key) sorted.splice(i, 1);
  }

  /** The keys in order; read it before the table changes again (it is the kept array, not a copy). */
  get(): readonly string[] {
    return (this.#sorted ??= [...this.keys()].sort(compare));
  }
}

/** Plain code-unit order (what `<` does), spelled out so sort does not compare by locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
