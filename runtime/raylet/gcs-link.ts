import { OrreryError } from '../../lib/errors.ts';
import type { ClusterSubjects, GcsVerb } from '../../protocols/subjects.ts';
import type { Bus, BusMsg } from '../bus/bus.ts';

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
}

/**
 * Asks the GCS `verb` for this node, waiting `timeoutMs` (by default the link's). The reply subject
 * is unguessable (runtime/bus/reply-tokens.ts): every node-role connection reads the node inbox the
 * GCS answers into, so with a counted one a peer could answer a heartbeat in the GCS's place.
 */
export function askGcs(gcs: GcsLink, verb: GcsVerb, body: Uint8Array, timeoutMs = gcs.timeoutMs): Promise<BusMsg> {
  return gcs.bus.request(gcs.subjects.gcs(verb), body, { timeoutMs, unguessableReply: true });
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
