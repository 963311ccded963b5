import { OrreryError } from '../../lib/errors.ts';
import { decode, encode } from '../../protocols/codec.ts';
import { fromWireError } from '../../protocols/errors.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { decodeReply } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus } from '../bus/bus.ts';
import { NoRespondersError, TimeoutError } from '../bus/errors.ts';
import { answerSecret } from './node-owner.ts';

/**
 * The GCS's requests to raylets. create_actor has three outcomes the Actor machine tells apart:
 *
 *   created      the raylet answered ok: the constructor returned
 *   failed       the raylet answered an error (REMOTE_ERROR: the constructor threw;
 *                CODE_LOAD_FAILED: …) — the actor dies with that cause
 *   unreachable  no raylet answered (NO_RESPONDERS), its answer was unreadable, or it
 *                answered NODE_STOPPING (it stopped, or stopped the worker host, before the
 *                constructor returned) — the actor failed through no fault of its own and
 *                restarts when it may, as when its node dies
 *
 * kill_actor does not wait for the raylet: the GCS has already moved the actor on. A kill that got
 * no answer — a timeout, NO_RESPONDERS, a dropped connection, or this GCS's own fence refusing it
 * while its lease was lapsed — is sent again (250 ms, doubling to 5 s) for as long as the node lives:
 * before, it was only logged, and the incarnation kept running there — still answering calls as an
 * actor the GCS had declared DEAD, or beside its restart elsewhere. A kill names its incarnation and
 * the raylet drops only that one or older, so one sent late never touches a newer incarnation. An
 * answered error (the raylet refused it) is not sent again.
 */
export type CreateOutcome =
  | { readonly kind: 'created' }
  /** The creation itself failed: the constructor threw, the code did not load. */
  | { readonly kind: 'failed'; readonly cause: string }
  /**
   * The worker host running the creation went away (WORKER_EXITED): a constructor that crashed it,
   * or the OOM killer or an operator killing it — the raylet cannot tell them apart. Counted as a node
   * that died while SCHEDULED is: a restart, and the second such creation in a row is fatal
   * (actor.machine.ts), so an actor that crashes its host cannot restart for ever, and one whose host
   * was killed from outside gets another try.
   */
  | { readonly kind: 'host_gone'; readonly cause: string }
  | {
      readonly kind: 'unreachable';
      readonly cause: string;
      /** Nothing subscribes the raylet's subject: its raylet is gone or cut off. */
      readonly noResponders: boolean;
      /** The raylet answered NODE_STOPPING: it is going away, so nothing more is placed there. */
      readonly stopping?: boolean;
    };

const replyOnly = { reply: messages.reply } as const;
/** A create this GCS's own fence refused before it left (RayletClient.create). */
const FENCED = Symbol('fenced');
/** A create_actor whose answer this GCS's lost connection took with it (see create). */
const LOST = Symbol('lost');
/** A create_actor not answered within the create timeout: the constructor may still run (see create). */
const UNANSWERED = Symbol('unanswered');
/** A create_actor answered by someone without the node's secret: the raylet's own answer was lost to it (see create). */
const FORGED = Symbol('forged');
/** The first pause before an unanswered kill_actor is sent again, doubling up to the second. */
const KILL_RETRY_MS = 250;
const KILL_RETRY_MAX_MS = 5_000;
const anyValue = unknown();

export class RayletClient {
  constructor(
    private readonly deps: {
      bus: Bus;
      subjects: ClusterSubjects;
      createTimeoutMs: number;
      killTimeoutMs: number;
      log: (line: string) => void;
      /** The leader epoch every request carries (leader.ts); 0 without a lease. */
      epoch: number;
      /** A raylet refused a request as STALE_EPOCH: a newer leader exists. */
      staleEpoch: () => void;
      /** Whether an answer carrying `secret` is from `nodeId`'s own raylet (node-owner.ts); default: any answer is. */
      answeredBy?: (nodeId: string, secret: string | undefined) => boolean;
      /** An answer without the node's secret was not taken. */
      forged?: (nodeId: string, verb: string) => void;
      /** Whether the node is live: an unanswered kill is sent again while it is (default: never again). */
      nodeLive?: (nodeId: string) => boolean;
      /**
       * How long kill answers without the node's secret keep the kill being sent (see kill); the
       * GCS's node timeout. 0 (the default): any answer ends it.
       */
      nodeTimeoutMs?: number;
    },
  ) {}

  #stopped = false;
  readonly #retries = new Set<NodeJS.Timeout>();

  /** The GCS stops: no kill is sent again. */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
  }

  /**
   * create_actor, until the raylet answers or the actor no longer waits for it (`wanted`: it was
   * killed, or its node died — the node's liveness, not a timeout, says when to give up). Every
   * attempt carries the same incarnation, and a raylet answers a create of the incarnation it already
   * has with that creation's outcome once the constructor returns (local-actors.ts), so sending it
   * again runs nothing twice. It is sent again:
   * - at once, when an attempt got no answer within `createTimeoutMs` (TIMEOUT): the constructor may
   *   still run — a model loading takes minutes — or the message was lost. Before, the attempt
   *   counted as a failed creation: an actor whose constructor took longer than the timeout could
   *   never be created (its restart met the same fate, and the second in a row was fatal), and a
   *   restart placed on another node left the first incarnation to come up beside it;
   * - 50 ms later, doubling to 1 s, when this GCS's own fence refused it (its lease lapsed for a
   *   moment: a renewal late under load; fenced-bus.ts) — it never left. Before, it came back as a
   *   failure: the actor spent a restart, or with none left died with "STALE_EPOCH: this GCS no
   *   longer holds the leader lease", for a moment the GCS was busy;
   * - as above, when this GCS's connection dropped while it waited (CONNECTION_LOST: a NATS restart,
   *   a blip): the raylet may be creating the actor, and its answer was lost with the connection.
   *   Before, the lost answer counted as a failed creation: with no restarts left the actor died of
   *   the blip while its constructor ran fine.
   * Once an attempt may have reached the raylet (TIMEOUT, CONNECTION_LOST), NO_RESPONDERS is not
   * "never delivered" any more (which sends the actor back to PENDING unrestarted): the raylet may be
   * reconnecting with the constructor still running, or have died of the constructor; it is asked
   * again, as above, until it answers or its node is declared dead. Before, the actor was placed
   * again beside an incarnation that could still come up, and one whose constructor killed its
   * raylet hopped from node to node without spending a restart.
   * - as above, when the answer did not carry the node's secret (a peer with node credentials answered
   *   on the raylet's subject first; node-owner.ts). The raylet's own answer went to the same inbox
   *   and was dropped behind it, and the raylet may well be creating the actor. Before, the forged
   *   answer counted as a failed creation: the restart was placed on another node while the first
   *   incarnation came up where it was sent — the actor ran twice — and two such answers in a row
   *   made it DEAD. A peer that keeps forging keeps the actor SCHEDULED (one attempt a second), no worse.
   * It is not sent again once `wanted` says the actor has moved on: a raylet that had already dropped
   * that incarnation would start it again. A GCS that stops (steps down) sends nothing more.
   */
  async create(nodeId: string, request: CreateActor, wanted: () => boolean = () => true): Promise<CreateOutcome> {
    let mayHaveArrived = false;
    for (let pause = 50; ; ) {
      let outcome = await this.#createOnce(nodeId, request);
      if (outcome === UNANSWERED && !mayHaveArrived) {
        // once per creation: an operator wondering why an actor stays SCHEDULED finds it here
        this.deps.log(`actor ${request.actorId} (incarnation ${request.incarnation}): node ${nodeId} has not answered its create_actor within ${this.deps.createTimeoutMs} ms (its constructor may still run); asking again until it answers or the node dies`);
      }
      if (outcome === UNANSWERED || outcome === LOST || outcome === FORGED) mayHaveArrived = true;
      // no raylet subscribed now, but an earlier attempt may have reached it: it may be creating the
      // actor still (reconnecting after a blip) or have died of it — its node's fate decides, not this
      else if (mayHaveArrived && typeof outcome === 'object' && outcome.kind === 'unreachable' && outcome.noResponders) outcome = LOST;
      if (outcome !== FENCED && outcome !== LOST && outcome !== UNANSWERED && outcome !== FORGED) return outcome;
      if (this.#stopped) return { kind: 'unreachable', cause: `create_actor on node ${nodeId}: this GCS stopped before it was answered`, noResponders: false };
      if (outcome !== UNANSWERED) {
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
        pause = Math.min(1_000, pause * 2);
      }
      if (!wanted()) return { kind: 'unreachable', cause: `create_actor on node ${nodeId}: not sent again: the actor moved on`, noResponders: false };
    }
  }

  async #createOnce(nodeId: string, request: CreateActor): Promise<CreateOutcome | typeof FENCED | typeof LOST | typeof UNANSWERED | typeof FORGED> {
    try {
      const msg = await this.deps.bus.request(this.deps.subjects.raylet(nodeId, 'create_actor'), encode('create_actor', this.#withEpoch(request)), {
        timeoutMs: this.deps.createTimeoutMs,
      });
      const body = this.#readAnswer(nodeId, 'create_actor', msg.data);
      if (body === undefined) return FORGED;
      if (!body.ok && (body.error.code === 'STALE_EPOCH' || body.error.code === 'NODE_STOPPING')) {
        const stopping = body.error.code === 'NODE_STOPPING';
        if (!stopping) this.deps.staleEpoch();
        return { kind: 'unreachable', cause: `create_actor on node ${nodeId}: ${describe(fromWireError(body.error))}`, noResponders: false, stopping };
      }
      if (body.ok) return { kind: 'created' };
      const cause = describe(fromWireError(body.error));
      return body.error.code === 'WORKER_EXITED' ? { kind: 'host_gone', cause } : { kind: 'failed', cause };
    } catch (err) {
      // a raylet's STALE_EPOCH is an answer (above): this one is this GCS's own fence, before sending
      if ((err as { code?: unknown }).code === 'STALE_EPOCH') return FENCED;
      if ((err as { code?: unknown }).code === 'CONNECTION_LOST') return LOST;
      if (err instanceof TimeoutError) return UNANSWERED;
      // the request itself failed, or the answer could not be read: nothing to blame the actor for
      return { kind: 'unreachable', cause: `create_actor on node ${nodeId}: ${describe(err)}`, noResponders: err instanceof NoRespondersError };
    }
  }

  /**
   * An answer without the node's secret (a peer with node credentials answering on the raylet's
   * subject, or a raylet from before kill answers were signed) does not end the sending for a node
   * timeout after the first attempt. The raylet gets every kill whatever a peer answers, so a peer's
   * answer matters only when the raylet missed the kill, cut off for a moment; before, that answer
   * ended the sending and the incarnation ran on, beside its restart elsewhere. Within a node timeout
   * the raylet is either back, and gets a kill sent again, or declared dead, and its registration
   * afterwards has the GCS kill what it does not keep. A raylet of the previous version is sent a
   * kill a few times more, which it takes as one.
   */
  kill(nodeId: string, actorId: string, incarnation: number): Promise<void> {
    return this.#kill(nodeId, actorId, incarnation, { attempt: 0, since: performance.now() });
  }

  async #kill(nodeId: string, actorId: string, incarnation: number, at: { attempt: number; since: number }): Promise<void> {
    let answered = false;
    let forged = false;
    let unsigned = false;
    try {
      const msg = await this.deps.bus.request(this.deps.subjects.raylet(nodeId, 'kill_actor'), encode('raylet_kill_actor', this.#withEpoch({ actorId, incarnation })), {
        timeoutMs: this.deps.killTimeoutMs,
      });
      answered = true;
      if (this.#readAnswer(nodeId, 'kill_actor', msg.data) === undefined) {
        forged = true;
        unsigned = performance.now() - at.since < (this.deps.nodeTimeoutMs ?? 0);
      }
      decodeReply(msg.data, { value: anyValue });
    } catch (err) {
      // the raylet's refusal, not this GCS's own fence (fenced-bus.ts refuses with the same code while
      // the lease is lapsed), nor a peer's answer in its name: either would make this GCS step down
      if (answered && !forged && (err as { code?: string }).code === 'STALE_EPOCH') this.deps.staleEpoch();
      if (!unsigned) {
        const again = !answered && this.#mayResend(nodeId);
        this.deps.log(`kill_actor ${actorId}#${incarnation} on node ${nodeId}: ${describe(err)}${again ? '; sending it again' : ''}`);
        if (again) this.#killLater(nodeId, actorId, incarnation, at);
        return;
      }
    }
    if (unsigned && this.#mayResend(nodeId)) this.#killLater(nodeId, actorId, incarnation, at);
  }

  /**
   * The answer, or undefined when it is not the node's own: it lacks the node's secret, or cannot be
   * read at all (which a peer can send as easily; an answer that cannot be read carries no secret).
   * Counted and logged once (`forged`). From a node registered without a secret, every answer is
   * its own, and one that cannot be read throws as before.
   */
  #readAnswer(nodeId: string, verb: string, data: Uint8Array): ReturnType<typeof decode<typeof replyOnly>>['body'] | undefined {
    let body: ReturnType<typeof decode<typeof replyOnly>>['body'];
    try {
      body = decode(data, { registry: replyOnly }).body;
    } catch (err) {
      if (!this.deps.answeredBy || this.deps.answeredBy(nodeId, undefined)) throw err;
      this.deps.forged?.(nodeId, verb);
      return undefined;
    }
    if (this.deps.answeredBy && !this.deps.answeredBy(nodeId, answerSecret(body))) {
      this.deps.forged?.(nodeId, verb);
      return undefined;
    }
    return body;
  }

  #mayResend(nodeId: string): boolean {
    return !this.#stopped && this.deps.nodeLive?.(nodeId) === true;
  }

  #killLater(nodeId: string, actorId: string, incarnation: number, at: { attempt: number; since: number }): void {
    const timer = setTimeout(
      () => {
        this.#retries.delete(timer);
        if (this.#mayResend(nodeId)) void this.#kill(nodeId, actorId, incarnation, { attempt: at.attempt + 1, since: at.since });
      },
      Math.min(KILL_RETRY_MAX_MS, KILL_RETRY_MS * 2 ** at.attempt),
    );
    timer.unref();
    this.#retries.add(timer);
  }

  #withEpoch<T extends object>(body: T): T & { epoch?: number } {
    // Object.assign, not `{ ...body, epoch }`: one hidden class per request on Node.js 20 (docs/benchmarks.md, "Object spreads on Node.js 20")
    return this.deps.epoch > 0 ? Object.assign({}, body, { epoch: this.deps.epoch }) : body;
  }
}

/** `CODE: message` for an OrreryError, the message otherwise: the deathCause of ActorInfo. */
export function describe(err: unknown): string {
  if (err instanceof OrreryError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
