import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../../protocols/codec.ts';
import { ProtocolError } from '../../../protocols/errors.ts';
import type { Heartbeat } from '../../../protocols/messages/node.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import type { ViewDelta } from '../../../protocols/messages/view.ts';

const heartbeat: Heartbeat = { nodeId: 'n1', seq: 17, available: { CPU: 20_000, GPU: 10_000 } };
const delta: ViewDelta = {
  version: 12,
  previous: 11,
  upserts: [
    {
      nodeId: 'n1',
      name: 'worker-1',
      state: 'DRAINING',
      labels: { 'orrery.io/zone': 'a' },
      taints: {},
      resources: { total: { CPU: 40_000 }, available: { CPU: 0 } },
    },
  ],
  removals: ['n9'],
};

test('the registry holds every message type of this protocol version', () => {
  // the inspection stream's types (protocols/messages/inspect.ts), when this build has it
  const inspectTypes = Object.keys(messages).filter((t) => t.startsWith('inspect_')).sort();
  assert.equal(Object.keys(messages).sort(), [
    'actor_call', 'actor_died', 'autoscaler_report', 'autoscaler_status', 'call_batch', 'cancel_bundle', 'cancel_call', 'cancel_task', 'commit_bundle', 'create_actor', 'create_pg', 'drain_node', 'event', 'explain', 'finish_job', 'gcs_status', 'get_actor', 'get_pg', 'heartbeat',
    ...inspectTypes, 'job_heartbeat', 'kill_actor', 'leased_task', 'list_actors', 'list_events', 'list_jobs', 'list_nodes', 'list_placement_groups', 'prepare_bundle', 'raylet_kill_actor',
    'raylet_load', 'register_actor', 'register_job', 'register_node', 'register_running', 'remove_pg', 'reply', 'reply_batch', 'resource_demands', 'set_node_labels', 'set_node_taints', 'submit_task', 'unregister_node', 'view_delta', 'view_snapshot',
  ]);
});

test('cancel_task carries a task id and a key of 32 lowercase hex characters; submit_task and leased_task carry the key only when given', () => {
  const key = '0123456789abcdef0123456789abcdef';
  assert.equal(decode(encode('cancel_task', { taskId: 'aaaa000000000001', cancelKey: key })).body, { taskId: 'aaaa000000000001', cancelKey: key });
  for (const bad of [key.toUpperCase(), key.slice(1), `${key}0`, 'z'.repeat(32), 7]) {
    assert.throws(() => decode(encode('cancel_task', { taskId: 'aaaa000000000001', cancelKey: bad } as never)), (e: unknown) => (e as { code?: string }).code === 'INVALID_MESSAGE', String(bad));
  }
  const submit = { taskId: 'aaaa000000000001', code: { moduleUrl: 'file:///x.js', functionName: 'f', args: [] }, namespace: 'default', options: {}, hops: 0, attempt: 0 };
  assert.equal(decode(encode('submit_task', submit)).body, submit);
  assert.equal(decode(encode('submit_task', { ...submit, cancelKey: key })).body, { ...submit, cancelKey: key });
  assert.throws(() => decode(encode('submit_task', { ...submit, cancelKey: 'short' })), (e: unknown) => (e as { code?: string }).code === 'INVALID_MESSAGE');
});

test('cancel_call names a call id and a key, each 32 lowercase hex characters; actor_call carries them only when given', () => {
  const callId = 'fedcba9876543210fedcba9876543210';
  const key = '0123456789abcdef0123456789abcdef';
  assert.equal(decode(encode('cancel_call', { callId, cancelKey: key })).body, { callId, cancelKey: key });
  for (const bad of [key.toUpperCase(), key.slice(1), `${key}0`, 'z'.repeat(32), 7, undefined]) {
    assert.throws(() => decode(encode('cancel_call', { callId, cancelKey: bad } as never)), (e: unknown) => (e as { code?: string }).code === 'INVALID_MESSAGE', `key ${String(bad)}`);
    assert.throws(() => decode(encode('cancel_call', { callId: bad, cancelKey: key } as never)), (e: unknown) => (e as { code?: string }).code === 'INVALID_MESSAGE', `id ${String(bad)}`);
  }
  const call = { method: 'add', args: [1] };
  assert.equal(decode(encode('actor_call', call)).body, call);
  assert.equal(decode(encode('actor_call', { ...call, callId, cancelKey: key })).body, { ...call, callId, cancelKey: key });
  assert.throws(() => decode(encode('actor_call', { ...call, callId, cancelKey: 'short' })), (e: unknown) => (e as { code?: string }).code === 'INVALID_MESSAGE');
});

test('an actor call and a create_actor request round-trip with user values intact', () => {
  const call = { method: 'add', args: [1, 'two', { three: [3] }, new Uint8Array([4])] };
  const got = decode(encode('actor_call', call));
  assert.is(got.type, 'actor_call');
  const body = got.body as { method: string; args: unknown[] };
  assert.equal(body.args.slice(0, 3), [1, 'two', { three: [3] }]);
  // binary arrives as a Uint8Array (Node gives a Buffer, its subclass) with the same bytes
  assert.ok(body.args[3] instanceof Uint8Array);
  assert.equal([...(body.args[3] as Uint8Array)], [4]);
  const create = {
    actorId: 'a1', code: { moduleUrl: 'file:///x.js', className: 'Counter', args: [5] }, namespace: 'default',
    labels: { app: 'web' }, resources: { CPU: 10_000 }, maxConcurrency: 1, isolation: 'shared' as const, incarnation: 0,
  };
  assert.equal(decode(encode('create_actor', create)), { type: 'create_actor', body: create });
});

test('a create_actor with an unknown isolation is rejected with the field path', () => {
  const bad = { actorId: 'a1', code: { moduleUrl: 'file:///m.js', className: 'C', args: [] }, namespace: 'd', labels: {}, resources: {}, maxConcurrency: 1, isolation: 'vm', incarnation: 0 };
  try {
    decode(encode('create_actor', bad as never));
    assert.unreachable('accepted');
  } catch (err) {
    assert.is((err as { code: string }).code, 'INVALID_MESSAGE');
    assert.match((err as Error).message, 'isolation');
  }
});

test('one rule for user payloads at every hop: create_actor, submit_task and create_pg refuse nesting past 512 levels, with the path', () => {
  const deep = (levels: number): unknown => {
    let v: unknown = 'x';
    for (let i = 0; i < levels; i++) v = { a: v };
    return v;
  };
  const create = (args: unknown[]) => ({
    actorId: 'a1', code: { moduleUrl: 'file:///x.js', className: 'C', args }, namespace: 'default',
    labels: {}, resources: {}, maxConcurrency: 1, isolation: 'shared' as const, incarnation: 0,
  });
  const task = (args: unknown[]) => ({ taskId: 't1', code: { moduleUrl: 'file:///x.js', functionName: 'f', args }, namespace: 'default', options: {}, hops: 0, attempt: 0 });
  const cases: [string, Record<string, unknown>, string][] = [
    ['create_actor', create([1, deep(600)]), 'code.args[1].a.a'],
    ['submit_task', task([deep(513)]), 'code.args[0].a.a'],
    ['create_pg', { pgId: 'p1', namespace: 'default', options: { bundles: [{ CPU: 1 }], extra: deep(520) } }, 'options.extra.a.a'],
  ];
  for (const [type, body, path] of cases) {
    try {
      decode(encode(type as never, body as never));
      assert.unreachable(`${type} accepted`);
    } catch (err) {
      assert.is((err as { code: string }).code, 'INVALID_MESSAGE', type);
      assert.match((err as Error).message, `${path}`);
      assert.match((err as Error).message, 'nested deeper than 512 levels');
    }
  }
  // 512 levels and less go through, on every hop
  assert.equal((decode(encode('create_actor', create([deep(510)]))).body as { code: { args: unknown[] } }).code.args, [deep(510)]);
  assert.equal((decode(encode('submit_task', task([deep(510)]) as never)).body as { code: { args: unknown[] } }).code.args, [deep(510)]);
});

/** A delta whose node upsert carries only the resource names that changed. */
const changes = (resourcesChanged: unknown): unknown => {
  const { resources: _, ...node } = delta.upserts[0];
  return { ...delta, upserts: [{ ...node, ...(resourcesChanged === undefined ? {} : { resourcesChanged }) }] };
};

test('heartbeat and view_delta round-trip', () => {
  assert.equal(decode(encode('heartbeat', heartbeat)), { type: 'heartbeat', body: heartbeat });
  assert.equal(decode(encode('view_delta', delta)), { type: 'view_delta', body: delta });
});

test('a view_delta upsert may carry resource changes, or no resources at all, instead of whole sets', () => {
  const changed = changes({ total: { CPU_group_pg1: 10_000 }, available: { CPU: 30_000, CPU_group_pg1: 10_000 }, removed: ['CPU_group_pg0'] }) as ViewDelta;
  assert.equal(decode(encode('view_delta', changed)), { type: 'view_delta', body: changed });
  const unchanged = changes(undefined) as ViewDelta;
  assert.equal(decode(encode('view_delta', unchanged)).body, unchanged);
});

function invalid(type: string, body: unknown): string {
  try {
    decode(encode(type, body));
  } catch (err) {
    assert.instance(err, ProtocolError);
    assert.is((err as ProtocolError).code, 'INVALID_MESSAGE');
    return (err as ProtocolError).message;
  }
  throw new Error('expected INVALID_MESSAGE');
}

const refused: { name: string; type: string; body: unknown; message: string }[] = [
  { name: 'a negative heartbeat seq', type: 'heartbeat', body: { ...heartbeat, seq: -1 }, message: 'invalid heartbeat: seq: expected a number >= 0' },
  {
    name: 'a submission whose driver waits no time at all',
    type: 'submit_task',
    body: { taskId: 't1', code: { moduleUrl: 'file:///x.js', functionName: 'f', args: [] }, namespace: 'default', options: {}, hops: 0, attempt: 0, timeoutMs: 0 },
    message: 'invalid submit_task: timeoutMs: expected a number >= 1',
  },
  {
    name: 'a submission whose deadline is before the epoch',
    type: 'submit_task',
    body: { taskId: 't1', code: { moduleUrl: 'file:///x.js', functionName: 'f', args: [] }, namespace: 'default', options: {}, hops: 0, attempt: 0, deadline: -1 },
    message: 'invalid submit_task: deadline: expected a number >= 0',
  },
  { name: 'a negative resource', type: 'heartbeat', body: { ...heartbeat, available: { CPU: -1 } }, message: 'invalid heartbeat: available.CPU: expected a number >= 0' },
  {
    name: 'an unknown node state',
    type: 'view_delta',
    body: { ...delta, upserts: [{ ...delta.upserts[0], state: 'ZOMBIE' }] },
    message: 'invalid view_delta: upserts[0].state: expected "ALIVE" or "DRAINING" or "DEAD"',
  },
  { name: 'a removal that is not an id', type: 'view_delta', body: { ...delta, removals: ['n1', ''] }, message: 'invalid view_delta: removals[1]: expected at least 1 character(s)' },
  { name: 'a view without a version', type: 'view_delta', body: { ...delta, version: undefined }, message: 'invalid view_delta: version: expected a number' },
  {
    name: 'an upsert with both whole resources and resource changes',
    type: 'view_delta',
    body: { ...delta, upserts: [{ ...delta.upserts[0], resourcesChanged: { available: { CPU: 1 } } }] },
    message: 'invalid view_delta: upserts[0].resourcesChanged: expected either resources or resourcesChanged, not both',
  },
  {
    name: 'a resource name both set and removed',
    type: 'view_delta',
    body: changes({ available: { CPU: 1 }, removed: ['GPU', 'CPU'] }),
    message: 'invalid view_delta: upserts[0].resourcesChanged.removed[1]: "CPU" is both set and removed',
  },
  {
    name: 'a negative changed resource',
    type: 'view_delta',
    body: changes({ total: { CPU: -1 } }),
    message: 'invalid view_delta: upserts[0].resourcesChanged.total.CPU: expected a number >= 0',
  },
  {
    name: 'a fractional changed resource',
    type: 'view_delta',
    body: changes({ available: { CPU: 0.5 } }),
    message: 'invalid view_delta: upserts[0].resourcesChanged.available.CPU: expected an integer',
  },
  { name: 'removed names that are not a list', type: 'view_delta', body: changes({ removed: 'CPU' }), message: 'invalid view_delta: upserts[0].resourcesChanged.removed: expected an array' },
  { name: 'an empty removed name', type: 'view_delta', body: changes({ removed: [''] }), message: 'invalid view_delta: upserts[0].resourcesChanged.removed[0]: expected at least 1 character(s)' },
  {
    name: 'a removed name longer than a resource name may be',
    type: 'view_delta',
    body: changes({ removed: ['x'.repeat(129)] }),
    message: 'invalid view_delta: upserts[0].resourcesChanged.removed[0]: expected at most 128 character(s)',
  },
  {
    name: 'more removed names than a resource set may hold',
    type: 'view_delta',
    body: changes({ removed: Array.from({ length: 65_537 }, (_, i) => `r${i}`) }),
    message: 'invalid view_delta: upserts[0].resourcesChanged.removed: expected at most 65536 item(s)',
  },
  { name: 'resource changes that are not an object', type: 'view_delta', body: changes([1]), message: 'invalid view_delta: upserts[0].resourcesChanged: expected an object' },
  { name: 'a reply without ok', type: 'reply', body: { value: 1 }, message: 'invalid reply: ok: expected a boolean' },
  { name: 'an error reply without a code', type: 'reply', body: { ok: false, error: { message: 'x' } }, message: 'invalid reply: error.code: expected a string' },
];

for (const c of refused) {
  test(`refuses ${c.name}`, () => {
    assert.is(invalid(c.type, c.body), c.message);
  });
}

test.run();
