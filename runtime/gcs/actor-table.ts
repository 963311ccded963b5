import { ProtocolError } from '../../protocols/errors.ts';
import type { ActorInfoWire, RegisterActor } from '../../protocols/messages/actor.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import { ActorNotFoundError } from '../errors.ts';
import type { ActorContext, ActorMachineInput, ActorSnapshot } from './actor.machine.ts';
import { machineInput, sleepingContext, sleepSoon, type ActorEntry } from './actor-entry.ts';
import type { ActorIndexes } from './actor-indexes.ts';
import { infoOf } from './actor-info.ts';
import type { CompiledActor } from './actor-options.ts';
import type { ActorPlacing } from './actor-placing.ts';
import type { DeadActors } from './dead-actors.ts';
import type { EventPublisher } from './events.ts';
import type { EvictionGuard } from './eviction.ts';
import { stopMachine, type ActorRef } from './gcs.machine.ts';
import type { PendingQueue } from './pending-queue.ts';
import { PlacementGroupDirectory } from './placement-groups.ts';
import { pageOf, SortedKeys, type Page } from './paging.ts';
import type { GcsStore } from './store.ts';

/**
 * The actor directory's table (actors.ts): each actor's entry, kept current from its Actor
 * machine's snapshots — stored, in or out of the pending queue, its `actor_state` published, put to
 * sleep once ALIVE and woken for its next event, and once DEAD out of the indexes and, past the
 * retention bound, forgotten — and the queries answered from it.
 */
export interface ActorTableDeps {
  readonly store: GcsStore;
  /** Which dead actors are still remembered (dead-actors.ts). */
  readonly deadActors: DeadActors;
  readonly events: EventPublisher;
  readonly queue: () => PendingQueue;
  readonly eviction: () => EvictionGuard;
  readonly spawn: (input: ActorMachineInput) => ActorRef;
  /** Starts the Actor machine of a sleeping actor again, ALIVE with this context (see ActorEntry). */
  readonly wake: (context: ActorContext) => ActorRef;
  readonly log: (line: string) => void;
}

/** The parts of the directory the table keeps current as actors come and die. */
export interface ActorTableParts {
  readonly indexes: ActorIndexes;
  readonly placing: Pick<ActorPlacing, 'forget'>;
}

export class ActorTable {
  readonly #entries = new Map<string, ActorEntry>();
  /** Actor ids in list_actors order, re-sorted after an actor is added or forgotten. */
  readonly #order = new SortedKeys(() => this.#entries.keys());

  constructor(
    private readonly deps: ActorTableDeps,
    private readonly parts: ActorTableParts,
  ) {}

  entry(actorId: string): ActorEntry | undefined {
    return this.#entries.get(actorId);
  }

  values(): IterableIterator<ActorEntry> {
    return this.#entries.values();
  }

  /** Adds an entry without a machine (a DEAD actor restored from the store). */
  add(entry: ActorEntry): void {
    this.#entries.set(entry.registration.actorId, entry);
    this.#order.added(entry.registration.actorId);
  }

  /** Starts an actor's machine and enters it in the table. */
  start(reg: RegisterActor, compiled: CompiledActor, counts: { numRestarts: number; incarnation: number }): ActorRef {
    const ref = this.deps.spawn(machineInput(reg, compiled, counts));
    const snapshot = ref.getSnapshot();
    const entry: ActorEntry = { registration: reg, compiled, ref, asleep: false, info: infoOf(reg, snapshot), placementGroupId: PlacementGroupDirectory.groupOf(reg.options) };
    this.#entries.set(reg.actorId, entry);
    this.#order.added(reg.actorId);
    this.parts.indexes.added(entry);
    if (compiled.requiredDuringExecution) this.deps.eviction().requiredActors(1);
    this.#observe(entry, snapshot, true, entry.info);
    this.#follow(entry, ref);
    return ref;
  }

  /** The running machine, started again if the actor sleeps; undefined once DEAD. */
  awake(entry: ActorEntry | undefined): ActorRef | undefined {
    if (entry === undefined || entry.ref !== undefined || !entry.asleep) return entry?.ref;
    const ref = this.deps.wake(sleepingContext(entry));
    entry.ref = ref;
    entry.asleep = false;
    this.#follow(entry, ref);
    return ref;
  }

  get(query: MessageBody<'get_actor'>): ActorInfoWire {
    if (query.actorId !== undefined) {
      const entry = this.#entries.get(query.actorId);
      if (!entry) throw new ActorNotFoundError({ actorId: query.actorId });
      return entry.info;
    }
    if (query.name === undefined) throw new ProtocolError('INVALID_MESSAGE', 'get_actor needs an actorId or a name', { detail: { path: '', rule: 'actorId or name' } });
    const namespace = query.namespace ?? 'default';
    const id = this.parts.indexes.named(namespace, query.name);
    if (id === undefined) throw new ActorNotFoundError({ name: query.name, namespace });
    return this.#entries.get(id)!.info;
  }

  list(): ActorInfoWire[] {
    return [...this.#entries.values()].map((e) => e.info);
  }

  /** list_actors: one page in actor-id order (paging.ts), of the given states only when asked. */
  page(query: MessageBody<'list_actors'>, opts: { maxBytes: number }): Page<ActorInfoWire> {
    const states = query.states === undefined ? undefined : new Set<string>(query.states);
    const get = (actorId: string): ActorInfoWire | undefined => {
      const info = this.#entries.get(actorId)?.info;
      return info === undefined || (states !== undefined && !states.has(info.state)) ? undefined : info;
    };
    return pageOf({ keys: this.#order.get(), get }, query, opts);
  }

  /** Stops every Actor machine still running (the GCS is stopping); their actors stay as they are. */
  stopAll(): void {
    for (const entry of this.#entries.values()) if (entry.ref !== undefined) stopMachine(entry.ref);
  }

  /** How many Actor machines run now, and how many actors sleep (ALIVE, machine stopped). */
  get machines(): { running: number; asleep: number } {
    let running = 0;
    let asleep = 0;
    for (const entry of this.#entries.values()) {
      if (entry.ref !== undefined) running++;
      else if (entry.asleep) asleep++;
    }
    return { running, asleep };
  }

  #follow(entry: ActorEntry, ref: ActorRef): void {
    ref.subscribe({ next: (snapshot) => this.#observe(entry, snapshot, false), error: (err) => this.deps.log(`actor ${entry.registration.actorId} machine failed: ${String(err)}`) });
  }

  #observe(entry: ActorEntry, snapshot: ActorSnapshot, initial: boolean, known?: ActorInfoWire): void {
    const previous = entry.info.state;
    const info = known ?? infoOf(entry.registration, snapshot);
    entry.info = info;
    this.deps.store.putActor({ registration: entry.registration, info, incarnation: snapshot.context.incarnation });
    const queue = this.deps.queue();
    if (info.state === 'PENDING' || info.state === 'RESTARTING') queue.add(info.actorId);
    else queue.delete(info.actorId);
    if (!initial && info.state === previous) return;
    this.deps.events.actorState(info);
    if (info.state === 'ALIVE' && entry.ref !== undefined) sleepSoon(entry, entry.ref);
    else if (info.state === 'SCHEDULED') queue.kick('actor_placed');
    else if (info.state === 'RESTARTING' || (info.state === 'PENDING' && previous === 'SCHEDULED')) queue.kick('actor_waiting');
    else if (info.state === 'DEAD') {
      entry.ref = undefined;
      this.parts.indexes.died(entry);
      // an actor killed while it waited leaves the queue without another tryPlace: its explanation goes here
      this.parts.placing.forget(info.actorId);
      if (entry.compiled.requiredDuringExecution) this.deps.eviction().requiredActors(-1);
      this.parts.indexes.freeName(info.namespace, entry.registration.name, info.actorId);
      for (const oldest of this.deps.deadActors.died(info.actorId)) this.#forget(oldest);
    }
  }

  /** A dead actor past the retention bound: gone from the table and the store (its name was freed at death). */
  #forget(actorId: string): void {
    this.#entries.delete(actorId);
    this.#order.removed(actorId);
    this.deps.store.deleteActor(actorId);
  }
}
