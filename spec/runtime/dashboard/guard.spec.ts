// The dashboard's request checks on plain header objects (runtime/dashboard/guard.ts): which Host
// names it answers to (DNS rebinding), which Origin may change something, which bodies are
// accepted, and the token (Bearer header or the session cookie), compared in constant time.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { IncomingHttpHeaders } from 'node:http';
import {
  DashboardOptionError,
  allowedHostNames,
  authorized,
  checkHost,
  checkJsonBody,
  checkNotCrossSiteSubresource,
  checkSameOrigin,
  checkToken,
  cookieName,
  cookieOf,
  hostKey,
  sessionCookie,
  sessionValue,
  tokenMatches,
} from '../../../runtime/dashboard/guard.ts';
import { HttpError } from '../../../runtime/dashboard/http.ts';

/** Runs `fn` and returns the HttpError it throws (status and code), failing when it throws none. */
function refused(fn: () => unknown): { status: number; code: string; message: string } {
  try {
    fn();
  } catch (err) {
    assert.instance(err, HttpError);
    const e = err as HttpError;
    return { status: e.status, code: e.code, message: e.message };
  }
  assert.unreachable('expected an HttpError');
  throw new Error('unreachable');
}

test('hostKey writes names as a Host header does: lower case, IPv6 in brackets in its shortest form; nonsense is undefined', () => {
  assert.is(hostKey('LocalHost'), 'localhost');
  assert.is(hostKey('::1'), '[::1]');
  assert.is(hostKey('[0:0:0:0:0:0:0:1]'), '[::1]');
  assert.is(hostKey('Dash.Example.com'), 'dash.example.com');
  assert.is(hostKey('10.0.0.5'), '10.0.0.5');
  for (const bad of ['', 'a b', 'evil.com:80', 'x@y', '[nope]', '-lead', 'http://x', 'a..b']) assert.is(hostKey(bad), undefined, bad);
});

test('allowedHostNames: the loopback names and the bind address, plus --host-name values; a bad name is INVALID_OPTION', () => {
  assert.equal([...allowedHostNames('127.0.0.1')].sort(), ['127.0.0.1', '[::1]', 'localhost']);
  assert.equal([...allowedHostNames('10.1.2.3', ['Dash.example.com', '::ffff:a01:203'])].sort(), ['10.1.2.3', '127.0.0.1', '[::1]', '[::ffff:a01:203]', 'dash.example.com', 'localhost']);
  const everywhere = allowedHostNames('0.0.0.0');
  assert.ok(everywhere.has('0.0.0.0') && everywhere.has('127.0.0.1'), 'bound to every interface: its addresses, loopback included');
  try {
    allowedHostNames('127.0.0.1', ['not a name']);
    assert.unreachable('a bad host name is refused');
  } catch (err) {
    assert.instance(err, DashboardOptionError);
    assert.is((err as DashboardOptionError).code, 'INVALID_OPTION');
    assert.match((err as Error).message, /hostNames: "not a name" is not a host name/);
  }
});

test('checkHost answers the Host when its name is allowed (any port); any other name, a malformed, missing or doubled Host is 421 HOST_NOT_ALLOWED', () => {
  const allowed = allowedHostNames('127.0.0.1', ['dash.internal']);
  assert.is(checkHost('127.0.0.1:8265', allowed), '127.0.0.1:8265');
  assert.is(checkHost('LOCALHOST:8265', allowed), 'localhost:8265');
  assert.is(checkHost('[::1]:8265', allowed), '[::1]:8265');
  assert.is(checkHost('dash.internal', allowed), 'dash.internal');
  assert.is(checkHost(['localhost:1'], allowed), 'localhost:1');
  for (const bad of ['evil.example:8265', 'evil.example', '127.0.0.1.evil.example', 'localhost.:8265', '127.0.0.1:99999', 'localhost:80:80', 'user@localhost', '', ' ']) {
    const r = refused(() => checkHost(bad, allowed));
    assert.equal([r.status, r.code], [421, 'HOST_NOT_ALLOWED'], bad);
  }
  assert.match(refused(() => checkHost('evil.example:1', allowed)).message, /^Host "evil\.example:1": this dashboard answers only to .*localhost.*--host-name/);
  assert.match(refused(() => checkHost(undefined, allowed)).message, /^no Host header/);
  assert.match(refused(() => checkHost(['localhost', 'evil.example'], allowed)).message, /^more than one Host header/);
});

test('checkSameOrigin: no Origin or the dashboard\'s own (http or https on the same Host) passes; another Origin, "null", or Sec-Fetch-Site: cross-site is 403 ORIGIN_NOT_ALLOWED', () => {
  const host = '127.0.0.1:8265';
  checkSameOrigin({}, host);
  checkSameOrigin({ origin: 'http://127.0.0.1:8265' }, host);
  checkSameOrigin({ origin: 'https://127.0.0.1:8265' }, host);
  checkSameOrigin({ origin: 'http://localhost', 'sec-fetch-site': 'same-origin' }, 'localhost:80');
  checkSameOrigin({ origin: 'https://dash.example.com' }, 'dash.example.com');
  const others: IncomingHttpHeaders[] = [
    { origin: 'http://127.0.0.1:9999' },
    { origin: 'http://localhost:8265' },
    { origin: 'http://evil.example' },
    { origin: 'null' },
    { origin: 'http://127.0.0.1:8265/' },
    { origin: 'http://127.0.0.1:8265, http://evil.example' },
    { 'sec-fetch-site': 'cross-site' },
    { origin: 'http://127.0.0.1:8265', 'sec-fetch-site': 'cross-site' },
  ];
  for (const headers of others) {
    const r = refused(() => checkSameOrigin(headers, host));
    assert.equal([r.status, r.code], [403, 'ORIGIN_NOT_ALLOWED'], JSON.stringify(headers));
  }
});

test('checkNotCrossSiteSubresource: a cross-site fetch, image or script of the API is 403; a link followed to it and same-site requests pass', () => {
  checkNotCrossSiteSubresource({});
  checkNotCrossSiteSubresource({ 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' });
  checkNotCrossSiteSubresource({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' });
  for (const mode of ['no-cors', 'cors']) {
    assert.equal(refused(() => checkNotCrossSiteSubresource({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': mode })).code, 'ORIGIN_NOT_ALLOWED', mode);
  }
});

test('checkJsonBody: application/json (with parameters) or no body passes; the types any page may send, other types and a body without a type are 415', () => {
  assert.is(checkJsonBody({ 'content-type': 'application/json', 'content-length': '10' }), 'application/json');
  assert.is(checkJsonBody({ 'content-type': 'Application/JSON; charset=utf-8', 'transfer-encoding': 'chunked' }), 'application/json');
  assert.is(checkJsonBody({}), undefined, 'a DELETE without a body');
  assert.is(checkJsonBody({ 'content-length': '0' }), undefined);
  for (const headers of [
    { 'content-type': 'text/plain', 'content-length': '20' },
    { 'content-type': 'text/plain;charset=UTF-8' },
    { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '9' },
    { 'content-type': 'multipart/form-data; boundary=x', 'content-length': '99' },
    { 'content-type': 'application/json-patch+json', 'content-length': '2' },
    { 'content-length': '2' },
    { 'transfer-encoding': 'chunked' },
  ] as IncomingHttpHeaders[]) {
    const r = refused(() => checkJsonBody(headers));
    assert.equal([r.status, r.code], [415, 'UNSUPPORTED_MEDIA_TYPE'], JSON.stringify(headers));
  }
  assert.is(checkJsonBody({ 'content-type': 'application/x-www-form-urlencoded', 'content-length': '3' }, ['application/x-www-form-urlencoded', 'application/json']), 'application/x-www-form-urlencoded');
});

test('tokens: compared whole (any difference, any length); a token must be visible ASCII, and its error never holds it', () => {
  assert.ok(tokenMatches('s3cret-token', 's3cret-token'));
  for (const other of ['s3cret-toke', 's3cret-token!', 'S3cret-token', '', 'x'.repeat(1000)]) assert.not.ok(tokenMatches(other, 's3cret-token'), other);
  assert.is(checkToken('abc123-def456-ghi7'), 'abc123-def456-ghi7');
  for (const bad of ['', 'has space', 'tab\there', 'caf\u00e9', 'abc123-short']) {
    try {
      checkToken(bad);
      assert.unreachable(JSON.stringify(bad));
    } catch (err) {
      assert.instance(err, DashboardOptionError);
      if (bad !== '') assert.not.ok((err as Error).message.includes(bad), 'the message does not hold the token');
    }
  }
});

test('authorized: Authorization: Bearer <token>, or the session cookie of this port; a wrong header is refused even beside a good cookie', () => {
  const token = 'tok-123';
  const port = 8265;
  const cookie = `${cookieName(port)}=${sessionValue(token)}`;
  assert.ok(authorized({ authorization: 'Bearer tok-123' }, token, port));
  assert.ok(authorized({ authorization: 'bearer tok-123' }, token, port));
  assert.ok(authorized({ cookie: `theme=dark; ${cookie}` }, token, port));
  assert.not.ok(authorized({}, token, port));
  assert.not.ok(authorized({ authorization: 'Bearer tok-1234' }, token, port));
  assert.not.ok(authorized({ authorization: 'Basic dG9rLTEyMw==' }, token, port));
  assert.not.ok(authorized({ authorization: 'Bearer nope', cookie }, token, port));
  assert.not.ok(authorized({ cookie: `${cookieName(9999)}=${sessionValue(token)}` }, token, port), 'the cookie of another port');
  assert.not.ok(authorized({ cookie: `${cookieName(port)}=${token}` }, token, port), 'the cookie holds a value derived from the token, not the token');
  assert.not.ok(authorized({ cookie: `${cookieName(port)}=${sessionValue('other')}` }, token, port));
});

test('sessionCookie is HttpOnly, SameSite=Strict, for the whole dashboard, and does not hold the token', () => {
  const set = sessionCookie('tok-123', 8265);
  assert.match(set, /^orrery_dashboard_8265=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Strict$/);
  assert.not.ok(set.includes('tok-123'));
  assert.is(cookieOf(`a=1; orrery_dashboard_8265=xyz; b=2`, 'orrery_dashboard_8265'), 'xyz');
  assert.is(cookieOf(`orrery_dashboard_82650=xyz`, 'orrery_dashboard_8265'), undefined);
  assert.is(cookieOf(undefined, 'x'), undefined);
});

test.run();
