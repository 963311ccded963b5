import { askGcsAnswer, type GcsLink } from './gcs-link.ts';
import type { LostActor } from './local-actors.ts';

/** The longest pause between two attempts of an actor_died report (reportDied). */
const MAX_DIED_RETRY_MS = 5_000;

/**
 * The raylet's gcs.actor_died reports: the actors of a worker host that died (local-actors.ts,
 * `onLost`), told to the GCS until it has heard, for as long as the raylet runs.
 */
export interface DiedReportsDeps {
  readonly gcs: GcsLink;
  readonly log: (line: string) => void;
  /** Pause after the first attempt nobody answered (RayletServiceOptions.retryMs); default 500 ms. */
  readonly retryMs?: number;
}

export class DiedReports {
  /** The raylet has stopped: no report is sent again. */
  private stopped = false;

  constructor(private readonly deps: DiedReportsDeps) {}

  /** The raylet has stopped (service.ts, shutdown): reports still retrying end at their next attempt. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * Tells the GCS that actors here died, until it has heard: sent again after `retryMs`, doubling
   * up to 5 s, for as long as the raylet runs (an answer — even a refusal — ends it). Before, it gave
   * up after 10 attempts (~5 s without a GCS): a GCS cut off from the bus longer than that, and
   * back without a restart, kept those actors ALIVE for good — never restarted, their calls never
   * answered. The GCS takes a report about an incarnation that is not the current one as stale, so
   * one that arrives late changes nothing.
   */
  async reportDied(actors: LostActor[], cause: string): Promise<void> {
    const { gcs, log } = this.deps;
    const body = { nodeId: gcs.nodeId, actors, cause, secret: gcs.secret };
    const first = this.deps.retryMs ?? 500;
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        // any answer the GCS gave — a refusal too — ends it; one without its proof does not
        await askGcsAnswer(gcs, 'actor_died', body);
        return;
      } catch (err) {
        // said for the first attempts, then every tenth: a long outage would say it every few seconds
        if (attempt <= 3 || attempt % 10 === 0) {
          log(`raylet ${gcs.nodeId}: actor_died for ${actors.length} actor(s) not delivered (attempt ${attempt}, sending it again): ${(err as Error).message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_DIED_RETRY_MS, first * 2 ** Math.min(attempt - 1, 16))));
      }
    }
  }
}
