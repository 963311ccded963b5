import type { HttpBindings } from '@hono/node-server';
import type { Context, Env, Hono, MiddlewareHandler } from 'hono';
import { authorized, checkHost, checkJsonBody, checkNotCrossSiteSubresource, checkSameOrigin } from './guard.ts';
import { HttpError } from './http.ts';

/**
 * guard.ts's checks as Hono middleware, in the order the server runs them (docs/dashboard.md,
 * "Who may use it"). Each reads the request's headers as node:http parsed them (`c.env.incoming`),
 * so that a header given twice is seen as such, and paths as Hono routes them (`c.req.path`), so
 * that what is checked is what is routed.
 */
export interface DashboardEnv extends Env {
  Bindings: HttpBindings;
  /** `host`: the request's checked Host (`hostname[:port]`), set by requestLine(). */
  Variables: { host: string };
}

type Check = MiddlewareHandler<DashboardEnv>;

const reads = (method: string): boolean => method === 'GET' || method === 'HEAD';

/**
 * The request's path; 400 BAD_REQUEST for a target that is not a path (`http://…`, `*`) or holds a
 * percent-escape that does not decode (`/%zz`, `/%E0%A4%A`).
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

/** First: the Host is one this dashboard answers to (421, DNS rebinding) and the target is a path that decodes (400). */
export function requestLine(hostNames: ReadonlySet<string>): Check {
  return async function requestLine(c, next) {
    c.set('host', checkHost(c.env.incoming.headersDistinct.host, hostNames));
    requestUrl(c.env.incoming.url);
    await next();
  };
}

/**
 * With a token, every request but the sign-in carries it (Bearer or the session cookie): else a
 * page is sent to /login (303) and the API and /metrics answer 401 UNAUTHORIZED.
 */
export function tokenGate(token: string): Check {
  return async function tokenGate(c, next) {
    const path = c.req.path;
    if (path === '/login' || authorized(c.env.incoming.headers, token, c.env.incoming.socket.localPort ?? 0)) return next();
    if (!path.startsWith('/api/') && path !== '/metrics' && reads(c.req.method)) return c.body(null, 303, { location: '/login', 'cache-control': 'no-store' });
    throw new HttpError(401, 'UNAUTHORIZED', 'this dashboard needs its token: send Authorization: Bearer <token>, or sign in at /login', {
      'www-authenticate': 'Bearer realm="orrery dashboard"',
    });
  };
}

/**
 * On /api/*: a request that could change something comes from the dashboard's own origin (403
 * ORIGIN_NOT_ALLOWED; an OPTIONS preflight too); a read is not a cross-site subresource.
 */
export const sameSiteApi: Check = async function sameSiteApi(c, next) {
  if (reads(c.req.method)) checkNotCrossSiteSubresource(c.env.incoming.headers);
  else checkSameOrigin(c.env.incoming.headers, c.get('host'));
  await next();
};

/** A route that changes something: 403 READ_ONLY on a read-only dashboard, then a body only as JSON (415). */
export function changeChecks(readOnly: boolean): Check {
  return async function changeChecks(c, next) {
    if (readOnly) throw new HttpError(403, 'READ_ONLY', `this dashboard is read-only (--read-only): ${c.req.method} ${c.req.path} is refused`);
    checkJsonBody(c.env.incoming.headers);
    await next();
  };
}

/** A route that is not GET but changes nothing (POST /api/explain, a dry run): answered when read-only, a body only as JSON. */
export const dryRunChecks: Check = async function dryRunChecks(c, next) {
  checkJsonBody(c.env.incoming.headers);
  await next();
};

/**
 * Hono routes by method and path and answers 404 to a method it has no route for. After the
 * routes, this makes each routed path answer other methods 405 METHOD_NOT_ALLOWED naming the
 * allowed ones (HEAD is GET's: Hono answers it with GET's route).
 */
export function answerOtherMethods<E extends Env>(app: Hono<E>): void {
  const allowed = new Map<string, Set<string>>();
  for (const { method, path } of app.routes) {
    if (method === 'ALL') continue;
    const methods = allowed.get(path) ?? new Set<string>();
    allowed.set(path, methods.add(method));
  }
  for (const [path, methods] of allowed) {
    app.all(path, (c) => {
      throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on ${c.req.path} (allowed: ${[...methods].join(', ')})`);
    });
  }
}

/** What no route answered: an API path is 404 NOT_FOUND, a page file 404 too when read, else 405. */
export function unrouted(c: Context): HttpError {
  const { method, path } = c.req;
  if (path.startsWith('/api/')) return new HttpError(404, 'NOT_FOUND', `no route ${method} ${path}`);
  if (reads(method)) return new HttpError(404, 'NOT_FOUND', `no file ${path}`);
  return new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${path} (allowed: GET)`);
}
