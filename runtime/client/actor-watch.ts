// What a client knows of one actor's state from its actor_state events: the watcher they are
// delivered to, whether one is news after another, and remote()'s watch from before registration.
import type { ActorInfo } from './cluster-info.types.ts';
import { actorRank } from './actor-rank.ts';

export interface ActorWatcher {
  next(info: ActorInfo): void;
  /** The client closed: no more events will come. */
  end(err: Error): void;
}

/** Whether `next` is news after `last`: a later state, or the same state with other details. */
export function isNewer(last: ActorInfo | undefined, next: ActorInfo): boolean {
  if (last === undefined) return true;
  const a = actorRank(last);
  const b = actorRank(next);
  if (b !== a) return b > a;
  return last.state !== 'DEAD' && (last.nodeId !== next.nodeId || last.pendingReason !== next.pendingReason || last.deathCause !== next.deathCause);
}

/**
 * What a handle made by remote() has seen of its actor from before it was registered: remote()
 * starts following the actor's actor_state events before it sends register_actor, so this holds
 * every change since — with the register reply merged in by rank, as state$ merges a get_actor
 * answer. While it follows, state$ (and so ready()) starts from what it holds instead of asking
 * get_actor: the answer could tell nothing it has not seen. That was one GCS round trip per actor
 * created (remote() then ready()). It stops following once the actor is ALIVE or DEAD (or the
 * client closes), so no handle stays registered for a long-lived actor; state$ subscribed after
 * that asks get_actor as before.
 */
export class CreationWatch {
  #latest: ActorInfo | undefined;
  #stop: (() => void) | undefined;

  constructor(watch: (watcher: ActorWatcher) => () => void) {
    this.#stop = watch({ next: (info) => this.seen(info), end: () => this.stop() });
  }

  /** What it holds, while it still follows the actor; undefined once it stopped. */
  get latest(): ActorInfo | undefined {
    return this.#stop === undefined ? undefined : this.#latest;
  }

  get following(): boolean {
    return this.#stop !== undefined;
  }

  /** An event, or the register reply. */
  seen(info: ActorInfo): void {
    if (this.#stop === undefined) return;
    if (isNewer(this.#latest, info)) this.#latest = info;
    if (info.state === 'ALIVE' || info.state === 'DEAD') this.stop();
  }

  stop(): void {
    const stop = this.#stop;
    this.#stop = undefined;
    this.#latest = undefined;
    stop?.();
  }
}
