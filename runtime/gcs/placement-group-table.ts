import { OrreryError } from '../../lib/errors.ts';
import type { PlacementGroupRequest } from '../../lib/scheduling/bundles/index.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import type { CreatePg, PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import { DEFAULT_MAX_REMOVED_GROUPS, DeadActors } from './dead-actors.ts';
import type { EventPublisher } from './events.ts';
import type { PendingQueue } from './pending-queue.ts';
import { awaitsPlacement } from './placement-group.machine.ts';
import type { GroupRunner } from './placement-group.runner.ts';
import type { GroupSnapshot } from './placement-group.step.ts';
import { groupInfoOf } from './placement-group-info.ts';
import type { GroupPlacing } from './placement-group-placing.ts';
import { GroupReports } from './placement-group-reports.ts';
import type { GcsStore } from './store.ts';

/**
 * The placement-group directory's table (placement-groups.ts): each group's entry and the name
 * index, kept current from its machine's snapshots — stored, in or out of the pending queue, its
 * `placement_group_state` reported once durable (placement-group-reports.ts) — the REMOVED groups
 * recovered from the store, the removals under way, the forgetting of REMOVED groups past the
 * bound, and the queries answered from it.
 */
export interface GroupTableDeps {
  readonly store: GcsStore;
  readonly events: EventPublisher;
  readonly log: (line: string) => void;
  readonly queue: () => PendingQueue;
  /** How many REMOVED groups stay listed (and answer get_pg); default DEFAULT_MAX_REMOVED_GROUPS. */
  readonly maxRemovedGroups?: number;
}

/** The part of the directory the table tells when a group no longer waits (or is forgotten). */
export interface GroupTableParts {
  readonly placing: Pick<GroupPlacing, 'forget'>;
}

/** Queue ids of placement groups in the GCS's pending queue: a '.' never appears in an actor id (a subject token). */
export const PG_QUEUE_PREFIX = 'pg.';

export interface GroupEntry {
  readonly registration: CreatePg;
  readonly request: PlacementGroupRequest;
  readonly ref: GroupRunner;
  info: PlacementGroupInfoWire;
}

const nameKey = (namespace: string, name: string): string => `${namespace}\u0000${name}`;

/**
 * The states whose record a restarted GCS reads differently (recovery.ts, `restore`): CREATED is
 * kept with its bundles, REMOVED is kept as a record, and every other state is placed again from
 * its registration. So a group's record is written when it is created and when it enters one of
 * these; PENDING ⇄ PREPARED and the steps inside PENDING or RESCHEDULING would be JetStream round
 * trips that change nothing a restart reads (bench:pg: a third of the group table's writes).
 */
const STORED_STATES: ReadonlySet<PlacementGroupInfoWire['state']> = new Set(['CREATED', 'REMOVED', 'RESCHEDULING']);

export class GroupTable {
  readonly #entries = new Map<string, GroupEntry>();
  readonly #names = new Map<string, string>();
  readonly #reports: GroupReports;
  /** Removed groups: settles once their actors are dropped and their bundles cancelled on the raylets. */
  readonly #removals = new Map<string, Promise<void>>();
  /** REMOVED groups recovered from the store after a restart: reported, no machine. */
  readonly #removed = new Map<string, PlacementGroupInfoWire>();
  /**
   * REMOVED groups in the order their removal ended (the same bounded FIFO as dead actors'): past
   * the bound the oldest is forgotten, from the tables and the store. Kept forever, every group ever
   * created stayed in memory (~4 KB each), in the store and in every list walk.
   */
  readonly #gone: DeadActors;

  constructor(
    private readonly deps: GroupTableDeps,
    private readonly parts: GroupTableParts,
  ) {
    this.#gone = new DeadActors(deps.maxRemovedGroups ?? DEFAULT_MAX_REMOVED_GROUPS);
    this.#reports = new GroupReports(deps);
  }

  entry(pgId: string): GroupEntry | undefined {
    return this.#entries.get(pgId);
  }

  values(): IterableIterator<GroupEntry> {
    return this.#entries.values();
  }

  /** Whether a REMOVED group recovered from the store is kept as a record. */
  isRemoved(pgId: string): boolean {
    return this.#removed.has(pgId);
  }

  /** Whether a group of this name exists in the namespace. */
  named(namespace: string, name: string): boolean {
    return this.#names.has(nameKey(namespace, name));
  }

  /** Enters a group whose machine just started in the tables (then `observe` looks at its first state). */
  add(entry: GroupEntry): void {
    const { registration } = entry;
    this.#entries.set(registration.pgId, entry);
    if (registration.name !== undefined) this.#names.set(nameKey(registration.namespace, registration.name), registration.pgId);
  }

  /** Keeps a REMOVED group recovered from the store as a record (recovery.ts), forgotten past the bound. */
  keepRemoved(info: PlacementGroupInfoWire): void {
    this.#removed.set(info.id, info);
    this.#buried(info.id);
  }

  /** The removal under way of a group, if any. */
  removal(pgId: string): Promise<void> | undefined {
    return this.#removals.get(pgId);
  }

  /** A group's removal began: `settled` once its actors are dropped and its bundles cancelled; then it may be forgotten. */
  removing(pgId: string, settled: Promise<void>): void {
    this.#removals.set(pgId, settled);
    void settled.then(() => {
      if (this.#removals.get(pgId) === settled) this.#removals.delete(pgId);
      this.#buried(pgId);
    });
  }

  /** A group's removal ended: the oldest REMOVED groups past the bound are forgotten. */
  #buried(pgId: string): void {
    for (const id of this.#gone.died(pgId)) {
      const entry = this.#entries.get(id);
      if (entry !== undefined && entry.info.state !== 'REMOVED') continue;
      if (entry !== undefined) {
        entry.ref.stop();
        this.#entries.delete(id);
      }
      this.#removed.delete(id);
      this.#removals.delete(id);
      this.parts.placing.forget(id);
      this.deps.store.deleteGroup(id);
    }
  }

  get(query: MessageBody<'get_pg'>): PlacementGroupInfoWire {
    if (query.pgId !== undefined) {
      const entry = this.#entries.get(query.pgId);
      const removed = this.#removed.get(query.pgId);
      if (!entry && removed) return removed;
      if (!entry) throw notFound(`no placement group with id ${JSON.stringify(query.pgId)}`, { pgId: query.pgId });
      return entry.info;
    }
    if (query.name === undefined) throw new ProtocolError('INVALID_MESSAGE', 'get_pg needs a pgId or a name', { detail: { path: '', rule: 'pgId or name' } });
    const namespace = query.namespace ?? 'default';
    const id = this.#names.get(nameKey(namespace, query.name));
    if (id === undefined) throw notFound(`no placement group named ${JSON.stringify(query.name)} in namespace ${JSON.stringify(namespace)}`, { name: query.name, namespace });
    return this.#entries.get(id)!.info;
  }

  /**
   * get_pg as answered on the wire: the group as it is now, sent once that is stored — the answer,
   * like the events, never tells of a CREATED that a GCS restart would not know.
   */
  async getStored(query: MessageBody<'get_pg'>): Promise<PlacementGroupInfoWire> {
    const info = this.get(query);
    await this.deps.store.durable();
    return info;
  }

  list(): PlacementGroupInfoWire[] {
    return [...this.#removed.values(), ...[...this.#entries.values()].map((e) => e.info)];
  }

  observe(entry: GroupEntry, snapshot: GroupSnapshot, initial: boolean): void {
    const previous = entry.info;
    const info = groupInfoOf(snapshot);
    entry.info = info;
    const queueId = PG_QUEUE_PREFIX + info.id;
    const queue = this.deps.queue();
    if (snapshot.status === 'active' && awaitsPlacement(snapshot)) {
      if (!queue.has(queueId)) {
        queue.add(queueId);
        // back from a backoff or a lost node: a pass tries it (a newcomer is news to nobody else)
        if (!initial) queue.kick('actor_waiting');
      }
    } else {
      queue.delete(queueId);
      this.parts.placing.forget(info.id);
    }
    if (info.state === 'REMOVED' && info.name !== undefined && this.#names.get(nameKey(info.namespace, info.name)) === info.id) {
      this.#names.delete(nameKey(info.namespace, info.name));
    }
    if (initial || (info.state !== previous.state && STORED_STATES.has(info.state))) this.deps.store.putGroup({ registration: entry.registration, info });
    if (initial || info.state !== previous.state) this.#reports.report(info);
  }
}

export function notFound(message: string, detail: Record<string, unknown>): OrreryError {
  return new OrreryError('PLACEMENT_GROUP_NOT_FOUND', message, { detail });
}
