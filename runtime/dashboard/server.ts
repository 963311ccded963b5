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
import { allowedHostNames, authorized, checkHost, checkJsonBody, checkNotCrossSiteSubresource, checkSameOrigin, checkToken } from './guard.ts';
import { HttpError, sendError, sendJson } from './http.ts';
import { inspectRoutes } from './inspect-routes.ts';
import { InspectionFeed } from './inspection.ts';
import { login } from './login.ts';
import { dashboardMetrics } from './metrics.ts';
import { Router } from './router.ts';
import type { EventStreamWriter } from './sse.ts';
import { serveStatic } from './static-files.ts';

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
 * Sent with every answer: no page on another origin may frame the dashboard (its buttons change
 * taints) or read its answers as a subresource; the page loads only its own files.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cross-origin-resource-policy': 'same-origin',
  // not no-referrer: with it a browser sends `Origin: null` on the page's own form posts (POST /login)
  'referrer-policy': 'same-origin',
};

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

/**
 * The request's path and query; 400 BAD_REQUEST for a target that is not a path (`http://…`,
 * `*`) or holds a percent-escape that does not decode (`/%zz`, `/%E0%A4%A`).
 */
export function requestUrl(target: string | undefined): URL {
  const bad = (why: string): HttpError => new HttpError(400, 'BAD_REQUEST', `bad request path ${JSON.stringify((target ?? '').slice(0, 100))}: ${why}`);
  if (target === undefined || !target.startsWith('/')) throw bad('expected a path starting with /');
  let url: URL;
  try {
    url = new URL(`http://dashboard${target}`);
  } catch {
    throw bad('not a URL path');
  }
  for (const segment of url.pathname.split('/')) {
    try {
      decodeURIComponent(segment);
    } catch {
      throw bad('a percent-escape does not decode (write % as %25)');
    }
  }
  return url;
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

  const router = new Router();
  router.on('GET', '/api/info', (_req, res) =>
    sendJson(res, 200, {
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
  clusterRoutes(router, cluster, streams);
  inspectRoutes(router, { feed, trace, statechart, streams });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    try {
      const method = req.method ?? 'GET';
      const requestHost = checkHost(req.headersDistinct.host, hostNames);
      const url = requestUrl(req.url);
      if (token !== undefined) {
        if (url.pathname === '/login') return await login(req, res, { token, host: requestHost, port: req.socket.localPort ?? 0 });
        if (!authorized(req.headers, token, req.socket.localPort ?? 0)) {
          if (!url.pathname.startsWith('/api/') && url.pathname !== '/metrics' && (method === 'GET' || method === 'HEAD')) {
            res.writeHead(303, { location: '/login', 'cache-control': 'no-store', 'content-length': 0 });
            res.end();
            return;
          }
          throw new HttpError(401, 'UNAUTHORIZED', 'this dashboard needs its token: send Authorization: Bearer <token>, or sign in at /login', {
            'www-authenticate': 'Bearer realm="orrery dashboard"',
          });
        }
      }
      if (url.pathname.startsWith('/api/')) {
        const changes = method !== 'GET' && method !== 'HEAD';
        if (changes) checkSameOrigin(req.headers, requestHost);
        else checkNotCrossSiteSubresource(req.headers);
        const { handler, params, read } = router.match(method, url.pathname);
        if (readOnly && !read) throw new HttpError(403, 'READ_ONLY', `this dashboard is read-only (--read-only): ${method} ${url.pathname} is refused`);
        if (changes) checkJsonBody(req.headers);
        await handler(req, res, params, url);
      } else if (url.pathname === '/metrics') {
        // Prometheus scrapes here (with `authorization: Bearer` when the dashboard has a token)
        if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on /metrics (allowed: GET)`);
        if (!metrics) throw new HttpError(503, 'NO_CLUSTER', 'this dashboard shows a trace only: it has no cluster to measure');
        const body = await metrics.text();
        res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
        res.end(method === 'HEAD' ? undefined : body);
      } else if (method === 'GET' || method === 'HEAD') {
        await serveStatic(url.pathname, res, method === 'HEAD');
      } else {
        throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${url.pathname}`);
      }
    } catch (err) {
      sendError(res, err);
    }
  };
  // a request without a Host is answered by checkHost (421 HOST_NOT_ALLOWED, as JSON), not by node:http (a bare 400)
  const server = createServer({ requireHostHeader: false }, (req, res) => void handle(req, res));
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
        metrics?.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
