import type { PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { EventPublisher } from './events.ts';
import type { GcsStore } from './store.ts';

/**
 * The placement-group table's events (placement-group-table.ts reports each state change here).
 * Publishes a group's placement_group_state once what the store holds of it is durable: a group
 * anyone was told is CREATED (or REMOVED) is so after a GCS restart too. The reports of one run of
 * microtasks wait for one durable() and go out in the order they were made.
 */
export interface GroupReportsDeps {
  readonly store: GcsStore;
  readonly events: EventPublisher;
  readonly log: (line: string) => void;
}

export class GroupReports {
  /** State changes made in this run of microtasks, published once stored (report). */
  #unreported: PlacementGroupInfoWire[] = [];
  /** The last batch of reports on its way out: the next one follows it. */
  #reporting: Promise<void> = Promise.resolve();

  constructor(private readonly deps: GroupReportsDeps) {}

  report(info: PlacementGroupInfoWire): void {
    if (this.#unreported.length === 0) queueMicrotask(() => this.#reportDurable());
    this.#unreported.push(info);
  }

  #reportDurable(): void {
    const batch = this.#unreported;
    this.#unreported = [];
    const durable = this.deps.store.durable().catch((err: unknown) => this.deps.log(`placement-group records not stored: ${err instanceof Error ? err.message : String(err)}`));
    this.#reporting = Promise.all([this.#reporting, durable]).then(() => {
      for (const info of batch) this.deps.events.placementGroupState(info);
    });
  }
}
