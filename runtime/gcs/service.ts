import { performance } from 'node:perf_hooks';
import { waitFor, type Actor } from 'xstate';
import { ClusterState } from '../../lib/cluster/cluster-state.ts';
import { OrreryError } from '../../lib/errors.ts';
import type { GcsStatusWire } from '../../protocols/messages/cluster.ts';
import { subjects, type ClusterSubjects } from '../../protocols/subjects.ts';
import type { ActorDirectory } from './actors.ts';
import type { AutoscalerReports } from './autoscaler-reports.ts';
import type { BundleClient } from './bundle-client.ts';
import type { Demands } from './demands.ts';
import type { EventLog } from './event-log.ts';
import type { EvictionGuard } from './eviction.ts';
import { createGcsActor } from './gcs-actor.ts';
import type { GcsChildren } from './gcs-children.ts';
import type { GcsMachine } from './gcs.machine.ts';
import { intOptions, type GcsOptions } from './gcs-options.ts';
import { buildGcsParts } from './gcs-parts.ts';
import { gcsStatus, GraceWindow } from './gcs-status.ts';
import type { IntakeQueue } from './intake-queue.ts';
import type { JobDirectory } from './jobs.ts';
import type { NodeDirectory } from './nodes.ts';
import type { PendingQueue } from './pending-queue.ts';
import type { PlacementGroupDirectory } from './placement-groups.ts';
import type { RayletAnswers } from './raylet-answers.ts';
import type { RayletClient } from './raylets.ts';
import type { Recovery } from './recovery.ts';
import { serveVerbs } from './routes.ts';
import { ServedVerbs } from './served-verbs.ts';
import type { GcsStore } from './store.ts';
import type { ViewBroadcaster } from './view.ts';
import type { WireIntake } from './wire.ts';

/**
 * The GCS: its parts (built in order by gcs-parts.ts), the request subjects it serves
 * (served-verbs.ts, routes.ts) and the Gcs actor that opens them, recovers, serves and closes them
 * (gcs-actor.ts). What it is started with is in gcs-options.ts; what it says of its own state
 * (gcs_status), in gcs-status.ts.
 */
export class GcsService {
  readonly cluster: string;
  readonly subjects: ClusterSubjects;
  readonly state = new ClusterState();
  readonly store: GcsStore;
  readonly intake: WireIntake;
  readonly view: ViewBroadcaster;
  readonly queue: PendingQueue;
  /** The GCS's requests to raylets (create_actor, kill_actor). */
  readonly #raylets: RayletClient;
  /** The checks on raylets' answers, forged ones counted (raylet-answers.ts). */
  readonly #answers: RayletAnswers;
  /** The Actor and Node machines started with the Gcs actor as parent (gcs-children.ts). */
  readonly #children: GcsChildren;
  readonly history: EventLog;
  /** Where register_actor requests wait their turn (intake-queue.ts). */
  readonly registrations: IntakeQueue;
  readonly eviction: EvictionGuard;
  readonly nodes: NodeDirectory;
  readonly actors: ActorDirectory;
  readonly groups: PlacementGroupDirectory;
  /** The job table: drivers' connections, their heartbeats and what they own (jobs.ts). */
  readonly jobs: JobDirectory;
  readonly bundles: BundleClient;
  readonly recovery: Recovery;
  /** resource_demands: what waits, grouped, and the nodes (demands.ts). */
  readonly demands: Demands;
  /** The autoscaler's latest status and its events (autoscaler-reports.ts). */
  readonly autoscaler: AutoscalerReports;
  readonly actor: Actor<GcsMachine>;
  /** Resolves when the Gcs machine serves: mutating requests that arrive earlier wait for it. */
  readonly serving: Promise<void>;
  #markServing!: () => void;
  /** When the grace window began and ended (recovering only): what gcs_status and `start()` count from. */
  readonly #grace = new GraceWindow();
  readonly #epoch: number;
  readonly #served: ServedVerbs;

  constructor(readonly opts: GcsOptions) {
    const log = opts.log ?? (() => {});
    const option = intOptions(opts);
    this.cluster = opts.cluster ?? 'default';
    this.subjects = subjects(this.cluster);
    const heartbeatMs = option('heartbeatMs', 500, 10);
    const nodeTimeoutMs = option('nodeTimeoutMs', 3000, 1);
    const epoch = option('epoch', 0, 0);
    this.#epoch = epoch;
    this.serving = new Promise((resolve) => (this.#markServing = resolve));
    const parts = buildGcsParts({
      opts, option, log, cluster: this.cluster, subjects: this.subjects, state: this.state, heartbeatMs, nodeTimeoutMs, epoch,
      gcs: () => this.actor,
      grace: this.#grace,
    });
    ({
      store: this.store, intake: this.intake, history: this.history, view: this.view, answers: this.#answers, raylets: this.#raylets, queue: this.queue,
      children: this.#children, registrations: this.registrations, eviction: this.eviction, jobs: this.jobs, actors: this.actors, bundles: this.bundles,
      groups: this.groups, nodes: this.nodes, recovery: this.recovery, demands: this.demands, autoscaler: this.autoscaler,
    } = parts);
    this.#served = new ServedVerbs({ bus: opts.bus, serve: () => serveVerbs(this), nodes: this.nodes, jobs: this.jobs });
    this.actor = createGcsActor({
      actorLogic: parts.actorLogic,
      openSubjects: () => this.#served.open(),
      closeSubjects: () => this.#close(),
      recovery: this.recovery,
      grace: this.#grace,
      sliceMs: () => option('queueSliceMs', 5, 1),
      kick: parts.kick,
      log,
      cluster: this.cluster,
      graceMs: option('graceMs', 3000, 0),
      inspect: opts.inspect,
      epoch,
      events: parts.events,
      serving: () => {
        this.#markServing();
        void this.jobs.serve();
      },
    });
  }

  /**
   * Starts the Gcs machine; resolves once it serves: every request subject open and, when the store
   * held an earlier GCS's nodes or actors, the grace window over and everything reconciled.
   */
  async start(): Promise<void> {
    if (this.recovery.needed) {
      const { expected } = this.recovery;
      this.opts.log?.(`recovering: ${expected.size} node(s) and ${this.store.counts().actors} actor record(s) in the store; waiting up to ${this.actor.getSnapshot().context.graceMs} ms for the raylets`);
    }
    this.actor.start();
    const snapshot = await waitFor(this.actor, (s) => s.value === 'serving' || s.status !== 'active');
    if (snapshot.value !== 'serving') {
      this.actor.stop();
      throw new OrreryError('GCS_START_FAILED', `the GCS of cluster ${JSON.stringify(this.cluster)} could not open its subjects`, { detail: { cluster: this.cluster } });
    }
    // the part of a recovery the grace window does not bound (bench:gcs reads this line)
    const ended = this.#grace.ended;
    if (ended) this.opts.log?.(`serving: recovered in ${(performance.now() - ended.at).toFixed(1)} ms after the grace window ended (${ended.by})`);
  }

  async stop(): Promise<void> {
    if (this.actor.getSnapshot().status !== 'active') return;
    this.actor.send({ type: 'STOP' });
    await waitFor(this.actor, (s) => s.status !== 'active');
    this.actor.stop();
  }

  /** gcs_status (gcs-status.ts): answered at once, while the GCS recovers too. */
  status(): GcsStatusWire {
    return gcsStatus({ epoch: this.#epoch, snapshot: this.actor.getSnapshot(), recovery: this.recovery, grace: this.#grace });
  }

  /** Whether the Gcs machine serves (not starting, recovering or stopping). */
  get isServing(): boolean {
    return this.actor.getSnapshot().value === 'serving';
  }

  /** Answers from raylets refused for want of their node's secret (raylet-answers.ts). */
  get forgedAnswers(): number {
    return this.#answers.forged;
  }

  /** The Gcs machine's closeSubjects: the subjects closed, then every part stopped, in this order. */
  async #close(): Promise<void> {
    this.#served.close();
    this.registrations.stop();
    this.queue.stop();
    this.eviction.stop();
    this.view.stop();
    this.nodes.stop();
    this.jobs.stop();
    this.actors.stopRefreshes();
    this.#children.stop();
    this.groups.stopAll();
    this.#raylets.stop();
    this.actors.stopAll();
  }
}
