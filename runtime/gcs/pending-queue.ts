/**
 * The actors waiting to be placed (PENDING or RESTARTING), oldest first. The queue is not polled on
 * a timer: it is retried when something happens that can let a waiting actor fit —
 *
 *   node_registered   a node joined
 *   node_died         a node left (a hard node-id affinity may now fail; a spread count changes)
 *   resources_freed   an actor left its node
 *   labels_changed    a node's labels or taints changed, or a node started or stopped draining
 *   actor_placed      an actor was placed (an affinity peer may now exist)
 *   actor_waiting     an actor joined the queue (a restart)
 *
 * Kicks are coalesced into one pass on the next turn of the event loop; a kick during a pass (an
 * actor placed by it) schedules one more pass, so chains of affinity resolve without a timer and a
 * pass that places nothing ends the chain.
 */
export type KickReason = 'node_registered' | 'node_died' | 'resources_freed' | 'labels_changed' | 'actor_placed' | 'actor_waiting';

export type PlaceOutcome = 'placed' | 'waiting' | 'gone';

export interface PendingQueueStats {
  readonly waiting: readonly string[];
  readonly passes: number;
  readonly kicks: Readonly<Partial<Record<KickReason, number>>>;
}

export class PendingQueue {
  readonly #ids = new Set<string>();
  readonly #kicks: Partial<Record<KickReason, number>> = {};
  #passes = 0;
  #immediate: NodeJS.Immediate | undefined;
  #passing = false;
  #again = false;
  #stopped = false;

  constructor(private readonly opts: { tryPlace: (actorId: string) => PlaceOutcome; log: (line: string) => void }) {}

  add(actorId: string): void {
    this.#ids.add(actorId);
  }

  delete(actorId: string): void {
    this.#ids.delete(actorId);
  }

  has(actorId: string): boolean {
    return this.#ids.has(actorId);
  }

  get size(): number {
    return this.#ids.size;
  }

  stats(): PendingQueueStats {
    return { waiting: [...this.#ids], passes: this.#passes, kicks: { ...this.#kicks } };
  }

  kick(reason: KickReason): void {
    this.#kicks[reason] = (this.#kicks[reason] ?? 0) + 1;
    if (this.#stopped) return;
    if (this.#passing) this.#again = true;
    else this.#schedule();
  }

  #schedule(): void {
    if (this.#immediate === undefined && this.#ids.size > 0) this.#immediate = setImmediate(() => this.#pass());
  }

  stop(): void {
    this.#stopped = true;
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#immediate = undefined;
  }

  #pass(): void {
    this.#immediate = undefined;
    if (this.#stopped) return;
    this.#passes++;
    this.#passing = true;
    this.#again = false;
    try {
      for (const id of [...this.#ids]) {
        if (this.#stopped) return;
        if (!this.#ids.has(id)) continue;
        let outcome: PlaceOutcome;
        try {
          outcome = this.opts.tryPlace(id);
        } catch (err) {
          this.opts.log(`placing actor ${id} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          outcome = 'waiting';
        }
        if (outcome === 'gone') this.#ids.delete(id);
      }
    } finally {
      this.#passing = false;
    }
    if (this.#again) this.#schedule();
  }
}
