import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import { NodeNameTakenError } from '../errors.ts';
import { NodeOwners } from './node-owner.ts';
import { NodeNotFoundError } from '../../lib/errors.ts';
import { formatTaints } from '../../lib/scheduling/taints.ts';
import type { NodeInfoWire, registered } from '../../protocols/messages/cluster.ts';
import type { BusStatus, BusStatusCause } from '../bus/bus.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import type { Infer } from '../../protocols/validate.ts';
import type { EventPublisher, NodeEventType } from './events.ts';
import type { NodeRef } from './gcs.machine.ts';
import { nodeStateOf, type NodeMachineInput, type NodeState } from './node.machine.ts';
import { changedLabels, changedTaints, nodeSetup } from './node-registration.ts';
import { Liveness, type LivenessClock } from './liveness.ts';
import type { KickReason } from './pending-queue.ts';
import { DEFAULT_MAX_DEAD_NODES, DeadActors } from './dead-actors.ts';
import type { GcsStore } from './store.ts';
import type { ViewBroadcaster } from './view.ts';
import { tokenField } from './wire.ts';
import { fitNode } from './node-fit.ts';
import { RunningParts } from './running-parts.ts';

/**
 * The GCS's nodes: registration, heartbeats, label and taint changes, draining, and death. Each node
 * is a Node machine with the Gcs actor as its parent; its heartbeat deadline is kept in `Liveness`
 * (liveness.ts), which sends the machine TIMEOUT when it passes. This watches its snapshots and carries each state into the scheduler's ClusterState, the node
 * table, the view broadcast and the events. A DEAD node leaves the ClusterState (after its actors
 * have failed and given back what they held); its record stays in the table, listed, until it is
 * one of more than `maxDeadNodes` dead ones: then the oldest death is forgotten, from the table and
 * the store. (Every raylet start is a new node id, so kept forever they grew the GCS's memory, its
 * store and every list_nodes walk with each restart, scale-down and replacement. Ray bounds them
 * the same way: `maximum_gcs_dead_node_cached_count`, 1,000; DEFAULT_MAX_DEAD_NODES.)
 */

export interface NodeDirectoryDeps {
  readonly state: ClusterState;
  readonly store: GcsStore;
  readonly events: EventPublisher;
  readonly view: ViewBroadcaster;
  readonly spawn: (input: NodeMachineInput) => NodeRef;
  /** The node is DEAD: its actors fail with `cause` (`node … died`, or `node … stopped` when its raylet unregistered). */
  readonly failActorsOn: (nodeId: string, cause: string) => void;
  /** Placement groups holding bundles on the dead node lose them (before it leaves the cluster state). */
  readonly failGroupsOn: (nodeId: string) => void;
  readonly kick: (reason: KickReason) => void;
  /** A node's labels or taints changed: running actors there may have to move (eviction.ts). */
  readonly constraintsChanged: (nodeId: string) => void;
  /**
   * A raylet registered, running these actor incarnations (empty for a fresh one): the GCS keeps
   * what it agrees with and kills the rest — at once while serving, after the grace window while
   * it recovers (recovery.ts).
   */
  readonly registered: (nodeId: string, running: Running) => void;
  readonly heartbeatMs: number;
  readonly nodeTimeoutMs: number;
  /** The leader epoch, told to raylets in every registration and heartbeat answer; 0 without a lease. */
  readonly epoch: number;
  readonly rareResources: readonly string[];
  readonly log: (line: string) => void;
  readonly now?: () => number;
  /** The clock of heartbeat deadlines; default performance.now and the global timers. */
  readonly livenessClock?: LivenessClock;
  /** How many dead nodes stay in the table; default DEFAULT_MAX_DEAD_NODES. */
  readonly maxDeadNodes?: number;
}

/** Longest a node table record lags behind the node's resources (see `touched`). */
const TABLE_SYNC_MS = 1_000;

export class NodeDirectory {
  readonly #refs = new Map<string, NodeRef>();
  /** Nodes whose resources or actors changed since their table record was written. */
  readonly #stale = new Set<string>();
  #staleTimer: NodeJS.Timeout | undefined;
  /** Live nodes whose raylet did not answer a create_actor, until they heartbeat again. */
  readonly #unreachable = new Set<string>();
  readonly #liveness: Liveness;
  /** Which secret speaks for which node (node-owner.ts). */
  readonly owners = new NodeOwners();
  /** Parts of registrations too large for one message, until their register_node (running-parts.ts). */
  readonly runningParts: RunningParts;
  /** The name of every live node, to its id: a name is one node's while it lives. */
  readonly #names = new Map<string, string>();

  /** Dead nodes in the order they died (the same bounded FIFO as dead actors'). */
  readonly #dead: DeadActors;

  constructor(private readonly deps: NodeDirectoryDeps) {
    this.runningParts = new RunningParts({ now: deps.now });
    this.#liveness = new Liveness({
      timeoutMs: deps.nodeTimeoutMs,
      clock: deps.livenessClock,
      expired: (nodeId) => this.#refs.get(nodeId)?.send({ type: 'TIMEOUT' }),
    });
    this.#dead = new DeadActors(deps.maxDeadNodes ?? DEFAULT_MAX_DEAD_NODES);
    // a restarted GCS takes up the dead nodes its store holds, oldest registration first
    const dead = deps.store.nodes().filter((r) => r.info.state === 'DEAD').sort((a, b) => a.registeredAt - b.registeredAt);
    for (const record of dead) this.#buried(record.info.nodeId);
  }

  /** A node is DEAD: the oldest dead nodes past the bound are forgotten — unless one came back since. */
  #buried(nodeId: string): void {
    for (const forgotten of this.#dead.died(nodeId)) {
      // a raylet that was declared dead may register again under its id (a partition healed)
      if (this.#refs.has(forgotten) || this.deps.store.getNode(forgotten)?.info.state !== 'DEAD') continue;
      this.deps.store.deleteNode(forgotten);
    }
  }

  /**
   * register_node. A node already ALIVE or DRAINING under this id is answered as registered and
   * left as it is (a raylet retrying a lost answer); a DEAD one comes back as a new node. A name
   * another live node holds is refused (NODE_NAME_TAKEN, as Kubernetes' node names): the raylet
   * tries again until that node is declared dead (a restart on the same host) or, when its name was
   * only the host's default, takes a name of its own (raylet/registration.ts).
   */
  register(reg: MessageBody<'register_node'>): Infer<typeof registered> {
    tokenField('nodeId', reg.nodeId);
    const answer = { nodeId: reg.nodeId, heartbeatMs: this.deps.heartbeatMs, nodeTimeoutMs: this.deps.nodeTimeoutMs, rareResources: [...this.deps.rareResources], ...this.#epoch };
    if (this.#refs.has(reg.nodeId)) {
      // its own raylet retrying a lost answer; anyone else is taking over a live node's id
      this.owners.check(reg.nodeId, reg.secret, 'register_node');
      this.runningParts.forget(reg.nodeId);
      return answer;
    }
    const holder = this.#names.get(reg.name);
    if (holder !== undefined && holder !== reg.nodeId) throw new NodeNameTakenError(reg.name, holder);
    // the whole of what it runs, when that came in parts (REGISTRATION_INCOMPLETE, nothing taken, if one is missing)
    const running = this.runningParts.join(reg);
    this.owners.set(reg.nodeId, reg.secret);
    this.#names.set(reg.name, reg.nodeId);
    // A node the table still holds as live comes back to a restarted GCS: it keeps the labels and
    // taints it had (changed at run time, perhaps), not only those its raylet started with.
    const previous = this.deps.store.getNode(reg.nodeId);
    const kept = previous !== undefined && previous.info.state !== 'DEAD' ? { labels: previous.info.labels, taints: previous.info.taints } : {};
    // A raylet that names what it runs registers again: the GCS takes what it keeps of that again
    // itself (recovery.ts), so the node starts from its whole total rather than what is free there.
    const resources = running !== undefined ? { total: reg.resources.total, available: reg.resources.total } : reg.resources;
    const setup = nodeSetup({ ...reg, ...kept, resources }, this.deps.rareResources);
    const { state } = this.deps;
    state.addNode({ nodeId: reg.nodeId, name: reg.name, labels: setup.labels, taints: setup.taints, total: setup.total, available: setup.available });
    const ref = this.deps.spawn({ nodeId: reg.nodeId, nodeTimeoutMs: this.deps.nodeTimeoutMs });
    this.#refs.set(reg.nodeId, ref);
    this.#liveness.watch(reg.nodeId);
    this.deps.store.putNode({ registration: withoutRunning(reg), info: this.#infoFromState(reg.nodeId), registeredAt: (this.deps.now ?? Date.now)() });
    let last: NodeState = 'ALIVE';
    ref.subscribe({
      next: (snapshot) => {
        const next = nodeStateOf(snapshot);
        if (next !== last) this.#transition(reg.nodeId, (last = next));
      },
      error: (err) => this.deps.log(`node ${reg.nodeId} machine failed: ${String(err)}`),
    });
    this.deps.events.node('node_added', this.info(reg.nodeId));
    this.deps.view.changed(reg.nodeId);
    if (previous?.info.state === 'DRAINING') ref.send({ type: 'DRAIN' });
    this.deps.registered(reg.nodeId, running ?? { actors: [] });
    this.deps.kick('node_registered');
    return answer;
  }

  /**
   * register_running: one part of what a raylet that registers again runs, held until the
   * register_node that ends its batch (running-parts.ts). While the node is live (its raylet lost an
   * answer and registers again) only its own secret is taken.
   */
  stageRunning(part: MessageBody<'register_running'>): { staged: number } {
    tokenField('nodeId', part.nodeId);
    if (this.#refs.has(part.nodeId)) this.owners.check(part.nodeId, part.secret, 'register_running');
    return this.runningParts.stage(part);
  }

  /** heartbeat: `known: false` tells a raylet the GCS has no live node under its id. */
  heartbeat(beat: MessageBody<'heartbeat'>): { known: boolean; epoch?: number } {
    const ref = this.#refs.get(beat.nodeId);
    if (!ref) return { known: false, ...this.#epoch };
    this.owners.check(beat.nodeId, beat.secret, 'heartbeat');
    this.#liveness.beat(beat.nodeId);
    if (this.#unreachable.delete(beat.nodeId)) this.deps.kick('node_reachable');
    return { known: true, ...this.#epoch };
  }

  /**
   * unregister_node: the node's raylet stops and its worker hosts are gone — DEAD now, its actors
   * failed (restarting elsewhere when they may), rather than after the node timeout. `known: false`
   * for a node that is not live here (dead already, or never registered with this GCS).
   */
  unregister(leaving: MessageBody<'unregister_node'>): { known: boolean } {
    const ref = this.#refs.get(leaving.nodeId);
    if (!ref) return { known: false };
    this.owners.check(leaving.nodeId, leaving.secret, 'unregister_node');
    this.#leaving.add(leaving.nodeId);
    ref.send({ type: 'LEAVE' });
    return { known: true };
  }

  /** Nodes whose raylet said it stops (unregister), until their death is handled. */
  readonly #leaving = new Set<string>();

  /** `{ epoch }` for answers to raylets, nothing without a lease. */
  get #epoch(): { epoch?: number } {
    return this.deps.epoch > 0 ? { epoch: this.deps.epoch } : {};
  }

  /**
   * The GCS's own connection to the bus dropped or came back (Bus.onStatus). No heartbeat can reach
   * it while it is down, so no live node's timeout counts then, and each gets a fresh window once it
   * is back (node.machine.ts, UNHEARD/HEARD): a NATS outage is not the death of every node.
   */
  connectionChanged(status: BusStatus, cause: BusStatusCause = 'connection'): void {
    const event = status === 'disconnected' ? ({ type: 'UNHEARD' } as const) : ({ type: 'HEARD' } as const);
    for (const ref of this.#refs.values()) ref.send(event);
    if (status === 'reconnected') this.#liveness.restartAll();
    const n = this.#refs.size;
    if (cause === 'lease') {
      // a renewal came late (the GCS was busy or frozen) or could not reach JetStream: nothing is
      // handled meanwhile (fenced-bus.ts), so it hears no heartbeat either
      this.deps.log(
        status === 'disconnected'
          ? `the GCS's leader lease lapsed (a renewal came late or could not be stored): it handles nothing until one goes through; node timeouts of ${n} node(s) wait`
          : `the GCS holds its leader lease again: ${n} node(s) get a fresh ${this.deps.nodeTimeoutMs} ms window to heartbeat`,
      );
      return;
    }
    this.deps.log(
      status === 'disconnected'
        ? `the GCS lost its connection to the bus: node timeouts of ${n} node(s) wait until it is back`
        : `the GCS is connected again: ${n} node(s) get a fresh ${this.deps.nodeTimeoutMs} ms window to heartbeat`,
    );
  }

  /**
   * Nothing subscribes this node's create_actor (NO_RESPONDERS): its raylet is gone or cut off,
   * though its heartbeat has not timed out yet. (A TIMEOUT may be a slow constructor; it does not count.) Until it heartbeats again, placements keep off
   * it — otherwise a restart would be placed straight back there and burn its restarts in a loop
   * until the node is declared dead.
   */
  unreachable(nodeId: string): void {
    if (this.#refs.has(nodeId)) this.#unreachable.add(nodeId);
  }

  /** The nodes placements keep off for now (see unreachable()). */
  get unreachableNodes(): ReadonlySet<string> {
    return this.#unreachable;
  }

  setLabels(change: MessageBody<'set_node_labels'>): NodeInfoWire {
    const node = this.#live(change.nodeId);
    this.deps.state.setNodeLabels(node.id, changedLabels(node.labels, change));
    this.deps.constraintsChanged(node.id);
    return fitNode(this.#changed(node.id, 'node_labels_changed'));
  }

  setTaints(change: MessageBody<'set_node_taints'>): NodeInfoWire {
    const node = this.#live(change.nodeId);
    this.deps.state.setNodeTaints(node.id, changedTaints(node.taints, change));
    this.deps.constraintsChanged(node.id);
    return fitNode(this.#changed(node.id, 'node_taints_changed'));
  }

  drain(ref: MessageBody<'drain_node'>): NodeInfoWire {
    this.#live(ref.nodeId);
    this.#refs.get(ref.nodeId)!.send({ type: 'DRAIN' });
    return fitNode(this.info(ref.nodeId));
  }

  /**
   * The node's resources or actors changed (an actor placed or gone, a bundle committed). Its table
   * record is rewritten when it is read, or within TABLE_SYNC_MS (a second), not at once: a record copies the
   * node's resource sets, thousands of names on a node holding many placement groups' bundles, and
   * rewriting it on every change made group creation quadratic in the GCS (bench:pg).
   */
  touched(nodeId: string): void {
    this.#stale.add(nodeId);
    this.#staleTimer ??= setTimeout(() => this.#syncStale(), TABLE_SYNC_MS).unref();
    this.deps.view.changed(nodeId);
  }

  info(nodeId: string): NodeInfoWire {
    if (this.#stale.has(nodeId)) this.#sync(nodeId);
    const record = this.deps.store.getNode(nodeId);
    if (!record) throw new NodeNotFoundError(nodeId);
    return record.info;
  }

  /** Whether a node of this id is registered and not DEAD. */
  has(nodeId: string): boolean {
    return this.#refs.has(nodeId);
  }

  /**
   * A node the table holds as live did not come back within a restarted GCS's grace window: its
   * record becomes DEAD (its actors are restarted by the recovery, not here).
   */
  lost(nodeId: string): void {
    const record = this.deps.store.getNode(nodeId);
    if (!record || record.info.state === 'DEAD' || this.#refs.has(nodeId)) return;
    const info: NodeInfoWire = Object.assign({}, record.info, { state: 'DEAD' as const });
    this.deps.store.putNode(Object.assign({}, record, { info }));
    this.deps.log(`node ${nodeId} did not register again after the GCS restarted: DEAD`);
    this.deps.events.node('node_dead', info);
    this.#buried(nodeId);
  }

  list(): NodeInfoWire[] {
    this.#syncStale();
    return this.deps.store.nodes().map((r) => r.info);
  }

  #syncStale(): void {
    clearTimeout(this.#staleTimer);
    this.#staleTimer = undefined;
    for (const nodeId of this.#stale) this.#sync(nodeId);
  }

  #live(nodeId: string) {
    const node = this.deps.state.node(nodeId);
    if (!node || node.state === 'DEAD') throw new NodeNotFoundError(nodeId);
    return node;
  }

  #changed(nodeId: string, event: NodeEventType): NodeInfoWire {
    const info = this.#sync(nodeId);
    this.deps.events.node(event, info);
    this.deps.view.changed(nodeId);
    this.deps.kick('labels_changed');
    return info;
  }

  /** No more deadlines: the GCS stops. */
  stop(): void {
    this.#liveness.stop();
  }

  #transition(nodeId: string, next: NodeState): void {
    if (next !== 'DEAD') {
      // moving between ALIVE and DRAINING starts a fresh window, as a heartbeat does
      this.#liveness.beat(nodeId);
      this.deps.state.setNodeState(nodeId, next);
      this.#changed(nodeId, next === 'DRAINING' ? 'node_draining' : 'node_alive');
      return;
    }
    this.#refs.delete(nodeId);
    this.owners.forget(nodeId);
    const name = this.deps.state.node(nodeId)?.name;
    if (name !== undefined && this.#names.get(name) === nodeId) this.#names.delete(name);
    this.#liveness.forget(nodeId);
    this.#unreachable.delete(nodeId);
    this.deps.state.setNodeState(nodeId, 'DEAD');
    const left = this.#leaving.delete(nodeId);
    this.deps.log(left ? `node ${nodeId} stopped (its raylet unregistered): DEAD` : `node ${nodeId} missed its heartbeats for ${this.deps.nodeTimeoutMs} ms: DEAD`);
    this.deps.failActorsOn(nodeId, left ? `node ${nodeId} stopped` : `node ${nodeId} died`);
    this.deps.failGroupsOn(nodeId);
    const info = this.#sync(nodeId);
    this.deps.state.removeNode(nodeId);
    this.deps.events.node('node_dead', info);
    this.deps.view.changed(nodeId);
    this.deps.kick('node_died');
    this.#buried(nodeId);
  }

  /** Writes the node's current picture (from the ClusterState) to the node table. */
  #sync(nodeId: string): NodeInfoWire {
    this.#stale.delete(nodeId);
    const record = this.deps.store.getNode(nodeId);
    if (!record || !this.deps.state.node(nodeId)) return this.info(nodeId);
    const info = this.#infoFromState(nodeId);
    this.deps.store.putNode(Object.assign({}, record, { info }));
    return info;
  }

  #infoFromState(nodeId: string): NodeInfoWire {
    const node = this.deps.state.node(nodeId)!;
    return {
      nodeId: node.id,
      name: node.name,
      state: node.state,
      labels: { ...node.labels },
      taints: formatTaints(node.taints),
      resources: { total: { ...node.total }, available: { ...node.available } },
    };
  }
}

/** What a registering raylet runs: actor incarnations and placement-group bundles. */
export type Running = NonNullable<MessageBody<'register_node'>['running']>;

/** The registration as the node table keeps it: what the raylet ran then is not the node's. */
function withoutRunning(reg: MessageBody<'register_node'>): MessageBody<'register_node'> {
  // the secret stays in memory (node-owner.ts): the table is no place for it
  const { running: _, secret: __, ...rest } = reg;
  return rest;
}
