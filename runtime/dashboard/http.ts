import type { IncomingMessage, ServerResponse } from 'node:http';
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

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

export function sendError(res: ServerResponse, err: unknown): void {
  const { status, code, message } = errorReply(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { code, message }, err instanceof HttpError ? { ...err.headers } : {});
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
 * The request body as text; 413 BODY_TOO_LARGE (and the connection closed after the answer) when
 * it is over `limit` bytes — at once when its Content-Length says so, else as soon as it has sent
 * more.
 */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  const tooLarge = (): HttpError => new HttpError(413, 'BODY_TOO_LARGE', `the request body is over ${limit} bytes`, { connection: 'close' });
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The request body as JSON; 400 BAD_BODY when it is not JSON, 413 when it is too large. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
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
