import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { OrreryError } from '../../lib/errors.ts';
import { HttpError } from './http.ts';

/**
 * The checks that keep other web pages from driving the dashboard (docs/dashboard.md, "Who may
 * use it"; docs/security.md, "The dashboard"): the Host a request names (DNS rebinding), the Origin
 * and Sec-Fetch-Site of a request that changes something (cross-site requests), the media type of
 * its body (the three types a page on any origin may send without asking), and the token.
 * Pure functions of the request's headers, so that each can be tested without a server.
 */

/** Host names the dashboard always answers to: the loopback names a browser on this machine uses. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** A dashboard option that cannot be used (a host name, the token); the message never holds the token. */
export class DashboardOptionError extends OrreryError {
  override name = 'DashboardOptionError';
  constructor(readonly option: string, message: string) {
    super('INVALID_OPTION', `dashboard: ${option}: ${message}`, { detail: { option } });
  }
}

/** `name` or `[v6]`, then an optional port: the shape of a Host header (RFC 9110 §7.2). */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/i;
/** A DNS name (labels of letters, digits, '-', '_') or an IPv4 address. */
const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/i;

/**
 * A host name as a Host header carries it: lower case, an IPv6 address in brackets and in its
 * shortest form (`[::1]`); undefined when `name` is neither a DNS name nor an IP address.
 */
export function hostKey(name: string): string | undefined {
  const text = name.trim();
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIP(bare) === 6) return new URL(`http://[${bare}]/`).hostname;
  if (text !== bare) return undefined;
  return HOST_NAME.test(bare) ? bare.toLowerCase() : undefined;
}

/**
 * The host names a dashboard bound to `bindAddress` answers to: the loopback names, the bind
 * address, the `extra` names (`--host-name`), and — bound to every interface (0.0.0.0 or ::) — the
 * addresses of this machine's interfaces, since a browser can only send an IP address as Host when
 * that is the address it connected to. A name that is not one is a DashboardOptionError.
 */
export function allowedHostNames(bindAddress: string, extra: readonly string[] = []): Set<string> {
  const names = new Set(LOOPBACK_HOST_NAMES);
  const bind = hostKey(bindAddress);
  if (bind !== undefined) names.add(bind);
  for (const name of extra) {
    const key = hostKey(name);
    if (key === undefined) throw new DashboardOptionError('hostNames', `${JSON.stringify(name)} is not a host name or IP address (e.g. dash.example.com, 10.0.0.5)`);
    names.add(key);
  }
  if (bind === '0.0.0.0' || bind === '[::]') {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) {
        const key = hostKey(a.address.replace(/%.*$/, ''));
        if (key !== undefined) names.add(key);
      }
    }
  }
  return names;
}

/** The one value of a header, or undefined when it is absent or given more than once. */
export function single(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return value.length === 1 ? value[0] : undefined;
}

/**
 * The request's Host (`hostname[:port]`, the hostname as hostKey() writes it) when its hostname
 * is one of `allowed`; else 421 HOST_NOT_ALLOWED. A missing Host, or more than one, is refused too:
 * a page on a name that resolves to this machine (DNS rebinding) sends its own name here.
 */
export function checkHost(header: string | readonly string[] | undefined, allowed: ReadonlySet<string>): string {
  const value = single(header);
  const m = value === undefined ? null : HOST_HEADER.exec(value.trim());
  const name = m ? hostKey(m[1]) : undefined;
  if (m && name !== undefined && allowed.has(name) && (m[2] === undefined || Number(m[2]) <= 65_535)) {
    return m[2] === undefined ? name : `${name}:${m[2]}`;
  }
  const shown = value === undefined ? (header === undefined ? 'no Host header' : 'more than one Host header') : `Host ${JSON.stringify(value.slice(0, 100))}`;
  throw new HttpError(
    421,
    'HOST_NOT_ALLOWED',
    `${shown}: this dashboard answers only to ${[...allowed].slice(0, 8).join(', ')}${allowed.size > 8 ? ', …' : ''} (add a name with --host-name NAME)`,
  );
}

/**
 * Whether a request that changes something comes from the dashboard's own page: an Origin header,
 * when there is one, must be the dashboard's origin as the browser sees it — `http://<host>` (or
 * `https://<host>` behind a TLS proxy), `host` being the request's checked Host — and a browser's
 * `Sec-Fetch-Site: cross-site` is refused whatever the Origin. No Origin (curl, scripts) passes:
 * browsers send one with every request that is not a GET or HEAD. Else 403 ORIGIN_NOT_ALLOWED.
 */
export function checkSameOrigin(headers: IncomingHttpHeaders, host: string): void {
  if (crossSite(headers)) {
    throw new HttpError(403, 'ORIGIN_NOT_ALLOWED', 'a cross-site request (Sec-Fetch-Site: cross-site) cannot change anything on this dashboard');
  }
  const origin = headers.origin;
  if (origin === undefined) return;
  if (origin !== new URL(`http://${host}`).origin && origin !== new URL(`https://${host}`).origin) {
    throw new HttpError(403, 'ORIGIN_NOT_ALLOWED', `Origin ${JSON.stringify(origin.slice(0, 100))} is not this dashboard (http://${host}); only its own page may change anything`);
  }
}

/** A browser's `Sec-Fetch-Site: cross-site` (a page on another site sent the request). */
function crossSite(headers: IncomingHttpHeaders): boolean {
  const site = headers['sec-fetch-site'];
  return site !== undefined && String(site).split(',').some((v) => v.trim().toLowerCase() === 'cross-site');
}

/**
 * API reads (GET) are answered to a cross-site page only when it navigates to them (a link): a
 * cross-site fetch, image or script is 403 ORIGIN_NOT_ALLOWED, so that no other site can open
 * the inspection stream (which makes the cluster publish) or time the dashboard's answers.
 */
export function checkNotCrossSiteSubresource(headers: IncomingHttpHeaders): void {
  if (crossSite(headers) && headers['sec-fetch-mode'] !== 'navigate') {
    throw new HttpError(403, 'ORIGIN_NOT_ALLOWED', 'the API does not answer requests from other sites (Sec-Fetch-Site: cross-site)');
  }
}

/** The media type of a Content-Type header, lower case and without its parameters (`; charset=…`). */
export function mediaType(header: string | readonly string[] | undefined): string | undefined {
  const value = single(header);
  return value === undefined ? undefined : value.split(';')[0].trim().toLowerCase();
}

/** Whether the request carries a body (a non-zero Content-Length, or a Transfer-Encoding). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
}

/**
 * A request that changes something may carry a body only as `application/json` (parameters such
 * as charset allowed): the types a page on any origin may send without asking first — text/plain,
 * multipart/form-data, application/x-www-form-urlencoded — are 415 UNSUPPORTED_MEDIA_TYPE, and so
 * is any Content-Type given without a body.
 */
export function checkJsonBody(headers: IncomingHttpHeaders, accepted: readonly string[] = ['application/json']): string | undefined {
  const raw = headers['content-type'];
  if (raw === undefined && !hasBody(headers)) return undefined;
  const type = mediaType(raw);
  if (type !== undefined && accepted.includes(type)) return type;
  throw new HttpError(
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    `${raw === undefined ? 'a body without a Content-Type' : `Content-Type ${JSON.stringify(String(raw).slice(0, 100))}`} is not accepted here; send ${accepted.join(' or ')}`,
  );
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Whether `presented` is `token`, in time that does not depend on where they differ (equal-length digests). */
export function tokenMatches(presented: string, token: string): boolean {
  return timingSafeEqual(sha256(presented), sha256(token));
}

/**
 * A token the dashboard can use: visible ASCII only (it travels in an Authorization header), at
 * least one character. The error names the rule, never the token.
 */
/** The shortest token a dashboard takes. */
export const MIN_TOKEN_LENGTH = 16;

export function checkToken(token: string): string {
  if (token.length === 0) throw new DashboardOptionError('token', 'the token is empty');
  if (!/^[\x21-\x7e]+$/.test(token)) throw new DashboardOptionError('token', 'the token may hold only visible ASCII characters (no spaces), e.g. the output of `openssl rand -hex 32`');
  // no limit on guesses (docs/security.md): a short token is a guessable one
  if (token.length < MIN_TOKEN_LENGTH) throw new DashboardOptionError('token', `the token must be at least ${MIN_TOKEN_LENGTH} characters, e.g. the output of \`openssl rand -hex 32\``);
  return token;
}

/** The session cookie of a dashboard on `port` (cookies are not kept apart by port; the name is). */
export function cookieName(port: number): string {
  return `orrery_dashboard_${port}`;
}

/** The cookie's value for `token`: derived from it (an HMAC), so the cookie does not hold the token. */
export function sessionValue(token: string): string {
  return createHmac('sha256', token).update('orrery dashboard session v1').digest('base64url');
}

/** The `Set-Cookie` of a signed-in browser: HttpOnly, SameSite=Strict, for the whole dashboard, for the browser's session. */
export function sessionCookie(token: string, port: number): string {
  return `${cookieName(port)}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict`;
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Whether the request carries the token: `Authorization: Bearer <token>`, or the session cookie
 * that POST /login sets. Both compared in constant time.
 */
export function authorized(headers: IncomingHttpHeaders, token: string, port: number): boolean {
  const auth = headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer +(\S+) *$/i.exec(auth);
    return m !== null && tokenMatches(m[1], token);
  }
  const cookie = cookieOf(headers.cookie, cookieName(port));
  return cookie !== undefined && tokenMatches(cookie, sessionValue(token));
}
