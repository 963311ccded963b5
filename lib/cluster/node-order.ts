/**
 * The nodes of a cluster sorted by (score, node id), kept sorted as scores change.
 *
 * The hybrid policy reads it front to back: the lowest scores are the best places. A node's score
 * is its critical utilization, or 0 while that is below the spread threshold, so under-loaded
 * nodes sit together in node-id order (packing) and loaded ones after them, least loaded first
 * (spreading). Updates cost a binary search and one array splice; rank lookups a binary search.
 */
export interface Ranked {
  readonly id: string;
  score: number;
}

export class NodeOrder<T extends Ranked> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  at(index: number): T {
    return this.#items[index];
  }

  insert(item: T): void {
    this.#items.splice(this.#lowerBound(item.score, item.id), 0, item);
  }

  remove(item: T): void {
    const i = this.rankOf(item);
    if (i >= 0) this.#items.splice(i, 1);
  }

  /** Moves an item after its score changed; `oldScore` is the score it is filed under. */
  rescore(item: T, oldScore: number, newScore: number): void {
    if (oldScore === newScore) return;
    const from = this.#lowerBound(oldScore, item.id);
    if (this.#items[from] === item) this.#items.splice(from, 1);
    item.score = newScore;
    this.#items.splice(this.#lowerBound(newScore, item.id), 0, item);
  }

  /** The item's position, or -1. */
  rankOf(item: T): number {
    const i = this.#lowerBound(item.score, item.id);
    return this.#items[i] === item ? i : -1;
  }

  #lowerBound(score: number, id: string): number {
    let lo = 0;
    let hi = this.#items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.#items[mid];
      if (m.score < score || (m.score === score && m.id < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
