import { RejectionLog } from '../process/rejection-log.ts';
import type { NodeOwners } from './node-owner.ts';

/**
 * What the GCS makes of raylets' answers to its requests (create_actor and kill_actor: raylets.ts;
 * the bundle verbs: bundle-client.ts). Every request carries the leader epoch this GCS holds, and a
 * raylet refusing it as STALE_EPOCH is said once: a newer GCS leads. Answers to create_actor and the
 * bundle verbs count only with the node's own secret (node-owner.ts, answerSecret); one without it is
 * refused, counted and logged.
 */
export interface RayletAnswersDeps {
  /** The leader epoch this GCS holds (leader.ts); 0 without a lease. */
  readonly epoch: number;
  readonly log: (line: string) => void;
  /** A raylet refused a message as STALE_EPOCH: a newer leader runs and this one must step down. */
  readonly onStaleEpoch?: () => void;
  /** The secrets of the nodes the node table holds (nodes.ts), read as each answer comes. */
  readonly owners: () => NodeOwners;
}

/** What RayletClient and BundleClient take to check the answers they get. */
export interface AnswerChecks {
  readonly epoch: number;
  readonly staleEpoch: () => void;
  readonly answeredBy: (nodeId: string, secret: string | undefined) => boolean;
  readonly forged: (nodeId: string, verb: string) => void;
}

export class RayletAnswers {
  /** Answers from raylets refused for want of their node's secret (node-owner.ts, answerSecret). */
  #forged = 0;
  #staleSaid = false;
  readonly checks: AnswerChecks;

  constructor(deps: RayletAnswersDeps) {
    const { epoch, log } = deps;
    const forgedAnswers = new RejectionLog('refused an answer', log);
    this.checks = {
      epoch,
      staleEpoch: () => {
        if (this.#staleSaid) return;
        this.#staleSaid = true;
        log(`a raylet refused epoch ${epoch} as stale: a newer GCS leads`);
        deps.onStaleEpoch?.();
      },
      answeredBy: (nodeId, secret) => deps.owners().owns(nodeId, secret),
      forged: (nodeId, verb) => {
        this.#forged++;
        forgedAnswers.note('NODE_NOT_OWNED', `refused an answer to ${verb} for node ${nodeId}: it does not carry that node's secret`);
      },
    };
  }

  /** How many answers were refused as forged so far. */
  get forged(): number {
    return this.#forged;
  }
}
