import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './http.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: URL) => Promise<void> | void;

export interface RouteOptions {
  /**
   * A route whose method is not GET that changes nothing (POST /api/explain, a dry run): it is
   * still under the checks of a request that could change something (Origin, JSON body) but is
   * answered on a read-only dashboard.
   */
  read?: boolean;
}

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
  read: boolean;
}

/**
 * Method + path patterns (`/api/nodes/:id/taints/:key`); a `:name` segment matches one
 * percent-decoded segment. A path with routes for other methods only answers 405, an unknown path 404.
 */
export class Router {
  private readonly routes: Route[] = [];

  on(method: string, pattern: string, handler: Handler, opts: RouteOptions = {}): this {
    this.routes.push({ method, parts: pattern.split('/').filter(Boolean), handler, read: opts.read ?? (method === 'GET' || method === 'HEAD') });
    return this;
  }

  /** The handler and its params for a request, and whether the route only reads; or an HttpError (404 / 405). */
  match(method: string, pathname: string): { handler: Handler; params: Record<string, string>; read: boolean } {
    const segments = pathname.split('/').filter(Boolean);
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = matchParts(route.parts, segments);
      if (!params) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { handler: route.handler, params, read: route.read };
      allowed.push(route.method);
    }
    if (allowed.length > 0) throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${pathname} (allowed: ${[...new Set(allowed)].join(', ')})`);
    throw new HttpError(404, 'NOT_FOUND', `no route ${method} ${pathname}`);
  }
}

function matchParts(parts: readonly string[], segments: readonly string[]): Record<string, string> | undefined {
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    if (parts[i].startsWith(':')) {
      try {
        params[parts[i].slice(1)] = decodeURIComponent(segments[i]);
      } catch {
        return undefined;
      }
    } else if (parts[i] !== segments[i]) {
      return undefined;
    }
  }
  return params;
}
