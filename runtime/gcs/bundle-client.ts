import { decode, encode } from '../../protocols/codec.ts';
import { fromWireError } from '../../protocols/errors.ts';
import { cancelResult, commitResult, prepareResult, type BundleRef } from '../../protocols/messages/placement-group.ts';
import { messages } from '../../protocols/messages/registry.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Validator } from '../../protocols/validate.ts';
import type { Bus } from '../bus/bus.ts';
import { answerSecret, NodeNotOwnedError } from './node-owner.ts';
import { describe } from './raylets.ts';

/**
 * The GCS's side of the bundle two-phase commit with raylets (prepare_bundle, commit_bundle,
 * cancel_bundle). Requests for one raylet made in the same turn of the event loop travel as one
 * message (of at most MAX_BUNDLES_PER_REQUEST bundles) — creating a thousand groups is a few hundred
 * round trips, not four thousand — and in the order they were made: a prepare and the cancel that
 * follows it reach the raylet in that order (one connection, one subscription: NATS keeps the order,
 * and the raylet handles each message before the next).
 *
 * Outcomes are per bundle. A request that fails as a whole (no raylet answers, timeout, an error
 * reply) fails every bundle in it with that cause; `unreachable` says the raylet did not answer at
 * all (nothing subscribes its subject, or the request timed out), so the next round keeps off it
 * until it heartbeats again — a raylet that went silent between prepare and commit is not picked
 * again while the GCS waits to declare it dead. A request this GCS's own fence refused to send (its
 * lease lapsed for a moment: fenced-bus.ts) is `unanswered` — a cancel is sent again — but not
 * `unreachable`: no raylet was asked.
 */
export type BundleOutcome =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly cause: string;
      /** No answer came: the request timed out, met no responder or a dropped connection, or was never sent (this GCS's own fence). A cancel is sent again. */
      readonly unanswered: boolean;
      /** Unanswered by the raylet when asked: the next round keeps off its node. Not when this GCS's own fence kept the request in. */
      readonly unreachable: boolean;
    };

type Op = 'prepare_bundle' | 'commit_bundle' | 'cancel_bundle';

interface Pending {
  readonly op: Op;
  readonly bundle: BundleRef & { resources?: Record<string, number> };
  readonly resolve: (outcome: BundleOutcome) => void;
}

const replyOnly = { reply: messages.reply } as const;
/**
 * The most bundles one request carries. A prepare's bundle with a few resources is ~60–100 bytes, so
 * 2,000 stay far inside the 1 MiB message limit; a run of one verb for a node made in one turn is
 * sent as several requests past it. (It was one request: removing 100,000 groups at once made a
 * 3 MB cancel_bundle that could not be sent, and the raylet kept every one of those bundles.)
 */
export const MAX_BUNDLES_PER_REQUEST = 2_000;
const VALUE: Record<Op, Validator<unknown>> = { prepare_bundle: prepareResult, commit_bundle: commitResult, cancel_bundle: cancelResult };
const key = (b: BundleRef): string => `${b.pgId}\u0000${b.index}`;

export class BundleClient {
  readonly #queues = new Map<string, Pending[]>();
  #flush: NodeJS.Immediate | undefined;
  /** Requests sent, by verb (each carries one or more bundles). */
  readonly sent: Record<Op, number> = { prepare_bundle: 0, commit_bundle: 0, cancel_bundle: 0 };

  constructor(
    private readonly deps: {
      bus: Bus;
      subjects: ClusterSubjects;
      timeoutMs: number;
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

  prepare(nodeId: string, bundle: BundleRef & { resources: Record<string, number> }): Promise<BundleOutcome> {
    return this.#enqueue(nodeId, 'prepare_bundle', bundle);
  }

  commit(nodeId: string, bundle: BundleRef): Promise<BundleOutcome> {
    return this.#enqueue(nodeId, 'commit_bundle', bundle);
  }

  /** Best effort: a raylet that cannot be reached holds nothing worth keeping (its node is going). */
  cancel(nodeId: string, bundle: BundleRef): Promise<BundleOutcome> {
    return this.#enqueue(nodeId, 'cancel_bundle', bundle);
  }

  #enqueue(nodeId: string, op: Op, bundle: Pending['bundle']): Promise<BundleOutcome> {
    return new Promise((resolve) => {
      let queue = this.#queues.get(nodeId);
      if (!queue) this.#queues.set(nodeId, (queue = []));
      queue.push({ op, bundle, resolve });
      this.#flush ??= setImmediate(() => this.#send());
    });
  }

  #send(): void {
    this.#flush = undefined;
    const queues = [...this.#queues];
    this.#queues.clear();
    for (const [nodeId, queue] of queues) {
      // consecutive requests of one verb become one message; the verbs keep their order
      let start = 0;
      for (let i = 1; i <= queue.length; i++) {
        if (i === queue.length || queue[i].op !== queue[start].op || i - start === MAX_BUNDLES_PER_REQUEST) {
          void this.#request(nodeId, queue.slice(start, i));
          start = i;
        }
      }
    }
  }

  async #request(nodeId: string, batch: Pending[]): Promise<void> {
    const op = batch[0].op;
    this.sent[op]++;
    const bundles = batch.map((p) => (op === 'prepare_bundle' ? { pgId: p.bundle.pgId, index: p.bundle.index, resources: p.bundle.resources ?? {} } : { pgId: p.bundle.pgId, index: p.bundle.index }));
    let failed: Map<string, string>;
    let answered = false;
    try {
      const msg = await this.deps.bus.request(this.deps.subjects.raylet(nodeId, op), encode(op, (this.deps.epoch > 0 ? { bundles, epoch: this.deps.epoch } : { bundles }) as never), { timeoutMs: this.deps.timeoutMs });
      answered = true;
      const { body } = decode(msg.data, { registry: replyOnly });
      if (this.deps.answeredBy && !this.deps.answeredBy(nodeId, answerSecret(body))) {
        this.deps.forged?.(nodeId, op);
        throw new NodeNotOwnedError(nodeId, `an answer to ${op}`);
      }
      if (!body.ok) throw fromWireError(body.error);
      const value = VALUE[op](body.value, 'value') as { refused?: { pgId: string; index: number; reason: string }[]; missing?: BundleRef[] };
      failed = new Map();
      for (const r of value.refused ?? []) failed.set(key(r), `node ${nodeId} refused bundle ${r.index}: ${r.reason}`);
      for (const m of value.missing ?? []) failed.set(key(m), `node ${nodeId} does not hold bundle ${m.index} prepared`);
    } catch (err) {
      // only a raylet's refusal says a newer leader exists: this GCS's own fence refuses with the same
      // code while its lease is lapsed (a renewal late under load), and giving the lease up for that
      // made a busy leader step down and recover in a loop
      const ownFence = !answered && (err as { code?: string }).code === 'STALE_EPOCH';
      if (answered && (err as { code?: string }).code === 'STALE_EPOCH') this.deps.staleEpoch();
      const cause = `${op} on node ${nodeId}: ${describe(err)}`;
      if (op === 'cancel_bundle') this.deps.log(cause);
      // never sent (this GCS's own fence) says nothing of the raylet: its node is not kept out of the
      // next round. (It was: a GCS frozen for 3 s in a burst of SPREAD groups found its lease lapsed as
      // it thawed, and put both bundles of 130–430 groups on one node, the other kept out.)
      for (const p of batch) p.resolve({ ok: false, cause, unanswered: !answered, unreachable: !answered && !ownFence });
      return;
    }
    for (const p of batch) {
      const cause = failed.get(key(p.bundle));
      p.resolve(cause === undefined ? { ok: true } : { ok: false, cause, unanswered: false, unreachable: false });
    }
  }
}
