import { OrreryError } from '../../lib/errors.ts';
import { decode, encode } from '../../protocols/codec.ts';
import { fromWireError } from '../../protocols/errors.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { decodeReply } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus } from '../bus/bus.ts';
import { NoRespondersError } from '../bus/errors.ts';
import { answerSecret } from './node-owner.ts';

/**
 * The GCS's requests to raylets. create_actor has three outcomes the Actor machine tells apart:
 *
 *   created      the raylet answered ok: the constructor returned
 *   failed       the raylet answered an error (REMOTE_ERROR: the constructor threw;
 *                CODE_LOAD_FAILED: …) — the actor dies with that cause
 *   unreachable  no raylet answered (NO_RESPONDERS, TIMEOUT), its answer was unreadable, or it
 *                answered NODE_STOPPING (it stopped, or stopped the worker host, before the
 *                constructor returned) — the actor failed through no fault of its own and
 *                restarts when it may, as when its node dies
 *
 * kill_actor is best effort: the GCS has already moved the actor on, so errors are only logged.
 */
export type CreateOutcome =
  | { readonly kind: 'created' }
  | { readonly kind: 'failed'; readonly cause: string }
  | {
      readonly kind: 'unreachable';
      readonly cause: string;
      /** Nothing subscribes the raylet's subject: its raylet is gone or cut off. */
      readonly noResponders: boolean;
      /** The raylet answered NODE_STOPPING: it is going away, so nothing more is placed there. */
      readonly stopping?: boolean;
    };

const replyOnly = { reply: messages.reply } as const;
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
    },
  ) {}

  async create(nodeId: string, request: CreateActor): Promise<CreateOutcome> {
    try {
      const msg = await this.deps.bus.request(this.deps.subjects.raylet(nodeId, 'create_actor'), encode('create_actor', this.#withEpoch(request)), {
        timeoutMs: this.deps.createTimeoutMs,
      });
      const { body } = decode(msg.data, { registry: replyOnly });
      if (this.deps.answeredBy && !this.deps.answeredBy(nodeId, answerSecret(body))) {
        this.deps.forged?.(nodeId, 'create_actor');
        return { kind: 'unreachable', cause: `create_actor on node ${nodeId}: NODE_NOT_OWNED: answered without that node's secret`, noResponders: false };
      }
      if (!body.ok && (body.error.code === 'STALE_EPOCH' || body.error.code === 'NODE_STOPPING')) {
        const stopping = body.error.code === 'NODE_STOPPING';
        if (!stopping) this.deps.staleEpoch();
        return { kind: 'unreachable', cause: `create_actor on node ${nodeId}: ${describe(fromWireError(body.error))}`, noResponders: false, stopping };
      }
      return body.ok ? { kind: 'created' } : { kind: 'failed', cause: describe(fromWireError(body.error)) };
    } catch (err) {
      // the request itself failed, or the answer could not be read: nothing to blame the actor for
      return { kind: 'unreachable', cause: `create_actor on node ${nodeId}: ${describe(err)}`, noResponders: err instanceof NoRespondersError };
    }
  }

  async kill(nodeId: string, actorId: string, incarnation: number): Promise<void> {
    let answered = false;
    try {
      const msg = await this.deps.bus.request(this.deps.subjects.raylet(nodeId, 'kill_actor'), encode('raylet_kill_actor', this.#withEpoch({ actorId, incarnation })), {
        timeoutMs: this.deps.killTimeoutMs,
      });
      answered = true;
      decodeReply(msg.data, { value: anyValue });
    } catch (err) {
      // the raylet's refusal, not this GCS's own fence (fenced-bus.ts refuses with the same code while the lease is lapsed)
      if (answered && (err as { code?: string }).code === 'STALE_EPOCH') this.deps.staleEpoch();
      this.deps.log(`kill_actor ${actorId}#${incarnation} on node ${nodeId}: ${describe(err)}`);
    }
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
