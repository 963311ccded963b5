import { randomBytes } from 'node:crypto';
import { createActor, type Actor } from 'xstate';
import { decide } from '../../lib/autoscaling/decide.ts';
import type { DemandOutcome } from '../../lib/autoscaling/types.ts';
import { NODE_GROUP_LABEL } from '../../lib/labels/builtin.ts';
import type { AutoscalerEvent, AutoscalerStatus, DemandNode, ResourceDemandsReply } from '../../protocols/messages/autoscaling.ts';
import { autoscalerMachine } from './autoscaler.machine.ts';
import type { AutoscalerConfig, NodeTypeConfig } from './config.ts';
import { clip, demandsOf, idle, liveNode, nodeNamePattern } from './demand-reply.ts';
import type { LaunchedNode, NodeProvider } from './provider.ts';

/** What the autoscaler asks of the GCS (GcsClient has all three; specs may wrap it). */
export interface AutoscalerGcs {
  resourceDemands(limit?: number): Promise<ResourceDemandsReply>;
  drainNode(nodeId: string): Promise<void>;
  autoscalerReport(status: AutoscalerStatus, events: readonly AutoscalerEvent[]): Promise<void>;
}

export interface AutoscalerOptions {
  readonly config: AutoscalerConfig;
  readonly gcs: AutoscalerGcs;
  readonly provider: NodeProvider;
  /** The NATS address launched nodes join. */
  readonly address: string;
  readonly log?: (line: string) => void;
  readonly now?: () => number;
  /** The machine's actor system, for the inspection stream. */
  readonly onActorSystem?: (system: Actor<typeof autoscalerMachine>['system']) => void;
}

/** Launch failures of a type back off 2 s, 4 s, 8 s … up to a minute. */
const BACKOFF_BASE_MS = 2000;
const BACKOFF_MAX_MS = 60_000;
const KEEP_FAILURES = 20;

interface Launch {
  readonly type: string;
  readonly since: number;
}

interface Managed {
  readonly type: string;
  readonly nodeId: string;
}

/**
 * The autoscaler (issue 16): every `updateIntervalSeconds` one round —
 *
 *   1. resource_demands from the GCS: pending work grouped by where it can go, and the nodes;
 *   2. launches requested earlier whose node registered (under its given name) become managed
 *      nodes (node_launched); those not registered after `launchTimeoutSeconds` are given up
 *      (node_launch_failed) and terminated;
 *   3. lib/autoscaling decides what to launch; up to `maxConcurrentLaunches` launches are in flight,
 *      and a type whose launches fail waits out its backoff;
 *   4. managed nodes idle (no actors, no bundles, nothing leased) for `idleTimeoutSeconds`, above
 *      their type's minWorkers, are drained (ALIVE → DRAINING in the GCS: no new placements) and
 *      terminated. Nodes it did not launch are never touched;
 *   5. its status and events go to the GCS (autoscaler_report), for `orrery status` and the event
 *      stream.
 *
 * Nodes are recognised by name, `<cluster>-<type>-<6 hex>`, so an autoscaler started again adopts the
 * nodes an earlier one launched.
 */
export class Autoscaler {
  readonly #opts: AutoscalerOptions;
  readonly #now: () => number;
  readonly #log: (line: string) => void;
  readonly #types: Map<string, NodeTypeConfig>;
  readonly #actor;
  readonly #launching = new Map<string, Launch>();
  readonly #managed = new Map<string, Managed>();
  readonly #idleSince = new Map<string, number>();
  readonly #terminating = new Set<string>();
  readonly #backoff = new Map<string, { failures: number; until: number }>();
  readonly #failures: AutoscalerStatus['failures'] = [];
  readonly #events: AutoscalerEvent[] = [];
  /** Infeasible demands already announced (demand_infeasible), by description and reason. */
  #announced = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #rounds = 0;
  #idleWaiters: (() => void)[] = [];
  #lastStatus: AutoscalerStatus | undefined;
  #round: Promise<void> = Promise.resolve();
  /** The provider's launches in flight (an earlier autoscaler's) have been taken over (#adoptLaunches). */
  #launchesAdopted = false;
  /**
   * When resource_demands was answered again after a round it failed: a node can register only while
   * a GCS runs, so a launch's timeout counts from here at the earliest (#registrations).
   */
  #gcsBackAt: number | undefined;
  /** The last resource_demands failed: the GCS was not reachable. */
  #gcsAway = false;

  constructor(opts: AutoscalerOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log ?? (() => {});
    this.#types = new Map(opts.config.nodeTypes.map((t) => [t.name, t]));
    this.#actor = createActor(autoscalerMachine.provide({ actions: { update: () => void (this.#round = this.#runRound()) } }), { input: { cluster: opts.config.cluster } });
    opts.onActorSystem?.(this.#actor.system);
  }

  start(): void {
    this.#actor.start();
    this.#actor.send({ type: 'TICK' });
  }

  /** Stops the rounds (launched nodes keep running; see `down`). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#round;
    this.#actor.send({ type: 'STOP' });
    await this.#opts.provider.close();
  }

  /** Terminates every node this autoscaler launched or adopted, and those still launching. */
  async down(): Promise<string[]> {
    const names = [...this.#managed.keys(), ...this.#launching.keys()];
    await Promise.all(names.map((name) => this.#opts.provider.terminate({ nodeType: this.#managed.get(name)?.type ?? this.#launching.get(name)!.type, nodeName: name, nodeId: this.#managed.get(name)?.nodeId }).catch((err) => this.#log(`terminate ${name}: ${String(err)}`))));
    this.#managed.clear();
    this.#launching.clear();
    return names;
  }

  get status(): AutoscalerStatus | undefined {
    return this.#lastStatus;
  }

  get rounds(): number {
    return this.#rounds;
  }

  /** Resolves after the next round ends (specs and examples wait on rounds, never on time). */
  nextRound(): Promise<void> {
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async #runRound(): Promise<void> {
    try {
      await this.update();
      this.#actor.send({ type: 'UPDATED' });
    } catch (err) {
      this.#log(`round failed: ${err instanceof Error ? err.message : String(err)}`);
      this.#actor.send({ type: 'FAILED', error: err instanceof Error ? err.message : String(err) });
    }
    this.#rounds++;
    for (const w of this.#idleWaiters.splice(0)) w();
    if (!this.#stopped) this.#timer = setTimeout(() => this.#actor.send({ type: 'TICK' }), this.#opts.config.updateIntervalSeconds * 1000);
  }

  /** One round (see the class comment). Exposed for specs that drive rounds themselves. */
  async update(): Promise<void> {
    const { config } = this.#opts;
    const now = this.#now();
    let reply: ResourceDemandsReply;
    try {
      reply = await this.#opts.gcs.resourceDemands();
    } catch (err) {
      this.#gcsAway = true;
      throw err;
    }
    if (this.#gcsAway) {
      this.#gcsAway = false;
      this.#gcsBackAt = this.#now();
    }
    const byName = new Map(reply.nodes.map((n) => [n.name, n]));
    await this.#adoptLaunches(byName);
    this.#registrations(byName, now);
    const { demands, described, invalid } = demandsOf(reply);
    const launchingByType: Record<string, number> = {};
    for (const l of this.#launching.values()) launchingByType[l.type] = (launchingByType[l.type] ?? 0) + 1;
    const decision = decide({
      nodeTypes: config.nodeTypes.map((t) => t.type),
      nodes: reply.nodes.filter((n) => !this.#terminating.has(n.name)).map(liveNode),
      launching: launchingByType,
      demands,
      rareResources: reply.rareResources,
      seed: this.#rounds + 1,
    });
    let slots = config.maxConcurrentLaunches - this.#launching.size;
    for (const [type, n] of Object.entries(decision.launch)) {
      const backoff = this.#backoff.get(type);
      if (backoff && backoff.until > now) continue;
      for (let i = 0; i < n && slots > 0; i++, slots--) this.#launch(type, now);
    }
    this.#scaleDown(reply, now);
    const status = this.#statusOf(reply, decision.demands, described, invalid, now);
    this.#lastStatus = status;
    await this.#opts.gcs.autoscalerReport(status, this.#events.splice(0));
  }

  /**
   * Once, at the first round that can ask: the provider's nodes of this cluster that have not
   * registered are launches an earlier autoscaler left in flight (it was killed, or stopped, while
   * they started). They are taken as this autoscaler's own, from when they were asked for — counted
   * against the demand, given up after the launch timeout — so it does not launch again for what
   * they will serve. A provider that cannot tell (no `launched`) leaves them to be adopted when they
   * register; one whose listing fails fails the round, before anything is launched, and is asked
   * again next round.
   */
  async #adoptLaunches(byName: Map<string, DemandNode>): Promise<void> {
    if (this.#launchesAdopted) return;
    const { provider, config } = this.#opts;
    if (provider.launched === undefined) {
      this.#launchesAdopted = true;
      return;
    }
    let nodes: readonly LaunchedNode[];
    try {
      nodes = await provider.launched();
    } catch (err) {
      // the round stops here: launching without knowing what is in flight could launch twice
      throw new Error(`listing the ${provider.kind} provider's nodes failed (asked again next round): ${err instanceof Error ? err.message : String(err)}`);
    }
    this.#launchesAdopted = true;
    const now = this.#now();
    for (const n of nodes) {
      if (byName.has(n.nodeName) || this.#launching.has(n.nodeName) || this.#managed.has(n.nodeName)) continue;
      // only names this cluster's autoscaler gives, of a type it is configured with
      const type = n.nodeType ?? [...this.#types.keys()].find((t) => nodeNamePattern(config.cluster, t).test(n.nodeName));
      if (type === undefined || !this.#types.has(type) || !nodeNamePattern(config.cluster, type).test(n.nodeName)) continue;
      // no launch time, or one that is not a time: counted from now (it would never time out)
      const since = n.since !== undefined && Number.isFinite(n.since) ? Math.min(n.since, now) : now;
      this.#launching.set(n.nodeName, { type, since });
      this.#log(`taking over the launch of ${n.nodeName} (${type}), asked for ${Math.round((now - since) / 1000)} s ago by an earlier autoscaler`);
    }
  }

  #registrations(byName: Map<string, DemandNode>, now: number): void {
    for (const [name, l] of this.#launching) {
      const node = byName.get(name);
      if (node) {
        this.#launching.delete(name);
        this.#managed.set(name, { type: l.type, nodeId: node.nodeId });
        this.#backoff.delete(l.type);
        this.#event('node_launched', l.type, `node ${name} registered ${Math.round((now - l.since) / 100) / 10} s after its launch was requested`, name, node.nodeId);
      } else if (now - Math.max(l.since, this.#gcsBackAt ?? l.since) > this.#opts.config.launchTimeoutSeconds * 1000) {
        // a node cannot register while no GCS runs: after an outage every launch gets a whole timeout again
        this.#launching.delete(name);
        this.#failed(l.type, name, `node ${name} did not register within ${this.#opts.config.launchTimeoutSeconds} s; giving it up`, now);
        void this.#opts.provider.terminate({ nodeType: l.type, nodeName: name }).catch((err) => this.#log(`terminate ${name}: ${String(err)}`));
      }
    }
    // nodes an earlier autoscaler of this cluster launched
    for (const node of byName.values()) {
      const type = node.labels[NODE_GROUP_LABEL];
      if (type === undefined || !this.#types.has(type) || this.#managed.has(node.name)) continue;
      if (nodeNamePattern(this.#opts.config.cluster, type).test(node.name)) this.#managed.set(node.name, { type, nodeId: node.nodeId });
    }
    for (const [name, m] of this.#managed) {
      if (!byName.has(name) && !this.#terminating.has(name)) {
        this.#managed.delete(name);
        this.#idleSince.delete(m.nodeId);
      }
    }
  }

  #launch(type: string, now: number): void {
    const t = this.#types.get(type)!;
    const name = `${this.#opts.config.cluster}-${type}-${randomBytes(3).toString('hex')}`;
    this.#launching.set(name, { type, since: now });
    this.#event('node_launch_requested', type, `launching ${name} (${type})`, name);
    this.#log(`launching ${name} (${type})`);
    this.#opts.provider
      .launch({
        nodeType: type,
        nodeName: name,
        labels: { ...t.labels, [NODE_GROUP_LABEL]: type },
        taints: t.taints,
        resources: t.resources,
        address: this.#opts.address,
        cluster: this.#opts.config.cluster,
        connectWaitSeconds: this.#opts.config.launchTimeoutSeconds,
      })
      .then(
        () => this.#actor.send({ type: 'LAUNCHED' }),
        (err: unknown) => {
          if (!this.#launching.delete(name)) return;
          const message = err instanceof Error ? err.message : String(err);
          this.#failed(type, name, `launching ${name} failed: ${message}`, this.#now());
          this.#actor.send({ type: 'LAUNCH_FAILED', error: message });
        },
      );
  }

  #failed(type: string, name: string, message: string, now: number): void {
    const prior = this.#backoff.get(type)?.failures ?? 0;
    const until = now + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** prior);
    this.#backoff.set(type, { failures: prior + 1, until });
    this.#failures.push({ type, message, time: now, retryAt: until });
    if (this.#failures.length > KEEP_FAILURES) this.#failures.shift();
    this.#event('node_launch_failed', type, `${message} (retrying ${type} in ${Math.round((until - now) / 1000)} s)`, name);
    this.#log(message);
  }

  #scaleDown(reply: ResourceDemandsReply, now: number): void {
    const { config } = this.#opts;
    const alive: Record<string, number> = {};
    for (const n of reply.nodes) {
      const type = n.labels[NODE_GROUP_LABEL];
      if (type !== undefined && n.state === 'ALIVE' && !this.#terminating.has(n.name)) alive[type] = (alive[type] ?? 0) + 1;
    }
    for (const n of reply.nodes) {
      const m = this.#managed.get(n.name);
      if (!m || this.#terminating.has(n.name)) continue;
      if (!idle(n)) {
        this.#idleSince.delete(n.nodeId);
        continue;
      }
      const since = this.#idleSince.get(n.nodeId) ?? now;
      this.#idleSince.set(n.nodeId, since);
      const t = this.#types.get(m.type);
      if (!t || now - since < config.idleTimeoutSeconds * 1000) continue;
      // A DRAINING node of ours is a retirement left half done: drained by an autoscaler that was
      // killed before it terminated the node, or whose terminate failed. It takes no work and counts
      // for no minWorkers, so once idle it is retired (drain_node again is a no-op); an ALIVE one
      // only while its type keeps minWorkers without it.
      if (n.state === 'ALIVE') {
        if ((alive[m.type] ?? 0) - 1 < t.minWorkers) continue;
        alive[m.type]--;
      }
      this.#terminating.add(n.name);
      void this.#retire(n.name, m, Math.round((now - since) / 1000));
    }
  }

  /** Drain, then terminate: the GCS stops placing on the node before the machine goes away. */
  async #retire(name: string, m: Managed, idleSeconds: number): Promise<void> {
    try {
      await this.#opts.gcs.drainNode(m.nodeId);
      this.#event('node_drained', m.type, `drained ${name}: idle for ${idleSeconds} s`, name, m.nodeId);
      await this.#opts.provider.terminate({ nodeType: m.type, nodeName: name, nodeId: m.nodeId });
      this.#managed.delete(name);
      this.#idleSince.delete(m.nodeId);
      this.#event('node_terminated', m.type, `terminated ${name}`, name, m.nodeId);
      this.#log(`terminated ${name} (${m.type}): idle for ${idleSeconds} s`);
    } catch (err) {
      this.#log(`retiring ${name}: ${err instanceof Error ? err.message : String(err)} (tried again once it has been idle another ${this.#opts.config.idleTimeoutSeconds} s)`);
      this.#idleSince.set(m.nodeId, this.#now());
    } finally {
      this.#terminating.delete(name);
    }
  }

  #statusOf(reply: ResourceDemandsReply, outcomes: readonly DemandOutcome[], described: Map<string, string>, invalid: AutoscalerStatus['infeasible'], now: number): AutoscalerStatus {
    const live: Record<string, number> = {};
    for (const n of reply.nodes) {
      const type = n.labels[NODE_GROUP_LABEL];
      if (type !== undefined) live[type] = (live[type] ?? 0) + 1;
    }
    const launching = [...this.#launching].map(([name, l]) => ({ type: l.type, name, since: l.since }));
    const demands: AutoscalerStatus['demands'] = [];
    const infeasible: AutoscalerStatus['infeasible'] = [...invalid];
    for (const o of outcomes) {
      const description = described.get(o.key)!;
      if (o.status === 'infeasible') {
        infeasible.push({ description, count: o.waiting, reason: o.reason ?? 'no node type can take it' });
        continue;
      }
      const launch = Object.entries(o.launch).map(([type, count]) => ({ type, count }));
      demands.push({ description: o.status === 'waiting' && o.reason ? `${description} — ${o.waiting} waiting: ${o.reason}` : description, count: o.count, ...(launch.length ? { launch } : {}) });
    }
    const announced = new Set<string>();
    for (const i of infeasible) {
      const key = `${i.description}\n${i.reason}`;
      announced.add(key);
      if (!this.#announced.has(key)) this.#event('demand_infeasible', '-', `${i.description}: ${i.reason}`);
    }
    this.#announced = announced;
    return {
      time: now,
      nodeTypes: this.#opts.config.nodeTypes.map((t) => ({ name: t.name, live: live[t.name] ?? 0, launching: launching.filter((l) => l.type === t.name).length, minWorkers: t.minWorkers, maxWorkers: t.maxWorkers })),
      launching,
      demands: demands.slice(0, 1000).map(clip),
      infeasible: infeasible.slice(0, 1000).map(clip),
      failures: [...this.#failures].map((f) => ({ ...f, message: f.message.slice(0, 4096) })),
    };
  }

  #event(type: AutoscalerEvent['type'], nodeType: string, message: string, nodeName?: string, nodeId?: string): void {
    this.#events.push({ type, time: this.#now(), nodeType, message: message.slice(0, 4096), ...(nodeName ? { nodeName } : {}), ...(nodeId ? { nodeId } : {}) });
    if (this.#events.length > 1000) this.#events.shift();
  }
}

export { nodeNamePattern } from './demand-reply.ts';
