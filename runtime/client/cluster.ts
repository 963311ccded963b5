import type { Observable } from 'rxjs';
import { rx } from '../rx.ts';
import { validateLabelKey, validateLabels } from '../../lib/labels/validate.ts';
import { parseTaints } from '../../lib/scheduling/taints.ts';
import { actorInfo } from '../../protocols/messages/actor.ts';
import { nodeInfo, recentEvents, type ClusterEventWire } from '../../protocols/messages/cluster.ts';
import { placementGroupInfo } from '../../protocols/messages/placement-group.ts';
import type { AutoscalerStatusReply } from '../../protocols/messages/autoscaling.ts';
import { unknown } from '../../protocols/validate.ts';
import type { DryRun, PlacementGroupDryRun } from '../../lib/scheduling/dry-run.ts';
import { validateActorOptions, type ActorOptions } from './actor-options.ts';
import { subjects as clusterSubjects, type ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import type { ActorClass } from './actor-class.ts';
import { actorBuilder, type ActorBuilder } from './actor-builder.ts';
import { ClientActorHandle, type ActorHandle, type HandleContext } from './actor-handle.ts';
import type { ActorWatcher } from './actor-watch.ts';
import { JobSession, type BeatConnection, type JobOwner, type JobSpec } from './job-session.ts';
import { reviveRefs } from '../../protocols/actor-ref.ts';
import { jobInfo } from '../../protocols/messages/job.ts';
import type { ActorInfo, ActorState, ClusterEvent, GcsStatus, JobInfo, NodeInfo, PlacementGroup, PlacementGroupInfo, RecentEvents, ScheduleFailedEvent } from './cluster-info.types.ts';
import { EventStream, type PlacementGroupWatcher } from './event-stream.ts';
import { actorFromWire, eventFromWire, joinNodeParts, nodeFromWire, placementGroupFromWire } from './from-wire.ts';
import { GcsClient } from './gcs-client.ts';
import { ClientPlacementGroup, PlacementGroupCreationWatch, type PlacementGroupContext } from './placement-group-handle.ts';
import { newPlacementGroupId, validatePlacementGroupOptions, type ClientPlacementGroupOptions } from './placement-group-options.ts';
import { taskBuilder, type TaskBuilder } from './task-builder.ts';
import type { AnyFunction, TaskFunction } from './task-function.ts';

/** A driver's connection to one cluster (API.md). */
export interface Cluster {
  /** The cluster name: the second subject token. */
  readonly name: string;
  /** The default namespace of named actors. */
  readonly namespace: string;
  readonly address: string;
  actor<T, A extends unknown[]>(cls: ActorClass<T, A>): ActorBuilder<T, A>;
  /** `cluster.task(f).options(o).remote(...args)`: runs a task defined with defineTask. */
  task<F extends AnyFunction>(fn: TaskFunction<F>): TaskBuilder<F>;
  /** A handle to a named actor; ActorNotFoundError when there is none. */
  getActor<T = unknown>(name: string, namespace?: string): Promise<ActorHandle<T>>;
  /**
   * Reserves bundles of resources across nodes (API.md). The options are checked here (typed
   * errors, nothing sent); resolves once the GCS has the group, in whatever state: use ready() to
   * wait until it is CREATED. `namespace` (default: the connection's) scopes its name.
   */
  placementGroup(opts: ClientPlacementGroupOptions): Promise<PlacementGroup>;
  /** A handle to a named placement group; PlacementGroupNotFoundError when there is none. */
  getPlacementGroup(name: string, namespace?: string): Promise<PlacementGroup>;
  nodes(): Promise<NodeInfo[]>;
  /** Every actor the GCS lists (dead ones up to its retention bound), or only those in `states`. */
  actors(opts?: { states?: ActorState[] }): Promise<ActorInfo[]>;
  placementGroups(): Promise<PlacementGroupInfo[]>;
  /** Every job the GCS knows (drivers' connections: RUNNING, and FINISHED up to its retention bound), oldest first. */
  jobs(): Promise<JobInfo[]>;
  /**
   * This connection's job id (docs/jobs.md): what it creates is owned by it unless detached.
   * Undefined for a connection that is not a job (the CLI's, `connect({ job: false })`).
   */
  readonly jobId: string | undefined;
  /**
   * Where an actor with these options would be placed now — the node, the selector tier, which
   * preferred terms hold there — or why it cannot be, with every node's reasons in words; nothing
   * is created (a dry run of the GCS's own scheduler: docs/scheduling.md, "explain"). The options are
   * checked as `cluster.actor(C).options(o)` checks them.
   */
  explain(options: ActorOptions): Promise<DryRun>;
  /** The same for a placement group: each bundle's node, or why the group cannot be placed. */
  explainPlacementGroup(options: ClientPlacementGroupOptions): Promise<PlacementGroupDryRun>;
  setNodeLabels(nodeId: string, change: { set?: Record<string, string>; remove?: string[] }): Promise<NodeInfo>;
  setNodeTaints(nodeId: string, change: { add?: Record<string, string>; remove?: string[] }): Promise<NodeInfo>;
  /** Every lifecycle event, from one shared subscription; completes on close(). */
  readonly events$: Observable<ClusterEvent>;
  readonly scheduleFailed$: Observable<ScheduleFailedEvent>;
  /**
   * The GCS's recent events (it keeps the last 10,000 by default), oldest first: of the given types
   * (all when absent), newer than `afterSeq`, at most the newest `limit` (default 1,000).
   */
  recentEvents(opts?: { types?: string[]; afterSeq?: number; limit?: number }): Promise<RecentEvents>;
  /**
   * The autoscaler's latest status as it reported it to the GCS, and how long ago (`status: null`:
   * no autoscaler has reported since the GCS started). What `orrery status` shows.
   */
  autoscalerStatus(): Promise<AutoscalerStatusReply>;
  /**
   * What the GCS is doing now: SERVING, or RECOVERING what an earlier GCS left — how many of the
   * nodes it expects are back and how long it waits at most for the rest. Answered at once while
   * reads such as `nodes()` wait for the recovery to end (what `orrery status` prints first).
   */
  gcsStatus(): Promise<GcsStatus>;
  close(): Promise<void>;
}

export interface ClusterClientOptions {
  address: string;
  cluster: string;
  namespace: string;
  /** Limit for one GCS request. */
  requestTimeoutMs: number;
  /** Limit for one actor call. */
  callTimeoutMs: number;
  /** Whether close() also closes the bus. */
  ownsBus: boolean;
  /** Register this connection as a job (docs/jobs.md); absent: not a job, what it creates is owned by nobody. */
  job?: JobSpec;
  /** How the job's heartbeat thread connects (job-session.ts); absent (the memory transport): the job beats on the event loop. */
  beatConnection?: BeatConnection;
  /**
   * For the cluster of a worker host (runtime/worker/worker-cluster.ts): who owns what it creates
   * (the job of the actor or task running now) and its default namespace (theirs), read at each
   * use; and close() does nothing, since every actor of the host shares it. Instead of `job`.
   */
  borrowed?: { owner: JobOwner; namespace: () => string };
}

export class ClusterClient implements Cluster, HandleContext, PlacementGroupContext {
  readonly name: string;
  readonly #namespace: string;
  readonly address: string;
  readonly subjects: ClusterSubjects;
  readonly gcs: GcsClient;
  private failed$: Observable<ScheduleFailedEvent> | undefined;
  readonly requestTimeoutMs: number;
  readonly callTimeoutMs: number;
  private readonly stream: EventStream;
  /** The connection's job, when it is one (job-session.ts); a worker's cluster borrows the running actor's. */
  readonly job: JobOwner | undefined;
  private closing: Promise<void> | undefined;

  private constructor(readonly bus: Bus, private readonly opts: ClusterClientOptions) {
    this.name = opts.cluster;
    this.#namespace = opts.namespace;
    this.address = opts.address;
    this.requestTimeoutMs = opts.requestTimeoutMs;
    this.callTimeoutMs = opts.callTimeoutMs;
    this.subjects = clusterSubjects(opts.cluster);
    this.gcs = new GcsClient(bus, this.subjects, { address: opts.address, timeoutMs: opts.requestTimeoutMs });
    this.stream = new EventStream(bus, this.subjects, () => this.gcs.leaderChanged());
    this.job =
      opts.borrowed?.owner ??
      (opts.job === undefined
        ? undefined
        : new JobSession(this.gcs, {
            namespace: opts.namespace,
            ...(opts.job.name === undefined ? {} : { name: opts.job.name }),
            ...(opts.job.heartbeat === undefined ? {} : { heartbeat: opts.job.heartbeat }),
            ...(opts.beatConnection === undefined ? {} : { thread: opts.beatConnection }),
          }));
  }

  get namespace(): string {
    return this.opts.borrowed?.namespace() ?? this.#namespace;
  }

  get jobId(): string | undefined {
    return this.job?.jobId;
  }

  /** `value` (a decoded payload) with each actor reference in it made a handle on this connection. */
  revive(value: unknown): unknown {
    return reviveRefs(value, (ref) => new ClientActorHandle(this, ref.actorId, ref.namespace));
  }

  // Both streams are made on first read, so a client that never follows them never loads rxjs (rx.ts).
  get events$(): Observable<ClusterEvent> {
    return this.stream.events$;
  }

  get scheduleFailed$(): Observable<ScheduleFailedEvent> {
    return (this.failed$ ??= this.events$.pipe(rx().filter((e): e is ScheduleFailedEvent => e.type === 'schedule_failed')));
  }

  /** A client on `bus`, its event subscription registered with the server before it returns. */
  static async open(bus: Bus, opts: ClusterClientOptions): Promise<ClusterClient> {
    const client = new ClusterClient(bus, opts);
    await bus.flush();
    if (client.job instanceof JobSession) client.job.start();
    return client;
  }

  actor<T, A extends unknown[]>(cls: ActorClass<T, A>): ActorBuilder<T, A> {
    return actorBuilder(this, cls, { ...cls.defaults });
  }

  task<F extends AnyFunction>(fn: TaskFunction<F>): TaskBuilder<F> {
    return taskBuilder(this, fn, { ...fn.defaults });
  }

  async getActor<T = unknown>(name: string, namespace: string = this.namespace): Promise<ActorHandle<T>> {
    const info = await this.gcs.request('get_actor', { name, namespace }, actorInfo);
    return new ClientActorHandle<T>(this, info.actorId, info.namespace);
  }

  async placementGroup(opts: ClientPlacementGroupOptions): Promise<PlacementGroup> {
    const pgId = newPlacementGroupId();
    const valid = validatePlacementGroupOptions(opts, { namespace: this.namespace, pgId });
    const create = (jobId: string | undefined) =>
      this.gcs.request('create_pg', { pgId, namespace: valid.namespace, name: valid.name, options: valid.wire, ...(jobId === undefined ? {} : { jobId }) }, placementGroupInfo);
    // following the group's events from before it exists: ready() then needs no get_pg
    const creation = new PlacementGroupCreationWatch((w) => this.watchPlacementGroup(pgId, w));
    let info;
    try {
      info = await (this.job ? this.job.run(create) : create(undefined));
    } catch (err) {
      creation.stop();
      throw err;
    }
    creation.seen(placementGroupFromWire(info));
    return new ClientPlacementGroup(this, info.id, info.namespace, info.name, creation);
  }

  async explain(options: ActorOptions): Promise<DryRun> {
    const valid = validateActorOptions(options, { namespace: this.namespace });
    return (await this.gcs.request('explain', { namespace: valid.namespace, options: valid.wire }, unknown())) as DryRun;
  }

  async explainPlacementGroup(options: ClientPlacementGroupOptions): Promise<PlacementGroupDryRun> {
    const valid = validatePlacementGroupOptions(options, { namespace: this.namespace, pgId: 'dry-run' });
    return (await this.gcs.request('explain', { namespace: valid.namespace, placementGroup: valid.wire }, unknown())) as PlacementGroupDryRun;
  }

  async getPlacementGroup(name: string, namespace: string = this.namespace): Promise<PlacementGroup> {
    const info = await this.gcs.request('get_pg', { name, namespace }, placementGroupInfo);
    return new ClientPlacementGroup(this, info.id, info.namespace, info.name);
  }

  // The lists below walk the GCS's pages (protocols/messages/page.ts) and return everything.
  async placementGroups(): Promise<PlacementGroupInfo[]> {
    return (await this.gcs.all('list_placement_groups', {}, placementGroupInfo)).map(placementGroupFromWire);
  }

  async jobs(): Promise<JobInfo[]> {
    return (await this.gcs.all('list_jobs', {}, jobInfo)).map((j) => ({ ...j }));
  }

  async nodes(): Promise<NodeInfo[]> {
    return joinNodeParts(await this.gcs.all('list_nodes', {}, nodeInfo)).map(nodeFromWire);
  }

  async actors(opts: { states?: ActorState[] } = {}): Promise<ActorInfo[]> {
    return (await this.gcs.all('list_actors', opts.states?.length ? { states: opts.states } : {}, actorInfo)).map(actorFromWire);
  }

  /** Changes a node's user labels (validated here; `orrery.io/` keys are refused) and returns the node. */
  async setNodeLabels(nodeId: string, change: { set?: Record<string, string>; remove?: string[] }): Promise<NodeInfo> {
    if (change.set !== undefined) validateLabels(change.set);
    for (const key of change.remove ?? []) validateLabelKey(key);
    return nodeFromWire(await this.gcs.request('set_node_labels', { nodeId, set: change.set, remove: change.remove }, nodeInfo));
  }

  /** Adds (`key: 'value[:Effect]'`) or removes taints of a node (validated here) and returns the node. */
  async setNodeTaints(nodeId: string, change: { add?: Record<string, string>; remove?: string[] }): Promise<NodeInfo> {
    if (change.add !== undefined) parseTaints(change.add);
    for (const key of change.remove ?? []) validateLabelKey(key);
    return nodeFromWire(await this.gcs.request('set_node_taints', { nodeId, add: change.add, remove: change.remove }, nodeInfo));
  }

  /**
   * Walks list_events pages (`fromOldest`) from `afterSeq` to the newest event and keeps the newest
   * `limit`, so no reply has to hold them all. Without a type filter seqs are contiguous, so a
   * one-event page first tells where the ring ends and the walk starts at the newest `limit`.
   */
  async recentEvents(opts: { types?: string[]; afterSeq?: number; limit?: number } = {}): Promise<RecentEvents> {
    const limit = opts.limit ?? 1000;
    const types = opts.types?.length ? opts.types : undefined;
    const ask = (afterSeq: number, max: number) => this.gcs.request('list_events', { types, afterSeq, limit: max, fromOldest: true }, recentEvents);
    let after = opts.afterSeq ?? 0;
    let omitted = 0;
    if (types === undefined) {
      const probe = await ask(after, 1);
      // probe.omitted: the events after `after` already gone from the ring
      const start = Math.max(after + probe.omitted, probe.lastSeq - limit);
      omitted += start - after;
      after = start;
    }
    const kept: ClusterEventWire[] = [];
    let lastSeq = 0;
    for (;;) {
      const reply = await ask(after, limit);
      lastSeq = reply.lastSeq;
      omitted += reply.omitted;
      kept.push(...reply.events);
      if (kept.length > limit) omitted += kept.splice(0, kept.length - limit).length;
      if (reply.next === undefined || reply.next <= after) break;
      after = reply.next;
    }
    const events: ClusterEvent[] = [];
    for (const wire of kept) {
      const event = eventFromWire(wire);
      if (event) events.push(event);
    }
    return { events, lastSeq, omitted };
  }

  autoscalerStatus(): Promise<AutoscalerStatusReply> {
    return this.gcs.autoscalerStatus();
  }

  gcsStatus(): Promise<GcsStatus> {
    return this.gcs.gcsStatus();
  }

  watchActor(actorId: string, watcher: ActorWatcher): () => void {
    return this.stream.watchActor(actorId, watcher);
  }

  watchPlacementGroup(pgId: string, watcher: PlacementGroupWatcher): () => void {
    return this.stream.watchPlacementGroup(pgId, watcher);
  }

  close(): Promise<void> {
    // a worker's cluster serves every actor and task of its host: one of them closing it ends nothing
    if (this.opts.borrowed) return Promise.resolve();
    this.closing ??= (async () => {
      // finishing the job kills what it owns; resolved once they are gone (or the GCS is away)
      await this.job?.close();
      this.stream.end();
      if (this.opts.ownsBus) await this.bus.close();
    })();
    return this.closing;
  }
}
