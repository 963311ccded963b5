import { randomBytes } from 'node:crypto';
import { createActor, fromPromise, type Actor } from 'xstate';
import { OrreryError } from '../../lib/errors.ts';
import { subjects } from '../../protocols/subjects.ts';
import { MalformedCounter } from '../worker/malformed.ts';
import type { ViewStats } from './cluster-view.ts';
import { LocalBundles } from './bundles.ts';
import { DiedReports } from './died-reports.ts';
import { Fence, leaseFromNodeTimeout } from './fence.ts';
import { GcsAnnouncements } from './gcs-announced.ts';
import { LeaderEpoch, type GcsLink } from './gcs-link.ts';
import { Heartbeats } from './heartbeats.ts';
import { defaultTaskHosts, HostLauncher } from './host-launcher.ts';
import { Leases } from './leases.ts';
import { LocalActors } from './local-actors.ts';
import { RayletTasks } from './raylet-tasks.ts';
import { rayletMachine, type HeartbeatInput, type RayletMachine } from './raylet.machine.ts';
import { NodeRegistration } from './registration.ts';
import { ServedSubjects } from './served-subjects.ts';
import type { RayletServiceOptions } from './service-options.ts';

/**
 * A raylet: registers its node with the GCS and keeps it alive with heartbeats (the Raylet machine),
 * answers create_actor / kill_actor on its own subjects by starting and dropping actors in its
 * worker hosts, prepare_bundle / commit_bundle / cancel_bundle by holding placement-group bundles
 * (bundles.ts), keeps the resource leases of its actors, tasks and bundles, and reports the actors of a
 * worker host that died (gcs.actor_died) at once. Its task side (raylet-tasks.ts) keeps a copy of
 * the cluster view and decides the tasks submitted to it on that copy: runs them here, spills them
 * back to the node its view prefers, or queues them.
 *
 * The service wires the Raylet machine to parts built here in order: its line to the GCS (gcs-link.ts:
 * the secret and the leader epoch), the actor_died reports (died-reports.ts), the leases, actors,
 * bundles, fence and task side, how worker hosts start (host-launcher.ts), the registration and
 * unregistration (registration.ts), the heartbeats (heartbeats.ts), the gcs_leader announcements
 * (gcs-announced.ts) and the subjects it serves with their signed answers (served-subjects.ts).
 */
export class RayletService {
  readonly malformed: MalformedCounter;
  /** Resolves when the raylet has stopped: by stop() or crash(), or because the GCS refused it. */
  readonly closed: Promise<{ error?: { code: string; message: string } }>;
  private readonly leases: Leases;
  private readonly actors: LocalActors;
  private readonly bundles: LocalBundles;
  private readonly tasks: RayletTasks;
  /** Stops the node's actors answering before the GCS can restart them elsewhere (fence.ts). */
  private readonly fence: Fence;
  private readonly gcs: GcsLink;
  private readonly died: DiedReports;
  private readonly launcher: HostLauncher;
  private readonly registration: NodeRegistration;
  private readonly heartbeats: Heartbeats;
  private readonly announcements: GcsAnnouncements;
  private readonly served: ServedSubjects;
  private machine: Actor<RayletMachine> | undefined;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private markClosed!: (how: { error?: { code: string; message: string } }) => void;
  /**
   * Drawn at start, sent with every message about this node: the GCS takes them only with it
   * (runtime/gcs/node-owner.ts). It never leaves the bus's GCS verbs, and is never logged.
   */
  private readonly secret = randomBytes(24).toString('base64url');

  constructor(private readonly opts: RayletServiceOptions) {
    const { config } = opts;
    this.gcs = {
      bus: opts.bus,
      subjects: subjects(config.cluster),
      nodeId: config.nodeId,
      secret: this.secret,
      timeoutMs: opts.requestTimeoutMs ?? 2000,
      epoch: new LeaderEpoch(),
      proofs: { seen: false, refused: 0 },
      log: opts.log,
    };
    this.malformed = new MalformedCounter('raylet: refused a malformed request', opts.log);
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.died = new DiedReports({ gcs: this.gcs, log: opts.log, retryMs: opts.retryMs });
    this.leases = new Leases(config.total, () => this.tasks.leasesChanged());
    this.actors = new LocalActors({
      nodeId: config.nodeId,
      total: config.total,
      leases: this.leases,
      maxTaskHosts: opts.maxTaskHosts ?? defaultTaskHosts(config.total.CPU ?? 0),
      launch: () => this.launcher.launch(),
      onLost: (actors, cause) => void this.died.reportDied(actors, cause),
      onLeaseEnded: (leaseId) => this.tasks.tasks.leaseEnded(leaseId),
      onLeasesLost: (leaseIds, cause) => this.tasks.tasks.leasesLost(leaseIds, cause),
      log: opts.log,
    });
    this.bundles = new LocalBundles(this.leases, config.nodeId);
    if (opts.fenceLeaseFraction !== undefined) leaseFromNodeTimeout(1000, opts.fenceLeaseFraction); // a bad fraction fails here, not at every registration
    this.fence = new Fence({
      onFence: () => {
        opts.log(`raylet ${this.nodeId}: fenced — no heartbeat acknowledged within the lease; actors stop answering calls`);
        this.actors.hosts.lease({ type: 'fence' });
      },
      onUnfence: () => opts.log(`raylet ${this.nodeId}: heartbeat acknowledged — fence lifted`),
      onRenew: (remainingMs) => this.actors.hosts.lease({ type: 'renew', remainingMs, sentAt: Date.now() }),
    });
    this.tasks = new RayletTasks({
      bus: opts.bus,
      subjects: this.gcs.subjects,
      config,
      leases: this.leases,
      hosts: this.actors.hosts,
      malformed: this.malformed,
      log: opts.log,
      requestTimeoutMs: this.gcs.timeoutMs,
      retryMs: opts.retryMs,
      maxSpillHops: opts.maxSpillHops,
      maxQueuedTasks: opts.maxQueuedTasks,
      maxQueuedTaskBytes: opts.maxQueuedTaskBytes,
      workerLeases: opts.workerLeases,
      followView: opts.followView,
      viewLingerMs: opts.viewLingerMs,
    });
    this.launcher = new HostLauncher({ hosts: opts.hosts, bus: opts.bus, config, log: opts.log, fence: this.fence });
    this.registration = new NodeRegistration({
      gcs: this.gcs,
      config,
      log: opts.log,
      leases: this.leases,
      actors: this.actors,
      bundles: this.bundles,
      tasks: this.tasks,
      fence: this.fence,
      partBytes: opts.registrationPartBytes,
      fenceLeaseFraction: opts.fenceLeaseFraction,
    });
    this.heartbeats = new Heartbeats({ gcs: this.gcs, leases: this.leases, fence: this.fence });
    this.announcements = new GcsAnnouncements(this.malformed);
    this.served = new ServedSubjects({ gcs: this.gcs, config, malformed: this.malformed, actors: this.actors, bundles: this.bundles, tasks: this.tasks });
  }

  get nodeId(): string {
    return this.opts.config.nodeId;
  }

  /** Where the machine is: 'connecting', 'registering', 'running', 'reconnecting' or 'stopped'. */
  get phase(): string {
    const value = this.machine?.getSnapshot().value;
    return typeof value === 'string' ? value : value ? Object.keys(value)[0] : 'new';
  }

  stats(): {
    phase: string;
    actors: number;
    bundles: { prepared: number; committed: number };
    fenced: boolean;
    hosts: number;
    taskHosts: number;
    tasks: { running: number; queued: number; queuedBytes: number; leases: number; expired: number; cancelled: number; refused: number };
    /** The cluster view and whether the raylet follows it now (raylet-tasks.ts, "Following the view"). */
    view: ViewStats & { following: boolean };
    seq: number;
    registrations: number;
    available: Record<string, number>;
    malformed: Record<string, number>;
  } {
    const context = this.machine?.getSnapshot().context;
    return {
      phase: this.phase,
      actors: this.actors.count,
      bundles: this.bundles.stats(),
      fenced: this.fence.fenced,
      hosts: this.actors.hostCount,
      taskHosts: this.actors.hosts.taskHostCount,
      ...this.tasks.stats(),
      seq: context?.seq ?? 0,
      registrations: context?.registrations ?? 0,
      available: this.leases.available(),
      malformed: this.malformed.snapshot(),
    };
  }

  /** Runs the Raylet machine; resolves once the node is registered, rejects when the GCS refused it. */
  start(): Promise<void> {
    const machine = rayletMachine.provide({
      actors: {
        connect: fromPromise(async () => this.served.subscribe((msg) => this.announcements.heard(msg, this.machine))),
        register: fromPromise(async () => this.registration.register()),
        heartbeat: fromPromise(async ({ input }: { input: HeartbeatInput }) => this.heartbeats.beat(input)),
      },
      actions: { forgetActors: () => this.forgetActors() },
    });
    const actor = createActor(machine, { input: { nodeId: this.nodeId, heartbeatMs: this.opts.heartbeatMs, retryMs: this.opts.retryMs } });
    this.opts.onActorSystem?.(actor.system);
    this.machine = actor;
    let last = '';
    return new Promise<void>((resolve, reject) => {
      actor.subscribe((snapshot) => {
        const phase = this.phase;
        if (phase !== last) this.opts.log(`raylet ${this.nodeId}: ${last || 'new'} → ${phase}`);
        last = phase;
        if (phase === 'running' && this.state === 'new') {
          this.state = 'running';
          resolve();
        }
        if (snapshot.status === 'done' && this.state !== 'stopping' && this.state !== 'stopped') {
          const error = snapshot.context.error ?? { code: 'INTERNAL', message: 'the raylet stopped' };
          reject(new OrreryError(error.code, error.message));
          void this.shutdown('stop', { error });
        }
      });
      actor.start();
    });
  }

  /** Graceful: no more heartbeats, subjects unsubscribed, every worker host stopped. */
  stop(): Promise<void> {
    return this.shutdown('stop', {});
  }

  /** Abrupt: heartbeats, subscriptions and hosts end at once; the GCS is told nothing. */
  crash(): Promise<void> {
    return this.shutdown('crash', {});
  }

  private async shutdown(how: 'stop' | 'crash', result: { error?: { code: string; message: string } }): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return void (await this.closed);
    this.state = 'stopping';
    this.fence.stop();
    if (how === 'crash') this.machine?.stop();
    else this.machine?.send({ type: 'STOP' });
    this.served.unsubscribe();
    this.tasks.stop(how);
    if (how === 'crash') this.actors.crash();
    else {
      await this.actors.stop();
      // nothing of the node answers any more: the GCS may restart its actors elsewhere now
      await this.registration.unregister();
    }
    this.machine?.stop();
    this.state = 'stopped';
    this.died.stop();
    this.markClosed(result);
  }

  /**
   * The GCS does not know this node (it restarted, or declared the node dead while it was cut off).
   * Actors and placement-group bundles stay: the registration that follows says which actor
   * incarnations run and which bundles are held here, and the GCS keeps those it agrees with and
   * has the others killed or cancelled (runtime/gcs/recovery.ts).
   */
  private forgetActors(): void {
    const { prepared, committed } = this.bundles.stats();
    this.opts.log(`raylet ${this.nodeId}: the GCS does not know this node; registering again with ${this.actors.count} actor(s) and ${prepared + committed} bundle(s)`);
  }
}
