import { DEFAULT_MAX_BYTES, encodedSize } from '../../protocols/codec.ts';
import type { NodeInfoWire } from '../../protocols/messages/cluster.ts';
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

/**
 * list_nodes' pages: a node is one item, as pageOfList makes them — unless it would not fit in a
 * reply on its own. A node holding the bundles of thousands of placement groups carries two resource
 * names per bundle in its total and in its available (5,000 bundles: ~1.2 MB), and a walk over the
 * nodes then failed as a whole with TOO_LARGE (`cluster.nodes()`, `orrery nodes`, `orrery status`,
 * the dashboard's node list). Such a node goes in parts: each part is the node with a run of its
 * resource names, in name order, and the client joins consecutive parts of one node
 * (`joinNodeParts`). A part's cursor is `<nodeId> <last name sent>` (node ids have no spaces, and a
 * space sorts below every character of an id), so the cursors still only move forward, and a walk
 * returns every name present throughout it exactly once, as it does every node.
 */
export function nodesPage(nodes: readonly NodeInfoWire[], query: PageQuery, opts: { maxBytes?: number } = {}): Page<NodeInfoWire> {
  const sorted = [...nodes].sort((a, b) => compare(a.nodeId, b.nodeId));
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const budget = Math.min(opts.maxBytes ?? DEFAULT_MAX_BYTES, DEFAULT_MAX_BYTES) - PAGE_OVERHEAD_BYTES;
  const items: NodeInfoWire[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  // where the walk resumes: after a whole node, or inside one after a name
  const space = query.after === undefined ? -1 : query.after.indexOf(' ');
  const resumeNode = query.after === undefined ? undefined : space < 0 ? query.after : query.after.slice(0, space);
  const resumeName = space < 0 ? undefined : query.after!.slice(space + 1);
  let i = resumeNode === undefined ? 0 : sorted.findIndex((n) => (resumeName === undefined ? n.nodeId > resumeNode : n.nodeId >= resumeNode));
  if (i < 0) i = sorted.length;
  for (; i < sorted.length; i++) {
    const node = sorted[i]!;
    const after = resumeName !== undefined && node.nodeId === resumeNode ? resumeName : undefined;
    if (after === undefined) {
      const size = encodedSize(node);
      if (size <= budget) {
        if (items.length >= limit || (items.length > 0 && bytes + size > budget)) return { items, next: cursor! };
        items.push(node);
        bytes += size;
        cursor = node.nodeId;
        continue;
      }
    }
    // in parts: the names after `after`, as many per part as the room left in this page takes
    const { total, available } = node.resources;
    const names = [...new Set([...Object.keys(total), ...Object.keys(available)])].filter((n) => after === undefined || n > after).sort(compare);
    const bare: NodeInfoWire = Object.assign({}, node, { resources: { total: {}, available: {} } });
    const bareSize = encodedSize(bare);
    let k = 0;
    while (k < names.length) {
      if (items.length >= limit || (items.length > 0 && bytes + bareSize + MAX_NAME_BYTES > budget)) return { items, next: cursor! };
      const part: NodeInfoWire = Object.assign({}, node, { resources: { total: {} as Record<string, number>, available: {} as Record<string, number> } });
      let size = bareSize;
      // at least one name per part, so a walk cannot stall
      do {
        const name = names[k]!;
        const inTotal = Object.hasOwn(total, name);
        const inAvailable = Object.hasOwn(available, name);
        const cost = nameBytes(name) * ((inTotal ? 1 : 0) + (inAvailable ? 1 : 0));
        if (size > bareSize && bytes + size + cost > budget) break;
        if (inTotal) part.resources.total[name] = total[name]!;
        if (inAvailable) part.resources.available[name] = available[name]!;
        size += cost;
        k++;
      } while (k < names.length);
      items.push(part);
      bytes += size;
      cursor = `${node.nodeId} ${names[k - 1]}`;
    }
    if (names.length === 0 && after === undefined) {
      // a node too large without a single resource name (not one the protocol lets through): as it is
      if (items.length > 0) return { items, next: cursor! };
      items.push(node);
      cursor = node.nodeId;
    }
  }
  return { items };
}

/** The most a resource name and its amount take in msgpack: the name (≤ 128 characters, up to 4 bytes each) with its header, and a number. */
const MAX_NAME_BYTES = 2 + 4 * 128 + 9;

/** What one name and its amount take in msgpack, at most. */
function nameBytes(name: string): number {
  return 2 + Buffer.byteLength(name) + 9;
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
