// The dashboard's REST API over real HTTP (docs/dashboard.md), against a GCS and two raylet
// processes on a real nats-server: every route, its answers and its errors ({code, message} with
// 400 / 404 / 405 / 503), the two Server-Sent Events streams, the trace file and the statecharts,
// the page's own files, and a taken port (library and `orrery dashboard`).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDashboard, type Dashboard } from '../../runtime/dashboard/server.ts';
import { startLocalCluster, type ActorHandle, type ActorInfo, type ClusterEvent, type LocalCluster, type NodeInfo } from '../../runtime/index.ts';
import type { InspectRecord } from '../../protocols/messages/inspect.ts';
import { JournalActor } from '../runtime/client/failover-actors.ts';
import { orrery } from '../runtime/cli/process.ts';

const WAIT_MS = 20_000;
let local: LocalCluster;
let dash: Dashboard;
let ids: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'orrery-dashboard-rest-'));

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'a', resources: { CPU: 2 } }, { name: 'b', resources: { CPU: 2 }, labels: { zone: 'west' } }] });
  ids = Object.fromEntries((await local.cluster.nodes()).map((n) => [n.name, n.nodeId]));
  dash = await startDashboard({ cluster: local.cluster, port: 0 });
});
test.after(async () => {
  await dash?.close();
  await local?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Reply<T = unknown> {
  status: number;
  type: string;
  body: T;
}

async function call<T = unknown>(method: string, path: string, body?: unknown, raw?: string): Promise<Reply<T>> {
  const res = await fetch(new URL(path, dash.url), {
    method,
    ...(raw !== undefined ? { body: raw, headers: { 'content-type': 'application/json' } } : body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  return { status: res.status, type, body: (type.startsWith('application/json') ? JSON.parse(text) : text) as T };
}

/** Asserts an error answer: the status and `{code, message}` with nothing else. */
function isError(reply: Reply, status: number, code: string, message?: RegExp): void {
  assert.is(reply.status, status, JSON.stringify(reply.body));
  const body = reply.body as { code: string; message: string };
  assert.equal(Object.keys(body).sort(), ['code', 'message']);
  assert.is(body.code, code);
  assert.type(body.message, 'string');
  if (message) assert.match(body.message, message);
}

/** Reads Server-Sent Events of one name from a route until `pass` accepts one (or the time runs out). */
async function firstEvent<T>(path: string, name: string, pass: (data: T) => boolean, afterOpen: () => Promise<unknown> = async () => undefined): Promise<T> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), WAIT_MS);
  try {
    const res = await fetch(new URL(path, dash.url), { signal: abort.signal });
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let opened = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${path} ended`);
      buffer += value;
      if (!opened) {
        opened = true;
        void afterOpen();
      }
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === name && data !== undefined && pass(JSON.parse(data) as T)) return JSON.parse(data) as T;
      }
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

test('GET /api/nodes and /api/nodes/:id answer the NodeInfo of the client API; an unknown node is 404 NODE_NOT_FOUND', async () => {
  const nodes = await call<NodeInfo[]>('GET', '/api/nodes');
  assert.is(nodes.status, 200);
  assert.match(nodes.type, /^application\/json/);
  assert.equal(nodes.body.map((n) => n.name).sort(), ['a', 'b']);
  const b = nodes.body.find((n) => n.name === 'b')!;
  assert.equal([b.state, b.labels.zone, b.resources.total.CPU], ['ALIVE', 'west', 2]);
  assert.equal((await call<NodeInfo>('GET', `/api/nodes/${ids.a}`)).body, nodes.body.find((n) => n.name === 'a'));
  isError(await call('GET', '/api/nodes/0000000000000000'), 404, 'NODE_NOT_FOUND', /0000000000000000/);
});

test('GET /api/actors lists actors as the client sees them; GET /api/placement-groups answers a list', async () => {
  const handle = await local.cluster.actor(JournalActor).options({ name: 'rest-journal' }).remote();
  await handle.ready({ timeoutMs: WAIT_MS });
  const actors = await call<ActorInfo[]>('GET', '/api/actors');
  assert.is(actors.status, 200);
  const mine = actors.body.find((a) => a.actorId === handle.actorId);
  assert.ok(mine, 'the new actor is listed');
  assert.equal([mine!.name, mine!.className, mine!.state], ['rest-journal', 'Journal', 'ALIVE']);
  assert.ok(mine!.nodeId === ids.a || mine!.nodeId === ids.b);

  const pgs = await call<unknown[]>('GET', '/api/placement-groups');
  assert.is(pgs.status, 200);
  const client = local.cluster as { placementGroups?: () => Promise<unknown[]> };
  assert.equal(pgs.body, typeof client.placementGroups === 'function' ? JSON.parse(JSON.stringify(await client.placementGroups())) : []);
  await handle.kill();
});

test('GET /api/events answers recent events oldest first, filtered by types, afterSeq and limit; bad queries are 400 BAD_QUERY', async () => {
  const all = await call<{ events: ClusterEvent[]; lastSeq: number; omitted: number }>('GET', '/api/events');
  assert.is(all.status, 200);
  const added = all.body.events.filter((e) => e.type === 'node_added');
  assert.is(added.length, 2);
  const seqs = all.body.events.map((e) => e.seq!);
  assert.equal(seqs, [...seqs].sort((x, y) => x - y), 'oldest first');
  assert.is(all.body.lastSeq, seqs[seqs.length - 1]);

  const onlyAdded = await call<{ events: ClusterEvent[] }>('GET', '/api/events?types=node_added');
  assert.equal(onlyAdded.body.events.map((e) => e.type), ['node_added', 'node_added']);
  const newest = await call<{ events: ClusterEvent[]; omitted: number }>('GET', '/api/events?limit=1');
  assert.equal(newest.body.events.map((e) => e.seq), [all.body.lastSeq]);
  assert.is(newest.body.omitted, all.body.events.length - 1);
  const after = await call<{ events: ClusterEvent[] }>('GET', `/api/events?afterSeq=${seqs[seqs.length - 2]}`);
  assert.equal(after.body.events.map((e) => e.seq), [all.body.lastSeq]);

  isError(await call('GET', '/api/events?types=node_added,nope'), 400, 'BAD_QUERY', /unknown event type "nope"/);
  isError(await call('GET', '/api/events?limit=0'), 400, 'BAD_QUERY', /^limit: /);
  isError(await call('GET', '/api/events?afterSeq=x'), 400, 'BAD_QUERY', /^afterSeq: /);
});

test('GET /api/events/stream sends each cluster event as it is published (Server-Sent Events)', async () => {
  const event = await firstEvent<ClusterEvent>('/api/events/stream', 'cluster', (e) => e.type === 'node_labels_changed' && e.node.nodeId === ids.a, () =>
    local.cluster.setNodeLabels(ids.a, { set: { streamed: 'yes' } }),
  );
  assert.is(event.type, 'node_labels_changed');
  assert.is((event as { node: NodeInfo }).node.labels.streamed, 'yes');
  await local.cluster.setNodeLabels(ids.a, { remove: ['streamed'] });
});

test('POST /api/nodes/:id/taints adds taints and answers the node; DELETE …/taints/:key removes one', async () => {
  const added = await call<NodeInfo>('POST', `/api/nodes/${ids.a}/taints`, { dedicated: 'ml', maintenance: 'soon:NoSchedule' });
  assert.is(added.status, 200);
  assert.equal(added.body.taints, { dedicated: 'ml', maintenance: 'soon' });
  assert.equal((await local.cluster.nodes()).find((n) => n.nodeId === ids.a)!.taints, { dedicated: 'ml', maintenance: 'soon' }, 'the GCS has it');

  const removed = await call<NodeInfo>('DELETE', `/api/nodes/${ids.a}/taints/dedicated`);
  assert.is(removed.status, 200);
  assert.equal(removed.body.taints, { maintenance: 'soon' });
  isError(await call('DELETE', `/api/nodes/${ids.a}/taints/dedicated`), 404, 'TAINT_NOT_FOUND', /no taint "dedicated"/);
  await call('DELETE', `/api/nodes/${ids.a}/taints/maintenance`);
  assert.equal((await local.cluster.nodes()).find((n) => n.nodeId === ids.a)!.taints, {});
});

const BAD_BODIES: { name: string; raw: string; code: string; message: RegExp }[] = [
  { name: 'no body', raw: '', code: 'BAD_BODY', message: /no body/ },
  { name: 'not JSON', raw: '{dedicated: ml', code: 'BAD_BODY', message: /not JSON/ },
  { name: 'an array', raw: '[["dedicated","ml"]]', code: 'BAD_BODY', message: /JSON object/ },
  { name: 'a string', raw: '"dedicated=ml"', code: 'BAD_BODY', message: /JSON object/ },
  { name: 'an empty object', raw: '{}', code: 'BAD_BODY', message: /at least one/ },
  { name: 'a value that is not a string', raw: '{"dedicated":true}', code: 'BAD_BODY', message: /"dedicated" must be a string/ },
];

test('taints and labels: bad bodies are 400 with {code, message}; invalid keys, values and effects are 400 with the client\'s code; nothing changes', async () => {
  for (const kind of ['taints', 'labels']) {
    for (const c of BAD_BODIES) isError(await call('POST', `/api/nodes/${ids.b}/${kind}`, undefined, c.raw), 400, c.code, c.message);
  }
  isError(await call('POST', `/api/nodes/${ids.b}/taints`, { 'bad key!': 'x' }), 400, 'INVALID_LABEL');
  isError(await call('POST', `/api/nodes/${ids.b}/taints`, { gpu: 'yes:Evict' }), 400, 'INVALID_LABEL', /NoSchedule, PreferNoSchedule, NoExecute/);
  isError(await call('POST', `/api/nodes/${ids.b}/labels`, { zone: 'has space' }), 400, 'INVALID_LABEL');
  isError(await call('POST', `/api/nodes/${ids.b}/labels`, { 'orrery.io/node-name': 'x' }), 400, 'INVALID_LABEL', /orrery\.io/);
  const b = (await local.cluster.nodes()).find((n) => n.nodeId === ids.b)!;
  assert.equal([b.taints, b.labels.zone, b.labels['orrery.io/node-name']], [{}, 'west', 'b'], 'nothing was applied');
});

test('taints and labels of an unknown node are 404 NODE_NOT_FOUND', async () => {
  const ghost = '00000000deadbeef';
  isError(await call('POST', `/api/nodes/${ghost}/taints`, { dedicated: 'ml' }), 404, 'NODE_NOT_FOUND', /00000000deadbeef/);
  isError(await call('DELETE', `/api/nodes/${ghost}/taints/dedicated`), 404, 'NODE_NOT_FOUND');
  isError(await call('POST', `/api/nodes/${ghost}/labels`, { tier: '1' }), 404, 'NODE_NOT_FOUND');
  isError(await call('DELETE', `/api/nodes/${ghost}/labels/tier`), 404, 'NODE_NOT_FOUND');
});

test('POST /api/nodes/:id/labels sets labels and answers the node; DELETE …/labels/:key removes one; a missing key is 404 LABEL_NOT_FOUND', async () => {
  const set = await call<NodeInfo>('POST', `/api/nodes/${ids.b}/labels`, { tier: '1', disk: 'ssd' });
  assert.is(set.status, 200);
  assert.equal([set.body.labels.tier, set.body.labels.disk, set.body.labels.zone], ['1', 'ssd', 'west']);
  const removed = await call<NodeInfo>('DELETE', `/api/nodes/${ids.b}/labels/disk`);
  assert.is(removed.status, 200);
  assert.not.ok('disk' in removed.body.labels);
  assert.is(removed.body.labels.tier, '1');
  isError(await call('DELETE', `/api/nodes/${ids.b}/labels/disk`), 404, 'LABEL_NOT_FOUND', /no label "disk"/);
  isError(await call('DELETE', `/api/nodes/${ids.b}/labels/${encodeURIComponent('orrery.io/node-name')}`), 400, 'INVALID_LABEL', /orrery\.io/);
  await call('DELETE', `/api/nodes/${ids.b}/labels/tier`);
});

test('unknown routes are 404 NOT_FOUND, a wrong method 405 METHOD_NOT_ALLOWED; GET /api/info describes the dashboard', async () => {
  isError(await call('GET', '/api/nope'), 404, 'NOT_FOUND', /GET \/api\/nope/);
  isError(await call('PUT', '/api/nodes'), 405, 'METHOD_NOT_ALLOWED', /allowed: GET/);
  isError(await call('GET', `/api/nodes/${ids.a}/taints`), 405, 'METHOD_NOT_ALLOWED', /allowed: POST/);
  const info = await call<Record<string, unknown>>('GET', '/api/info');
  assert.equal(info.body, { cluster: 'default', address: local.address, inspection: true, trace: null });
});

test('the page and its files are served from the dashboard itself; nothing outside them', async () => {
  const page = await call<string>('GET', '/');
  assert.is(page.status, 200);
  assert.match(page.type, /^text\/html/);
  assert.match(page.body, /<title>orrery dashboard<\/title>/);
  assert.not.match(page.body, /https?:\/\//, 'no asset from another host');
  for (const file of ['/app.js', '/style.css', '/cluster-view.js', '/step-view.js']) assert.is((await call('GET', file)).status, 200, file);
  isError(await call('GET', '/%2e%2e/%2e%2e/package.json'), 404, 'NOT_FOUND');
  isError(await call('GET', '/nope.js'), 404, 'NOT_FOUND');
});

test('GET /api/machines/:machine/statechart.svg is the statechart (states carry data-state); an unknown machine is 404', async () => {
  const svg = await call<string>('GET', '/api/machines/actor/statechart.svg');
  assert.is(svg.status, 200);
  assert.match(svg.type, /^image\/svg\+xml/);
  assert.match(svg.body, /^<svg|^<\?xml/);
  for (const state of ['PENDING', 'onNode.SCHEDULED', 'onNode.ALIVE', 'RESTARTING', 'DEAD']) assert.match(svg.body, new RegExp(`data-state="${state.replace('.', '\\.')}"`), state);
  isError(await call('GET', '/api/machines/toaster/statechart.svg'), 404, 'UNKNOWN_MACHINE', /"toaster"/);
});

test('GET /api/inspect/stream sends inspection records while the page follows it: an actor PENDING → SCHEDULED → ALIVE', async () => {
  let created: Promise<ActorHandle<unknown>> | undefined;
  let actorId: string | undefined;
  // records may arrive before the create call answers: keep every actor's, look at ours once known
  const states = new Map<string, string[]>();
  await firstEvent<InspectRecord>('/api/inspect/stream', 'inspect', (r) => {
    // a record of a Node machine shows the GCS has attached its inspector; then the actor is created
    if (r.machine === 'node') created ??= local.cluster.actor(JournalActor).remote().then((h) => ((actorId = h.actorId), h));
    if (r.machine === 'actor') states.set(r.id, [...(states.get(r.id) ?? []), r.to]);
    return actorId !== undefined && (states.get(actorId) ?? []).includes('onNode.ALIVE');
  });
  assert.equal(states.get(actorId!), ['PENDING', 'onNode.SCHEDULED', 'onNode.ALIVE']);
  await (await created!).kill();
});

test('GET /api/trace is 404 NO_TRACE without --trace; with a trace file it answers its header and records; a bad file stops startDashboard', async () => {
  isError(await call('GET', '/api/trace'), 404, 'NO_TRACE', /--trace/);
  const file = join(dir, 'ok.trace');
  const header = { format: 'orrery-trace', version: 1, cluster: 'default', startedAt: 1_700_000_000_000 };
  const record = { machine: 'actor', id: 'ab12cd34ef567890', seq: 0, time: 1_700_000_000_010, event: { type: 'xstate.init' }, from: null, to: 'PENDING', context: { className: 'Journal' } };
  writeFileSync(file, `${JSON.stringify(header)}\n${JSON.stringify(record)}\n`);
  const traced = await startDashboard({ port: 0, trace: file });
  try {
    const res = await fetch(new URL('/api/trace', traced.url));
    assert.is(res.status, 200);
    assert.equal(await res.json(), { path: file, header, records: [record] });
    const info = (await (await fetch(new URL('/api/info', traced.url))).json()) as Record<string, unknown>;
    assert.equal(info, { cluster: null, address: null, inspection: false, trace: { path: file, cluster: 'default', startedAt: header.startedAt, records: 1 } });
    const nodes = await fetch(new URL('/api/nodes', traced.url));
    assert.is(nodes.status, 503);
    assert.is(((await nodes.json()) as { code: string }).code, 'NO_CLUSTER');
  } finally {
    await traced.close();
  }
  const bad = join(dir, 'bad.trace');
  writeFileSync(bad, '{"format":"something-else"}\n');
  const err = await startDashboard({ port: 0, trace: bad }).then(() => undefined, (e: unknown) => e as { code: string });
  assert.is(err?.code, 'INVALID_TRACE');
});

test('a taken port: startDashboard rejects with PORT_IN_USE; orrery dashboard prints one line naming --port and exits 1', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    const err = await startDashboard({ cluster: local.cluster, port }).then(() => undefined, (e: unknown) => e as { code: string; message: string });
    assert.is(err?.code, 'PORT_IN_USE');
    const r = await orrery(['dashboard', '--port', String(port)], { ORRERY_ADDRESS: local.address });
    assert.is(r.code, 1);
    assert.equal(r.stderr.trim().split('\n'), [`orrery: dashboard: port ${port} is already in use; choose another with --port [PORT_IN_USE]`]);
    const usage = await orrery(['dashboard', '--port', 'http'], { ORRERY_ADDRESS: local.address });
    assert.is(usage.code, 2);
    assert.match(usage.stderr, /^orrery: dashboard: --port: expected a port number from 0 to 65535, got "http" \[USAGE\]\n$/);
  } finally {
    blocker.close();
  }
});

test.run();
