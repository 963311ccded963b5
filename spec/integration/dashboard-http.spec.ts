// The dashboard's HTTP layer on Hono (runtime/dashboard/server.ts, checks.ts, sse.ts) against a real
// cluster on a private nats-server: malformed requests of every kind are 4xx and the server goes on
// serving; a wrong method is 405 naming the allowed ones on every route; every kind of answer —
// page, file, API, error, the adapter's own refusals, /metrics, an event stream — carries the
// security headers; HEAD is GET without a body; an event stream opens at once, streams, and ends
// when the dashboard closes. The routes' own behaviour is dashboard-rest.spec.ts's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { startDashboard, type Dashboard } from '../../runtime/dashboard/server.ts';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';

let local: LocalCluster;
let dash: Dashboard;
let nodeId: string;

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'solo', resources: { CPU: 1 } }] });
  nodeId = (await local.cluster.nodes())[0].nodeId;
  dash = await startDashboard({ cluster: local.cluster, port: 0 });
});
test.after(async () => {
  await dash?.close();
  await local?.stop();
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: { code?: string; message?: string } | undefined;
}

/** A request with exactly these headers (Host defaults to the dashboard's own; `host: null` sends none). */
function raw(method: string, path: string, opts: { headers?: Record<string, string | null>; body?: string; to?: Dashboard } = {}): Promise<Reply> {
  const target = opts.to ?? dash;
  const headers: OutgoingHttpHeaders = { host: `127.0.0.1:${target.port}` };
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: target.port, method, path, headers, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = text !== '' && String(res.headers['content-type'] ?? '').startsWith('application/json');
        resolve({ status: res.statusCode!, headers: res.headers, text, body: json ? (JSON.parse(text) as Reply['body']) : undefined });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** What the dashboard sent back on a bare socket for `requestText` (for what node:http's client will not send). */
function rawSocket(requestText: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(dash.port, '127.0.0.1', () => socket.end(requestText));
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString('utf8')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };

const MALFORMED: { name: string; method: string; path: string; headers?: Record<string, string | null>; body?: string; status: number; code: string }[] = [
  { name: 'an undecodable escape in an API path', method: 'GET', path: '/api/actors/%E0%A4%A', status: 400, code: 'BAD_REQUEST' },
  { name: 'an undecodable escape in a route parameter', method: 'GET', path: '/api/nodes/%E0%A4%A', status: 400, code: 'BAD_REQUEST' },
  { name: 'an undecodable escape in a page path', method: 'GET', path: '/app%E0.js', status: 400, code: 'BAD_REQUEST' },
  { name: 'an absolute-form target', method: 'GET', path: 'http://evil.example/api/nodes', status: 400, code: 'BAD_REQUEST' },
  { name: 'the asterisk-form target', method: 'OPTIONS', path: '*', status: 400, code: 'BAD_REQUEST' },
  { name: 'a backslash in the path', method: 'GET', path: '/api\\nodes', status: 400, code: 'BAD_REQUEST' },
  { name: 'a Host no URL can hold', method: 'GET', path: '/api/info', headers: { host: 'a b' }, status: 400, code: 'BAD_REQUEST' },
  { name: 'no Host', method: 'GET', path: '/api/info', headers: { host: null }, status: 421, code: 'HOST_NOT_ALLOWED' },
  { name: 'an unknown actor state', method: 'GET', path: '/api/actors?state=nope', status: 400, code: 'BAD_QUERY' },
  { name: 'an undecodable escape in a query value', method: 'GET', path: '/api/actors?state=%E0%A4%A', status: 400, code: 'BAD_QUERY' },
  { name: 'a limit that is not a number', method: 'GET', path: '/api/actors?limit=abc', status: 400, code: 'BAD_QUERY' },
  { name: 'a limit of 0', method: 'GET', path: '/api/nodes?limit=0', status: 400, code: 'BAD_QUERY' },
  { name: 'a negative afterSeq', method: 'GET', path: '/api/events?afterSeq=-1', status: 400, code: 'BAD_QUERY' },
  { name: 'an unknown event type', method: 'GET', path: '/api/events?types=%00', status: 400, code: 'BAD_QUERY' },
  { name: 'a JSON body cut short', method: 'POST', path: '/api/explain', headers: JSON_TYPE, body: '{"options":', status: 400, code: 'BAD_BODY' },
  { name: 'a label that is not a string', method: 'POST', path: '/api/nodes/NODE/labels', headers: JSON_TYPE, body: '{"a":1}', status: 400, code: 'BAD_BODY' },
  { name: 'a method no route has', method: 'PROPFIND', path: '/api/nodes', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { name: 'PATCH on a page', method: 'PATCH', path: '/', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { name: 'an unknown API route', method: 'DELETE', path: '/api/nope', status: 404, code: 'NOT_FOUND' },
  { name: 'an unknown file', method: 'GET', path: '/nope.css', status: 404, code: 'NOT_FOUND' },
  { name: 'a path that climbs out of the page', method: 'GET', path: '/..%2f..%2fpackage.json', status: 404, code: 'NOT_FOUND' },
];

test('malformed requests are 4xx with {code, message}, never 500, and the server goes on serving', async () => {
  for (const c of MALFORMED) {
    const r = await raw(c.method, c.path.replace('NODE', nodeId), { headers: c.headers, body: c.body });
    assert.is(r.status, c.status, `${c.name}: ${r.text}`);
    assert.is(r.body?.code, c.code, c.name);
    assert.type(r.body?.message, 'string', c.name);
  }
  // a method HTTP does not know never reaches the dashboard: node:http's parser answers 400
  assert.match(await rawSocket(`BREW /api/nodes HTTP/1.1\r\nHost: 127.0.0.1:${dash.port}\r\n\r\n`), /^HTTP\/1\.1 400 /);
  assert.is((await raw('GET', '/api/info')).status, 200, 'still serving');
});

const WRONG_METHODS: { method: string; path: string; allowed: string }[] = [
  { method: 'POST', path: '/api/info', allowed: 'GET' },
  { method: 'DELETE', path: '/api/nodes', allowed: 'GET' },
  { method: 'PUT', path: '/api/nodes/NODE', allowed: 'GET' },
  { method: 'POST', path: '/api/actors', allowed: 'GET' },
  { method: 'POST', path: '/api/placement-groups', allowed: 'GET' },
  { method: 'POST', path: '/api/events', allowed: 'GET' },
  { method: 'POST', path: '/api/events/stream', allowed: 'GET' },
  { method: 'GET', path: '/api/explain', allowed: 'POST' },
  { method: 'PUT', path: '/api/nodes/NODE/taints', allowed: 'POST' },
  { method: 'POST', path: '/api/nodes/NODE/taints/k', allowed: 'DELETE' },
  { method: 'GET', path: '/api/nodes/NODE/labels', allowed: 'POST' },
  { method: 'PUT', path: '/api/nodes/NODE/labels/k', allowed: 'DELETE' },
  { method: 'POST', path: '/api/inspect/stream', allowed: 'GET' },
  { method: 'POST', path: '/api/trace', allowed: 'GET' },
  { method: 'POST', path: '/api/machines/actor/statechart.svg', allowed: 'GET' },
  { method: 'POST', path: '/metrics', allowed: 'GET' },
  { method: 'DELETE', path: '/app.js', allowed: 'GET' },
];

test('a wrong method is 405 METHOD_NOT_ALLOWED naming the allowed ones, on every route; an unknown path is 404 NOT_FOUND', async () => {
  for (const c of WRONG_METHODS) {
    const r = await raw(c.method, c.path.replace('NODE', nodeId), { headers: JSON_TYPE });
    assert.is(r.status, 405, `${c.method} ${c.path}: ${r.text}`);
    assert.equal(r.body, { code: 'METHOD_NOT_ALLOWED', message: `${c.method} is not allowed on ${c.path.replace('NODE', nodeId)} (allowed: ${c.allowed})` });
  }
  for (const path of ['/api/nodes/x/y/z', '/api/', '/nope/']) assert.is((await raw('GET', path)).status, 404, path);
});

/** The headers every answer carries (runtime/dashboard/server.ts, securityHeaders). */
function assertSecurityHeaders(r: Reply, what: string): void {
  assert.is(
    r.headers['content-security-policy'],
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    what,
  );
  assert.is(r.headers['x-frame-options'], 'DENY', what);
  assert.is(r.headers['x-content-type-options'], 'nosniff', what);
  assert.is(r.headers['cross-origin-resource-policy'], 'same-origin', what);
  assert.is(r.headers['referrer-policy'], 'same-origin', what);
  assert.is(r.headers['strict-transport-security'], undefined, `${what}: no HSTS on plain HTTP`);
}

test('every kind of answer carries the security headers: page, file, API, errors, the adapter\'s refusals, /metrics', async () => {
  const answers: [string, Promise<Reply>, number][] = [
    ['the page', raw('GET', '/'), 200],
    ['a file', raw('GET', '/app.js'), 200],
    ['an API answer', raw('GET', '/api/nodes'), 200],
    ['an API change', raw('POST', `/api/nodes/${nodeId}/labels`, { headers: JSON_TYPE, body: '{"hdr":"1"}' }), 200],
    ['/metrics', raw('GET', '/metrics'), 200],
    ['a statechart', raw('GET', '/api/machines/node/statechart.svg'), 200],
    ['a 404', raw('GET', '/api/nope'), 404],
    ['a 405', raw('PUT', '/api/nodes'), 405],
    ['a 400 of the path', raw('GET', '/%zz'), 400],
    ['a 400 of the adapter', raw('GET', '/a\\b'), 400],
    ['a 421', raw('GET', '/', { headers: { host: 'evil.example' } }), 421],
    ['a 403', raw('DELETE', `/api/nodes/${nodeId}/labels/hdr`, { headers: { origin: 'http://evil.example' } }), 403],
  ];
  for (const [what, reply, status] of answers) {
    const r = await reply;
    assert.is(r.status, status, `${what}: ${r.text.slice(0, 200)}`);
    assertSecurityHeaders(r, what);
  }
  await local.cluster.setNodeLabels(nodeId, { remove: ['hdr'] });
});

test('HEAD is answered as GET, without a body', async () => {
  for (const [path, type] of [['/', /^text\/html/], ['/style.css', /^text\/css/], ['/api/nodes', /^application\/json/], ['/metrics', /^text\/plain/]] as const) {
    const get = await raw('GET', path);
    const head = await raw('HEAD', path);
    assert.equal([head.status, head.text], [200, ''], path);
    assert.match(String(head.headers['content-type']), type, path);
    assert.is(head.headers['cache-control'], get.headers['cache-control'], path);
  }
});

/** Reads an event stream until `pass` accepts what has arrived; answers the text so far. */
async function readUntil(reader: ReadableStreamDefaultReader<string>, pass: (text: string) => boolean): Promise<string> {
  let text = '';
  while (!pass(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before the condition; it had: ${text}`);
    text += value;
  }
  return text;
}

test('an event stream opens at once (text/event-stream, never cached, not buffered, with the security headers), streams events with their seq as id, and ends when the dashboard closes', async () => {
  const own = await startDashboard({ cluster: local.cluster, port: 0 });
  let closed = false;
  try {
    const res = await fetch(new URL('/api/events/stream', own.url));
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.is(res.headers.get('cache-control'), 'no-store');
    assert.is(res.headers.get('x-accel-buffering'), 'no');
    assert.is(res.headers.get('x-frame-options'), 'DENY');
    assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    assert.match(await readUntil(reader, (t) => t.includes('\n\n')), /^: orrery dashboard\n\n/, 'a comment opens the stream before any event');
    const changed = local.cluster.setNodeLabels(nodeId, { set: { streamed: 'yes' } });
    const text = await readUntil(reader, (t) => /"streamed":"yes"[^\n]*\nid: \d+\n\n/.test(t));
    const block = text.split('\n\n').find((b) => b.includes('"streamed":"yes"'))!;
    assert.match(block, /^event: cluster\ndata: \{.*\}\nid: \d+$/);
    assert.is((JSON.parse(/^data: (.*)$/m.exec(block)![1]) as { type: string }).type, 'node_labels_changed');
    await changed;
    closed = true;
    await own.close();
    // the stream ends (or the connection with it): the read settles, it does not hang
    const end = await reader.read().then(
      async (r) => (r.done ? 'done' : (await reader.read().then((x) => (x.done ? 'done' : 'more'), () => 'cut'))),
      () => 'cut',
    );
    assert.ok(end === 'done' || end === 'cut', end);
  } finally {
    if (!closed) await own.close();
    await local.cluster.setNodeLabels(nodeId, { remove: ['streamed'] });
  }
});

test.run();
