import type { Observable, Subject } from 'rxjs';
import { decode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, Subscription } from '../bus/bus.ts';
import { rx } from '../rx.ts';
import { BusClosedError } from '../bus/errors.ts';
import type { ActorWatcher } from './actor-watch.ts';
import type { ClusterEvent, PlacementGroupInfo } from './cluster-info.types.ts';
import { eventFromWire } from './from-wire.ts';

const eventOnly = { event: messages.event } as const;

/** Receives one placement group's placement_group_state events. */
export interface PlacementGroupWatcher {
  next(info: PlacementGroupInfo): void;
  /** The client closed: no more events will come. */
  end(err: Error): void;
}

/**
 * The client's one subscription to `events.>`, shared by everything that follows the cluster:
 * `events$` for users, and per-actor and per-placement-group watchers for handles (a map lookup per event, not a filter per
 * handle). Malformed events are counted and dropped; they never end the stream.
 */
export class EventStream {
  /** Events that could not be decoded or were of an unknown type. */
  dropped = 0;
  /** Made on the first read of events$ (rxjs is loaded then, see rx.ts); until then events go to watchers only. */
  private subject: Subject<ClusterEvent> | undefined;
  private observable: Observable<ClusterEvent> | undefined;
  private readonly watchers = new Map<string, Set<ActorWatcher>>();
  private readonly pgWatchers = new Map<string, Set<PlacementGroupWatcher>>();
  private readonly sub: Subscription;
  private ended = false;

  constructor(
    bus: Bus,
    subjects: ClusterSubjects,
    /** A gcs_leader event: a GCS opened its subjects (the GcsClient sends its unanswered requests again). */
    private readonly onLeader?: (epoch: number) => void,
  ) {
    this.sub = bus.subscribe(subjects.allEvents(), (msg) => this.receive(msg.data));
  }

  /** Every event the cluster publishes from now on; completes when the client closes. */
  get events$(): Observable<ClusterEvent> {
    if (this.observable === undefined) {
      this.subject = new (rx().Subject)<ClusterEvent>();
      if (this.ended) this.subject.complete();
      this.observable = this.subject.asObservable();
    }
    return this.observable;
  }

  watchActor(actorId: string, watcher: ActorWatcher): () => void {
    return this.watch(this.watchers, actorId, watcher);
  }

  /** How many watchers follow actor `actorId` now (handles' calls in flight, state$ subscribers, waits). */
  actorWatchers(actorId: string): number {
    return this.watchers.get(actorId)?.size ?? 0;
  }

  /** Delivers the placement_group_state events of group `pgId` from now on, until the returned function is called. */
  watchPlacementGroup(pgId: string, watcher: PlacementGroupWatcher): () => void {
    return this.watch(this.pgWatchers, pgId, watcher);
  }

  private watch<W extends { end(err: Error): void }>(map: Map<string, Set<W>>, id: string, watcher: W): () => void {
    if (this.ended) {
      queueMicrotask(() => watcher.end(new BusClosedError()));
      return () => undefined;
    }
    let set = map.get(id);
    if (!set) map.set(id, (set = new Set()));
    set.add(watcher);
    return () => {
      set.delete(watcher);
      if (set.size === 0 && map.get(id) === set) map.delete(id);
    };
  }

  /** Ends the subscription, completes events$ and ends every watcher. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.sub.unsubscribe();
    const err = new BusClosedError();
    for (const set of this.watchers.values()) for (const w of [...set]) w.end(err);
    for (const set of this.pgWatchers.values()) for (const w of [...set]) w.end(err);
    this.watchers.clear();
    this.pgWatchers.clear();
    this.subject?.complete();
  }

  private receive(data: Uint8Array): void {
    let event: ClusterEvent | undefined;
    try {
      event = eventFromWire(decode(data, { registry: eventOnly }).body);
    } catch {
      event = undefined;
    }
    if (!event) {
      this.dropped++;
      return;
    }
    if (event.type === 'actor_state') {
      const set = this.watchers.get(event.actor.actorId);
      if (set) for (const w of [...set]) w.next(event.actor);
    } else if (event.type === 'placement_group_state') {
      const set = this.pgWatchers.get(event.placementGroup.id);
      if (set) for (const w of [...set]) w.next(event.placementGroup);
    } else if (event.type === 'gcs_leader') {
      this.onLeader?.(event.epoch);
    }
    this.subject?.next(event);
  }
}
