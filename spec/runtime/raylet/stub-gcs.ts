import { decode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import type { Heartbeat, RegisterNode, RegisterRunning, UnregisterNode } from '../../../protocols/messages/node.ts';
import type { ViewDelta } from '../../../protocols/messages/view.ts';
import { provenValue } from '../../../protocols/answer-proof.ts';
import { encodeError, encodeOk } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import type { Bus, BusMsg, Subscription } from '../../../runtime/bus/bus.ts';
import { OrreryError } from '../../../lib/errors.ts';

export interface ActorDiedReport {
  nodeId: string;
  actors: { actorId: string; incarnation: number }[];
  cause: string;
}

type Seen =
  | { type: 'register_node'; body: RegisterNode }
  | { type: 'register_running'; body: RegisterRunning }
  | { type: 'heartbeat'; body: Heartbeat }
  | { type: 'actor_died'; body: ActorDiedReport }
  | { type: 'unregister_node'; body: UnregisterNode };

/**
 * A stand-in GCS for raylet specs: answers register_node and heartbeat, accepts actor_died, and
 * records every message. `known` is the answer to heartbeats; `refuse` makes registrations fail.
 */
export class StubGcs {
  readonly registrations: RegisterNode[] = [];
  /** Every register_running received (parts of a registration too large for one message), answered `{ staged }` per batch. */
  readonly runningParts: RegisterRunning[] = [];
  readonly heartbeats: Heartbeat[] = [];
  readonly died: ActorDiedReport[] = [];
  known = true;
  heartbeatMs = 20;
  /** The leader epoch told in answers (undefined: none, as a GCS without a lease). */
  epoch: number | undefined;
  /** Sent in the registration reply when set: the raylet fences itself on a lease derived from it. */
  nodeTimeoutMs: number | undefined;
  /** Heartbeats are recorded but not answered (the raylet's requests time out). */
  mute = false;
  /**
   * Answers registrations and heartbeats with the proof the GCS gives (protocols/answer-proof.ts)
   * when the request carries a secret and a nonce; false answers as a GCS from before proofs.
   */
  prove = false;
  /** Heartbeats are answered without a proof even when `prove` is on: a peer answering in the GCS's place. */
  forgeHeartbeats = false;
  /** Every unregister_node received, with `onUnregister` called before it is answered. */
  readonly unregistered: UnregisterNode[] = [];
  onUnregister: ((body: UnregisterNode) => void) | undefined;
  /** unregister_node is recorded but not answered (a GCS frozen or gone for it). */
  muteUnregister = false;
  refuse: OrreryError | undefined;
  /** Called with each register_node before it is answered. */
  onRegister: ((body: RegisterNode) => void) | undefined;
  /** The answer to view_snapshot (a delta from the empty view); requests are counted. */
  snapshot: ViewDelta = { version: 0, previous: 0, upserts: [], removals: [] };
  snapshots = 0;
  /** view_snapshot requests are counted but not answered (a GCS that is down for them). */
  muteSnapshots = false;
  private readonly subs: Subscription[];
  private readonly byVerb = new Map<Seen['type'], Subscription>();
  private readonly subscribeVerb: (verb: Seen['type']) => Subscription;
  private waiters: { check: () => boolean; resolve: () => void }[] = [];

  constructor(private readonly bus: Bus, cluster = 'default') {
    const s = subjects(cluster);
    const on = (verb: Seen['type']): Subscription => {
      const sub = bus.subscribe(s.gcs(verb), (msg) => this.handle(verb, msg));
      this.byVerb.set(verb, sub);
      return sub;
    };
    this.subscribeVerb = on;
    const snapshot = bus.subscribe(s.gcs('view_snapshot'), (msg) => {
      this.snapshots++;
      if (!this.muteSnapshots) msg.respond(encodeOk(this.snapshot));
      this.waiters = this.waiters.filter((w) => (w.check() ? (w.resolve(), false) : true));
    });
    this.subs = [on('register_node'), on('register_running'), on('heartbeat'), on('actor_died'), on('unregister_node'), snapshot];
  }

  /** Resolves once `check` holds, re-checked after every message this GCS receives. */
  until(check: () => boolean, what = 'a condition', timeoutMs = 10_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stub GCS: timed out waiting for ${what}`)), timeoutMs);
      this.waiters.push({ check, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  lastHeartbeat(): Heartbeat | undefined {
    return this.heartbeats.at(-1);
  }

  close(): void {
    for (const sub of this.subs) sub.unsubscribe();
    for (const sub of this.byVerb.values()) sub.unsubscribe();
  }

  /** Nothing subscribes `verb` until `serve(verb)`: requests to it fail NO_RESPONDERS, as with no GCS. */
  silence(verb: Seen['type']): void {
    this.byVerb.get(verb)?.unsubscribe();
    this.byVerb.delete(verb);
  }

  /** Serves `verb` again after silence(); resolves once the server has the subscription. */
  async serve(verb: Seen['type']): Promise<void> {
    if (!this.byVerb.has(verb)) this.subscribeVerb(verb);
    await this.bus.flush();
  }

  private proven(body: { secret?: string; nonce?: string }, verb: string, value: object): object {
    return this.prove && body.secret !== undefined && body.nonce !== undefined ? provenValue(value, body.secret, verb, body.nonce) : value;
  }

  private handle(verb: Seen['type'], msg: BusMsg): void {
    const { type, body } = decode(msg.data, { registry: messages });
    if (type !== verb) throw new Error(`stub GCS: ${type} on ${verb}`);
    if (type === 'register_node') {
      this.onRegister?.(body);
      if (this.refuse) {
        msg.respond(encodeError(this.refuse));
      } else {
        this.registrations.push(body);
        this.known = true;
        const timeout = this.nodeTimeoutMs === undefined ? {} : { nodeTimeoutMs: this.nodeTimeoutMs };
        const epoch = this.epoch === undefined ? {} : { epoch: this.epoch };
        msg.respond(encodeOk(this.proven(body, 'register_node', { nodeId: body.nodeId, heartbeatMs: this.heartbeatMs, rareResources: [], ...timeout, ...epoch })));
      }
    } else if (type === 'register_running') {
      this.runningParts.push(body);
      const staged = this.runningParts.filter((p) => p.batch === body.batch).reduce((n, p) => n + p.actors.length + p.bundles.length, 0);
      msg.respond(encodeOk({ staged }));
    } else if (type === 'heartbeat') {
      this.heartbeats.push(body);
      const answer = { known: this.known, ...(this.epoch === undefined ? {} : { epoch: this.epoch }) };
      if (!this.mute) msg.respond(encodeOk(this.forgeHeartbeats ? answer : this.proven(body, 'heartbeat', answer)));
    } else if (type === 'actor_died') {
      this.died.push(body as ActorDiedReport);
      msg.respond(encodeOk(null));
    } else if (type === 'unregister_node') {
      this.onUnregister?.(body);
      this.unregistered.push(body);
      if (!this.muteUnregister) msg.respond(encodeOk({ known: true }));
    }
    this.waiters = this.waiters.filter((w) => (w.check() ? (w.resolve(), false) : true));
  }
}
