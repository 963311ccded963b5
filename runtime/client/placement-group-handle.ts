import { placementGroupInfo } from '../../protocols/messages/placement-group.ts';
import { PlacementGroupRemovedError, WaitTimeoutError } from '../errors.ts';
import { BusClosedError } from '../bus/errors.ts';
import type { PlacementGroup, PlacementGroupInfo } from './cluster-info.types.ts';
import type { PlacementGroupWatcher } from './event-stream.ts';
import { placementGroupFromWire } from './from-wire.ts';
import type { GcsClient } from './gcs-client.ts';
import { RESYNC_MS } from './actor-wait.ts';
import { stallAwareTimeout } from '../process/stall.ts';

/** What a placement group handle needs from its cluster connection. */
export interface PlacementGroupContext {
  readonly gcs: GcsClient;
  /** Delivers this group's placement_group_state events until the returned function is called. */
  watchPlacementGroup(pgId: string, watcher: PlacementGroupWatcher): () => void;
}

/** Whether ready() is settled by `info`: CREATED resolves it, REMOVED rejects it. */
const settles = (info: PlacementGroupInfo): boolean => info.state === 'CREATED' || info.state === 'REMOVED';

/**
 * What placementGroup() has seen of its group from before create_pg was sent: it follows the
 * group's placement_group_state events from then on, with the create_pg reply merged in, until one
 * of them shows the group CREATED or REMOVED (or the client closes). A ready() called while it
 * follows needs no get_pg: nothing the answer could say has escaped the watch (the GCS publishes a
 * group's state only once it is stored, and the watch started before the group existed). That was
 * one GCS round trip per group created (placementGroup() then ready()), as for actors
 * (CreationWatch in actor-watch.ts). Once it has stopped, ready() asks get_pg as before, so a
 * group removed after it was CREATED is reported REMOVED.
 */
export class PlacementGroupCreationWatch {
  #settled: PlacementGroupInfo | undefined;
  #stop: (() => void) | undefined;
  /** ready() calls waiting on this watch. */
  readonly #waiting = new Set<PlacementGroupWatcher>();

  constructor(watch: (watcher: PlacementGroupWatcher) => () => void) {
    this.#stop = watch({
      next: (info) => this.seen(info),
      end: (err) => {
        this.stop();
        for (const w of [...this.#waiting]) w.end(err);
      },
    });
  }

  /** An event, or the create_pg reply. */
  seen(info: PlacementGroupInfo): void {
    if (this.#stop === undefined || !settles(info)) return;
    this.#settled = info;
    this.stop();
    for (const w of [...this.#waiting]) w.next(info);
  }

  /**
   * Hands `watcher` what settles ready() once the watch sees it, until the returned function is
   * called; undefined when the watch has stopped (the caller asks the GCS instead).
   */
  wait(watcher: PlacementGroupWatcher): (() => void) | undefined {
    if (this.#stop === undefined) return undefined;
    this.#waiting.add(watcher);
    return () => void this.#waiting.delete(watcher);
  }

  stop(): void {
    const stop = this.#stop;
    this.#stop = undefined;
    stop?.();
  }

  /** The CREATED or REMOVED that stopped the watch, if one did: REMOVED is final, a later ready() needs no question. */
  get settledWith(): PlacementGroupInfo | undefined {
    return this.#settled;
  }
}

/**
 * A handle to one placement group. It holds only the id (and name): `placementGroupStrategy(pg, i)`
 * reads `pg.id`, and every question goes to the GCS.
 */
export class ClientPlacementGroup implements PlacementGroup {
  constructor(
    private readonly ctx: PlacementGroupContext,
    readonly id: string,
    readonly namespace: string,
    readonly name?: string,
    /** placementGroup()'s watch from before create_pg (see PlacementGroupCreationWatch); none for getPlacementGroup. */
    private readonly creation?: PlacementGroupCreationWatch,
  ) {}

  /**
   * Resolves with the group's info once it is CREATED; PlacementGroupRemovedError once it is
   * REMOVED; TimeoutError after `timeoutMs` (default: no limit, like Ray). It follows the group's
   * events, starting before it asks get_pg, so a transition between the two is seen either way:
   * whichever of the event and the answer shows CREATED or REMOVED first settles it. A group is
   * CREATED only once all its bundles are committed, so any CREATED seen means it was ready at that
   * moment. Called on the handle placementGroup() returned while its creation watch still follows
   * the group, it asks nothing at first (see PlacementGroupCreationWatch).
   *
   * Events travel on core NATS and one can be lost (published while the GCS's leader lease had
   * lapsed, or while this connection was reconnecting), so while it waits it also asks get_pg now
   * and then — after RESYNC_MS.first, doubling up to RESYNC_MS.max — as an actor's ready() does.
   */
  ready(opts: { timeoutMs?: number } = {}): Promise<PlacementGroupInfo> {
    const { timeoutMs } = opts;
    return new Promise<PlacementGroupInfo>((resolve, reject) => {
      let settled = false;
      let stopTimer: (() => void) | undefined;
      let resync: NodeJS.Timeout | undefined;
      let stopWaiting: (() => void) | undefined;
      const settle = (done: () => void): void => {
        if (settled) return;
        settled = true;
        stopTimer?.();
        clearTimeout(resync);
        stopWatch();
        stopWaiting?.();
        done();
      };
      const see = (info: PlacementGroupInfo): void => {
        if (info.state === 'CREATED') settle(() => resolve(info));
        else if (info.state === 'REMOVED') settle(() => reject(new PlacementGroupRemovedError(this.id, info.removedCause)));
      };
      const watcher: PlacementGroupWatcher = { next: see, end: (err) => settle(() => reject(err)) };
      // the creation watch still follows: it hands over what settles this, nothing to ask yet
      stopWaiting = this.creation?.wait(watcher);
      const stopWatch = stopWaiting === undefined ? this.ctx.watchPlacementGroup(this.id, watcher) : () => undefined;
      if (timeoutMs !== undefined) {
        // stall-aware, as an actor's ready() (runtime/process/stall.ts)
        stopTimer = stallAwareTimeout(() => settle(() => reject(new WaitTimeoutError(`ready() of placement group ${this.id}`, timeoutMs))), timeoutMs);
      }
      // The first answer, when it is asked at once, settles an error as it always did. A later ask
      // that fails is made again later: the GCS not answering for now, or one that does not know
      // the group yet (PLACEMENT_GROUP_NOT_FOUND from a GCS restarted meanwhile, still recovering).
      const ask = (first: boolean): void => {
        this.info().then(
          (info) => {
            if (settled) return;
            see(info);
            if (!settled) askLater();
          },
          (err: unknown) => {
            if (settled) return;
            if (first || err instanceof BusClosedError) settle(() => reject(err));
            else askLater();
          },
        );
      };
      let backoffMs: number = RESYNC_MS.first;
      const askLater = (): void => {
        resync = setTimeout(() => ask(false), backoffMs);
        resync.unref?.();
        backoffMs = Math.min(backoffMs * 2, RESYNC_MS.max);
      };
      if (stopWaiting === undefined) {
        const seenBefore = this.creation?.settledWith;
        if (seenBefore !== undefined && seenBefore.state === 'REMOVED') return see(seenBefore);
        ask(true);
      } else askLater();
    });
  }

  async info(): Promise<PlacementGroupInfo> {
    return placementGroupFromWire(await this.ctx.gcs.request('get_pg', { pgId: this.id }, placementGroupInfo));
  }

  /** Asks the GCS to remove the group: its actors are killed and its bundles freed; resolves with the GCS's answer (REMOVED). */
  async remove(): Promise<void> {
    await this.ctx.gcs.request('remove_pg', { pgId: this.id }, placementGroupInfo);
  }
}
