/**
 * How many dead actors the GCS remembers. Dead actors stay listed (and answer get_actor) so a user
 * can see why one died; kept forever they made every list reply outgrow the NATS message limit and
 * the GCS's memory grow without end. Ray bounds them the same way: its GCS keeps the newest
 * `maximum_gcs_destroyed_actor_cached_count` (100,000) destroyed actors and forgets older ones.
 *
 * A FIFO of dead actor ids in the order they died: `died(id)` records one and returns the ids that
 * fell out (the oldest deaths beyond the bound), which the actor directory then forgets — from
 * memory and from the store. An actor dies once; a second `died` for the same id is ignored. The
 * node table bounds its dead nodes with the same FIFO (nodes.ts), and the placement groups their
 * REMOVED ones (placement-groups.ts).
 */
export const DEFAULT_MAX_DEAD_ACTORS = 100_000;

/** How many dead nodes the node table keeps by default (nodes.ts), as Ray's `maximum_gcs_dead_node_cached_count`. */
export const DEFAULT_MAX_DEAD_NODES = 1_000;

/** How many REMOVED placement groups the GCS keeps listed by default (placement-groups.ts). */
export const DEFAULT_MAX_REMOVED_GROUPS = 10_000;

export class DeadActors {
  /** Dead ids, oldest first, from `#head` on (the slots before it are spent). */
  #queue: string[] = [];
  #head = 0;
  readonly #held = new Set<string>();

  constructor(readonly max: number = DEFAULT_MAX_DEAD_ACTORS) {
    if (!Number.isSafeInteger(max) || max < 0) throw new RangeError(`max dead actors: expected an integer >= 0, got ${max}`);
  }

  /** How many dead actors are kept. */
  get size(): number {
    return this.#held.size;
  }

  /** Records a death; returns the ids to forget now (oldest first), possibly none. */
  died(actorId: string): string[] {
    if (this.#held.has(actorId)) return [];
    this.#held.add(actorId);
    this.#queue.push(actorId);
    const dropped: string[] = [];
    while (this.#held.size > this.max) {
      const oldest = this.#queue[this.#head++]!;
      this.#held.delete(oldest);
      dropped.push(oldest);
    }
    // drop the spent prefix once it is most of the array, so memory follows the bound
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return dropped;
  }

  /** The kept dead ids, oldest death first. */
  ids(): string[] {
    return this.#queue.slice(this.#head);
  }
}
