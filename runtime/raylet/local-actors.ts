import { OrreryError } from '../../lib/errors.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import { ActorDiedError, NodeStoppingError } from '../errors.ts';
import { HostManager } from './host-manager.ts';
import { Leases } from './leases.ts';
import type { WorkerHost } from './worker-host.ts';

/** The value of a create_actor reply: the actor runs in process `pid`. */
export interface ActorCreated {
  readonly actorId: string;
  readonly incarnation: number;
  readonly pid: number;
}

/** An actor lost with its worker host, as gcs.actor_died names it. */
/** How many ended incarnations a raylet remembers (one per actor: its last), oldest forgotten first. */
export const MAX_ENDED = 10_000;

export interface LostActor {
  readonly actorId: string;
  readonly incarnation: number;
}

/** An actor this raylet runs, as its registration lists it. */
export interface RunningActor extends LostActor {
  /** Its constructor has not returned yet. */
  readonly starting?: true;
}

export interface LocalActorsOptions {
  /** The node these actors run on (named by NodeStoppingError). */
  nodeId: string;
  total: ResourceSet;
  /** The node's leases, shared with its tasks; default: leases of their own over `total`. */
  leases?: Leases;
  /** Most worker hosts for tasks (HostManagerOptions.maxTaskHosts). */
  maxTaskHosts?: number;
  /** Leases ended by their task host, or lost with it (HostManagerOptions). */
  onLeaseEnded?(leaseId: string): void;
  onLeasesLost?(leaseIds: string[], cause: string): void;
  launch(opts: { dedicated: boolean }): Promise<WorkerHost>;
  /** Actors whose creation was acknowledged and whose worker host then exited unexpectedly. */
  onLost(actors: LostActor[], cause: string): void;
  log: (line: string) => void;
}

interface ActorRecord {
  readonly incarnation: number;
  /** Settles with the create_actor reply. */
  readonly created: Promise<ActorCreated>;
  /** True once the create_actor reply said it runs; only such actors are reported lost. */
  acknowledged: boolean;
}

/**
 * The actors one raylet runs: which incarnation of each, the resources each one leases, and the
 * worker hosts they run in. Incarnations order competing requests: the same one twice is one
 * actor, an older one is refused (STALE_INCARNATION), a newer one replaces the running one, and a
 * kill for an older incarnation leaves a newer one alone.
 *
 * An incarnation that ended here — its creation failed, it was killed, its host exited — is
 * remembered (the newest MAX_ENDED): a create of it that comes afterwards is answered as it ended,
 * never run again. The GCS asks for a create's answer again while it has none (gcs/raylets.ts): an
 * attempt that arrives just after a constructor threw, or after a kill, used to run the constructor
 * a second time.
 */
export class LocalActors {
  private readonly records = new Map<string, ActorRecord>();
  /**
   * The last incarnation of each actor that ended here, oldest first: the error its create was
   * answered with, or (killed, its host gone after it started) the cause an ActorDiedError is made
   * of when asked — no Error with its stack kept per killed actor.
   */
  private readonly ended = new Map<string, { incarnation: number; error?: Error; died?: string }>();
  private readonly leases: Leases;
  /** The node's worker hosts: this raylet's actors', and its tasks' too. */
  readonly hosts: HostManager;
  private closed = false;

  constructor(private readonly opts: LocalActorsOptions) {
    this.leases = opts.leases ?? new Leases(opts.total);
    this.hosts = new HostManager({
      launch: opts.launch,
      maxTaskHosts: opts.maxTaskHosts,
      onLeaseEnded: (id) => opts.onLeaseEnded?.(id),
      onLeasesLost: (ids, cause) => opts.onLeasesLost?.(ids, cause),
      onHostExit: (ids, cause) => this.onHostExit(ids, cause),
      log: opts.log,
    });
  }

  get count(): number {
    return this.records.size;
  }

  get hostCount(): number {
    return this.hosts.hostCount;
  }

  /** Total minus what the actors lease, in units. */
  available(): Record<string, number> {
    return this.leases.available();
  }

  /** Starts an actor; resolves once its constructor returned (its create_actor reply). */
  create(spec: CreateActor): Promise<ActorCreated> {
    if (this.closed) return Promise.reject(new NodeStoppingError(this.opts.nodeId, spec.actorId));
    const existing = this.records.get(spec.actorId);
    if (existing && existing.incarnation === spec.incarnation) return existing.created;
    const ended = this.ended.get(spec.actorId);
    if (ended && ended.incarnation >= spec.incarnation && !(existing && existing.incarnation > spec.incarnation)) {
      if (ended.incarnation === spec.incarnation) return Promise.reject(ended.error ?? new ActorDiedError(spec.actorId, ended.died ?? 'ended here'));
      return Promise.reject(
        new OrreryError('STALE_INCARNATION', `actor ${spec.actorId} ran incarnation ${ended.incarnation} here already; refusing ${spec.incarnation}`, {
          detail: { actorId: spec.actorId, running: ended.incarnation, requested: spec.incarnation },
        }),
      );
    }
    if (existing && existing.incarnation > spec.incarnation) {
      return Promise.reject(
        new OrreryError('STALE_INCARNATION', `actor ${spec.actorId} already runs incarnation ${existing.incarnation} here; refusing ${spec.incarnation}`, {
          detail: { actorId: spec.actorId, running: existing.incarnation, requested: spec.incarnation },
        }),
      );
    }
    const replaced = existing ? this.kill(spec.actorId, existing.incarnation) : Promise.resolve();
    this.leases.acquire(spec.actorId, spec.resources);
    const record: ActorRecord = { incarnation: spec.incarnation, acknowledged: false, created: replaced.then(() => this.start(spec, record)) };
    this.records.set(spec.actorId, record);
    return record.created;
  }

  /** Drops an actor unless a newer incarnation runs here; `killed` says whether one was dropped. */
  async kill(actorId: string, incarnation: number): Promise<{ killed: boolean }> {
    const record = this.records.get(actorId);
    if (!record || record.incarnation > incarnation) return { killed: false };
    this.drop(actorId);
    this.end(actorId, record.incarnation, { died: 'killed' });
    await this.hosts.kill(actorId);
    return { killed: true };
  }

  /** Every actor incarnation here, started or starting (`starting`: its constructor has not returned): what a registration tells the GCS. */
  running(): RunningActor[] {
    return [...this.records].map(([actorId, r]) => (r.acknowledged ? { actorId, incarnation: r.incarnation } : { actorId, incarnation: r.incarnation, starting: true }));
  }

  /** Drops every actor (the GCS forgot this node, and with it these actors). */
  forgetAll(): number {
    const ids = [...this.records.keys()];
    for (const id of ids) void this.kill(id, Number.MAX_SAFE_INTEGER);
    return ids.length;
  }

  /** Graceful: every worker host stopped. */
  async stop(): Promise<void> {
    this.closed = true;
    await this.hosts.stop();
    this.dropAll();
  }

  /** Abrupt: every worker host killed. */
  crash(): void {
    this.closed = true;
    this.hosts.crash();
    this.dropAll();
  }

  private dropAll(): void {
    for (const id of [...this.records.keys()]) this.drop(id);
  }

  private async start(spec: CreateActor, record: ActorRecord): Promise<ActorCreated> {
    try {
      const { pid } = await this.hosts.create(spec);
      // created as the raylet stops: it goes with the node, so it is not reported running
      if (this.closed) throw new NodeStoppingError(this.opts.nodeId, spec.actorId);
      if (this.records.get(spec.actorId) !== record) throw new ActorDiedError(spec.actorId, 'killed while starting');
      record.acknowledged = true;
      return { actorId: spec.actorId, incarnation: spec.incarnation, pid };
    } catch (err) {
      // stopped with the raylet (its host stopped, or it never got one): not the constructor's doing
      const failure = this.closed ? new NodeStoppingError(this.opts.nodeId, spec.actorId) : err;
      if (this.records.get(spec.actorId) === record) this.drop(spec.actorId);
      // as its create was answered (a kill or its host's exit may have dropped it first); not when a newer one replaced it
      if (!this.records.has(spec.actorId)) this.end(spec.actorId, spec.incarnation, { error: failure instanceof Error ? failure : new Error(String(failure)) });
      throw failure;
    }
  }

  private drop(actorId: string): void {
    this.records.delete(actorId);
    this.leases.release(actorId);
  }

  /** Remembers how an incarnation ended here (see the class comment), the newest MAX_ENDED. */
  private end(actorId: string, incarnation: number, how: { error: Error } | { died: string }): void {
    const known = this.ended.get(actorId);
    if (known && known.incarnation > incarnation) return;
    this.ended.delete(actorId);
    this.ended.set(actorId, { incarnation, ...how });
    if (this.ended.size > MAX_ENDED) this.ended.delete(this.ended.keys().next().value!);
  }

  private onHostExit(actorIds: string[], cause: string): void {
    const lost: LostActor[] = [];
    for (const actorId of actorIds) {
      const record = this.records.get(actorId);
      if (!record) continue;
      this.drop(actorId);
      // An actor still starting learns of the exit through its create_actor reply (and is remembered
      // as ended there, with that reply's error).
      if (record.acknowledged) this.end(actorId, record.incarnation, { died: cause });
      if (record.acknowledged) lost.push({ actorId, incarnation: record.incarnation });
    }
    if (lost.length > 0) this.opts.onLost(lost, cause);
  }
}
