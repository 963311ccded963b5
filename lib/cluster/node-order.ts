/**
 * The nodes of a cluster sorted by (score, node id), kept sorted as scores change.
 *
 * The hybrid policy reads it front to back: the lowest scores are the best places. A node's score
 * is its critical utilization, or 0 while that is below the spread threshold, so under-loaded
 * nodes sit together in node-id order (packing) and loaded ones after them, least loaded first
 * (spreading).
 *
 * Stored as a list of sorted blocks (at most MAX_BLOCK items each) with the position each block
 * starts at, so moving a node costs a binary search, a splice inside one small block and a few
 * counter updates — not a shift of the whole array — while `at` and `rankOf` stay O(log n).
 */
export interface Ranked {
  readonly id: string;
  score: number;
}

const MAX_BLOCK = 256;

export class NodeOrder<T extends Ranked> {
  readonly #blocks: T[][] = [];
  /** starts[b] = how many items come before block b. */
  readonly #starts: number[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  at(index: number): T {
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.#starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return this.#blocks[lo]?.[index - this.#starts[lo]];
  }

  insert(item: T): void {
    if (this.#blocks.length === 0) {
      this.#blocks.push([item]);
      this.#starts.push(0);
      this.#size = 1;
      return;
    }
    const b = this.#blockFor(item.score, item.id);
    const block = this.#blocks[b];
    block.splice(lowerBound(block, item.score, item.id), 0, item);
    this.#shift(b, 1);
    if (block.length > MAX_BLOCK) {
      const tail = block.splice(MAX_BLOCK >>> 1);
      this.#blocks.splice(b + 1, 0, tail);
      this.#starts.splice(b + 1, 0, this.#starts[b] + block.length);
    }
  }

  remove(item: T): void {
    if (this.#blocks.length === 0) return;
    const b = this.#blockFor(item.score, item.id);
    const block = this.#blocks[b];
    const i = lowerBound(block, item.score, item.id);
    if (block[i] !== item) return;
    block.splice(i, 1);
    this.#shift(b, -1);
    if (block.length === 0 && this.#blocks.length > 1) {
      this.#blocks.splice(b, 1);
      this.#starts.splice(b, 1);
    }
  }

  /** Moves an item after its score changed; `oldScore` is the score it is filed under. */
  rescore(item: T, oldScore: number, newScore: number): void {
    if (oldScore === newScore) return;
    item.score = oldScore;
    this.remove(item);
    item.score = newScore;
    this.insert(item);
  }

  /** The item's position, or -1. */
  rankOf(item: T): number {
    if (this.#blocks.length === 0) return -1;
    const b = this.#blockFor(item.score, item.id);
    const block = this.#blocks[b];
    const i = lowerBound(block, item.score, item.id);
    return block[i] === item ? this.#starts[b] + i : -1;
  }

  /** How many items come before (score, id): the rank it has or would have. O(log n). */
  rankBefore(score: number, id: string): number {
    if (this.#blocks.length === 0) return 0;
    const b = this.#blockFor(score, id);
    return this.#starts[b] + lowerBound(this.#blocks[b], score, id);
  }

  /** The last block whose first item is not after (score, id); block 0 when every block is. */
  #blockFor(score: number, id: string): number {
    let lo = 0;
    let hi = this.#blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const first = this.#blocks[mid][0];
      if (first.score < score || (first.score === score && first.id <= id)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  #shift(fromBlock: number, delta: number): void {
    this.#size += delta;
    for (let b = fromBlock + 1; b < this.#starts.length; b++) this.#starts[b] += delta;
  }
}

function lowerBound<T extends Ranked>(items: readonly T[], score: number, id: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const m = items[mid];
    if (m.score < score || (m.score === score && m.id < id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
