import { decode, encode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { decodeReply, encodeError, encodeOk } from '../../protocols/reply.ts';
import { registered } from '../../protocols/messages/cluster.ts';
import { bool, num, object, optional } from '../../protocols/validate.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, BusMsg, Subscription } from '../../runtime/bus/bus.ts';
import type { Rng } from '../../lib/random.ts';

/**
 * The simulated raylets: each node speaks the raylet's side of the GCS protocol on the memory bus —
 * it registers, heartbeats on its period, answers create_actor, kill_actor and the bundle verbs —
 * and keeps only what the simulator checks: its resources and the actors the GCS put on it. No
 * worker hosts, no cluster view of its own: the simulator measures the GCS, and a node here costs a
 * few hundred bytes and one subscription.
 *
 * Every node checks what it is asked to run against what it has (`violations`): an actor whose
 * resources exceed the node's free resources is an over-commit by the GCS.
 *
 * The farm times its own work (`busyMs`, real milliseconds on the main thread) so the simulator can
 * charge the rest of the process's time to the GCS.
 */
/** The GCS's answer to a heartbeat (as the raylet reads it). */
const SLOT_MS = 10;
const heartbeatAnswer = object({ known: bool(), epoch: optional(num({ int: true, min: 0 })) });

export interface SimNodeSpec {
  readonly nodeId: string;
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly taints: Record<string, string>;
  readonly total: Record<string, number>;
}

interface SimNode extends SimNodeSpec {
  available: Record<string, number>;
  readonly actors: Map<string, { incarnation: number; resources: Record<string, number> }>;
  seq: number;
  /** When its next heartbeat is due, simulated ms. */
  nextBeat: number;
  sub: Subscription | undefined;
  alive: boolean;
}

export interface FarmStats {
  heartbeatsSent: number;
  heartbeatsAnswered: number;
  heartbeatsUnknown: number;
  heartbeatFailures: number;
  creates: number;
  createsRefused: number;
  kills: number;
  bundleRequests: number;
}

export class Farm {
  readonly nodes = new Map<string, SimNode>();
  readonly violations: string[] = [];
  readonly stats: FarmStats = { heartbeatsSent: 0, heartbeatsAnswered: 0, heartbeatsUnknown: 0, heartbeatFailures: 0, creates: 0, createsRefused: 0, kills: 0, bundleRequests: 0 };
  /** Real ms the farm spent in its own code (handlers, beats). */
  busyMs = 0;
  heartbeatMs = 500;
  /** Live nodes by the 10 ms slot their next beat falls in: beat() looks only at the slots due. */
  readonly #slots = new Map<number, SimNode[]>();
  #nextSlot = 0;

  constructor(
    private readonly deps: {
      bus: Bus;
      subjects: ClusterSubjects;
      rng: Rng;
      now: () => number;
      /** Real clock for busyMs (the simulated one does not move while code runs). */
      realNow: () => number;
      /** Tells the simulator an actor now runs on a node (create_actor answered ok). */
      onCreated?: (nodeId: string, actorId: string) => void;
      onKilled?: (nodeId: string, actorId: string) => void;
    },
  ) {}

  /** Registers a node and waits for the GCS's answer; its first beat comes within one period. */
  async join(spec: SimNodeSpec): Promise<void> {
    const t0 = this.deps.realNow();
    const node: SimNode = { ...spec, available: { ...spec.total }, actors: new Map(), seq: 0, nextBeat: 0, sub: undefined, alive: true };
    this.nodes.set(spec.nodeId, node);
    node.sub = this.deps.bus.subscribe(this.deps.subjects.rayletAll(spec.nodeId), (msg) => this.#serve(node, msg));
    const body = encode('register_node', {
      nodeId: spec.nodeId,
      name: spec.name,
      labels: spec.labels,
      taints: spec.taints,
      resources: { total: spec.total, available: spec.total },
      address: { ip: '10.0.0.1', hostname: spec.name, pid: 1 },
      running: { actors: [], bundles: [] },
    });
    this.busyMs += this.deps.realNow() - t0;
    const reply = await this.deps.bus.request(this.deps.subjects.gcs('register_node'), body, { timeoutMs: 30_000 });
    const t1 = this.deps.realNow();
    const answer = decodeReply(reply.data, { value: registered });
    this.heartbeatMs = answer.heartbeatMs;
    // spread the beats over the period, as real raylets started at different moments are
    node.nextBeat = this.deps.now() + Math.floor(this.deps.rng() * answer.heartbeatMs) + 1;
    this.#schedule(node);
    this.busyMs += this.deps.realNow() - t1;
  }

  /** The node stops answering and beating at once (a host that lost power). */
  crash(nodeId: string): void {
    const node = this.nodes.get(nodeId);
    if (!node || !node.alive) return;
    node.alive = false;
    node.sub?.unsubscribe();
    node.sub = undefined;
  }

  /** Sends the heartbeats due by `now` (simulated ms); their answers are counted as they come. */
  beat(now: number): number {
    const t0 = this.deps.realNow();
    let sent = 0;
    const subject = this.deps.subjects.gcs('heartbeat');
    const last = Math.floor(now / SLOT_MS);
    for (let slot = this.#nextSlot; slot <= last; slot++) {
      const due = this.#slots.get(slot);
      if (!due) continue;
      this.#slots.delete(slot);
      for (const node of due) {
        if (!node.alive) continue;
        if (node.nextBeat > now) {
          this.#schedule(node); // later in its slot than `now`: stays for the next call
          continue;
        }
        node.nextBeat += this.heartbeatMs;
        if (node.nextBeat <= now) node.nextBeat = now + this.heartbeatMs;
        this.#schedule(node);
        const body = encode('heartbeat', { nodeId: node.nodeId, seq: node.seq++, available: node.available });
        sent++;
        this.stats.heartbeatsSent++;
        this.deps.bus.requestCallback(subject, body, { timeoutMs: 2 * this.heartbeatMs }, (err, msg) => {
          const t1 = this.deps.realNow();
          if (err || !msg) this.stats.heartbeatFailures++;
          else {
            const answer = decodeReply(msg.data, { value: heartbeatAnswer });
            this.stats.heartbeatsAnswered++;
            if (!answer.known) this.stats.heartbeatsUnknown++;
          }
          this.busyMs += this.deps.realNow() - t1;
        });
      }
    }
    this.#nextSlot = last;
    this.busyMs += this.deps.realNow() - t0;
    return sent;
  }

  #schedule(node: SimNode): void {
    const slot = Math.max(this.#nextSlot, Math.floor(node.nextBeat / SLOT_MS));
    const list = this.#slots.get(slot);
    if (list) list.push(node);
    else this.#slots.set(slot, [node]);
  }

  /** An actor's process died on its own (the raylet reports it, as a worker host exit). */
  async actorDied(nodeId: string, actorId: string, cause: string): Promise<void> {
    const node = this.nodes.get(nodeId);
    const held = node?.actors.get(actorId);
    if (!node || !held || !node.alive) return;
    this.#release(node, actorId);
    const body = encode('actor_died', { nodeId, actors: [{ actorId, incarnation: held.incarnation }], cause });
    await this.deps.bus.request(this.deps.subjects.gcs('actor_died'), body, { timeoutMs: 30_000 });
  }

  #serve(node: SimNode, msg: BusMsg): void {
    const t0 = this.deps.realNow();
    try {
      const verb = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
      if (verb === 'create_actor') {
        const { body } = decode(msg.data, { registry: { create_actor: messages.create_actor } });
        this.stats.creates++;
        const short = Object.entries(body.resources).filter(([name, amount]) => (node.available[name] ?? 0) < amount);
        if (short.length) {
          this.stats.createsRefused++;
          this.violations.push(`over-commit: ${body.actorId} on ${node.nodeId} needs ${JSON.stringify(body.resources)}, node has ${JSON.stringify(node.available)}`);
          msg.respond(encodeError(new Error(`not enough resources on ${node.nodeId}`)));
          return;
        }
        const previous = node.actors.get(body.actorId);
        if (previous) this.#release(node, body.actorId);
        for (const [name, amount] of Object.entries(body.resources)) node.available[name] = (node.available[name] ?? 0) - amount;
        node.actors.set(body.actorId, { incarnation: body.incarnation, resources: body.resources });
        msg.respond(encodeOk(null));
        this.deps.onCreated?.(node.nodeId, body.actorId);
      } else if (verb === 'kill_actor') {
        const { body } = decode(msg.data, { registry: { raylet_kill_actor: messages.raylet_kill_actor } });
        this.stats.kills++;
        const held = node.actors.get(body.actorId);
        if (held && held.incarnation <= body.incarnation) {
          this.#release(node, body.actorId);
          this.deps.onKilled?.(node.nodeId, body.actorId);
        }
        msg.respond(encodeOk(null));
      } else if (verb === 'prepare_bundle') {
        this.stats.bundleRequests++;
        msg.respond(encodeOk({ refused: [] }));
      } else if (verb === 'commit_bundle') {
        this.stats.bundleRequests++;
        msg.respond(encodeOk({ missing: [] }));
      } else if (verb === 'cancel_bundle') {
        this.stats.bundleRequests++;
        msg.respond(encodeOk({ returned: 0 }));
      } else {
        msg.respond(encodeError(new Error(`the simulated raylet does not serve ${verb}`)));
      }
    } finally {
      this.busyMs += this.deps.realNow() - t0;
    }
  }

  #release(node: SimNode, actorId: string): void {
    const held = node.actors.get(actorId);
    if (!held) return;
    node.actors.delete(actorId);
    for (const [name, amount] of Object.entries(held.resources)) node.available[name] = (node.available[name] ?? 0) + amount;
  }
}

export const realNow = (): number => {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
};

