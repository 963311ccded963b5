/**
 * The actors waiting to be placed (PENDING or RESTARTING), oldest first. The queue is not polled on
 * a timer: it is retried when something happens that can let a waiting actor fit —
 *
 *   node_registered   a node joined
 *   node_reachable    a node that had not answered a create_actor heartbeated again
 *   node_died         a node left (a hard node-id affinity may now fail; a spread count changes)
 *   resources_freed   an actor left its node
 *   labels_changed    a node's labels or taints changed, or a node started or stopped draining
 *   actor_placed      an actor was placed (an affinity peer may now exist)
 *   actor_waiting     an actor joined the queue (a restart)
 *
 * Kicks are coalesced into one pass on the next turn of the event loop; a kick during a pass (an
 * actor placed by it) schedules one more pass, so chains of affinity resolve without a timer and a
 * pass that places nothing ends the chain.
 *
 * A pass only retries an actor when something it depends on changed since its last attempt, so a
 * thousand unplaceable actors are not re-explained on every kick: each kick raises a generation, and
 * an actor remembers the generation of its last attempt. Every kick but two is news to everyone;
 * `actor_placed` only to actors with actor-affinity terms (a placement takes resources and adds
 * actor labels, which can let nothing else fit), and `actor_waiting` only to the newcomer (never
 * tried yet). The price: the `pendingReason` of an actor that was skipped may lag behind placements
 * elsewhere (a node that filled up since), while every reason it gives still holds.
 *
 * A pass runs in slices of at most `sliceMs`, yielding to the event loop between them, so requests
 * (a `nodes()` call during a storm of unplaceable actors) are answered while a long pass runs;
 * `stats()` counts the slices and says whether a pass is in progress, so a spec can check that a pass
 * yielded and that a request was answered before the pass ended.
 */
export type KickReason = 'node_registered' | 'node_reachable' | 'node_died' | 'resources_freed' | 'labels_changed' | 'actor_placed' | 'actor_waiting';

export type PlaceOutcome = 'placed' | 'waiting' | 'gone';

export interface PendingQueueStats {
  readonly waiting: readonly string[];
  /** Passes started; a pass runs in one or more slices. */
  readonly passes: number;
  /** Slices run by all passes: a pass that yielded to the event loop k times ran k + 1 slices. */
  readonly slices: number;
  /** A pass has started and not finished: read inside one of its slices, or between two of them. */
  readonly passing: boolean;
  /** No pass running or scheduled (`PendingQueue.idle`). */
  readonly idle: boolean;
  /** Placement attempts made by passes (each a schedule() call, with its explanation when it failed). */
  readonly attempts: number;
  /** Waiting actors a pass left alone because nothing they depend on had changed. */
  readonly skipped: number;
  readonly kicks: Readonly<Partial<Record<KickReason, number>>>;
}

export interface PendingQueueOptions {
  tryPlace: (actorId: string) => PlaceOutcome;
  /** Whether the actor's placement depends on other actors' placements (it has actor-affinity terms). */
  waitsOnPeers: (actorId: string) => boolean;
  log: (line: string) => void;
  /** Longest stretch of one pass before it yields to the event loop; default 5 ms. */
  sliceMs?: number;
  now?: () => number;
}

const NEVER = -1;

export class PendingQueue {
  /** Waiting actors (insertion order = oldest first) → generation of their last attempt. */
  readonly #tried = new Map<string, number>();
  readonly #kicks: Partial<Record<KickReason, number>> = {};
  /** Raised by every kick. */
  #gen = 0;
  /** The last generation that is news to every waiting actor. */
  #genAll = 0;
  /** The last generation that is news to actors waiting on peers. */
  #genPeers = 0;
  #passes = 0;
  #slices = 0;
  #attempts = 0;
  #skipped = 0;
  #immediate: NodeJS.Immediate | undefined;
  /** The pass in progress: its ids and how far it got. */
  #pass: { ids: string[]; at: number } | undefined;
  #again = false;
  #stopped = false;
  readonly #idle = new Set<() => void>();

  constructor(private readonly opts: PendingQueueOptions) {}

  /** Joins the queue (a newcomer, or one back from a node: never tried in its new wait). */
  add(actorId: string): void {
    if (!this.#tried.has(actorId)) this.#tried.set(actorId, NEVER);
  }

  /** Tries this waiting actor again in the next pass, whatever changed (a deferred refresh). */
  retry(actorId: string): void {
    if (!this.#tried.has(actorId)) return;
    this.#tried.set(actorId, NEVER);
    this.kick('actor_waiting');
  }

  delete(actorId: string): void {
    this.#tried.delete(actorId);
  }

  has(actorId: string): boolean {
    return this.#tried.has(actorId);
  }

  /** The actor was just tried outside a pass (at registration): it counts as tried now. */
  tried(actorId: string): void {
    if (this.#tried.has(actorId)) this.#tried.set(actorId, this.#gen);
  }

  get size(): number {
    return this.#tried.size;
  }

  /** The waiting ids, oldest first (not copied: read it before the queue changes). */
  ids(): IterableIterator<string> {
    return this.#tried.keys();
  }

  /** Raised by every kick: two decisions in the same generation saw the same cluster state. */
  get generation(): number {
    return this.#gen;
  }

  /** No pass running or scheduled. */
  get idle(): boolean {
    return this.#pass === undefined && this.#immediate === undefined;
  }

  /** Calls `fn` once the queue is idle (at once when it is). */
  whenIdle(fn: () => void): void {
    if (this.idle || this.#stopped) fn();
    else this.#idle.add(fn);
  }

  stats(): PendingQueueStats {
    return {
      waiting: [...this.#tried.keys()],
      passes: this.#passes,
      slices: this.#slices,
      passing: this.#pass !== undefined,
      idle: this.idle,
      attempts: this.#attempts,
      skipped: this.#skipped,
      kicks: { ...this.#kicks },
    };
  }

  kick(reason: KickReason): void {
    this.#kicks[reason] = (this.#kicks[reason] ?? 0) + 1;
    this.#gen++;
    if (reason === 'actor_placed') this.#genPeers = this.#gen;
    else if (reason !== 'actor_waiting') this.#genAll = this.#gen;
    if (this.#stopped) return;
    if (this.#pass !== undefined) this.#again = true;
    else this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#immediate = undefined;
    this.#pass = undefined;
    this.#settle();
  }

  #schedule(): void {
    if (this.#immediate !== undefined) return;
    if (this.#tried.size === 0) return this.#settle();
    this.#immediate = setImmediate(() => this.#slice());
  }

  #slice(): void {
    this.#immediate = undefined;
    if (this.#stopped) return;
    if (this.#pass === undefined) {
      this.#passes++;
      this.#again = false;
      this.#pass = { ids: [...this.#tried.keys()], at: 0 };
    }
    this.#slices++;
    const pass = this.#pass;
    const now = this.opts.now ?? Date.now;
    const until = now() + (this.opts.sliceMs ?? 5);
    while (pass.at < pass.ids.length) {
      if (this.#stopped) return;
      const id = pass.ids[pass.at++];
      if (this.#try(id) && now() >= until && pass.at < pass.ids.length) {
        this.#immediate = setImmediate(() => this.#slice());
        return;
      }
    }
    this.#pass = undefined;
    if (this.#again) this.#schedule();
    else this.#settle();
  }

  /** One waiting actor: tried when something it depends on changed. Returns whether it was tried. */
  #try(id: string): boolean {
    const last = this.#tried.get(id);
    if (last === undefined) return false;
    const news = last < this.#genAll || (last < this.#genPeers && this.opts.waitsOnPeers(id));
    if (last !== NEVER && !news) {
      this.#skipped++;
      return false;
    }
    this.#tried.set(id, this.#gen);
    this.#attempts++;
    let outcome: PlaceOutcome;
    try {
      outcome = this.opts.tryPlace(id);
    } catch (err) {
      this.opts.log(`placing actor ${id} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      outcome = 'waiting';
    }
    if (outcome === 'gone') this.#tried.delete(id);
    return true;
  }

  #settle(): void {
    if (this.#idle.size === 0) return;
    const waiting = [...this.#idle];
    this.#idle.clear();
    for (const fn of waiting) fn();
  }
}
