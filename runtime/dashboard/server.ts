import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OrreryError } from '../../lib/errors.ts';
import type { Cluster } from '../client/cluster.ts';
import { ClusterClient } from '../client/cluster.ts';
import { readTrace, type Trace } from '../inspect/trace-file.ts';
import { watchInspection } from '../inspect/watch.ts';
import { MACHINE_KINDS, type MachineKind } from '../../protocols/messages/inspect.ts';
import { renderStatechart } from '../inspect/statechart.ts';
import { clusterRoutes } from './cluster-routes.ts';
import { HttpError, sendError, sendJson } from './http.ts';
import { inspectRoutes } from './inspect-routes.ts';
import { InspectionFeed } from './inspection.ts';
import { Router } from './router.ts';
import type { EventStreamWriter } from './sse.ts';
import { serveStatic } from './static-files.ts';

export const DEFAULT_DASHBOARD_PORT = 8265;

export interface DashboardOptions {
  /** The cluster the page shows and changes; absent: a trace-only dashboard. */
  cluster?: Cluster;
  /** Default 8265; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1 (the dashboard changes taints and labels and has no login). */
  host?: string;
  /** A trace file (`orrery trace`) to step through in the page. */
  trace?: string;
}

export interface Dashboard {
  /** `http://host:port/` */
  readonly url: string;
  readonly port: number;
  /** Ends open event streams and stops serving; the cluster client is the caller's to close. */
  close(): Promise<void>;
}

/** The port is taken by another process. */
export class PortInUseError extends OrreryError {
  override name = 'PortInUseError';
  constructor(readonly port: number, readonly host: string) {
    super('PORT_IN_USE', `port ${port} on ${host} is already in use`, { detail: { port, host } });
  }
}

/** Serves the dashboard page and its REST API (docs/dashboard.md) until close(). */
export async function startDashboard(opts: DashboardOptions): Promise<Dashboard> {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? DEFAULT_DASHBOARD_PORT;
  const trace: (Trace & { path: string }) | undefined = opts.trace === undefined ? undefined : { path: opts.trace, ...readTrace(opts.trace) };
  const statechart = (machine: string): string | undefined => ((MACHINE_KINDS as readonly string[]).includes(machine) ? renderStatechart(machine as MachineKind) : undefined);
  const streams = new Set<EventStreamWriter>();
  const cluster = opts.cluster;
  const feed = cluster instanceof ClusterClient ? new InspectionFeed(() => watchInspection(cluster.bus, cluster.name)) : undefined;

  const router = new Router();
  router.on('GET', '/api/info', (_req, res) =>
    sendJson(res, 200, {
      cluster: cluster?.name ?? null,
      address: cluster?.address ?? null,
      inspection: feed !== undefined,
      trace: trace ? { path: trace.path, cluster: trace.header.cluster, startedAt: trace.header.startedAt, records: trace.records.length } : null,
    }),
  );
  clusterRoutes(router, cluster, streams);
  inspectRoutes(router, { feed, trace, statechart, streams });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    try {
      if (url.pathname.startsWith('/api/')) {
        const { handler, params } = router.match(req.method ?? 'GET', url.pathname);
        await handler(req, res, params, url);
      } else if (req.method === 'GET' || req.method === 'HEAD') {
        await serveStatic(url.pathname, res, req.method === 'HEAD');
      } else {
        throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${url.pathname}`);
      }
    } catch (err) {
      sendError(res, err);
    }
  };
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRINUSE' ? new PortInUseError(port, host) : err));
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`,
    port: bound,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const s of [...streams]) s.close();
        feed?.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
