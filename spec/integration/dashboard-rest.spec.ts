// The dashboard's REST API over real HTTP (docs/dashboard.md), against a GCS and two raylet
// processes on a real nats-server: every route, its answers and its errors ({code, message} with
// 400 / 404 / 405 / 503), the two Server-Sent Events streams, the trace file and the statecharts,
// the page's own files, and a taken port (library and `orrery dashboard`). And what keeps other web
// pages from driving it: the Host allow-list (421), the same-origin and JSON-only rules for changes
// (403 / 415), the token and its sign-in, read-only mode, and 400 for undecodable paths.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { request, type OutgoingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDashboard, type Dashboard } from '../../runtime/dashboard/server.ts';
import { startLocalCluster, type ActorHandle, type ActorInfo, type ClusterEvent, type LocalCluster, type NodeInfo } from '../../runtime/index.ts';
import type { InspectRecord } from '../../protocols/messages/inspect.ts';
import { JournalActor } from '../runtime/client/failover-actors.ts';
import { until } from '../helpers/until.ts';
import { RunningCli, orrery } from '../runtime/cli/process.ts';

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

interface RawReply<T = unknown> extends Reply<T> {
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A request with exactly the headers given (node:http, so Host, Origin and Sec-Fetch-* are the
 * spec's to set): Host defaults to the dashboard's own `127.0.0.1:<port>`; `host: null` sends none.
 */
function raw<T = unknown>(
  method: string,
  path: string,
  opts: { headers?: Record<string, string | null>; body?: string | Buffer; to?: Dashboard } = {},
): Promise<RawReply<T>> {
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
        const type = res.headers['content-type'] ?? '';
        resolve({ status: res.statusCode!, type, headers: res.headers, text, body: (type.startsWith('application/json') ? JSON.parse(text) : text) as T });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const taintsOf = async (nodeId: string): Promise<Record<string, string>> => (await local.cluster.nodes()).find((n) => n.nodeId === nodeId)!.taints;
const labelsOf = async (nodeId: string): Promise<Record<string, string>> => (await local.cluster.nodes()).find((n) => n.nodeId === nodeId)!.labels;
/** What a page on another origin sends to set a NoExecute taint (the body a no-cors fetch may carry). */
const EVIL_TAINT = JSON.stringify({ evicted: 'yes:NoExecute' });

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
async function firstEvent<T>(
  path: string,
  name: string,
  pass: (data: T) => boolean,
  afterOpen: () => Promise<unknown> = async () => undefined,
  /** Events of other names on the same stream. */
  other: (event: string, data: unknown) => void = () => {},
): Promise<T> {
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
        if (event !== undefined && event !== name && data !== undefined) other(event, JSON.parse(data));
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
  isError(await call('POST', `/api/nodes/${ids.b}/taints`, { 'bad key!': 'x' }), 400, 'INVALID_TAINT');
  isError(await call('POST', `/api/nodes/${ids.b}/taints`, { gpu: 'yes:Evict' }), 400, 'INVALID_TAINT', /invalid taint "gpu"="yes:Evict": the effect must be one of NoSchedule, PreferNoSchedule, NoExecute/);
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
  const info = await call<Record<string, unknown> & { history: { retained: boolean; since: number; attached: string[] } }>('GET', '/api/info');
  const { history, ...rest } = info.body;
  assert.equal(rest, { cluster: 'default', address: local.address, inspection: true, readOnly: false, trace: null });
  // the dashboard follows the cluster's transitions from its start (history, on by default)
  assert.is(history.retained, true);
  assert.ok(history.since > 0 && history.since <= Date.now(), `since ${history.since}`);
  assert.ok(history.attached.every((p) => /^(gcs|raylet):/.test(p)), history.attached.join(' '));
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
  await firstEvent<InspectRecord>(
    '/api/inspect/stream',
    'inspect',
    (r) => {
      if (r.machine === 'actor') states.set(r.id, [...(states.get(r.id) ?? []), r.to]);
      return actorId !== undefined && (states.get(actorId) ?? []).includes('onNode.ALIVE');
    },
    undefined,
    (event, data) => {
      // the GCS's publisher has attached its inspectors for this stream: the actor is created now
      if (event === 'attached' && (data as { publisher: string }).publisher.startsWith('gcs:')) {
        created ??= local.cluster.actor(JournalActor).remote().then((h) => ((actorId = h.actorId), h));
      }
    },
  );
  assert.equal(states.get(actorId!), ['PENDING', 'onNode.SCHEDULED', 'onNode.ALIVE']);
  await (await created!).kill();
});

test('POST /api/explain answers the dry run for actor options or a placement group; bad bodies are 400, bad options their code', async () => {
  const placed = await call<{ decision: string; nodeId: string; nodes: { nodeId: string; fits: boolean }[] }>('POST', '/api/explain', { options: { numCpus: 1, labelSelector: { zone: 'west' } } });
  assert.is(placed.status, 200, JSON.stringify(placed.body));
  assert.is(placed.body.decision, 'placed');
  assert.is(placed.body.nodeId, ids.b);
  assert.equal(placed.body.nodes.filter((n) => n.fits).map((n) => n.nodeId), [ids.b]);
  const group = await call<{ decision: string; bundles: { nodeId: string }[] }>('POST', '/api/explain', { placementGroup: { bundles: [{ CPU: 1 }, { CPU: 1 }], strategy: 'STRICT_SPREAD' } });
  assert.is(group.body.decision, 'placed');
  assert.equal(group.body.bundles.map((b) => b.nodeId).sort(), [ids.a, ids.b].sort());
  isError(await call('POST', '/api/explain', { options: {}, placementGroup: {} }), 400, 'INVALID_BODY', /exactly one/);
  isError(await call('POST', '/api/explain', [1]), 400, 'INVALID_BODY');
  const misspelt = await call<{ code: string }>('POST', '/api/explain', { options: { numCPUs: 1 } });
  assert.is(misspelt.body.code, 'INVALID_OPTION');
  assert.ok(misspelt.status >= 400 && misspelt.status < 500, `status ${misspelt.status}`);
});

interface PromMetric {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; count?: string; buckets?: Record<string, string> }[];
}
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => PromMetric[];

test('GET /metrics is Prometheus text: nodes, actors, resources and placement groups as the cluster reports them; creation times and schedule failures from the events', async () => {
  const scrape = async (): Promise<Map<string, PromMetric>> => {
    const res = await fetch(new URL('/metrics', dash.url));
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return new Map(parsePrometheus(await res.text()).map((m) => [m.name, m]));
  };
  const valueOf = (m: PromMetric | undefined, labels: Record<string, string>): number =>
    Number(m?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v))?.value ?? 0);
  const placed = await local.cluster.actor(JournalActor).options({ name: 'metrics-placed' }).remote();
  await placed.ready({ timeoutMs: WAIT_MS });
  const waiting = await local.cluster.actor(JournalActor).options({ name: 'metrics-waiting', labelSelector: { zone: 'nowhere' } }).remote();
  await until('the pending actor\'s schedule failure to be counted', async () => (valueOf((await scrape()).get('orrery_schedule_failed_total'), { kind: 'actor', reason: 'constraints' }) >= 1 ? true : undefined));
  const m = await scrape();
  const nodes = await local.cluster.nodes();
  const actors = await local.cluster.actors();
  for (const state of ['ALIVE', 'DEAD']) assert.is(valueOf(m.get('orrery_nodes'), { state }), nodes.filter((n) => n.state === state).length, `nodes ${state}`);
  for (const state of ['PENDING', 'ALIVE', 'DEAD']) assert.is(valueOf(m.get('orrery_actors'), { state }), actors.filter((a) => a.state === state).length, `actors ${state}`);
  assert.is(valueOf(m.get('orrery_pending_actors'), { reason: 'constraints' }), 1, 'the one waiting for its selector');
  for (const n of nodes.filter((x) => x.state === 'ALIVE')) {
    assert.is(valueOf(m.get('orrery_node_resource_total'), { node: n.name, resource: 'CPU' }), n.resources.total.CPU);
    assert.is(valueOf(m.get('orrery_node_resource_used'), { node: n.name, resource: 'CPU' }), n.resources.total.CPU - (n.resources.available.CPU ?? 0));
  }
  const creation = m.get('orrery_actor_creation_seconds');
  assert.is(creation?.type, 'HISTOGRAM');
  assert.ok(Number(creation?.metrics[0].buckets?.['+Inf']) >= 1, `the placed actor's creation was timed: ${JSON.stringify(creation)}`);
  assert.ok(valueOf(m.get('orrery_events_total'), { type: 'actor_state' }) >= 3);
  assert.equal(m.get('orrery_nodes')!.metrics[0].labels!.cluster, 'default', 'every metric names its cluster');
  await waiting.kill();
  await placed.kill();
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
    // each record as the page takes it: with its readable event name and whether it is a heartbeat
    assert.equal(await res.json(), { path: file, header, records: [{ ...record, eventName: 'xstate.init', heartbeat: false }] });
    const info = (await (await fetch(new URL('/api/info', traced.url))).json()) as Record<string, unknown>;
    assert.equal(info, { cluster: null, address: null, inspection: false, history: null, readOnly: false, trace: { path: file, cluster: 'default', startedAt: header.startedAt, records: 1 } });
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

test('a Host the dashboard does not serve is 421 HOST_NOT_ALLOWED on the API and on the page\'s files, as is a request without one (DNS rebinding)', async () => {
  for (const path of ['/api/actors', '/api/nodes', '/api/info', '/', '/app.js']) {
    for (const host of [`evil.example:${dash.port}`, 'evil.example', `127.0.0.1.nip.io:${dash.port}`]) {
      isError(await raw('GET', path, { headers: { host } }), 421, 'HOST_NOT_ALLOWED', /answers only to localhost, 127\.0\.0\.1, \[::1\]/);
    }
  }
  isError(await raw('GET', '/api/actors', { headers: { host: null } }), 421, 'HOST_NOT_ALLOWED', /^no Host header/);
  isError(await raw('POST', `/api/nodes/${ids.a}/taints`, { headers: { host: 'evil.example', 'content-type': 'application/json' }, body: EVIL_TAINT }), 421, 'HOST_NOT_ALLOWED');
  assert.equal(await taintsOf(ids.a), {}, 'nothing was changed');
  for (const host of [`localhost:${dash.port}`, `LOCALHOST:${dash.port}`, `[::1]:${dash.port}`, `127.0.0.1:${dash.port}`]) {
    assert.is((await raw('GET', '/api/nodes', { headers: { host } })).status, 200, host);
    assert.is((await raw('GET', '/', { headers: { host } })).status, 200, host);
  }
  // a name the dashboard is reached by (a proxy, DNS) is served when given as hostNames (--host-name)
  const named = await startDashboard({ cluster: local.cluster, port: 0, hostNames: ['dash.internal', 'Ops.Example.com'] });
  try {
    assert.is((await raw('GET', '/api/nodes', { to: named, headers: { host: `dash.internal:${named.port}` } })).status, 200);
    assert.is((await raw('GET', '/', { to: named, headers: { host: 'ops.example.com' } })).status, 200);
    isError(await raw('GET', '/api/nodes', { to: named, headers: { host: 'evil.example' } }), 421, 'HOST_NOT_ALLOWED', /dash\.internal/);
  } finally {
    await named.close();
  }
  const bad = await startDashboard({ port: 0, hostNames: ['not a name'] }).then(() => undefined, (e: unknown) => e as { code: string });
  assert.is(bad?.code, 'INVALID_OPTION');
});

test('a change sent as text/plain (what a no-cors fetch or a form can send from any page) is 415 UNSUPPORTED_MEDIA_TYPE, and nothing changes', async () => {
  for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    isError(await raw('POST', `/api/nodes/${ids.a}/taints`, { headers: { 'content-type': type }, body: EVIL_TAINT }), 415, 'UNSUPPORTED_MEDIA_TYPE', /send application\/json/);
    isError(await raw('POST', `/api/nodes/${ids.a}/labels`, { headers: { 'content-type': type }, body: '{"owner":"evil"}' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  }
  isError(await raw('POST', `/api/nodes/${ids.a}/taints`, { body: EVIL_TAINT }), 415, 'UNSUPPORTED_MEDIA_TYPE', /without a Content-Type/);
  assert.equal(await taintsOf(ids.a), {}, 'no taint was set');
  assert.not.ok('owner' in (await labelsOf(ids.a)), 'no label was set');
  // with parameters, application/json is accepted
  const ok = await raw<NodeInfo>('POST', `/api/nodes/${ids.a}/taints`, { headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"typed":"yes"}' });
  assert.is(ok.status, 200);
  assert.equal(await taintsOf(ids.a), { typed: 'yes' });
  isError(await raw('DELETE', `/api/nodes/${ids.a}/taints/typed`, { headers: { 'content-type': 'text/plain' }, body: 'x' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assert.equal(await taintsOf(ids.a), { typed: 'yes' }, 'the DELETE with a text body removed nothing');
  assert.is((await raw('DELETE', `/api/nodes/${ids.a}/taints/typed`)).status, 200, 'a DELETE without a body needs no type');
  assert.equal(await taintsOf(ids.a), {});
});

test('a change from another Origin, or marked Sec-Fetch-Site: cross-site, is 403 ORIGIN_NOT_ALLOWED, and nothing changes', async () => {
  const json = { 'content-type': 'application/json' };
  for (const origin of ['http://evil.example', `http://127.0.0.1:${dash.port + 1}`, `http://localhost:${dash.port}`, 'null', `http://127.0.0.1:${dash.port}.evil.example`]) {
    isError(await raw('POST', `/api/nodes/${ids.a}/taints`, { headers: { ...json, origin }, body: EVIL_TAINT }), 403, 'ORIGIN_NOT_ALLOWED', /is not this dashboard/);
    isError(await raw('POST', `/api/nodes/${ids.a}/labels`, { headers: { ...json, origin }, body: '{"owner":"evil"}' }), 403, 'ORIGIN_NOT_ALLOWED');
  }
  isError(await raw('POST', `/api/nodes/${ids.a}/taints`, { headers: { ...json, 'sec-fetch-site': 'cross-site' }, body: EVIL_TAINT }), 403, 'ORIGIN_NOT_ALLOWED', /cross-site/);
  // the preflight a page on another origin would send before a JSON POST is refused as well
  isError(await raw('OPTIONS', `/api/nodes/${ids.a}/taints`, { headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } }), 403, 'ORIGIN_NOT_ALLOWED');
  assert.equal(await taintsOf(ids.a), {}, 'no taint was set');
  assert.not.ok('owner' in (await labelsOf(ids.a)), 'no label was set');

  await local.cluster.setNodeTaints(ids.a, { add: { kept: 'yes' } });
  isError(await raw('DELETE', `/api/nodes/${ids.a}/taints/kept`, { headers: { origin: 'http://evil.example' } }), 403, 'ORIGIN_NOT_ALLOWED');
  assert.equal(await taintsOf(ids.a), { kept: 'yes' }, 'the taint was not removed');
  await local.cluster.setNodeTaints(ids.a, { remove: ['kept'] });
});

test('the dashboard\'s own Origin (as the browser sends it) and no Origin at all (curl) may change taints', async () => {
  const json = { 'content-type': 'application/json' };
  const own = await raw<NodeInfo>('POST', `/api/nodes/${ids.a}/taints`, { headers: { ...json, origin: `http://127.0.0.1:${dash.port}`, 'sec-fetch-site': 'same-origin' }, body: '{"own":"x:NoExecute"}' });
  assert.is(own.status, 200, own.text);
  assert.equal(await taintsOf(ids.a), { own: 'x:NoExecute' });
  const viaLocalhost = await raw<NodeInfo>('DELETE', `/api/nodes/${ids.a}/taints/own`, { headers: { host: `localhost:${dash.port}`, origin: `http://localhost:${dash.port}` } });
  assert.is(viaLocalhost.status, 200, 'reached as localhost, its origin is http://localhost:<port>');
  assert.equal(await taintsOf(ids.a), {});
  const curl = await raw<NodeInfo>('POST', `/api/nodes/${ids.a}/labels`, { headers: json, body: '{"owner":"ops"}' });
  assert.is(curl.status, 200);
  assert.is((await labelsOf(ids.a)).owner, 'ops');
  assert.is((await raw('DELETE', `/api/nodes/${ids.a}/labels/owner`)).status, 200);
});

test('the API does not answer a fetch, image or script of another site (Sec-Fetch-Site: cross-site); a link followed to it is answered', async () => {
  isError(await raw('GET', '/api/inspect/stream', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' } }), 403, 'ORIGIN_NOT_ALLOWED');
  isError(await raw('GET', '/api/actors', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' } }), 403, 'ORIGIN_NOT_ALLOWED');
  assert.is((await raw('GET', '/api/nodes', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } })).status, 200);
  assert.is((await raw('GET', '/api/nodes', { headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' } })).status, 200);
});

test('every answer forbids framing and cross-origin embedding; the page loads only its own files', async () => {
  for (const path of ['/', '/api/nodes', '/api/nope']) {
    const r = await raw('GET', path);
    assert.match(String(r.headers['content-security-policy']), /frame-ancestors 'none'/, path);
    assert.match(String(r.headers['content-security-policy']), /default-src 'self'/, path);
    assert.is(r.headers['x-frame-options'], 'DENY', path);
    assert.is(r.headers['x-content-type-options'], 'nosniff', path);
    assert.is(r.headers['cross-origin-resource-policy'], 'same-origin', path);
  }
});

test('malformed requests are 4xx, never 500: undecodable percent-escapes 400 BAD_REQUEST, a path that is not one 400, an oversized body 413', async () => {
  for (const path of ['/%E0%A4%A', '/%zz', '/api/actors/%zz', `/api/nodes/${ids.a}/taints/%E0%A4%A`, '/api/nodes/%ff%fe']) {
    isError(await raw('GET', path), 400, 'BAD_REQUEST', /percent-escape/);
  }
  isError(await raw('DELETE', `/api/nodes/${ids.a}/taints/%zz`), 400, 'BAD_REQUEST');
  isError(await raw('GET', 'http://evil.example/api/nodes'), 400, 'BAD_REQUEST', /expected a path/);
  isError(await raw('GET', '/%00.js'), 404, 'NOT_FOUND');
  isError(await raw('POST', `/api/nodes/${ids.a}/taints`, { headers: { 'content-type': 'application/json' }, body: '{"a":' }), 400, 'BAD_BODY', /not JSON/);
  const big = JSON.stringify({ big: 'x'.repeat(2 * 1024 * 1024) });
  const tooLarge = await raw('POST', `/api/nodes/${ids.a}/taints`, { headers: { 'content-type': 'application/json' }, body: big });
  isError(tooLarge, 413, 'BODY_TOO_LARGE', /over 65536 bytes/);
  isError(await raw('POST', '/api/explain', { headers: { 'content-type': 'application/json' }, body: big }), 413, 'BODY_TOO_LARGE');
  assert.equal(await taintsOf(ids.a), {});
});

test('with a token: nothing is served without it (401 UNAUTHORIZED on the API, the page sends the browser to /login); Bearer or the /login cookie opens every route', async () => {
  const token = 'dash-token-7f3a9c2e41b8';
  const guarded = await startDashboard({ cluster: local.cluster, port: 0, token });
  const own = `http://127.0.0.1:${guarded.port}`;
  const seen: string[] = [];
  const call = async <T = unknown>(method: string, path: string, opts: { headers?: Record<string, string | null>; body?: string } = {}): Promise<RawReply<T>> => {
    const r = await raw<T>(method, path, { ...opts, to: guarded });
    seen.push(r.text, JSON.stringify(r.headers));
    return r;
  };
  try {
    for (const path of ['/api/nodes', '/api/info', '/api/events/stream', '/api/inspect/stream']) {
      const r = await call('GET', path);
      isError(r, 401, 'UNAUTHORIZED', /Bearer/);
      assert.is(r.headers['www-authenticate'], 'Bearer realm="orrery dashboard"');
    }
    isError(await call('POST', `/api/nodes/${ids.a}/taints`, { headers: { 'content-type': 'application/json' }, body: EVIL_TAINT }), 401, 'UNAUTHORIZED');
    for (const wrong of ['Bearer nope', `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${Buffer.from(`x:${token}`).toString('base64')}`]) {
      isError(await call('GET', '/api/nodes', { headers: { authorization: wrong } }), 401, 'UNAUTHORIZED');
    }
    for (const path of ['/', '/app.js']) {
      const page = await call('GET', path);
      assert.equal([page.status, page.headers.location], [303, '/login'], path);
    }
    assert.equal(await taintsOf(ids.a), {}, 'nothing changed');

    const bearer = { authorization: `Bearer ${token}` };
    assert.is((await call('GET', '/api/nodes', { headers: bearer })).status, 200);
    assert.is((await call('GET', '/', { headers: bearer })).status, 200);
    const set = await call<NodeInfo>('POST', `/api/nodes/${ids.a}/taints`, { headers: { ...bearer, 'content-type': 'application/json' }, body: '{"bearer":"yes"}' });
    assert.is(set.status, 200);
    assert.equal(await taintsOf(ids.a), { bearer: 'yes' });
    // the other checks still hold for a request that carries the token
    isError(await call('POST', `/api/nodes/${ids.a}/taints`, { headers: { ...bearer, 'content-type': 'text/plain' }, body: EVIL_TAINT }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    isError(await call('DELETE', `/api/nodes/${ids.a}/taints/bearer`, { headers: { ...bearer, origin: 'http://evil.example' } }), 403, 'ORIGIN_NOT_ALLOWED');
    isError(await call('GET', '/api/nodes', { headers: { ...bearer, host: 'evil.example' } }), 421, 'HOST_NOT_ALLOWED');
    assert.equal(await taintsOf(ids.a), { bearer: 'yes' });

    // the sign-in: a form; a wrong token is 401 (the form again for a form, JSON for JSON)
    const form = await call<string>('GET', '/login');
    assert.is(form.status, 200);
    assert.match(form.type, /^text\/html/);
    assert.match(form.body, /<form method="post" action="\/login"/);
    assert.match(form.body, /type="password" name="token"/);
    const formType = { 'content-type': 'application/x-www-form-urlencoded', origin: own };
    const wrongForm = await call<string>('POST', '/login', { headers: formType, body: 'token=nope' });
    assert.is(wrongForm.status, 401);
    assert.match(wrongForm.body, /data-code="UNAUTHORIZED"/);
    assert.is(wrongForm.headers['set-cookie'], undefined);
    isError(await call('POST', '/login', { headers: { 'content-type': 'application/json' }, body: '{"token":"nope"}' }), 401, 'UNAUTHORIZED', /wrong token/);
    isError(await call('POST', '/login', { headers: { 'content-type': 'text/plain' }, body: `token=${token}` }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const foreign = await call('POST', '/login', { headers: { ...formType, origin: 'http://evil.example' }, body: `token=${token}` });
    isError(foreign, 403, 'ORIGIN_NOT_ALLOWED');
    assert.is(foreign.headers['set-cookie'], undefined, 'no cookie for a sign-in from another origin');

    const signedIn = await call('POST', '/login', { headers: formType, body: `token=${encodeURIComponent(token)}` });
    assert.equal([signedIn.status, signedIn.headers.location], [303, '/']);
    const cookie = (signedIn.headers['set-cookie'] as string[])[0];
    assert.match(cookie, new RegExp(`^orrery_dashboard_${guarded.port}=[A-Za-z0-9_-]+; Path=/; HttpOnly; SameSite=Strict$`));
    const jar = { cookie: cookie.split(';')[0] };
    const viaJson = await call('POST', '/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
    assert.is(viaJson.status, 303);
    assert.is((await call('GET', '/', { headers: jar })).status, 200);
    assert.is((await call('GET', '/api/nodes', { headers: jar })).status, 200);
    const removed = await call('DELETE', `/api/nodes/${ids.a}/taints/bearer`, { headers: { ...jar, origin: own } });
    assert.is(removed.status, 200);
    assert.equal(await taintsOf(ids.a), {});
    isError(await call('GET', '/api/nodes', { headers: { cookie: `orrery_dashboard_${guarded.port}=forged` } }), 401, 'UNAUTHORIZED');

    assert.not.ok(seen.some((text) => text.includes(token)), 'no answer holds the token');
    // without a token, there is no sign-in
    isError(await raw('GET', '/login'), 404, 'NOT_FOUND');
  } finally {
    await guarded.close();
  }
  const empty = await startDashboard({ port: 0, token: '' }).then(() => undefined, (e: unknown) => e as { code: string });
  assert.is(empty?.code, 'INVALID_OPTION');
});

test('read-only: every route that changes something is 403 READ_ONLY and nothing changes; /api/info says so; POST /api/explain is still answered, under the same checks', async () => {
  const ro = await startDashboard({ cluster: local.cluster, port: 0, readOnly: true });
  const json = { 'content-type': 'application/json' };
  try {
    const info = await raw<{ readOnly: boolean }>('GET', '/api/info', { to: ro });
    assert.is(info.body.readOnly, true);
    await local.cluster.setNodeLabels(ids.b, { set: { keep: 'me' } });
    isError(await raw('POST', `/api/nodes/${ids.b}/taints`, { to: ro, headers: json, body: EVIL_TAINT }), 403, 'READ_ONLY', /read-only/);
    isError(await raw('POST', `/api/nodes/${ids.b}/labels`, { to: ro, headers: json, body: '{"owner":"x"}' }), 403, 'READ_ONLY');
    isError(await raw('DELETE', `/api/nodes/${ids.b}/labels/keep`, { to: ro }), 403, 'READ_ONLY');
    isError(await raw('DELETE', `/api/nodes/${ids.b}/taints/any`, { to: ro }), 403, 'READ_ONLY');
    const b = (await local.cluster.nodes()).find((n) => n.nodeId === ids.b)!;
    assert.equal([b.taints, b.labels.keep, b.labels.owner], [{}, 'me', undefined], 'nothing changed');
    await local.cluster.setNodeLabels(ids.b, { remove: ['keep'] });

    assert.is((await raw('GET', '/api/nodes', { to: ro })).status, 200);
    const explained = await raw<{ decision: string }>('POST', '/api/explain', { to: ro, headers: { ...json, origin: `http://127.0.0.1:${ro.port}` }, body: '{"options":{"numCpus":1}}' });
    assert.equal([explained.status, explained.body.decision], [200, 'placed']);
    isError(await raw('POST', '/api/explain', { to: ro, headers: { 'content-type': 'text/plain' }, body: '{"options":{}}' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    isError(await raw('POST', '/api/explain', { to: ro, headers: { ...json, origin: 'http://evil.example' }, body: '{"options":{}}' }), 403, 'ORIGIN_NOT_ALLOWED');
  } finally {
    await ro.close();
  }
  assert.is((await raw<{ readOnly: boolean }>('GET', '/api/info')).body.readOnly, false);
});

test('orrery dashboard: a token from --token-file or ORRERY_DASHBOARD_TOKEN (never printed; --token refused), --read-only, --host-name', async () => {
  const token = 'cli-token-0b5e1d7a93';
  const file = join(dir, 'token');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  const refusedFlag = await orrery(['dashboard', '--port', '0', `--token=${token}`], { ORRERY_ADDRESS: local.address });
  assert.is(refusedFlag.code, 2);
  assert.match(refusedFlag.stderr, /^orrery: dashboard: --token is not accepted \(a command line shows in ps\); .*--token-file FILE.*ORRERY_DASHBOARD_TOKEN \[USAGE\]\n$/);
  assert.not.ok(refusedFlag.stderr.includes(token));
  const missing = await orrery(['dashboard', '--port', '0', '--token-file', join(dir, 'none')], { ORRERY_ADDRESS: local.address });
  assert.is(missing.code, 2);
  assert.match(missing.stderr, /^orrery: dashboard: --token-file: cannot read .*none \(ENOENT\) \[USAGE\]\n$/);
  const blank = join(dir, 'blank');
  writeFileSync(blank, '\n');
  assert.match((await orrery(['dashboard', '--port', '0', '--token-file', blank], { ORRERY_ADDRESS: local.address })).stderr, /--token-file: .*blank: the token is empty \[USAGE\]/);
  const badName = await orrery(['dashboard', '--port', '0', '--host-name', 'no spaces'], { ORRERY_ADDRESS: local.address });
  assert.is(badName.code, 2);
  assert.match(badName.stderr, /^orrery: dashboard: --host-name: "no spaces" is not a host name/);

  const cli = new RunningCli(['dashboard', '--port', '0', '--token-file', file, '--read-only', '--host-name', 'dash.internal', '--host-name', 'other.internal'], { ORRERY_ADDRESS: local.address });
  try {
    const url = new URL((await cli.line('out', (l) => l.startsWith('dashboard: '))).slice('dashboard: '.length));
    await cli.line('err', (l) => l.startsWith('read-only'));
    assert.ok(cli.err.includes(`a token is required (read from ${file}): sign in at ${url.href}login, or send Authorization: Bearer <token>`), cli.err.join('\n'));
    const target = { port: Number(url.port) } as Dashboard;
    isError(await raw('GET', '/api/info', { to: target }), 401, 'UNAUTHORIZED');
    const info = await raw<{ readOnly: boolean }>('GET', '/api/info', { to: target, headers: { host: `dash.internal:${url.port}`, authorization: `Bearer ${token}` } });
    assert.equal([info.status, info.body.readOnly], [200, true]);
    assert.is((await raw('GET', '/api/info', { to: target, headers: { host: 'other.internal', authorization: `Bearer ${token}` } })).status, 200);
    isError(await raw('GET', '/api/info', { to: target, headers: { host: 'evil.example', authorization: `Bearer ${token}` } }), 421, 'HOST_NOT_ALLOWED');
    isError(await raw('POST', `/api/nodes/${ids.a}/taints`, { to: target, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: EVIL_TAINT }), 403, 'READ_ONLY');
  } finally {
    cli.signal('SIGINT');
    assert.is(await cli.exited, 0);
  }
  assert.not.ok([...cli.out, ...cli.err].some((l) => l.includes(token)), 'the token is never printed');

  const fromEnv = new RunningCli(['dashboard', '--port', '0'], { ORRERY_ADDRESS: local.address, ORRERY_DASHBOARD_TOKEN: token });
  try {
    const url = new URL((await fromEnv.line('out', (l) => l.startsWith('dashboard: '))).slice('dashboard: '.length));
    await fromEnv.line('err', (l) => l.startsWith('a token is required (read from ORRERY_DASHBOARD_TOKEN)'));
    const target = { port: Number(url.port) } as Dashboard;
    isError(await raw('GET', '/api/nodes', { to: target }), 401, 'UNAUTHORIZED');
    assert.is((await raw('GET', '/api/nodes', { to: target, headers: { authorization: `Bearer ${token}` } })).status, 200);
  } finally {
    fromEnv.signal('SIGINT');
    assert.is(await fromEnv.exited, 0);
  }
  assert.not.ok([...fromEnv.out, ...fromEnv.err].some((l) => l.includes(token)), 'the token is never printed');
});

test.run();
