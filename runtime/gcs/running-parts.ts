import type { RegisterRunning } from '../../protocols/messages/node.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import { RegistrationIncompleteError } from '../errors.ts';
import type { Running } from './nodes.ts';

/**
 * The parts of registrations that do not fit in one message (protocols/messages/node.ts,
 * register_running). A raylet that has run ~26,000 actors through a GCS restart lists them in more
 * than the bus's 1 MiB; before, its register_node was refused TOO_LARGE, the raylet stopped, the
 * node was declared dead and every actor on it was lost.
 *
 * Parts are held per node, for one batch at a time, until the register_node that ends the batch
 * takes them (`join`) — the GCS never reconciles against part of a list, which would kill or restart
 * what the later parts name. What is held is bounded: a part naming a new batch replaces the node's
 * unfinished one only when it carries the same secret (its own raylet trying again) or that one is
 * older than `ttlMs` (a raylet gone mid-registration); the items held across all nodes are at most
 * `maxItems`, the oldest batch giving way first; and a batch left unfinished is dropped after `ttlMs`.
 */
export interface RunningPartsOptions {
  /** Items (actor incarnations and bundles) held across all unfinished batches; default 2,000,000. */
  readonly maxItems?: number;
  /** How long an unfinished batch is kept; default 60 s. */
  readonly ttlMs?: number;
  readonly now?: () => number;
}

interface Batch {
  readonly batch: string;
  readonly secret: string | undefined;
  readonly parts: Map<number, Running>;
  items: number;
  readonly at: number;
}

export const DEFAULT_RUNNING_PARTS_MAX_ITEMS = 2_000_000;
const DEFAULT_TTL_MS = 60_000;

export class RunningParts {
  readonly #batches = new Map<string, Batch>();
  #items = 0;
  readonly #maxItems: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(opts: RunningPartsOptions = {}) {
    this.#maxItems = opts.maxItems ?? DEFAULT_RUNNING_PARTS_MAX_ITEMS;
    this.#ttlMs = opts.ttlMs ?? DEFAULT_TTL_MS;
    this.#now = opts.now ?? Date.now;
  }

  /** Items held now, across all nodes (gcs_status, specs). */
  get items(): number {
    return this.#items;
  }

  /**
   * Holds one part. Throws REGISTRATION_INCOMPLETE when it cannot be held: the node has an
   * unfinished batch of another raylet (another secret) that has not expired, or the part alone is
   * more than the GCS holds. The caller has checked the secret against a live node (node-owner.ts).
   */
  stage(part: RegisterRunning): { staged: number } {
    const now = this.#now();
    this.#expire(now);
    const size = part.actors.length + part.bundles.length;
    let held = this.#batches.get(part.nodeId);
    if (held !== undefined && held.batch !== part.batch) {
      if (held.secret !== part.secret && now - held.at < this.#ttlMs) {
        throw new RegistrationIncompleteError(part.nodeId, 'another raylet is registering under its id');
      }
      this.#drop(part.nodeId);
      held = undefined;
    }
    if (size > this.#maxItems) throw new RegistrationIncompleteError(part.nodeId, `a part of ${size} items is more than the GCS holds (${this.#maxItems})`);
    if (held === undefined) {
      held = { batch: part.batch, secret: part.secret, parts: new Map(), items: 0, at: now };
      this.#batches.set(part.nodeId, held);
    }
    const previous = held.parts.get(part.index);
    if (previous !== undefined) this.#count(held, -(previous.actors.length + (previous.bundles?.length ?? 0)));
    held.parts.set(part.index, { actors: part.actors, bundles: part.bundles });
    this.#count(held, size);
    // the oldest batches give way (Map order is insertion order: the oldest first), never this one
    for (const [nodeId, other] of this.#batches) {
      if (this.#items <= this.#maxItems) break;
      if (other !== held) this.#drop(nodeId);
    }
    return { staged: held.items };
  }

  /**
   * The whole of what a registering raylet runs: its register_node's own `running`, after the parts
   * its batch sent ahead, which are then let go. Throws REGISTRATION_INCOMPLETE — and keeps nothing
   * of the batch — when a part is missing, the batch is another, or the secret is not the one its
   * parts came with.
   */
  join(reg: MessageBody<'register_node'>): Running | undefined {
    const running = reg.running;
    if (running?.earlier === undefined) {
      return running;
    }
    const { batch, parts } = running.earlier;
    const held = this.#batches.get(reg.nodeId);
    const why =
      held === undefined || held.batch !== batch
        ? `the GCS holds none of batch ${batch}`
        : held.secret !== reg.secret
          ? 'its parts came with another secret'
          : held.parts.size !== parts || !Array.from({ length: parts }, (_, i) => held.parts.has(i)).every(Boolean)
            ? `the GCS holds ${held.parts.size} of its ${parts} earlier parts`
            : undefined;
    if (why !== undefined) {
      if (held?.batch === batch) this.#drop(reg.nodeId);
      throw new RegistrationIncompleteError(reg.nodeId, why);
    }
    const actors = [];
    const bundles = [];
    for (let i = 0; i < parts; i++) {
      const part = held!.parts.get(i)!;
      for (const a of part.actors) actors.push(a);
      for (const b of part.bundles ?? []) bundles.push(b);
    }
    for (const a of running.actors) actors.push(a);
    for (const b of running.bundles ?? []) bundles.push(b);
    this.#drop(reg.nodeId);
    return { actors, bundles };
  }

  /** A node registered (or re-registered) without parts: an unfinished batch of it is moot. */
  forget(nodeId: string): void {
    this.#drop(nodeId);
  }

  #expire(now: number): void {
    for (const [nodeId, held] of this.#batches) {
      if (now - held.at >= this.#ttlMs) this.#drop(nodeId);
    }
  }

  #count(held: Batch, delta: number): void {
    held.items += delta;
    this.#items += delta;
  }

  #drop(nodeId: string): void {
    const held = this.#batches.get(nodeId);
    if (held === undefined) return;
    this.#items -= held.items;
    this.#batches.delete(nodeId);
  }
}
