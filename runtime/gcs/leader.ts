import { decode, encode } from '../../protocols/codec.ts';
import { storedRecords, type StoredLease } from '../../protocols/messages/stored.ts';
import { KvConflictError, type KvBucket } from '../bus/kv.ts';

/**
 * One active GCS per cluster: a leader lease held in a JetStream KV key (`lease` in bucket
 * `orrery_<cluster>_leader`). nats-server 2.9 ignores per-key TTLs, so expiry is by the holder's
 * renewals, each a compare-and-set on the key's revision:
 *
 *   - the holder writes the key again every `renewMs` (update at the revision it last wrote); a
 *     conflict means someone else took the lease: it is lost at once — unless the key holds this
 *     holder's own lease at its epoch (a renewal stored whose acknowledgement was lost when a NATS
 *     server died: #ownWrite). A renewal that fails for
 *     another reason (the store out of reach) is tried again at the same pace; meanwhile the holder
 *     is not `valid()`, and a renewal that then succeeds at the same revision proves nobody took the
 *     lease, so it leads on;
 *   - a candidate (a standby) reads the key every `pollMs` (`renewMs`, at most 100 ms: a read is a
 *     small JetStream request, and the sooner a standby sees a lease stop moving or released, the
 *     sooner it serves) and takes the lease when its revision
 *     has not moved for `ttlMs` by the candidate's own clock, with `epoch + 1` (compare-and-set
 *     again, so of two candidates one wins); with no key at all it creates it with epoch 1;
 *   - a holder that stops gracefully, once it has stopped acting as leader, writes the key once
 *     more with `released: true` (release()); a candidate that reads a released lease takes it at
 *     once, with `epoch + 1` (compare-and-set on that revision), rather than after `ttlMs`;
 *   - the holder counts itself leader only until `ttlMs - marginMs` after its last renewal was
 *     acknowledged (`valid()`, monotonic clock). A candidate waits a whole `ttlMs` after it last saw
 *     the revision move, which is after that acknowledgement, so the old holder has stopped before
 *     the new one starts — even a holder frozen (SIGSTOP) and resumed: its clock ran on meanwhile.
 *
 * The epoch orders leaders: every GCS message to raylets carries it and raylets refuse an older one.
 */
export interface LeaderLeaseOptions {
  bucket: KvBucket;
  /** Who asks (shown to operators): host:pid. */
  holder: string;
  /** How long a lease lasts without renewal; default 2,000 ms. */
  ttlMs?: number;
  /** Renewal period; default ttl / 4. */
  renewMs?: number;
  /** How often a standby reads the key; default renewMs, at most 100 ms. */
  pollMs?: number;
  /** How much earlier than the ttl the holder stops counting itself leader; default ttl / 5. */
  marginMs?: number;
  log: (line: string) => void;
  /** Monotonic ms; default performance.now. */
  now?: () => number;
}

const KEY = 'lease';

export class LeaderLease {
  readonly ttlMs: number;
  readonly renewMs: number;
  readonly pollMs: number;
  readonly marginMs: number;
  #epoch = 0;
  #revision = 0;
  #renewedAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #lost!: (why: string) => void;
  readonly #validity = new Set<(valid: boolean) => void>();
  #reportedValid = false;
  #validityTimer: NodeJS.Timeout | undefined;
  /** The clock, chosen once: `valid` reads it for every message the fenced bus passes. */
  readonly #clock: () => number;
  /** Resolves with the reason once the lease is lost (taken by another, or not renewed in time). */
  readonly lost: Promise<string>;

  constructor(private readonly opts: LeaderLeaseOptions) {
    this.ttlMs = opts.ttlMs ?? 2000;
    this.renewMs = opts.renewMs ?? Math.max(10, Math.floor(this.ttlMs / 4));
    this.pollMs = opts.pollMs ?? Math.min(this.renewMs, 100);
    this.marginMs = opts.marginMs ?? Math.floor(this.ttlMs / 5);
    this.lost = new Promise((resolve) => (this.#lost = resolve));
    this.#clock = opts.now ?? (() => performance.now());
  }

  get epoch(): number {
    return this.#epoch;
  }

  /**
   * Told when valid() turns false (the lease ran out by this process's clock: renewals could not
   * reach the store) and true again (a renewal went through). Returns a function that stops it.
   */
  onValidityChange(listener: (valid: boolean) => void): () => void {
    this.#validity.add(listener);
    return () => this.#validity.delete(listener);
  }

  /** Reports a change of valid() and sets a timer for the moment it runs out. */
  #checkValidity(): void {
    const valid = this.valid();
    if (valid !== this.#reportedValid) {
      this.#reportedValid = valid;
      for (const l of this.#validity) l(valid);
    }
    clearTimeout(this.#validityTimer);
    if (valid) this.#validityTimer = setTimeout(() => this.#checkValidity(), Math.max(1, this.#renewedAt + this.ttlMs - this.marginMs - this.#now() + 1)).unref();
  }

  /** Whether this process may act as the leader now (cheap: one clock read). */
  valid(): boolean {
    return !this.#stopped && this.#epoch > 0 && this.#now() - this.#renewedAt < this.ttlMs - this.marginMs;
  }

  /**
   * Waits until this process holds the lease; resolves with its epoch. `onWaiting` is told once the
   * lease turns out to be held by someone else (the process is a standby).
   */
  async acquire(onWaiting?: (holder: StoredLease) => void): Promise<number> {
    let seen: { revision: number; since: number } | undefined;
    let told = false;
    while (!this.#stopped) {
      const started = this.#now();
      try {
        const current = await this.opts.bucket.get(KEY);
        if (current === undefined) {
          if (await this.#take(undefined, 1)) return this.#epoch;
        } else {
          const lease = this.#read(current.value);
          if (!told) {
            told = true;
            onWaiting?.(lease ?? { holder: 'unknown', epoch: 0 });
          }
          if (lease?.released) {
            // its holder handed it over: no ttl to wait out
            if (await this.#take(current.revision, lease.epoch + 1)) {
              this.opts.log(`leader lease: ${lease.holder} released it (epoch ${lease.epoch}); taken at once`);
              return this.#epoch;
            }
          } else if (seen?.revision !== current.revision) seen = { revision: current.revision, since: started };
          else if (this.#now() - seen.since >= this.ttlMs && (await this.#take(current.revision, (lease?.epoch ?? 0) + 1))) return this.#epoch;
        }
      } catch (err) {
        this.opts.log(`leader lease: cannot read it (trying again): ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
    throw new Error('the leader lease was given up while waiting for it');
  }

  /** Gives the lease up at once, for `why` (a raylet saw a newer epoch): `lost` resolves. */
  giveUp(why: string): void {
    this.#lose(why);
  }

  /** Stops renewing (and waiting); a held lease then expires for the standby. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#validityTimer);
  }

  /**
   * Stops renewing (if it has not stopped yet) and hands the lease over: the key is written once
   * more, marked released, at the revision this holder last wrote, so a standby takes it at once
   * instead of after `ttlMs`. Call it only once this process no longer acts as leader (stopped
   * serving). A lease never held, lost, or taken meanwhile (the write conflicts) is left as it is:
   * it expires as before.
   */
  async release(): Promise<void> {
    this.stop();
    await this.#renewing; // a renewal under way would move the revision under the release
    if (this.#epoch === 0 || this.#lostAlready) return;
    try {
      await this.opts.bucket.update(KEY, encode('stored_lease', { holder: this.opts.holder, epoch: this.#epoch, released: true }), this.#revision);
      this.opts.log(`leader lease: released (epoch ${this.#epoch})`);
    } catch (err) {
      this.opts.log(`leader lease: not released, it expires instead: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The renewal under way, if any. */
  #renewing: Promise<void> | undefined;

  async #take(revision: number | undefined, epoch: number): Promise<boolean> {
    const value = encode('stored_lease', { holder: this.opts.holder, epoch });
    const asked = this.#now();
    try {
      this.#revision = revision === undefined ? await this.opts.bucket.create(KEY, value) : await this.opts.bucket.update(KEY, value, revision);
    } catch (err) {
      if (err instanceof KvConflictError) return false; // another candidate won
      throw err;
    }
    this.#epoch = epoch;
    this.#renewedAt = asked;
    this.#checkValidity();
    this.#schedule();
    return true;
  }

  #schedule(delayMs = this.renewMs): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      const renewing = (this.#renewing = this.#renew().finally(() => {
        if (this.#renewing === renewing) this.#renewing = undefined;
      }));
    }, delayMs);
  }

  /**
   * After a conflict: whether the key holds this holder's own lease at this epoch — an earlier
   * renewal was stored but its acknowledgement lost (the stream's leader died between the two, the
   * usual way a NATS server's death shows here). A standby writes its own name and epoch + 1, so this
   * value is ours: its revision is adopted and the renewal asked again at once. It is not counted as
   * a renewal (when it was stored is unknown). Unreadable is a lost lease, as before.
   */
  async #ownWrite(): Promise<boolean> {
    try {
      const current = await this.opts.bucket.get(KEY);
      const lease = current && this.#read(current.value);
      if (!current || lease?.holder !== this.opts.holder || lease.epoch !== this.#epoch) return false;
      this.opts.log(`leader lease: an earlier renewal was stored without its acknowledgement; renewing from revision ${current.revision}`);
      this.#revision = current.revision;
      return true;
    } catch {
      return false;
    }
  }

  async #renew(): Promise<void> {
    const asked = this.#now();
    try {
      this.#revision = await this.opts.bucket.update(KEY, encode('stored_lease', { holder: this.opts.holder, epoch: this.#epoch }), this.#revision);
      // the lease runs from when the renewal was asked for: the store may have taken it any time after
      this.#renewedAt = asked;
      this.#checkValidity();
    } catch (err) {
      if (err instanceof KvConflictError) {
        if (await this.#ownWrite()) return this.#schedule(0);
        return this.#lose(`another GCS took the lease (epoch ${this.#epoch} is over)`);
      }
      // The store was out of reach (a NATS outage): not valid() meanwhile, so this GCS does nothing;
      // a later renewal at the same revision proves nobody took the lease, and it goes on leading.
      this.opts.log(`leader lease: renewal failed (trying again): ${err instanceof Error ? err.message : String(err)}`);
    }
    this.#schedule();
  }

  #lose(why: string): void {
    this.stop();
    this.#lostAlready = true;
    this.#lost(why);
  }

  /** The lease was lost (taken, or given up): nothing to release. */
  #lostAlready = false;

  #read(bytes: Uint8Array): StoredLease | undefined {
    try {
      return decode(bytes, { registry: { stored_lease: storedRecords.stored_lease } }).body as StoredLease;
    } catch {
      return undefined;
    }
  }

  #now(): number {
    return this.#clock();
  }
}
