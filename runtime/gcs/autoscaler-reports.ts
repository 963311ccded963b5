import type { AutoscalerReport, AutoscalerStatus, AutoscalerStatusReply } from '../../protocols/messages/autoscaling.ts';
import type { EventPublisher } from './events.ts';

/**
 * What the autoscaler tells the GCS (issue 16, part 6): its latest status, kept in memory for
 * `autoscaler_status` (`orrery status`), and its events, each published as a cluster event on
 * `events.<type>` and kept in the recent-events ring like the GCS's own — so `cluster.events$`,
 * `orrery events` and the dashboard see launches, failures and drains beside the actors they are
 * for. Nothing here is stored: a restarted GCS says "not running" until the autoscaler's next report.
 */
export class AutoscalerReports {
  #latest: { status: AutoscalerStatus; at: number } | undefined;

  constructor(private readonly deps: { events: EventPublisher; now?: () => number }) {}

  /** autoscaler_report: keeps the status, publishes the events in order. */
  report(body: AutoscalerReport): Record<string, never> {
    this.#latest = { status: body.status, at: this.#now() };
    for (const event of body.events) this.deps.events.autoscaler(event);
    return {};
  }

  /** autoscaler_status: the latest status and how old it is; null before the first report. */
  status(): AutoscalerStatusReply {
    if (this.#latest === undefined) return { status: null };
    return { status: this.#latest.status, ageMs: Math.max(0, Math.round(this.#now() - this.#latest.at)) };
  }

  #now(): number {
    return (this.deps.now ?? (() => performance.now()))();
  }
}
