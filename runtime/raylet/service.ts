import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { createActor, fromPromise, type Actor } from 'xstate';
import { OrreryError } from '../../lib/errors.ts';
import type { NatsAccess } from '../process/flags.ts';
import { fromUnits } from '../../lib/resources/quantity.ts';
import { checkCodeSource, type CodeSourcePolicy } from '../../protocols/code-source.ts';
import { decode, encode } from '../../protocols/codec.ts';
import { registered } from '../../protocols/messages/cluster.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { decodeReply, encodeError, encodeOk } from '../../protocols/reply.ts';
import { RayletVerb, subjects, type ClusterSubjects } from '../../protocols/subjects.ts';
import { bool, num, object, optional, type Infer } from '../../protocols/validate.ts';
import type { Bus, BusMsg, Subscription } from '../bus/bus.ts';
import type { HostNode } from '../worker/host.ts';
import type { HostLease } from '../../protocols/ipc.ts';
import { MalformedCounter } from '../worker/malformed.ts';
import { respond } from '../worker/respond.ts';
import type { ViewStats } from './cluster-view.ts';
import type { RayletConfig } from './config.ts';
import { LocalBundles } from './bundles.ts';
import { Fence, leaseFromNodeTimeout } from './fence.ts';
import { forWire, Leases } from './leases.ts';
import { LocalActors, type LostActor } from './local-actors.ts';
import { runningParts } from './registration-parts.ts';
import { RayletTasks, type FollowView } from './raylet-tasks.ts';
import { rayletMachine, type HeartbeatInput, type RayletMachine } from './raylet.machine.ts';
import type { WorkerHost } from './worker-host.ts';
import { WorkerProcess } from './worker-process.ts';

const eventOnly = { event: messages.event } as const;

export type HostsOption = { mode: 'inline' } | { mode: 'process'; natsAddress: string; natsAccess?: NatsAccess; workerExecArgv?: readonly string[] };

export interface RayletServiceOptions {
  bus: Bus;
  config: RayletConfig;
  hosts: HostsOption;
  log: (line: string) => void;
  /** Heartbeat pace until the GCS's registration reply sets it; default 500 ms. */
  heartbeatMs?: number;
  /** Pause between registrations nobody answered, and between actor_died retries; default 500 ms. */
  retryMs?: number;
  /** Timeout of each request to the GCS but heartbeats (whose pace bounds them); default 2,000 ms. */
  requestTimeoutMs?: number;
  /** Most worker hosts for tasks; default: the node's whole CPUs, at most the machine's cores (at least 1). */
  maxTaskHosts?: number;
  /** Spills of one task submission for want of room before a raylet that could run it keeps it; default 3. */
  maxSpillHops?: number;
  /**
   * Most tasks waiting in this raylet's queue, and most bytes of their submissions; a task that would
   * wait past either is answered `full` and submitted again by its driver later. Default 100,000
   * tasks and 256 MiB (local-tasks.ts).
   */
  maxQueuedTasks?: number;
  maxQueuedTaskBytes?: number;
  /** Worker leases granted to drivers with task results (default idle 100 ms, lifetime 1 s); false: none. */
  workerLeases?: { idleMs: number; lifetimeMs: number } | false;
  /** The fence lease as a fraction of the GCS's node timeout (fence.ts); default 0.6. */
  fenceLeaseFraction?: number;
  /** When the raylet follows gcs.view (raylet-tasks.ts, "Following the view"); default 'with-tasks'. */
  followView?: FollowView;
  /** How long it keeps following after its task work ended; default 30 s. */
  viewLingerMs?: number;
  /**
   * The most bytes one message of a registration lists of what the node runs; a longer list goes
   * ahead in parts (registration-parts.ts). Default RUNNING_PART_BYTES (512 KiB); specs set it low.
   */
  registrationPartBytes?: number;
  /** Handed the Raylet machine's actor system when the machine is created, so inspection (runtime/inspect) can attach to it while someone watches. */
  onActorSystem?: (system: Actor<RayletMachine>['system']) => void;
}

const heartbeatAnswer = object({ known: bool(), epoch: optional(num({ int: true, min: 0 })) });
/** `available` for the names of `total` only: what a registration reports free. */
function ownNames(available: Readonly<Record<string, number>>, total: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of Object.keys(total)) if (available[name] !== undefined) out[name] = available[name];
  return out;
}

const unregisterAnswer = object({ known: bool() });
const stagedAnswer = object({ staged: num({ int: true, min: 0 }) });
const KILL_TYPE = 'raylet_kill_actor';
/** The message types that each take one raylet subject of their own name. */
type Served = 'create_actor' | typeof KILL_TYPE | 'prepare_bundle' | 'commit_bundle' | 'cancel_bundle';
/** The longest pause between two attempts of an actor_died report (reportDied). */
const MAX_DIED_RETRY_MS = 5_000;

/**
 * A raylet: registers its node with the GCS and keeps it alive with heartbeats (the Raylet machine),
 * answers create_actor / kill_actor on its own subjects by starting and dropping actors in its
 * worker hosts, prepare_bundle / commit_bundle / cancel_bundle by holding placement-group bundles
 * (bundles.ts), keeps the resource leases of its actors, tasks and bundles, and reports the actors of a
 * worker host that died (gcs.actor_died) at once. Its task side (raylet-tasks.ts) keeps a copy of
 * the cluster view and decides the tasks submitted to it on that copy: runs them here, spills them
 * back to the node its view prefers, or queues them.
 */
export class RayletService {
  readonly malformed: MalformedCounter;
  /** Resolves when the raylet has stopped: by stop() or crash(), or because the GCS refused it. */
  readonly closed: Promise<{ error?: { code: string; message: string } }>;
  private readonly s: ClusterSubjects;
  private readonly leases: Leases;
  private readonly actors: LocalActors;
  private readonly bundles: LocalBundles;
  private readonly tasks: RayletTasks;
  private readonly node: HostNode;
  /** Stops the node's actors answering before the GCS can restart them elsewhere (fence.ts). */
  private readonly fence: Fence;
  private subs: Subscription[] = [];
  private machine: Actor<RayletMachine> | undefined;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  /**
   * The newest GCS leader epoch heard of (registration and heartbeat answers, and the messages
   * themselves): a create, kill or bundle request with an older one is refused STALE_EPOCH and
   * changes nothing (runtime/gcs/leader.ts).
   */
  private epoch = 0;
  private markClosed!: (how: { error?: { code: string; message: string } }) => void;

  constructor(private readonly opts: RayletServiceOptions) {
    const { config } = opts;
    this.s = subjects(config.cluster);
    this.node = { nodeId: config.nodeId, nodeName: config.nodeName, labels: config.labels };
    this.malformed = new MalformedCounter('raylet: refused a malformed request', opts.log);
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.leases = new Leases(config.total, () => this.tasks.leasesChanged());
    this.actors = new LocalActors({
      nodeId: config.nodeId,
      total: config.total,
      leases: this.leases,
      maxTaskHosts: opts.maxTaskHosts ?? defaultTaskHosts(config.total.CPU ?? 0),
      launch: () => this.launchHost(),
      onLost: (actors, cause) => void this.reportDied(actors, cause),
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
      subjects: this.s,
      config,
      leases: this.leases,
      hosts: this.actors.hosts,
      malformed: this.malformed,
      log: opts.log,
      requestTimeoutMs: this.timeoutMs,
      retryMs: opts.retryMs,
      maxSpillHops: opts.maxSpillHops,
      maxQueuedTasks: opts.maxQueuedTasks,
      maxQueuedTaskBytes: opts.maxQueuedTaskBytes,
      workerLeases: opts.workerLeases,
      followView: opts.followView,
      viewLingerMs: opts.viewLingerMs,
    });
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
        connect: fromPromise(async () => this.subscribe()),
        register: fromPromise(async () => this.register()),
        heartbeat: fromPromise(async ({ input }: { input: HeartbeatInput }) => this.heartbeat(input)),
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
    for (const sub of this.subs) sub.unsubscribe();
    this.subs = [];
    this.tasks.stop(how);
    if (how === 'crash') this.actors.crash();
    else {
      await this.actors.stop();
      // nothing of the node answers any more: the GCS may restart its actors elsewhere now
      await this.unregister();
    }
    this.machine?.stop();
    this.state = 'stopped';
    this.markClosed(result);
  }

  /** The raylet's own subjects, subscribed before it registers. */
  private async subscribe(): Promise<void> {
    const on = (verb: RayletVerb, handler: (msg: BusMsg) => void) => this.subs.push(this.opts.bus.subscribe(this.s.raylet(this.nodeId, verb), handler));
    on(
      RayletVerb.create_actor,
      this.signed('create_actor', async (body) => {
        checkCodeSource(body.code.moduleUrl, this.codeSources);
        return this.actors.create(body);
      }),
    );
    on(RayletVerb.kill_actor, this.signed(KILL_TYPE, (body) => this.actors.kill(body.actorId, body.incarnation)));
    on(RayletVerb.prepare_bundle, this.signed('prepare_bundle', async (body) => this.bundles.prepare(body)));
    on(RayletVerb.commit_bundle, this.signed('commit_bundle', async (body) => this.bundles.commit(body.bundles)));
    on(RayletVerb.cancel_bundle, this.signed('cancel_bundle', async (body) => this.bundles.cancel(body.bundles)));
    this.subs.push(...this.tasks.subscribe());
    this.subs.push(this.opts.bus.subscribe(this.s.event('gcs_leader'), (msg) => this.gcsAnnounced(msg)));
    // load is published by a raylet, not requested of it
    const served = new Set<string>([
      RayletVerb.create_actor,
      RayletVerb.kill_actor,
      RayletVerb.prepare_bundle,
      RayletVerb.commit_bundle,
      RayletVerb.cancel_bundle,
      RayletVerb.submit_task,
      RayletVerb.cancel_task,
      RayletVerb.load,
    ]);
    for (const verb of Object.values(RayletVerb)) {
      if (served.has(verb)) continue;
      on(verb, (msg) => {
        const err = new OrreryError('UNSUPPORTED', `this raylet does not serve ${verb} yet`, { detail: { verb } });
        respond(msg, () => encodeError(err));
      });
    }
    await this.opts.bus.flush();
  }

  /** When a gcs_leader event last made the machine beat at once (performance.now()). */
  private lastAnnounced = -Infinity;

  /**
   * A GCS opened its subjects (the gcs_leader event): the Raylet machine beats at once, so a standby
   * that takes over or a restarted GCS hears from this node within a round trip (raylet.machine.ts,
   * GCS_ANNOUNCED). At most once per heartbeat period, whatever publishes such events; a malformed
   * one is counted and changes nothing.
   */
  private gcsAnnounced(msg: BusMsg): void {
    try {
      const { body } = decode(msg.data, { registry: eventOnly });
      if (body.type !== 'gcs_leader') throw new OrreryError('INVALID_MESSAGE', `type: expected gcs_leader on ${msg.subject}, got ${body.type}`);
    } catch (err) {
      this.malformed.count(err);
      return;
    }
    const now = performance.now();
    const period = this.machine?.getSnapshot().context.heartbeatMs ?? 0;
    if (now - this.lastAnnounced < period) return;
    this.lastAnnounced = now;
    this.machine?.send({ type: 'GCS_ANNOUNCED' });
  }

  /** Decodes with the one message type a subject takes; anything else is refused with its wire error. */
  /**
   * Answers that the GCS acts on — a create's outcome, a bundle's, a kill's — carry this node's
   * secret (in the value, or in the error's detail), so that no other node-role connection
   * subscribed to this node's subjects can answer for it (runtime/gcs/node-owner.ts, `answeredBy`).
   */
  private signed<K extends Served>(type: K, run: (body: ReturnType<(typeof messages)[K]>) => Promise<unknown>) {
    return this.handler(type, run, this.secret);
  }

  private handler<K extends Served>(type: K, run: (body: ReturnType<(typeof messages)[K]>) => Promise<unknown>, secret?: string) {
    const registry = { [type]: messages[type] } as Record<K, (typeof messages)[K]>;
    const ok = (value: unknown): Uint8Array => encodeOk(secret === undefined ? value : withSecret(value, secret));
    const error = (err: unknown): Uint8Array => encodeError(secret === undefined ? err : errorWithSecret(err, secret));
    return (msg: BusMsg): void => {
      let body: ReturnType<(typeof messages)[K]>;
      try {
        body = decode(msg.data, { registry }).body as ReturnType<(typeof messages)[K]>;
        this.checkEpoch((body as { epoch?: number }).epoch);
      } catch (err) {
        this.malformed.count(err);
        respond(msg, () => error(err));
        return;
      }
      run(body).then(
        (value) => respond(msg, () => ok(value)),
        (err: unknown) => respond(msg, () => error(err)),
      );
    };
  }

  /**
   * Drawn at start, sent with every message about this node: the GCS takes them only with it
   * (runtime/gcs/node-owner.ts). It never leaves the bus's GCS verbs, and is never logged.
   */
  private readonly secret = randomBytes(24).toString('base64url');
  /** NODE_NAME_TAKEN was logged for the current wait (said once, not per retry). */
  private nameTakenSaid = false;

  private async register(): Promise<{ heartbeatMs: number }> {
    const { config } = this.opts;
    const attempt = ++this.registerAttempts;
    // what still runs here: a restarted GCS keeps what it agrees with and has the rest killed; a
    // list larger than one message goes ahead in parts (registration-parts.ts)
    const parts = runningParts({ actors: this.actors.running(), bundles: this.bundles.list() }, this.opts.registrationPartBytes);
    const last = parts[parts.length - 1]!;
    let earlier: { batch: string; parts: number } | undefined;
    if (parts.length > 1) {
      earlier = { batch: randomBytes(12).toString('base64url'), parts: parts.length - 1 };
      for (let index = 0; index < parts.length - 1; index++) {
        // an attempt the machine gave up on (GCS_ANNOUNCED: a new GCS) sends nothing more
        if (attempt !== this.registerAttempts) throw new OrreryError('TIMEOUT', 'registration superseded by a newer attempt');
        const part = encode('register_running', { nodeId: config.nodeId, batch: earlier.batch, index, ...parts[index]!, secret: this.secret });
        decodeReply((await this.opts.bus.request(this.s.gcs('register_running'), part, { timeoutMs: this.timeoutMs })).data, { value: stagedAnswer });
      }
    }
    const body = encode('register_node', {
      nodeId: config.nodeId,
      name: config.nodeName,
      labels: config.labels,
      taints: config.taints,
      // the node's own names only: the GCS takes bundle resources back from `running` (a node with
      // 30,000 bundles has 60,000 such names, 2 MB); it never read them here
      resources: { total: config.total, available: ownNames(this.leases.available(), config.total) },
      address: { ip: config.nodeIp, hostname: config.hostname, pid: process.pid },
      running: earlier === undefined ? last : { ...last, earlier },
      secret: this.secret,
    });
    const sentAt = performance.now();
    const msg = await this.opts.bus.request(this.s.gcs('register_node'), body, { timeoutMs: this.timeoutMs });
    let reply: Infer<typeof registered>;
    try {
      reply = decodeReply(msg.data, { value: registered });
    } catch (err) {
      if ((err as { code?: unknown }).code === 'NODE_NAME_TAKEN' && !this.nameTakenSaid) {
        this.nameTakenSaid = true;
        const holder = String(((err as OrreryError).detail as { holder?: unknown } | undefined)?.holder ?? '?');
        this.opts.log(
          `raylet ${config.nodeId}: the node name ${JSON.stringify(config.nodeName)} belongs to live node ${holder}; registering again until it is free (its node declared dead). To run several raylets on one host, give each its own --node-name.`,
        );
      }
      throw err;
    }
    this.nameTakenSaid = false;
    this.registered = true;
    this.checkEpoch(reply.epoch);
    this.tasks.setRareResources(reply.rareResources);
    if (reply.nodeTimeoutMs !== undefined) this.fence.setLease(leaseFromNodeTimeout(reply.nodeTimeoutMs, this.opts.fenceLeaseFraction));
    this.fence.acked(sentAt); // the GCS starts the node's timeout when it registers it
    return { heartbeatMs: reply.heartbeatMs };
  }

  /** Registration attempts begun: one that is no longer the newest stops sending its parts. */
  private registerAttempts = 0;

  /** A registration went through: a graceful stop then tells the GCS (unregister). */
  private registered = false;

  /**
   * Tells the GCS this node is gone (gcs.unregister_node), once its worker hosts are stopped, so it
   * restarts the node's actors without waiting out the node timeout. Best effort: a GCS that cannot
   * be reached declares the node dead at its timeout, as before.
   */
  private async unregister(): Promise<void> {
    if (!this.registered) return;
    try {
      const msg = await this.opts.bus.request(this.s.gcs('unregister_node'), encode('unregister_node', { nodeId: this.nodeId, secret: this.secret }), { timeoutMs: this.timeoutMs });
      decodeReply(msg.data, { value: unregisterAnswer });
      this.opts.log(`raylet ${this.nodeId}: unregistered from the GCS`);
    } catch (err) {
      this.opts.log(`raylet ${this.nodeId}: could not unregister (the GCS declares the node dead at its timeout): ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** One beat; its request waits as long as the machine says (two periods), not `requestTimeoutMs`. */
  private async heartbeat({ seq, timeoutMs }: HeartbeatInput): Promise<{ known: boolean }> {
    const body = encode('heartbeat', { nodeId: this.nodeId, seq, available: this.leases.availableWithoutBundles(), secret: this.secret });
    const sentAt = performance.now();
    let answer: { known: boolean; epoch?: number };
    try {
      const msg = await this.opts.bus.request(this.s.gcs('heartbeat'), body, { timeoutMs });
      answer = decodeReply(msg.data, { value: heartbeatAnswer });
      this.checkEpoch(answer.epoch);
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      this.fence.failed(typeof code === 'string' ? code : 'INTERNAL', sentAt);
      throw err;
    }
    if (answer.known) this.fence.acked(sentAt);
    else this.fence.forgotten(); // up until the registration that follows is acknowledged
    return { known: answer.known };
  }

  /** Adopts a newer epoch; an older one is STALE_EPOCH (a GCS that lost its lease). */
  private checkEpoch(epoch: number | undefined): void {
    if (epoch === undefined) return;
    if (epoch < this.epoch) {
      throw new OrreryError('STALE_EPOCH', `epoch ${epoch} is older than the leader's (${this.epoch}): refused`, { detail: { epoch, current: this.epoch } });
    }
    this.epoch = epoch;
  }

  /** The lease a host starts with: what is left of the raylet's, or fenced; none when not armed. */
  private hostLease(): HostLease | undefined {
    const remainingMs = this.fence.remainingMs();
    if (remainingMs === undefined) return undefined;
    return remainingMs > 0 ? { type: 'renew', remainingMs, sentAt: Date.now() } : { type: 'fence' };
  }

  private get timeoutMs(): number {
    return this.opts.requestTimeoutMs ?? 2000;
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

  /**
   * Tells the GCS that actors here died, until it has heard: sent again after `retryMs`, doubling
   * up to 5 s, for as long as the raylet runs (an answer — even a refusal — ends it). Before, it gave
   * up after 10 attempts (~5 s without a GCS): a GCS cut off from the bus longer than that, and
   * back without a restart, kept those actors ALIVE for good — never restarted, their calls never
   * answered. The GCS takes a report about an incarnation that is not the current one as stale, so
   * one that arrives late changes nothing.
   */
  private async reportDied(actors: LostActor[], cause: string): Promise<void> {
    const body = encode('actor_died', { nodeId: this.nodeId, actors, cause, secret: this.secret });
    const first = this.opts.retryMs ?? 500;
    for (let attempt = 1; this.state !== 'stopped'; attempt++) {
      try {
        const msg = await this.opts.bus.request(this.s.gcs('actor_died'), body, { timeoutMs: this.timeoutMs });
        decode(msg.data, { registry: { reply: messages.reply } });
        return;
      } catch (err) {
        // said for the first attempts, then every tenth: a long outage would say it every few seconds
        if (attempt <= 3 || attempt % 10 === 0) {
          this.opts.log(`raylet ${this.nodeId}: actor_died for ${actors.length} actor(s) not delivered (attempt ${attempt}, sending it again): ${(err as Error).message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_DIED_RETRY_MS, first * 2 ** Math.min(attempt - 1, 16))));
      }
    }
  }

  private launchHost(): Promise<WorkerHost> {
    const { hosts, bus, config, log } = this.opts;
    const lease = this.hostLease();
    // Loaded on first use: a raylet process runs its hosts as children and never holds the worker's
    // ActorHost and TaskRunner itself (spec/runtime/process-graphs.spec.ts keeps them out of it).
    if (hosts.mode === 'inline') {
      return import('./worker-host.ts').then(({ InlineWorkerHost }) => new InlineWorkerHost({ bus, cluster: config.cluster, node: this.node, log, lease, codeSources: this.codeSources }));
    }
    return WorkerProcess.start({ cluster: config.cluster, natsAddress: hosts.natsAddress, natsAccess: hosts.natsAccess, node: this.node, log, execArgv: hosts.workerExecArgv, lease, freshLease: () => this.hostLease(), codeRoots: config.codeRoots });
  }

  /** Where this node's worker hosts may load code from: its code roots (protocols/code-source.ts). */
  private get codeSources(): CodeSourcePolicy {
    return { roots: this.opts.config.codeRoots };
  }
}

/** Task hosts: one per whole CPU of the node, no more than the machine has cores, at least one. */
function defaultTaskHosts(cpuUnits: number): number {
  return Math.max(1, Math.min(Math.floor(fromUnits('CPU', cpuUnits)), availableParallelism()));
}


/** An answer's value with the node's secret beside it (answers are objects; anything else is wrapped). */
export function withSecret(value: unknown, secret: string): object {
  const plain = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { value };
  // Object.assign, not `{ ...plain, secret }`: that literal gives every answer a hidden class of its
  // own on Node.js 20, and msgpack then encodes each one slowly (docs/benchmarks.md, "Object spreads on Node.js 20")
  return Object.assign({}, plain, { secret });
}

/** An error answer with the node's secret in its detail. */
function errorWithSecret(err: unknown, secret: string): OrreryError {
  const e = err instanceof OrreryError ? err : new OrreryError('INTERNAL', err instanceof Error ? err.message : String(err));
  const detail = e.detail !== null && typeof e.detail === 'object' ? (e.detail as Record<string, unknown>) : {};
  return new OrreryError(e.code, e.message, { detail: { ...detail, secret } });
}
