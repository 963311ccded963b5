import { placementGroupInfo } from '../../protocols/messages/placement-group.ts';
import { PlacementGroupRemovedError, WaitTimeoutError } from '../errors.ts';
import type { PlacementGroup, PlacementGroupInfo } from './cluster-info.types.ts';
import type { PlacementGroupWatcher } from './event-stream.ts';
import { placementGroupFromWire } from './from-wire.ts';
import type { GcsClient } from './gcs-client.ts';

/** What a placement group handle needs from its cluster connection. */
export interface PlacementGroupContext {
  readonly gcs: GcsClient;
  /** Delivers this group's placement_group_state events until the returned function is called. */
  watchPlacementGroup(pgId: string, watcher: PlacementGroupWatcher): () => void;
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
  ) {}

  /**
   * Resolves with the group's info once it is CREATED; PlacementGroupRemovedError once it is
   * REMOVED; TimeoutError after `timeoutMs` (default: no limit, like Ray). The watch on its events
   * starts before get_pg is sent, so a transition between the two is seen either way: whichever of
   * the event and the answer shows CREATED or REMOVED first settles it. A group is CREATED only once
   * all its bundles are committed, so any CREATED seen means it was ready at that moment.
   */
  ready(opts: { timeoutMs?: number } = {}): Promise<PlacementGroupInfo> {
    const { timeoutMs } = opts;
    return new Promise<PlacementGroupInfo>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = (done: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        stop();
        done();
      };
      const see = (info: PlacementGroupInfo): void => {
        if (info.state === 'CREATED') settle(() => resolve(info));
        else if (info.state === 'REMOVED') settle(() => reject(new PlacementGroupRemovedError(this.id, info.removedCause)));
      };
      const stop = this.ctx.watchPlacementGroup(this.id, { next: see, end: (err) => settle(() => reject(err)) });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => settle(() => reject(new WaitTimeoutError(`ready() of placement group ${this.id}`, timeoutMs))), timeoutMs);
      }
      this.info().then(see, (err: unknown) => settle(() => reject(err)));
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
