import { OrreryError } from '../../lib/errors.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
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
