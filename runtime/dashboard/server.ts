import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { getRequestListener, RequestError } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { OrreryError } from '../../lib/errors.ts';
import type { Cluster } from '../client/cluster.ts';
import { ClusterClient } from '../client/cluster.ts';
import { readTrace, type Trace } from '../inspect/trace-file.ts';
import { watchInspection } from '../inspect/watch.ts';
import { MACHINE_KINDS, type MachineKind } from '../../protocols/messages/inspect.ts';
import { renderStatechart } from '../inspect/statechart.ts';
import { answerOtherMethods, changeChecks, requestLine, sameSiteApi, tokenGate, unrouted, type DashboardEnv } from './checks.ts';
import { clusterRoutes } from './cluster-routes.ts';
import { allowedHostNames, checkToken } from './guard.ts';
import { HttpError, errorResponse, jsonReply } from './http.ts';
import { inspectRoutes } from './inspect-routes.ts';
import { InspectionFeed } from './inspection.ts';
import { loginRoutes } from './login.ts';
import { dashboardMetrics } from './metrics.ts';
import type { EventStreamWriter } from './sse.ts';

export const DEFAULT_DASHBOARD_PORT = 8265;

export interface DashboardOptions {
  /** The cluster the page shows and changes; absent: a trace-only dashboard. */
  cluster?: Cluster;
  /** Default 8265; 0 picks a free port. */
  port?: number;
  /**
   * The address to bind; default 127.0.0.1 (the dashboard changes taints and labels: expose it on
   * other interfaces only with a token, and behind TLS).
   */
  host?: string;
  /**
   * Names besides localhost, 127.0.0.1, [::1] and the bind address that the Host header of a
   * request may carry (the name the dashboard is reached by, behind a proxy or in DNS); a request
   * naming any other host is 421 HOST_NOT_ALLOWED (DNS rebinding).
   */
  hostNames?: readonly string[];
  /**
   * When set, every request needs it: `Authorization: Bearer <token>`, or the session cookie that
   * POST /login sets. Visible ASCII; never logged.
   */
  token?: string;
  /** Every route that changes something answers 403 READ_ONLY; /api/info says `readOnly: true`. */
  readOnly?: boolean;
  /** A trace file (`orrery trace`) to step through in the page. */
  trace?: string;
  /**
   * Default true: follow the cluster's machine transitions from the start, so the step-through of a
   * machine that changed before its page opened shows those transitions (the newest 1,000 of each of
   * the 5,000 machines that changed last). The cluster publishes inspection records while the
   * dashboard runs — about a tenth of actor-creation throughput (docs/benchmarks.md, bench:trace).
   * false: only while a page shows the step-through.
   */
  history?: boolean;
}

/**
 * Sent with every answer (Hono's secureHeaders): no page on another origin may frame the dashboard
 * (its buttons change taints) or read its answers as a subresource; the page loads only its own
 * files. Not HSTS: the dashboard serves plain HTTP (TLS is a proxy's, which sets its own).
 */
const securityHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: 'DENY',
  crossOriginResourcePolicy: 'same-origin',
  // not no-referrer: with it a browser sends `Origin: null` on the page's own form posts (POST /login)
  referrerPolicy: 'same-origin',
  strictTransportSecurity: false,
});

/** The page's files: runtime/dashboard/public in the source tree, dist/runtime/dashboard/public when built. */
export const PUBLIC_DIR = fileURLToPath(new URL('./public/', import.meta.url));

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
  const hostNames = allowedHostNames(host, opts.hostNames);
  const token = opts.token === undefined ? undefined : checkToken(opts.token);
  const readOnly = opts.readOnly === true;
  const trace: (Trace & { path: string }) | undefined = opts.trace === undefined ? undefined : { path: opts.trace, ...readTrace(opts.trace) };
  const statechart = (machine: string): string | undefined => ((MACHINE_KINDS as readonly string[]).includes(machine) ? renderStatechart(machine as MachineKind) : undefined);
  const streams = new Set<EventStreamWriter>();
  const cluster = opts.cluster;
  const metrics = cluster === undefined ? undefined : dashboardMetrics(cluster);
  const feed = cluster instanceof ClusterClient ? new InspectionFeed((onAck) => watchInspection(cluster.bus, cluster.name, { onAck })) : undefined;

  const app = new Hono<DashboardEnv>();
  app.onError(errorResponse);
  app.notFound((c) => errorResponse(unrouted(c), c));
  app.use(securityHeaders, requestLine(hostNames));
  if (token !== undefined) app.use(tokenGate(token));
  app.use('/api/*', sameSiteApi);

  app.get('/api/info', (c) =>
    jsonReply(c, 200, {
      cluster: cluster?.name ?? null,
      address: cluster?.address ?? null,
      inspection: feed !== undefined,
      // since when the step-through's live records are complete, and which processes send them
      history: feed === undefined ? null : { retained: opts.history !== false, ...feed.status() },
      readOnly,
      trace: trace ? { path: trace.path, cluster: trace.header.cluster, startedAt: trace.header.startedAt, records: trace.records.length } : null,
    }),
  );
  if (opts.history !== false) feed?.retain();
  clusterRoutes(app, { cluster, streams, change: changeChecks(readOnly) });
  inspectRoutes(app, { feed, trace, statechart, streams });
  // Prometheus scrapes here (with `authorization: Bearer` when the dashboard has a token)
  app.get('/metrics', async (c) => {
    if (!metrics) throw new HttpError(503, 'NO_CLUSTER', 'this dashboard shows a trace only: it has no cluster to measure');
    return c.body(await metrics.text(), 200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
  });
  if (token !== undefined) loginRoutes(app, token);
  answerOtherMethods(app);
  const pageFiles = serveStatic<DashboardEnv>({ root: PUBLIC_DIR });
  app.get('*', async function page(c, next) {
    if (c.req.path.startsWith('/api/')) return next();
    c.header('cache-control', 'no-cache');
    return pageFiles(c, next);
  });

  /** A request the adapter cannot make a Request of (a Host no URL can hold, a backslash in the path): 400, with every answer's headers. */
  const refusals = new Hono<{ Bindings: { error: HttpError } }>();
  refusals.onError(errorResponse);
  refusals.use(securityHeaders).all('*', (c) => {
    throw c.env.error;
  });
  const listener = getRequestListener(app.fetch, {
    overrideGlobalObjects: false,
    // a request without a Host is answered by requestLine (421 HOST_NOT_ALLOWED), not by the adapter
    hostname: 'dashboard.invalid',
    errorHandler: (err) =>
      refusals.fetch(new Request('http://dashboard.invalid/'), {
        error:
          err instanceof RequestError
            ? new HttpError(400, 'BAD_REQUEST', `bad request: ${err.message}`)
            : new HttpError(500, 'INTERNAL', err instanceof Error ? err.message.split('\n')[0] : String(err)),
      }),
  });
  // a request without a Host is answered by requestLine (421 HOST_NOT_ALLOWED, as JSON), not by node:http (a bare 400)
  const server = createServer({ requireHostHeader: false }, (req, res) => void listener(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      // nothing is served: the inspection subscription and the metrics' event stream end with it
      feed?.stop();
      metrics?.stop();
      reject(err.code === 'EADDRINUSE' ? new PortInUseError(port, host) : err);
    });
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
        metrics?.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
