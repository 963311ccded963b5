import type { Actor, InspectionEvent } from 'xstate';
import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import { DEFAULT_MAX_BYTES } from '../../protocols/codec.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import { gcsVerbsOf, inboxRole } from '../auth/roles.ts';
import { provideActorEffects } from './actor-effects.ts';
import { ActorDirectory } from './actors.ts';
import { AutoscalerReports } from './autoscaler-reports.ts';
import { BundleClient } from './bundle-client.ts';
import { DEFAULT_MAX_DEAD_ACTORS, DEFAULT_MAX_DEAD_NODES, DEFAULT_MAX_REMOVED_GROUPS, DeadActors } from './dead-actors.ts';
import { Demands } from './demands.ts';
import { DEFAULT_EVENT_HISTORY, EventLog } from './event-log.ts';
import { EventPublisher } from './events.ts';
import { EvictionGuard } from './eviction.ts';
import { GcsChildren } from './gcs-children.ts';
import type { GcsMachine } from './gcs.machine.ts';
import type { GcsOptions, IntOptionReader } from './gcs-options.ts';
import type { GraceWindow } from './gcs-status.ts';
import { IntakeQueue, slicer } from './intake-queue.ts';
import { DEFAULT_JOB_TIMEOUT_MS, JobDirectory } from './jobs.ts';
import { nodeMachine } from './node.machine.ts';
import { NodeDirectory } from './nodes.ts';
import { PendingQueue } from './pending-queue.ts';
import { PG_QUEUE_PREFIX } from './placement-group-table.ts';
import { PlacementGroupDirectory } from './placement-groups.ts';
import { RayletAnswers } from './raylet-answers.ts';
import { RayletClient } from './raylets.ts';
import { Recovery } from './recovery.ts';
import { MemoryStore } from './store.ts';
import { DEFAULT_VIEW_INTERVAL_MS, ViewBroadcaster } from './view.ts';
import { WireIntake } from './wire.ts';

/**
 * The parts of a GCS (service.ts), built in this order: the store; the request intake (wire.ts),
 * which refuses a verb the sender's role may not send; the event history and its publisher; the
 * cluster-view broadcast; the checks on raylets' answers (raylet-answers.ts) and the requests to
 * raylets; the pending queue; the Actor and Node machines started under the Gcs actor
 * (gcs-children.ts); the register_actor intake queue; the eviction guard; the job, actor and
 * placement-group directories with the bundle requests between them; the node directory; the
 * recovery; the demands and the autoscaler's reports. Each is given the others it calls; one built
 * later, or the Gcs actor (created after them all), is read only when it is called.
 */
export interface GcsPartsDeps {
  readonly opts: GcsOptions;
  /** Reads the integer options, each where it is used (gcs-options.ts). */
  readonly option: IntOptionReader;
  readonly log: (line: string) => void;
  readonly cluster: string;
  readonly subjects: ClusterSubjects;
  readonly state: ClusterState;
  readonly heartbeatMs: number;
  readonly nodeTimeoutMs: number;
  /** The leader epoch this GCS holds (leader.ts); 0 without a lease. */
  readonly epoch: number;
  /** The Gcs actor, read when a part calls it. */
  readonly gcs: () => Actor<GcsMachine>;
  /** Where the recovery says the grace window ended early. */
  readonly grace: GraceWindow;
}

/** Builds the parts; the service keeps them (its fields, by their names here). */
export function buildGcsParts(deps: GcsPartsDeps) {
  const { opts, option, log, cluster, subjects, state, heartbeatMs, nodeTimeoutMs, epoch } = deps;
  const { bus } = opts;
  const rareResources = [...(opts.rareResources ?? [])];
  const rng = opts.rng ?? Math.random;
  const store = opts.store ?? new MemoryStore();
  const intake = new WireIntake({
    log,
    maxBytes: option('maxMessageBytes', DEFAULT_MAX_BYTES, 1),
    mayRequest: (verb, reply) => {
      const role = inboxRole(cluster, reply);
      return role === undefined || role === 'gcs' || (gcsVerbsOf(role) as readonly string[]).includes(verb);
    },
  });
  const history = new EventLog(option('eventHistory', DEFAULT_EVENT_HISTORY, 1), {
    // event seqs go on above the mark an earlier GCS stored ahead of them, so readers never see one twice
    firstSeq: store.getMeta('eventSeq') ?? 0,
    reserve: (upTo) => store.putMeta('eventSeq', upTo),
  });
  const events = new EventPublisher({ bus, subjects, log, history });
  const view = new ViewBroadcaster({ bus, subjects, state, intervalMs: option('viewIntervalMs', DEFAULT_VIEW_INTERVAL_MS, 1), log, maxBytes: option('maxMessageBytes', DEFAULT_MAX_BYTES, 1) });
  const answers = new RayletAnswers({ epoch, log, onStaleEpoch: opts.onStaleEpoch, owners: () => nodes.owners });
  const raylets = new RayletClient({
    bus,
    subjects,
    createTimeoutMs: option('createTimeoutMs', 30_000, 1),
    killTimeoutMs: option('killTimeoutMs', 5000, 1),
    log,
    ...answers.checks,
    nodeLive: (nodeId) => nodes.has(nodeId),
    nodeTimeoutMs,
  });
  const queue = new PendingQueue({
    tryPlace: (id) => (id.startsWith(PG_QUEUE_PREFIX) ? groups.tryPlace(id) : actors.tryPlace(id)),
    waitsOnPeers: (id) => !id.startsWith(PG_QUEUE_PREFIX) && actors.waitsOnPeers(id),
    log,
    sliceMs: option('queueSliceMs', 5, 1),
  });
  const kick = queue.kick.bind(queue);
  const nodeChanged = (nodeId: string): void => {
    nodes.touched(nodeId);
    eviction.mark(nodeId);
  };
  const actorLogic = provideActorEffects({
    state,
    log,
    nodeChanged,
    resourcesFreed: () => kick('resources_freed'),
    requestCreate: (c) => actors.requestCreate(c),
    requestKill: (c) => actors.requestKill(c),
    scheduleFailed: (c, failure) => actors.scheduleFailed(c, failure),
    actorPlaced: (c) => actors.placed(c),
    actorLeft: (c) => actors.left(c),
  });
  const children = new GcsChildren({
    parent: deps.gcs,
    actorLogic,
    nodeLogic: nodeMachine.provide({
      actions: {
        timeoutUnheard: ({ context }) => log(`node ${context.nodeId}: no heartbeat for ${context.nodeTimeoutMs} ms while the GCS could not hear it; not counted`),
      },
    }),
  });
  const registrations = new IntakeQueue({ sliceMs: option('queueSliceMs', 5, 1) });
  const eviction = new EvictionGuard({
    state,
    running: (id) => actors.running(id),
    evict: (id, reason, cause) => actors.evict(id, reason, cause),
    whenSettled: (fn) => queue.whenIdle(fn),
  });
  const jobs = new JobDirectory({
    store,
    events,
    log,
    timeoutMs: option('jobTimeoutMs', DEFAULT_JOB_TIMEOUT_MS, 1),
    ...(opts.maxFinishedJobs === undefined ? {} : { maxFinishedJobs: option('maxFinishedJobs', 0, 0) }),
    // groups first: removing a group kills its actors too, with the group's cause
    endOwned: async (jobIds, cause) => {
      const sliceMs = option('queueSliceMs', 5, 1);
      const removed = await groups.removeOwnedBy(jobIds, cause, slicer(sliceMs));
      const killed = await actors.killOwnedBy(jobIds, cause, slicer(sliceMs));
      return { actors: killed, groups: removed };
    },
  });
  const jobRunning = (jobId: string | undefined): void => jobs.checkRunning(jobId);
  const actors: ActorDirectory = new ActorDirectory({
    state, store, events, raylets, rng, rareResources, log, jobRunning,
    deadActors: new DeadActors(option('maxDeadActors', DEFAULT_MAX_DEAD_ACTORS, 0)),
    queue: () => queue,
    eviction: () => eviction,
    unreachableNodes: () => nodes.unreachableNodes,
    nodeUnreachable: (nodeId) => nodes.unreachable(nodeId),
    spawn: (input) => children.startActor(input),
    wake: (context) => children.wakeActor(context),
    explainBackoffMs: opts.explainBackoffMs,
  });
  const bundles = new BundleClient({ bus, subjects, timeoutMs: option('bundleTimeoutMs', 5000, 1), log, ...answers.checks });
  const groups: PlacementGroupDirectory = new PlacementGroupDirectory({
    state, events, bundles, rng, rareResources, log, jobRunning,
    maxRemovedGroups: option('maxRemovedGroups', DEFAULT_MAX_REMOVED_GROUPS, 0),
    queue: () => queue,
    unreachableNodes: () => nodes.unreachableNodes,
    nodeUnreachable: (nodeId) => nodes.unreachable(nodeId),
    accepting: () => children.accepting(),
    // group machines are stepped without an xstate actor (placement-group.runner.ts); their steps
    // go to the Gcs actor system's inspection observers, as its actors' do
    inspect: (event) => (deps.gcs().system as unknown as { _sendInspectionEvent(event: InspectionEvent): void })._sendInspectionEvent(event),
    store,
    nodeChanged,
    resourcesChanged: () => kick('resources_freed'),
    killActorsInGroup: (pgId, cause) => actors.killInGroup(pgId, cause),
  });
  const nodes: NodeDirectory = new NodeDirectory({
    state, store, events, view, heartbeatMs, nodeTimeoutMs, rareResources, log, kick, epoch,
    maxDeadNodes: option('maxDeadNodes', DEFAULT_MAX_DEAD_NODES, 0),
    constraintsChanged: (nodeId) => eviction.mark(nodeId),
    spawn: (input) => children.startNode(input),
    failActorsOn: (nodeId, cause) => actors.failOnNode(nodeId, cause),
    registered: (nodeId, running) => recovery.registered(nodeId, running),
    failGroupsOn: (nodeId) => groups.failOnNode(nodeId),
  });
  const recovery: Recovery = new Recovery({
    store,
    nodes,
    actors,
    groups,
    log,
    allBack: () => {
      deps.grace.end('early: every node the table held as live is back');
      deps.gcs().send({ type: 'NODES_BACK' });
    },
  });
  const demands = new Demands({
    state,
    rareResources,
    waiting: () => queue.ids(),
    isGroup: (id) => id.startsWith(PG_QUEUE_PREFIX),
    actor: (id) => actors.waiting(id),
    group: (id) => groups.waiting(id),
    bundleCounts: () => groups.bundleCounts(),
    maxBytes: intake.maxBytes,
  });
  const autoscaler = new AutoscalerReports({ events });
  return { store, intake, history, events, view, answers, raylets, queue, kick, actorLogic, children, registrations, eviction, jobs, actors, bundles, groups, nodes, recovery, demands, autoscaler };
}
