import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Packr } from 'msgpackr';
import { OrreryError } from '../../../lib/errors.ts';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import { encode, PROTOCOL_VERSION } from '../../../protocols/codec.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { GcsVerb } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import { Harness } from './support.ts';

// Every GCS subject is fed garbage, truncated msgpack, a wrong protocol version, unknown and
// misplaced message types, oversized and ill-typed bodies. Each gets its typed wire error back, the
// GCS keeps serving, its tables (nodes, actors, pending queue, view version) do not change, no event
// is published, and the counters say what was refused.

const MAX_BYTES = 2048;
const packr = new Packr({ useRecords: false, moreTypes: false });
const envelope = (t: unknown, b: unknown, v: unknown = PROTOCOL_VERSION): Uint8Array => packr.pack({ v, t, b });

const address = { ip: '127.0.0.1', hostname: 'spec', pid: 1 };
const code = { moduleUrl: 'file:///x.ts', className: 'C', args: [] };

/**
 * Per verb: its message type, a body that would change state if it were accepted, and an ill-typed
 * body. (A verb without a message type would refuse every well-formed message as UNKNOWN_TYPE.)
 */
const verbs: Record<GcsVerb, { type?: string; valid: unknown; illTyped: unknown }> = {
  register_node: {
    type: 'register_node',
    valid: { nodeId: 'n9', name: 'n9', labels: {}, taints: {}, resources: { total: { CPU: 10000 }, available: { CPU: 10000 } }, address },
    illTyped: { nodeId: 9, name: 'n9', labels: {}, taints: {}, resources: { total: {}, available: {} }, address },
  },
  register_running: {
    type: 'register_running',
    valid: { nodeId: 'n9', batch: 'batch-one', index: 0, actors: [{ actorId: 'a1', incarnation: 0 }], bundles: [] },
    illTyped: { nodeId: 'n9', batch: 'batch-one', index: 100, actors: [], bundles: [] },
  },
  heartbeat: { type: 'heartbeat', valid: { nodeId: 'n1', seq: 1, available: {} }, illTyped: { nodeId: 'n1', seq: 'one', available: {} } },
  unregister_node: { type: 'unregister_node', valid: { nodeId: 'n1' }, illTyped: { nodeId: 'n1', secret: 42 } },
  register_actor: { type: 'register_actor', valid: { actorId: 'a9', code, namespace: 'default', options: {} }, illTyped: { actorId: 'a9', code, namespace: 'default', options: 'fast' } },
  get_actor: { type: 'get_actor', valid: { actorId: 'a1' }, illTyped: { actorId: 42 } },
  kill_actor: { type: 'kill_actor', valid: { actorId: 'a1', noRestart: true }, illTyped: { actorId: 'a1', noRestart: 'yes' } },
  list_nodes: { type: 'list_nodes', valid: {}, illTyped: 'everything' },
  list_actors: { type: 'list_actors', valid: {}, illTyped: [1, 2] },
  list_placement_groups: { type: 'list_placement_groups', valid: {}, illTyped: 7 },
  create_pg: { type: 'create_pg', valid: { pgId: 'pg9', namespace: 'default', options: { bundles: [{ CPU: 1 }] } }, illTyped: { pgId: 'pg9', namespace: 'default', options: 'many' } },
  remove_pg: { type: 'remove_pg', valid: { pgId: 'pg1' }, illTyped: { pgId: 1 } },
  get_pg: { type: 'get_pg', valid: { pgId: 'pg1' }, illTyped: { pgId: [] } },
  set_node_labels: { type: 'set_node_labels', valid: { nodeId: 'n1', set: { x: 'y' } }, illTyped: { nodeId: 'n1', set: { x: 5 } } },
  set_node_taints: { type: 'set_node_taints', valid: { nodeId: 'n1', add: { x: 'y' } }, illTyped: { nodeId: 'n1', add: 'x=y' } },
  drain_node: { type: 'drain_node', valid: { nodeId: 'n1' }, illTyped: { nodeId: ['n1'] } },
  view_snapshot: { type: 'view_snapshot', valid: {}, illTyped: null },
  list_events: { type: 'list_events', valid: { types: ['node_added'] }, illTyped: { limit: 'all' } },
  explain: { type: 'explain', valid: { namespace: 'default', options: { numCpus: 1 } }, illTyped: { namespace: 5, options: {} } },
  resource_demands: { type: 'resource_demands', valid: { limit: 10 }, illTyped: { limit: 0 } },
  autoscaler_report: {
    type: 'autoscaler_report',
    valid: { status: { time: 1, nodeTypes: [], launching: [], demands: [], infeasible: [], failures: [] }, events: [{ type: 'node_launched', time: 1, nodeType: 'cpu', message: 'up' }] },
    illTyped: { status: { time: 1, nodeTypes: [], launching: [], demands: [], infeasible: [], failures: [] }, events: [{ type: 'node_exploded', time: 1, nodeType: 'cpu', message: 'x' }] },
  },
  autoscaler_status: { type: 'autoscaler_status', valid: {}, illTyped: 'now' },
  gcs_status: { type: 'gcs_status', valid: {}, illTyped: 'now' },
  register_job: {
    type: 'register_job',
    valid: { jobId: 'j9', secret: 's'.repeat(64), host: 'h', pid: 1, namespace: 'default' },
    illTyped: { jobId: 'j9', secret: 'short', host: 'h', pid: 1, namespace: 'default' },
  },
  job_heartbeat: { type: 'job_heartbeat', valid: { jobId: 'j9', secret: 's'.repeat(64) }, illTyped: { jobId: 'j9', secret: 64 } },
  finish_job: { type: 'finish_job', valid: { jobId: 'j9', secret: 's'.repeat(64) }, illTyped: { jobId: ['j9'], secret: 's'.repeat(64) } },
  list_jobs: { type: 'list_jobs', valid: {}, illTyped: { limit: -1 } },
  actor_died: { type: 'actor_died', valid: { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 0 }], cause: 'x' }, illTyped: { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 'zero' }], cause: 'x' } },
};

interface Case {
  name: string;
  bytes: (verb: GcsVerb) => Uint8Array;
  /** The code for a verb with a message type; verbs without one refuse every well-formed message as UNKNOWN_TYPE. */
  want: string;
  typeless?: string;
}

const valid = (verb: GcsVerb): Uint8Array => envelope(verbs[verb].type ?? verb, verbs[verb].valid);

const cases: Case[] = [
  { name: 'garbage', bytes: () => Uint8Array.from([0xc1, 0x00, 0xff, 0x13, 0x37]), want: 'MALFORMED' },
  { name: 'an empty payload', bytes: () => new Uint8Array(0), want: 'MALFORMED' },
  { name: 'text that is not msgpack', bytes: () => new TextEncoder().encode('{"nodeId":"n9"}'), want: 'MALFORMED' },
  { name: 'truncated msgpack', bytes: (verb) => valid(verb).subarray(0, valid(verb).length - 1), want: 'MALFORMED' },
  { name: 'msgpack that is not an envelope', bytes: () => packr.pack([1, 2, 3]), want: 'MALFORMED' },
  { name: 'a wrong protocol version', bytes: (verb) => envelope(verbs[verb].type ?? verb, verbs[verb].valid, PROTOCOL_VERSION + 1), want: 'VERSION_MISMATCH' },
  { name: 'an unknown message type', bytes: (verb) => envelope('no_such_type', verbs[verb].valid), want: 'UNKNOWN_TYPE' },
  {
    name: 'a well-formed message of another verb',
    bytes: (verb) => (verb === 'heartbeat' ? encode('list_nodes', {}) : encode('heartbeat', { nodeId: 'n1', seq: 5, available: {} })),
    want: 'UNKNOWN_TYPE',
  },
  { name: 'an oversized message', bytes: (verb) => envelope(verbs[verb].type ?? verb, { ...(verbs[verb].valid as object), pad: 'x'.repeat(MAX_BYTES) }), want: 'TOO_LARGE' },
  { name: 'an ill-typed body', bytes: (verb) => envelope(verbs[verb].type ?? verb, verbs[verb].illTyped), want: 'INVALID_MESSAGE', typeless: 'UNKNOWN_TYPE' },
];

/** Sends raw bytes as a request; returns the code of the wire error it was answered with. */
async function refusedWith(h: Harness, verb: GcsVerb, bytes: Uint8Array): Promise<string> {
  const reply = await h.bus.request(h.s.gcs(verb), bytes, { timeoutMs: 5000 });
  try {
    decodeReply(reply.data, { value: unknown() });
  } catch (err) {
    assert.instance(err, OrreryError);
    return (err as OrreryError).code;
  }
  throw new Error(`${verb} accepted the message`);
}

/** A GCS with one live node and one ALIVE actor on it, and the view settled. */
async function populated(): Promise<Harness> {
  const h = await Harness.start({ maxMessageBytes: MAX_BYTES });
  await h.addNode({ nodeId: 'n1' });
  await h.registerActor('a1', { numCpus: 1, maxRestarts: 1 });
  await h.registerActor('waits', { numCpus: 64 });
  await h.reached('a1', 'ALIVE');
  await h.request('view_snapshot', 'view_snapshot', {});
  return h;
}

const tables = (h: Harness) => {
  const { nodes, actors, placementGroups, jobs, viewVersion, pending, state } = h.gcs.snapshot();
  return { nodes, actors, placementGroups, jobs, viewVersion, waiting: pending.waiting, state };
};

const allVerbs = Object.values(GcsVerb);

test('every GCS subject answers each kind of malformed message with its typed error, and nothing changes', async () => {
  const h = await populated();
  try {
    const before = tables(h);
    const eventsBefore = h.events.got.length;
    const expected: Record<string, number> = {};
    for (const verb of allVerbs) {
      for (const c of cases) {
        const want = verbs[verb].type === undefined ? (c.typeless ?? c.want) : c.want;
        assert.is(await refusedWith(h, verb, c.bytes(verb)), want, `${verb}: ${c.name}`);
        expected[want] = (expected[want] ?? 0) + 1;
      }
    }
    assert.equal(tables(h), before);
    assert.is(h.events.got.length, eventsBefore, 'no event published');
    const counts = h.gcs.wireErrors();
    assert.equal(counts.byCode, expected);
    assert.is(counts.total, allVerbs.length * cases.length);
    for (const verb of allVerbs) assert.is(counts.byVerb[verb], cases.length, `${verb} counted`);
    const refusals = h.logs.filter((l) => l.includes('refused a message'));
    assert.equal(refusals.length, Object.keys(expected).length, 'logged once per code');
    assert.equal((await h.nodes()).map((n) => n.nodeId), ['n1'], 'still serving');
    assert.is((await h.actor('a1')).state, 'ALIVE');
  } finally {
    await h.close();
  }
});

test('malformed messages published without a reply subject are counted and dropped', async () => {
  const h = await populated();
  try {
    const before = tables(h);
    for (const verb of allVerbs) {
      for (const c of cases) h.bus.publish(h.s.gcs(verb), c.bytes(verb));
    }
    // messages of one subscription are handled in order: a request answered after them means they were handled
    for (const verb of allVerbs) await refusedWith(h, verb, Uint8Array.of(0xc1));
    assert.is(h.gcs.wireErrors().total, allVerbs.length * (cases.length + 1));
    assert.equal(tables(h), before);
  } finally {
    await h.close();
  }
});

test('ids that cannot be subject tokens and queries naming nothing are INVALID_MESSAGE, counted, and change nothing', async () => {
  const h = await populated();
  try {
    const before = tables(h);
    const total = parseResources({ CPU: 1 });
    const bad: [GcsVerb, Uint8Array][] = [
      ['register_node', encode('register_node', { nodeId: 'n.9', name: 'n9', labels: {}, taints: {}, resources: { total, available: total }, address })],
      ['register_node', encode('register_node', { nodeId: 'n 9', name: 'n9', labels: {}, taints: {}, resources: { total, available: total }, address })],
      ['register_actor', encode('register_actor', { actorId: 'a>9', code, namespace: 'default', options: {} })],
      ['register_actor', encode('register_actor', { actorId: 'a*', code, namespace: 'default', options: {} })],
      ['get_actor', encode('get_actor', {})],
    ];
    for (const [verb, bytes] of bad) assert.is(await refusedWith(h, verb, bytes), 'INVALID_MESSAGE', verb);
    assert.equal(tables(h), before);
    assert.equal(h.gcs.wireErrors().byCode, { INVALID_MESSAGE: bad.length });
  } finally {
    await h.close();
  }
});

test('a registration whose `running` list (what a raylet still runs, for recovery) is ill-typed is INVALID_MESSAGE, counted, and changes nothing', async () => {
  const h = await populated();
  try {
    const before = tables(h);
    const total = parseResources({ CPU: 1 });
    const node = { nodeId: 'n9', name: 'n9', labels: {}, taints: {}, resources: { total, available: total }, address };
    const bad = [
      { actors: 'all of them' },
      { actors: [{ actorId: 'a1', incarnation: -1 }] },
      { actors: [{ actorId: 'a1', incarnation: 0.5 }] },
      { actors: [{ actorId: 'a1' }] },
      { actors: [{ actorId: 'a1', incarnation: 0, starting: 'yes' }] },
      { actors: [{ actorId: 'a1', incarnation: 0, starting: 1 }] },
      { actors: [], bundles: [{ pgId: 'g', index: 0, committed: 'yes' }] },
      { actors: [], bundles: [{ pgId: 'g', index: 10_000, committed: true }] },
    ];
    for (const running of bad) assert.is(await refusedWith(h, 'register_node', envelope('register_node', { ...node, running })), 'INVALID_MESSAGE', JSON.stringify(running));
    assert.equal(tables(h), before);
    assert.equal(h.gcs.wireErrors().byCode, { INVALID_MESSAGE: bad.length });
    assert.is((await h.actor('a1')).state, 'ALIVE', 'the actor a raylet claims is untouched');
  } finally {
    await h.close();
  }
});

test('a register_actor naming code the cluster does not load (node:, data:, https:, a path) is CODE_SOURCE_REFUSED, counted, logged once, and creates nothing', async () => {
  const h = await populated();
  try {
    const before = tables(h);
    const urls = ['node:child_process', 'data:text/javascript,process.exit(1)', 'https://example.com/a.js', '/etc/passwd'];
    for (const moduleUrl of urls) {
      const bytes = envelope('register_actor', { actorId: 'a9', code: { moduleUrl, className: 'C', args: [] }, namespace: 'default', options: {} });
      assert.is(await refusedWith(h, 'register_actor', bytes), 'CODE_SOURCE_REFUSED', moduleUrl);
    }
    assert.equal(tables(h), before);
    assert.equal(h.gcs.wireErrors().byCode, { CODE_SOURCE_REFUSED: urls.length });
    assert.is(h.logs.filter((l) => l.includes('CODE_SOURCE_REFUSED')).length, 1, 'logged once');
  } finally {
    await h.close();
  }
});

/**
 * A message whose `code.args[0]` is `levels` arrays deep, packed by hand (msgpack's fixarray of one
 * element is one byte, 0x91): a hostile peer's encoder need not stop where ours does.
 */
function deepRegisterActor(levels: number): Uint8Array {
  const marker = 'DEEP-PAYLOAD-HERE';
  const shell = envelope('register_actor', { actorId: 'a9', code: { ...code, args: [marker] }, namespace: 'default', options: {} });
  const needle = new Uint8Array([0xa0 | marker.length, ...new TextEncoder().encode(marker)]);
  let at = -1;
  for (let i = 0; i + needle.length <= shell.length && at < 0; i++) if (needle.every((b, k) => shell[i + k] === b)) at = i;
  const bottom = [0xa6, ...new TextEncoder().encode('bottom')];
  return new Uint8Array([...shell.subarray(0, at), ...new Array(levels).fill(0x91), ...bottom, ...shell.subarray(at + needle.length)]);
}

test('payloads nested deeper than the limit — actor arguments, actor and placement-group options — are refused with the path, and change nothing', async () => {
  const h = await Harness.start(); // the default 1 MiB limit: the payloads are refused for their depth, not their size
  try {
    const before = tables(h);
    const deep = (levels: number): unknown => {
      let v: unknown = 'bottom';
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    // 2,000 levels (the attack of issue 14) and 100,000 (too deep for the decoder itself)
    assert.is(await refusedWith(h, 'register_actor', deepRegisterActor(2000)), 'INVALID_MESSAGE');
    assert.is(await refusedWith(h, 'register_actor', deepRegisterActor(100_000)), 'MALFORMED');
    const bodies: [GcsVerb, string, unknown, RegExp][] = [
      ['register_actor', 'register_actor', { actorId: 'a9', code: { ...code, args: [deep(600)] }, namespace: 'default', options: {} }, /code\.args\[0\](\[0\])+.*: nested deeper than 512 levels/],
      ['register_actor', 'register_actor', { actorId: 'a9', code, namespace: 'default', options: { labels: deep(600) } }, /options\.labels(\[0\])+.*: nested deeper than 512 levels/],
      ['create_pg', 'create_pg', { pgId: 'pg9', namespace: 'default', options: { bundles: [{ CPU: 1 }], name: deep(700) } }, /options\.name(\[0\])+.*: nested deeper/],
    ];
    for (const [verb, type, body, message] of bodies) {
      const refusal = await h.refusal(verb, type as never, body as never);
      assert.is(refusal.code, 'INVALID_MESSAGE', verb);
      assert.match(refusal.message, message);
      assert.ok(refusal.message.length < 600, 'the path is cut short, not 512 levels long');
    }
    assert.equal(tables(h), before);
    // at the limit it is accepted
    assert.is((await h.request('register_actor', 'register_actor', { actorId: 'a10', code: { ...code, args: [deep(500)] }, namespace: 'default', options: {} })).actorId, 'a10');
  } finally {
    await h.close();
  }
});

/** Sends `verb` with its valid body, asking for the answer in `inbox`; the answer's error code, or 'ok'. */
async function askFrom(h: Harness, verb: GcsVerb, inbox: string): Promise<string> {
  const answer = new Promise<Uint8Array>((resolve) => {
    const sub = h.bus.subscribe(inbox, (m) => {
      sub.unsubscribe();
      resolve(m.data);
    });
  });
  h.bus.publish(h.s.gcs(verb), envelope(verbs[verb].type, verbs[verb].valid), { reply: inbox });
  try {
    decodeReply(await answer, { value: unknown() });
    return 'ok';
  } catch (err) {
    return (err as OrreryError).code;
  }
}

// What each role may ask the GCS (docs/security.md), written out here rather than read from roles.ts.
const READS: GcsVerb[] = ['get_actor', 'list_nodes', 'list_actors', 'list_placement_groups', 'get_pg', 'list_events', 'explain', 'autoscaler_status', 'list_jobs', 'gcs_status'];
const JOB: GcsVerb[] = ['register_job', 'job_heartbeat', 'finish_job'];
const MAY_ASK: Record<'node' | 'driver' | 'observer' | 'admin', GcsVerb[]> = {
  // and what actors and tasks do through connect() inside worker hosts (docs/actors.md), never jobs
  node: ['register_node', 'register_running', 'heartbeat', 'unregister_node', 'actor_died', 'view_snapshot', ...READS.filter((v) => v !== 'autoscaler_status' && v !== 'gcs_status'), 'register_actor', 'kill_actor', 'create_pg', 'remove_pg'],
  observer: READS,
  driver: [...READS, 'register_actor', 'kill_actor', 'create_pg', 'remove_pg', ...JOB],
  admin: [...READS, 'register_actor', 'kill_actor', 'create_pg', 'remove_pg', ...JOB, 'set_node_labels', 'set_node_taints', 'drain_node', 'resource_demands', 'autoscaler_report'],
};

test('a verb asked from the inbox of a role that may not ask it is PERMISSION_DENIED, counted, and changes nothing; a role\'s own verbs and plain inboxes go through', async () => {
  const h = await populated();
  try {
    const before = tables(h);
    let refused = 0;
    for (const [role, allowed] of Object.entries(MAY_ASK)) {
      for (const verb of allVerbs) {
        if (allowed.includes(verb)) continue;
        assert.is(await askFrom(h, verb, `_INBOX.spec.${role}.r${refused}`), 'PERMISSION_DENIED', `${role} asking ${verb}`);
        refused++;
      }
    }
    assert.equal(tables(h), before);
    assert.equal(h.gcs.wireErrors().byCode, { PERMISSION_DENIED: refused });
    assert.is(await askFrom(h, 'set_node_labels', '_INBOX.spec.admin.ok'), 'ok', 'an admin labels a node');
    assert.is(await askFrom(h, 'list_nodes', '_INBOX.spec.observer.ok'), 'ok', 'an observer lists nodes');
    assert.is(await askFrom(h, 'heartbeat', '_INBOX.spec.node.ok'), 'ok', 'a node heartbeats (the stub registered n1 without a secret)');
    assert.is(await askFrom(h, 'drain_node', '_INBOX.plain.1'), 'ok', 'an unsecured cluster\'s inbox says no role: not checked');
    assert.is(h.gcs.wireErrors().byCode.PERMISSION_DENIED, refused);
  } finally {
    await h.close();
  }
});

test('the default limit is nats-server\'s 1 MiB: a larger register_node is TOO_LARGE', async () => {
  const h = await Harness.start();
  try {
    const pad = 'x'.repeat(1024 * 1024);
    assert.is(await refusedWith(h, 'register_node', envelope('register_node', { ...(verbs.register_node.valid as object), pad })), 'TOO_LARGE');
    assert.equal(h.gcs.snapshot().nodes, []);
  } finally {
    await h.close();
  }
});

test.run();
