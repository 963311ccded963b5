import { OrreryError } from '../../lib/errors.ts';
import { answerNonce, checkProof, type ProvenVerb } from '../../protocols/answer-proof.ts';
import { encode } from '../../protocols/codec.ts';
import { fromWireError, type WireError } from '../../protocols/errors.ts';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import { decodeReplyBody } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Validator } from '../../protocols/validate.ts';
import type { Bus } from '../bus/bus.ts';

/**
 * What the raylet's parts that talk to the GCS share (registration.ts, heartbeats.ts,
 * died-reports.ts, served-subjects.ts): the bus and subjects, the node they speak for and its
 * secret, how long a request waits, and the newest leader epoch heard of. Built once by the service.
 */
export interface GcsLink {
  readonly bus: Bus;
  readonly subjects: ClusterSubjects;
  readonly nodeId: string;
  /** The node's secret (service.ts): sent to the GCS's verbs and in signed answers, never logged. */
  readonly secret: string;
  /** Timeout of each request to the GCS but heartbeats (RayletServiceOptions.requestTimeoutMs). */
  readonly timeoutMs: number;
  readonly epoch: LeaderEpoch;
  /**
   * Whether the GCS has proven an answer to this raylet (protocols/answer-proof.ts): from then on an
   * answer without a proof is refused. Before, it is taken, as from a GCS older than proofs.
   */
  readonly proofs: { seen: boolean; refused: number };
  /** The raylet's log: an answer refused for its proof is said there (the first, then every 100th). */
  readonly log: (line: string) => void;
}

/** An answer to a raylet's request that does not carry the GCS's proof where one was due: dropped. */
export class AnswerNotProvenError extends OrreryError {
  constructor(verb: string, proof: 'unproven' | 'forged') {
    super(
      'ANSWER_NOT_PROVEN',
      proof === 'forged'
        ? `the answer to ${verb} carries a proof that does not hold: dropped (a node-role connection answering in the GCS's place?)`
        : `the answer to ${verb} carries no proof, though the GCS proves its answers: dropped (a node-role connection answering in the GCS's place?)`,
      { detail: { verb, proof } },
    );
  }
}

/**
 * Asks the GCS `verb` for this node and returns its answer as sent, an error included. The request
 * carries a fresh nonce and goes with an unguessable reply subject (runtime/bus/reply-tokens.ts):
 * every node-role connection reads the node inbox the GCS answers into. An answer whose proof does
 * not hold, or that has none once the GCS has proven one, throws AnswerNotProvenError.
 */
export async function askGcsAnswer<V extends ProvenVerb>(
  gcs: GcsLink,
  verb: V,
  body: Omit<MessageBody<V>, 'nonce'>,
  timeoutMs = gcs.timeoutMs,
): Promise<{ ok: true; value: unknown } | { ok: false; error: WireError }> {
  const nonce = answerNonce();
  const msg = await gcs.bus.request(gcs.subjects.gcs(verb), encode(verb, { ...body, nonce } as MessageBody<V>), { timeoutMs, unguessableReply: true });
  const answer = decodeReplyBody(msg.data);
  const proof = checkProof(answer, gcs.secret, verb, nonce);
  if (proof === 'proven') gcs.proofs.seen = true;
  else if (proof === 'forged' || gcs.proofs.seen) {
    const err = new AnswerNotProvenError(verb, proof);
    if (gcs.proofs.refused++ % 100 === 0) gcs.log(`raylet ${gcs.nodeId}: ${err.message} (${gcs.proofs.refused} so far)`);
    throw err;
  }
  return answer;
}

/** askGcsAnswer, then its value checked by `value`, or its error thrown as an OrreryError. */
export async function askGcs<V extends ProvenVerb, T>(gcs: GcsLink, verb: V, body: Omit<MessageBody<V>, 'nonce'>, value: Validator<T>, timeoutMs?: number): Promise<T> {
  const answer = await askGcsAnswer(gcs, verb, body, timeoutMs);
  if (!answer.ok) throw fromWireError(answer.error);
  return value(answer.value, 'value');
}

/**
 * The newest GCS leader epoch heard of (registration and heartbeat answers, and the messages
 * themselves): a create, kill or bundle request with an older one is refused STALE_EPOCH and
 * changes nothing (runtime/gcs/leader.ts).
 */
export class LeaderEpoch {
  private epoch = 0;

  /** Adopts a newer epoch; an older one is STALE_EPOCH (a GCS that lost its lease). */
  check(epoch: number | undefined): void {
    if (epoch === undefined) return;
    if (epoch < this.epoch) {
      throw new OrreryError('STALE_EPOCH', `epoch ${epoch} is older than the leader's (${this.epoch}): refused`, { detail: { epoch, current: this.epoch } });
    }
    this.epoch = epoch;
  }
}
