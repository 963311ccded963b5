import type { Router } from './router.ts';
import { forPage } from '../inspect/replay.ts';
import { HttpError, sendJson } from './http.ts';
import type { InspectionFeed } from './inspection.ts';
import { openEventStream, type EventStreamWriter } from './sse.ts';
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
export function inspectRoutes(router: Router, opts: InspectRoutesOptions): void {
  router
    .on('GET', '/api/inspect/stream', (req, res) => {
      if (!opts.feed) throw new HttpError(503, 'NO_INSPECTION', 'live inspection is not available on this dashboard (no cluster connection)');
      const stream = openEventStream(req, res, opts.streams);
      stream.onClose(
        opts.feed.follow(
          (record) => stream.send('inspect', forPage(record)),
          (publisher) => stream.send('attached', { publisher }),
        ),
      );
    })
    .on('GET', '/api/trace', (_req, res) => {
      if (!opts.trace) throw new HttpError(404, 'NO_TRACE', 'no trace file is loaded (start the dashboard with --trace FILE)');
      sendJson(res, 200, { path: opts.trace.path, header: opts.trace.header, records: opts.trace.records.map(forPage) });
    })
    .on('GET', '/api/machines/:machine/statechart.svg', (_req, res, { machine }) => {
      const svg = opts.statechart(machine);
      if (svg === undefined) throw new HttpError(404, 'UNKNOWN_MACHINE', `no statechart for machine ${JSON.stringify(machine)} (expected gcs, node, raylet, actor, placement_group)`);
      res.writeHead(200, { 'content-type': 'image/svg+xml; charset=utf-8', 'content-length': Buffer.byteLength(svg), 'cache-control': 'no-cache' });
      res.end(svg);
    });
}
