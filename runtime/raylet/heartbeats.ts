import { bool, num, object, optional } from '../../protocols/validate.ts';
import type { Fence } from './fence.ts';
import { askGcs, type GcsLink } from './gcs-link.ts';
import type { Leases } from './leases.ts';
import type { HeartbeatInput } from './raylet.machine.ts';

const heartbeatAnswer = object({ known: bool(), epoch: optional(num({ int: true, min: 0 })) });

/**
 * The heartbeats the Raylet machine sends (raylet.machine.ts, `heartbeat`): each reports what is
 * free here, adopts the epoch its answer carries, and feeds the fence (fence.ts) — acknowledged,
 * failed, or forgotten by a GCS that does not know the node.
 */
export interface HeartbeatsDeps {
  readonly gcs: GcsLink;
  readonly leases: Pick<Leases, 'availableWithoutBundles'>;
  readonly fence: Pick<Fence, 'acked' | 'failed' | 'forgotten'>;
}

export class Heartbeats {
  constructor(private readonly deps: HeartbeatsDeps) {}

  /** One beat; its request waits as long as the machine says (two periods), not `requestTimeoutMs`. */
  async beat({ seq, timeoutMs }: HeartbeatInput): Promise<{ known: boolean }> {
    const { gcs, fence } = this.deps;
    const body = { nodeId: gcs.nodeId, seq, available: this.deps.leases.availableWithoutBundles(), secret: gcs.secret };
    const sentAt = performance.now();
    let answer: { known: boolean; epoch?: number };
    try {
      // an answer without the GCS's proof fails the beat (ANSWER_NOT_PROVEN): it acknowledges nothing
      answer = await askGcs(gcs, 'heartbeat', body, heartbeatAnswer, timeoutMs);
      gcs.epoch.check(answer.epoch);
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      fence.failed(typeof code === 'string' ? code : 'INTERNAL', sentAt);
      throw err;
    }
    if (answer.known) fence.acked(sentAt);
    else fence.forgotten(); // up until the registration that follows is acknowledged
    return { known: answer.known };
  }
}
