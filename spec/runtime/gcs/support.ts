import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { seededRng } from '../../../lib/random.ts';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import { decode, encode } from '../../../protocols/codec.ts';
import type { WireError } from '../../../protocols/errors.ts';
import type { ActorInfoWire, CreateActor } from '../../../protocols/messages/actor.ts';
import type { ClusterEventWire, NodeInfoWire } from '../../../protocols/messages/cluster.ts';
import { messages, type MessageBody, type MessageType } from '../../../protocols/messages/registry.ts';
import type { ViewDelta } from '../../../protocols/messages/view.ts';
import { decodeReply, encodeError, encodeOk } from '../../../protocols/reply.ts';
import { subjects, type ClusterSubjects, type GcsVerb } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import type { Bus, BusMsg } from '../../../runtime/bus/bus.ts';
import { MemoryBroker, connectMemoryBus } from '../../../runtime/bus/memory.ts';
import { startGcs, type GcsHandle, type GcsOptions } from '../../../runtime/gcs/index.ts';

/**
 * A GCS on a MemoryBroker, a client connection, and small stub raylets: peers that register,
 * heartbeat and answer create_actor / kill_actor the way a raylet does. Every wait is on a real
 * condition (an event, a view, a reply), bounded so a broken GCS fails the test instead of hanging.
 */
export function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), ms)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Everything published on a subject pattern, with waits for what has arrived or will. */
export class Recorder<T> {
  readonly got: T[] = [];
  readonly #waiters: { pred: (t: T) => boolean; resolve: (t: T) => void }[] = [];

  push(item: T): void {
    this.got.push(item);
    for (const w of [...this.#waiters]) {
      if (w.pred(item)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(item);
      }
    }
  }

  /** The first item (already here, or arriving) that satisfies `pred`. */
  wait(pred: (t: T) => boolean, what: string, ms?: number): Promise<T> {
    const found = this.got.find(pred);
    if (found !== undefined) return Promise.resolve(found);
    return within(new Promise<T>((resolve) => this.#waiters.push({ pred, resolve })), what, ms);
  }
}

export interface NodeSpec {
  nodeId: string;
  /** Its node name; default its id. */
  name?: string;
  /** The node's secret (runtime/gcs/node-owner.ts), sent with its registration and heartbeats. */
  secret?: string;
  cpu?: number;
  gpu?: number;
  resources?: Record<string, number>;
  labels?: Record<string, string>;
  taints?: Record<string, string>;
}

export class Harness {
  readonly broker = new MemoryBroker();
  readonly bus: Bus = connectMemoryBus(this.broker);
  readonly gcsBus: Bus = connectMemoryBus(this.broker);
  readonly s: ClusterSubjects;
  readonly events = new Recorder<ClusterEventWire>();
  readonly views = new Recorder<ViewDelta>();
  readonly logs: string[] = [];
  readonly raylets: StubRaylet[] = [];
  gcs!: GcsHandle;

  constructor(readonly cluster = 'spec') {
    this.s = subjects(cluster);
  }

  /** `wrapGcsBus` dresses the GCS's bus (on the harness's broker) before the GCS gets it. */
  static async start(opts: Partial<GcsOptions> = {}, wrapGcsBus: (bus: Bus) => Bus = (bus) => bus): Promise<Harness> {
    const h = new Harness(opts.cluster);
    // decoded with the protocol's own validators: what the GCS publishes must be valid
    h.bus.subscribe(h.s.allEvents(), (m) => h.events.push(decode(m.data, { registry: { event: messages.event } }).body));
    h.bus.subscribe(h.s.view(), (m) => h.views.push(decode(m.data, { registry: { view_delta: messages.view_delta } }).body));
    h.gcs = await startGcs({ bus: wrapGcsBus(h.gcsBus), cluster: h.cluster, nodeTimeoutMs: 60_000, rng: seededRng(7), log: (l) => h.logs.push(l), ...opts });
    return h;
  }

  /** A request answered ok: its value. An error reply throws the sender's error. */
  async request<K extends MessageType>(verb: GcsVerb, type: K, body: MessageBody<K>): Promise<any> {
    const msg = await this.bus.request(this.s.gcs(verb), encode(type, body), { timeoutMs: 5000 });
    return decodeReply(msg.data, { value: unknown() });
  }

  /** A request that must be refused: the error it was answered with. */
  async refusal<K extends MessageType>(verb: GcsVerb, type: K, body: MessageBody<K>): Promise<OrreryError> {
    try {
      await this.request(verb, type, body);
    } catch (err) {
      assert.instance(err, OrreryError);
      return err as OrreryError;
    }
    throw new Error(`expected ${verb} to be refused`);
  }

  registerActor(actorId: string, options: Record<string, unknown> = {}, extra: { name?: string; namespace?: string; className?: string } = {}): Promise<ActorInfoWire> {
    return this.request('register_actor', 'register_actor', {
      actorId,
      code: { moduleUrl: 'file:///spec/actors.ts', className: extra.className ?? 'Counter', args: [] },
      namespace: extra.namespace ?? 'default',
      ...(extra.name === undefined ? {} : { name: extra.name }),
      options,
    });
  }

  actor(actorId: string): Promise<ActorInfoWire> {
    return this.request('get_actor', 'get_actor', { actorId });
  }

  /** The first page of list_nodes (a spec never has more nodes than one page holds). */
  async nodes(): Promise<NodeInfoWire[]> {
    return (await this.request('list_nodes', 'list_nodes', {})).items;
  }

  /** Waits for the actor_state event that puts `actorId` in `state`; returns its ActorInfo. */
  async reached(actorId: string, state: ActorInfoWire['state'], ms?: number): Promise<ActorInfoWire> {
    const e = await this.events.wait((e) => e.type === 'actor_state' && e.actor?.actorId === actorId && e.actor.state === state, `${actorId} ${state}`, ms);
    return e.actor!;
  }

  async addNode(spec: NodeSpec, opts: { heartbeat?: boolean } = {}): Promise<StubRaylet> {
    const raylet = new StubRaylet(this, spec);
    this.raylets.push(raylet);
    await raylet.register();
    if (opts.heartbeat) raylet.startHeartbeats();
    return raylet;
  }

  async close(): Promise<void> {
    for (const r of this.raylets) r.close();
    await this.gcs.stop();
    await Promise.all([this.bus.close(), this.gcsBus.close()]);
  }
}

/** One prepare/commit/cancel_bundle request a stub raylet received. */
export interface BundleOp {
  readonly op: 'prepare_bundle' | 'commit_bundle' | 'cancel_bundle';
  readonly bundles: readonly { pgId: string; index: number; resources?: Record<string, number> }[];
}

/**
 * A raylet peer: answers create_actor ok (or with `failCreate`'s error), kill_actor ok, and keeps
 * bundles as a raylet does — prepare locks them against its own free CPU (refusing what does not
 * fit, or what `refusePrepare` names), commit needs them prepared, cancel gives them back.
 */
export class StubRaylet {
  readonly bundleOps = new Recorder<BundleOp>();
  /** Bundles held here, `pgId/index` → whether committed. */
  readonly bundles = new Map<string, { resources: Record<string, number>; committed: boolean }>();
  refusePrepare: (b: { pgId: string; index: number }) => string | undefined = () => undefined;
  /** commit_bundle requests go unanswered (and uncounted) while this is set: a raylet gone silent. */
  silentCommit = false;
  /** cancel_bundle requests go unanswered (the bundle kept, the request counted in `silentCancels` only) while this is set. */
  silentCancel = false;
  silentCancels = 0;
  readonly creates = new Recorder<CreateActor>();
  readonly kills = new Recorder<MessageBody<'raylet_kill_actor'>>();
  /** kill_actor requests go unanswered (not recorded in `kills`, counted in `silentKills`) while this is set. */
  silentKill = false;
  silentKills = 0;
  failCreate: (req: CreateActor) => WireError | undefined = () => undefined;
  /** create_actor requests this says to hold wait in `held`, unanswered until the spec answers them. */
  hold: (req: CreateActor) => boolean = () => false;
  readonly held: { req: CreateActor; answer: () => void }[] = [];
  #timer: NodeJS.Timeout | undefined;
  #seq = 0;
  readonly #subs;

  constructor(private readonly h: Harness, readonly spec: NodeSpec) {
    this.#subs = [
      h.bus.subscribe(h.s.raylet(spec.nodeId, 'create_actor'), (m) => this.#create(m)),
      h.bus.subscribe(h.s.raylet(spec.nodeId, 'kill_actor'), (m) => {
        if (this.silentKill) return void this.silentKills++;
        this.kills.push(decode(m.data, { registry: { raylet_kill_actor: messages.raylet_kill_actor } }).body);
        m.respond(encodeOk(this.#signed({ killed: true })));
      }),
      h.bus.subscribe(h.s.raylet(spec.nodeId, 'prepare_bundle'), (m) => this.#bundle(m, 'prepare_bundle')),
      h.bus.subscribe(h.s.raylet(spec.nodeId, 'commit_bundle'), (m) => this.#bundle(m, 'commit_bundle')),
      h.bus.subscribe(h.s.raylet(spec.nodeId, 'cancel_bundle'), (m) => this.#bundle(m, 'cancel_bundle')),
    ];
  }

  /** CPU units held by bundles here. */
  get bundleCpu(): number {
    let sum = 0;
    for (const b of this.bundles.values()) sum += b.resources.CPU ?? 0;
    return sum;
  }

  #bundle(m: BusMsg, op: BundleOp['op']): void {
    const { bundles } = decode(m.data, { registry: { [op]: messages[op] } }).body as unknown as BundleOp;
    if (op === 'commit_bundle' && this.silentCommit) return;
    if (op === 'cancel_bundle' && this.silentCancel) return void this.silentCancels++;
    this.bundleOps.push({ op, bundles });
    const key = (b: { pgId: string; index: number }) => `${b.pgId}/${b.index}`;
    if (op === 'prepare_bundle') {
      const refused: { pgId: string; index: number; reason: string }[] = [];
      const total = parseResources({ CPU: this.spec.cpu ?? 4 }).CPU;
      for (const b of bundles) {
        if (this.bundles.has(key(b))) continue;
        const why = this.refusePrepare(b) ?? (this.bundleCpu + (b.resources!.CPU ?? 0) > total ? 'not enough CPU' : undefined);
        if (why) refused.push({ pgId: b.pgId, index: b.index, reason: why });
        else this.bundles.set(key(b), { resources: b.resources!, committed: false });
      }
      m.respond(encodeOk(this.#signed({ refused })));
    } else if (op === 'commit_bundle') {
      const missing = bundles.filter((b) => !this.bundles.has(key(b))).map((b) => ({ pgId: b.pgId, index: b.index }));
      for (const b of bundles) {
        const held = this.bundles.get(key(b));
        if (held) held.committed = true;
      }
      m.respond(encodeOk(this.#signed({ missing })));
    } else {
      let returned = 0;
      for (const b of bundles) if (this.bundles.delete(key(b))) returned++;
      m.respond(encodeOk(this.#signed({ returned })));
    }
  }

  get created(): CreateActor[] {
    return this.creates.got;
  }

  get killed(): MessageBody<'raylet_kill_actor'>[] {
    return this.kills.got;
  }

  get nodeId(): string {
    return this.spec.nodeId;
  }

  register(): Promise<{ nodeId: string; heartbeatMs: number; rareResources: string[] }> {
    const { spec } = this;
    const total = parseResources({ CPU: spec.cpu ?? 4, ...(spec.gpu ? { GPU: spec.gpu } : {}), ...spec.resources });
    return this.h.request('register_node', 'register_node', {
      nodeId: spec.nodeId,
      name: spec.name ?? spec.nodeId,
      labels: { 'orrery.io/node-id': spec.nodeId, ...spec.labels },
      taints: spec.taints ?? {},
      resources: { total, available: total },
      address: { ip: '127.0.0.1', hostname: 'spec', pid: process.pid },
      ...(spec.secret === undefined ? {} : { secret: spec.secret }),
    });
  }

  heartbeat(): Promise<{ known: boolean }> {
    return this.h.request('heartbeat', 'heartbeat', { nodeId: this.spec.nodeId, seq: this.#seq++, available: {}, ...(this.spec.secret === undefined ? {} : { secret: this.spec.secret }) });
  }

  startHeartbeats(everyMs = 20): void {
    this.#timer = setInterval(() => void this.heartbeat().catch(() => undefined), everyMs);
  }

  stopHeartbeats(): void {
    clearInterval(this.#timer);
  }

  close(): void {
    this.stopHeartbeats();
    for (const s of this.#subs) s.unsubscribe();
  }

  /** An answer the GCS acts on carries the node's secret, as a raylet's does (raylet/served-subjects.ts). */
  #signed<T extends object>(value: T): T {
    return this.spec.secret === undefined ? value : { ...value, secret: this.spec.secret };
  }

  #create(m: BusMsg): void {
    const req = decode(m.data, { registry: { create_actor: messages.create_actor } }).body;
    this.creates.push(req);
    const error = this.failCreate(req);
    const answer = () => m.respond(error ? encodeError(new OrreryError(error.code, error.message, { detail: this.#signed({ ...error.detail }) })) : encodeOk(this.#signed({})));
    if (this.hold(req)) this.held.push({ req, answer });
    else answer();
  }
}
