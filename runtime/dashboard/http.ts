import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { OrreryError } from '../../lib/errors.ts';

/** What every failed API request answers: an HTTP status and `{ code, message }` as JSON. */
export class HttpError extends OrreryError {
  override name = 'HttpError';
  /** Extra response headers (`www-authenticate` of a 401, `connection: close` of a 413). */
  readonly headers: Readonly<Record<string, string>>;
  constructor(readonly status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(code, message);
    this.headers = headers;
  }
}

/** The largest request body the API reads (label and taint changes are a few hundred bytes). */
export const MAX_BODY_BYTES = 64 * 1024;

/** A JSON answer, never cached: the API's answers change as the cluster does. */
export function jsonReply(c: Context, status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return c.body(JSON.stringify(value), status as ContentfulStatusCode, { ...headers, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
}

/** The app's error handler: `{ code, message }` with the status errorReply() gives, and the error's own headers. */
export function errorResponse(err: unknown, c: Context): Response {
  const { status, code, message } = errorReply(err);
  return jsonReply(c, status, { code, message }, err instanceof HttpError ? { ...err.headers } : {});
}

/** Statuses by the client's stable error codes; anything else from the cluster is a 502. */
const STATUS_BY_CODE: Record<string, number> = {
  NODE_NOT_FOUND: 404,
  ACTOR_NOT_FOUND: 404,
  INVALID_LABEL: 400,
  INVALID_TAINT: 400,
  INVALID_OPTION: 400,
  INVALID_SELECTOR: 400,
  INVALID_RESOURCE: 400,
  NODE_UNAVAILABLE: 409,
  TIMEOUT: 504,
  GCS_UNAVAILABLE: 503,
  NO_RESPONDERS: 503,
  BUS_CLOSED: 503,
  CONNECTION_FAILED: 503,
};

export function errorReply(err: unknown): { status: number; code: string; message: string } {
  if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof OrreryError) return { status: STATUS_BY_CODE[err.code] ?? 502, code: err.code, message: firstLine(err.message) };
  return { status: 500, code: 'INTERNAL', message: firstLine(err instanceof Error ? err.message : String(err)) };
}

function firstLine(text: string): string {
  return text.split('\n')[0].trim();
}

/**
 * Hono's bodyLimit with our refusal: 413 BODY_TOO_LARGE (and the connection closed after the
 * answer) when the body is over `limit` bytes — at once when its Content-Length says so, else as
 * soon as it has sent more.
 */
export function bodyUpTo(limit = MAX_BODY_BYTES): MiddlewareHandler {
  return bodyLimit({
    maxSize: limit,
    onError: () => {
      throw new HttpError(413, 'BODY_TOO_LARGE', `the request body is over ${limit} bytes`, { connection: 'close' });
    },
  });
}

/** The request body as JSON; 400 BAD_BODY when it is empty or not JSON (the size is bodyUpTo()'s). */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') throw new HttpError(400, 'BAD_BODY', 'the request has no body; expected a JSON object such as {"key": "value"}');
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'BAD_BODY', 'the request body is not JSON; expected a JSON object such as {"key": "value"}');
  }
}

/** A body of `{ "key": "value", … }`: a non-empty object of strings, else 400 BAD_BODY. */
export function stringRecord(body: unknown, what: string): Record<string, string> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'BAD_BODY', `expected a JSON object of ${what}, e.g. {"key": "value"}`);
  }
  const entries = Object.entries(body);
  if (entries.length === 0) throw new HttpError(400, 'BAD_BODY', `expected at least one of ${what}, e.g. {"key": "value"}`);
  for (const [key, value] of entries) {
    if (typeof value !== 'string') throw new HttpError(400, 'BAD_BODY', `${what}: the value of ${JSON.stringify(key)} must be a string, got ${JSON.stringify(value)}`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
