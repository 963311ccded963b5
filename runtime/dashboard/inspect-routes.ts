import type { Hono } from 'hono';
import { forPage } from '../inspect/replay.ts';
import type { DashboardEnv } from './checks.ts';
import { HttpError, jsonReply } from './http.ts';
import type { InspectionFeed } from './inspection.ts';
import { eventStream, type EventStreamWriter } from './sse.ts';
import type { Trace } from '../inspect/trace-file.ts';

export interface InspectRoutesOptions {
  /** The live inspection feed; absent without a cluster (or without runtime/inspect). */
  feed: InspectionFeed | undefined;
  trace: (Trace & { path: string }) | undefined;
  /** The statechart of a machine as standalone SVG, or undefined for an unknown machine. */
  statechart: (machine: string) => string | undefined;
  streams: Set<EventStreamWriter>;
}

/**
 * The step-through half of the API: live inspection records as Server-Sent Events, the loaded
 * trace file, and each machine's statechart as SVG (states carry `data-state="<dotted path>"`).
 */
export function inspectRoutes(app: Hono<DashboardEnv>, opts: InspectRoutesOptions): void {
  app
    .get('/api/inspect/stream', (c) => {
      const feed = opts.feed;
      if (!feed) throw new HttpError(503, 'NO_INSPECTION', 'live inspection is not available on this dashboard (no cluster connection)');
      return eventStream(c, opts.streams, (stream) =>
        stream.onClose(
          feed.follow(
            (record) => stream.send('inspect', forPage(record)),
            (publisher) => stream.send('attached', { publisher }),
          ),
        ),
      );
    })
    .get('/api/trace', (c) => {
      if (!opts.trace) throw new HttpError(404, 'NO_TRACE', 'no trace file is loaded (start the dashboard with --trace FILE)');
      return jsonReply(c, 200, { path: opts.trace.path, header: opts.trace.header, records: opts.trace.records.map(forPage) });
    })
    .get('/api/machines/:machine/statechart.svg', (c) => {
      const machine = c.req.param('machine');
      const svg = opts.statechart(machine);
      if (svg === undefined) throw new HttpError(404, 'UNKNOWN_MACHINE', `no statechart for machine ${JSON.stringify(machine)} (expected gcs, node, raylet, actor, placement_group)`);
      return c.body(svg, 200, { 'content-type': 'image/svg+xml; charset=utf-8', 'cache-control': 'no-cache' });
    });
}
