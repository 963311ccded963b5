// Mapping xstate's inspection events to inspection records, and the plain-data rules for contexts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, setup } from 'xstate';
import { inspectRecord, type InspectRecord } from '../../protocols/messages/inspect.ts';
import { actorMachine } from '../../runtime/gcs/actor.machine.ts';
import { nodeMachine } from '../../runtime/gcs/node.machine.ts';
import { gcsMachine } from '../../runtime/gcs/gcs.machine.ts';
import { autoscalerMachine } from '../../runtime/autoscaler/autoscaler.machine.ts';
import { InspectionMapper, RESUMED_INPUT, statePath, type UnsequencedRecord } from '../../runtime/inspect/mapper.ts';
import { TRUNCATED, toPlain, toPlainObject } from '../../runtime/inspect/plain.ts';

const input = { actorId: 'a1', namespace: 'default', className: 'Counter', labels: { 'orrery.io/actor-id': 'a1' }, resources: { CPU: 10_000 }, maxRestarts: 1 };
const failure = { reason: 'resources', message: 'no node has 1 CPU free', nodes: [] } as never;

function recorder(): { records: UnsequencedRecord[]; mapper: InspectionMapper } {
  const records: UnsequencedRecord[] = [];
  return { records, mapper: new InspectionMapper({ emit: (r) => records.push(r), now: () => 1000 + records.length }) };
}

test('an actor failover maps to one record per transition, with from, to, event and context', () => {
  const { records, mapper } = recorder();
  const actor = createActor(actorMachine, { input, inspect: mapper.observe });
  actor.start();
  actor.send({ type: 'PLACED', nodeId: 'n1' });
  actor.send({ type: 'CREATED', incarnation: 0 });
  actor.send({ type: 'CREATED', incarnation: 0 }); // no transition in ALIVE: no record
  actor.send({ type: 'FAILED', incarnation: 0, cause: 'node died' });
  actor.send({ type: 'UNSCHEDULABLE', failure });
  actor.send({ type: 'UNSCHEDULABLE', failure }); // same explanation: the guard refuses, no record
  actor.send({ type: 'PLACED', nodeId: 'n2' });
  actor.send({ type: 'CREATED', incarnation: 1 });
  const steps = records.map((r) => [r.event.type, r.from, r.to, r.context.nodeId ?? null]);
  assert.equal(steps, [
    ['xstate.init', null, 'PENDING', null],
    ['PLACED', 'PENDING', 'onNode.SCHEDULED', 'n1'],
    ['CREATED', 'onNode.SCHEDULED', 'onNode.ALIVE', 'n1'],
    ['FAILED', 'onNode.ALIVE', 'RESTARTING', null],
    ['UNSCHEDULABLE', 'RESTARTING', 'PENDING', null],
    ['PLACED', 'PENDING', 'onNode.SCHEDULED', 'n2'],
    ['CREATED', 'onNode.SCHEDULED', 'onNode.ALIVE', 'n2'],
  ]);
  for (const r of records) {
    assert.is(r.machine, 'actor');
    assert.is(r.id, 'a1');
    assert.type(r.time, 'number');
    // every record is valid wire data and survives JSON
    inspectRecord({ ...r, seq: 0 }, '');
    assert.equal(JSON.parse(JSON.stringify(r)), r);
  }
  assert.equal(records[3].event, { type: 'FAILED', incarnation: 0, cause: 'node died' });
  assert.is(records[3].context.numRestarts, 1);
  assert.is(records[4].context.pendingReason, 'no node has 1 CPU free');
});

test('a machine started again from its snapshot (a sleeping GCS actor woken) makes no record for the restart; its next step is recorded from where it was', () => {
  const { records, mapper } = recorder();
  const context = { ...input, numRestarts: 0, incarnation: 0, creationFailures: 0, nodeId: 'n1' };
  const snapshot = actorMachine.resolveState({ value: { onNode: 'ALIVE' }, context });
  const actor = createActor(actorMachine, { input: RESUMED_INPUT as never, snapshot, inspect: mapper.observe }).start();
  assert.equal(records, []);
  actor.send({ type: 'FAILED', incarnation: 0, cause: 'node died' });
  assert.equal(records.map((r) => [r.event.type, r.from, r.to]), [['FAILED', 'onNode.ALIVE', 'RESTARTING']]);
  assert.is(records[0].context.numRestarts, 1);
});

test('the autoscaler is named by its cluster; a round is a record out of waiting and one back, with its counts', () => {
  const { records, mapper } = recorder();
  const scaler = createActor(autoscalerMachine, { input: { cluster: 'c1' }, inspect: mapper.observe }).start();
  scaler.send({ type: 'TICK' });
  scaler.send({ type: 'LAUNCH_FAILED', error: 'no capacity' });
  scaler.send({ type: 'UPDATED' });
  scaler.send({ type: 'STOP' });
  assert.equal(records.map((r) => `${r.machine}:${r.id} ${r.event.type} ${r.from ?? '-'}→${r.to}`), [
    'autoscaler:c1 xstate.init -→waiting',
    'autoscaler:c1 TICK waiting→updating',
    'autoscaler:c1 LAUNCH_FAILED updating→updating',
    'autoscaler:c1 UPDATED updating→waiting',
    'autoscaler:c1 STOP waiting→stopped',
  ]);
  assert.is(records[3].context.rounds, 1);
  assert.is(records[3].context.launchFailures, 1);
  assert.is(records[3].context.lastError, 'no capacity');
  for (const r of records) inspectRecord({ ...r, seq: 0 }, '');
});

test('a targetless transition that changes the context is a record from a state to itself', () => {
  const { records, mapper } = recorder();
  const actor = createActor(actorMachine, { input, inspect: mapper.observe }).start();
  actor.send({ type: 'UNSCHEDULABLE', failure });
  assert.equal(records.map((r) => [r.from, r.to]), [[null, 'PENDING'], ['PENDING', 'PENDING']]);
});

test('the gcs is named by its cluster; Node machines with it as parent are recorded too; promise actors are not', async () => {
  const { records, mapper } = recorder();
  const machine = gcsMachine.provide({ actors: { openSubjects: fromPromise(async () => {}), closeSubjects: fromPromise(async () => {}) } });
  const gcs = createActor(machine, { input: { cluster: 'c1' }, inspect: mapper.observe }).start();
  await new Promise((resolve) => gcs.subscribe((s) => s.value === 'serving' && resolve(undefined)));
  // as the GCS service starts a node's machine: same actor system, not kept in the gcs's children
  const node = createActor(nodeMachine, { parent: gcs, id: 'node-n1', input: { nodeId: 'n1', nodeTimeoutMs: 60_000 } }).start();
  node.send({ type: 'DRAIN' });
  gcs.send({ type: 'STOP' });
  await new Promise((resolve) => gcs.subscribe({ complete: () => resolve(undefined) }));
  const seen = records.map((r) => `${r.machine}:${r.id} ${r.event.type} ${r.from ?? '-'}→${r.to}`);
  assert.ok(seen.includes('gcs:c1 xstate.init -→starting'), seen.join('\n'));
  assert.ok(seen.some((s) => /^gcs:c1 xstate\.done\.actor\.\S+ starting→serving$/.test(s)), seen.join('\n'));
  assert.ok(seen.includes('node:n1 xstate.init -→ALIVE'), seen.join('\n'));
  assert.ok(seen.includes('node:n1 DRAIN ALIVE→DRAINING'), seen.join('\n'));
  assert.ok(seen.includes('gcs:c1 STOP serving→stopping'), seen.join('\n'));
  assert.ok(records.every((r) => ['gcs', 'node'].includes(r.machine)));
  // contexts are plain data
  const init = records.find((r) => r.machine === 'node' && r.event.type === 'xstate.init');
  assert.equal(init?.context, { nodeId: 'n1', nodeTimeoutMs: 60_000, unheard: false });
});

test('an inspector attached after an actor started gives the right from on its next transition', () => {
  const { records, mapper } = recorder();
  const actor = createActor(actorMachine, { input }).start();
  actor.send({ type: 'PLACED', nodeId: 'n1' });
  const sub = actor.system.inspect(mapper.observe);
  actor.send({ type: 'CREATED', incarnation: 0 });
  sub.unsubscribe();
  actor.send({ type: 'FAILED', incarnation: 0, cause: 'x' });
  assert.equal(records.map((r) => [r.from, r.to]), [['onNode.SCHEDULED', 'onNode.ALIVE']]);
});

test('state values become dotted paths', () => {
  assert.is(statePath('PENDING'), 'PENDING');
  assert.is(statePath({ onNode: 'ALIVE' }), 'onNode.ALIVE');
  assert.is(statePath({ rescheduling: { preparing: 'sent' } }), 'rescheduling.preparing.sent');
  assert.is(statePath({ a: 'x', b: { c: 'y' } }), 'a.x,b.c.y');
});

test('contexts become plain data: refs, functions and undefined dropped, errors and dates described, size capped', () => {
  const m = setup({}).createMachine({});
  const ref = createActor(m);
  const out = toPlainObject({
    ref,
    fn: () => 1,
    missing: undefined,
    n: 1,
    nan: Number.NaN,
    big: 10n,
    when: new Date(0),
    err: Object.assign(new Error('boom'), { code: 'E_X' }),
    bytes: new Uint8Array(5),
    map: new Map([['k', 1]]),
    set: new Set(['a']),
    nested: { children: { x: ref }, list: [1, () => 2] },
  });
  assert.equal(out, {
    n: 1,
    nan: null,
    big: '10',
    when: '1970-01-01T00:00:00.000Z',
    err: { name: 'Error', message: 'boom', code: 'E_X' },
    bytes: { bytes: 5 },
    map: { k: 1 },
    set: ['a'],
    nested: { children: {}, list: [1, null] },
  });
  const huge = toPlainObject({ a: 'x'.repeat(10_000), b: Array.from({ length: 1000 }, (_, i) => i), c: 'kept?' }, { maxBytes: 2000, maxString: 100, maxItems: 50 });
  assert.is((huge.a as string).length, 101);
  assert.is((huge.b as unknown[]).length, 51);
  assert.match(String((huge.b as unknown[])[50]), /950 more/);
  assert.ok(JSON.stringify(huge).length < 2600);
  const deep = toPlain({ a: { b: { c: { d: 1 } } } }, { maxDepth: 2 });
  assert.equal(deep, { a: { b: TRUNCATED } });
  const over = toPlainObject(Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, 'v'.repeat(50)])), { maxBytes: 1000 });
  assert.is(over[TRUNCATED], 'truncated');
  assert.ok(Object.keys(over).length < 30);
});

test('a record whose state, machine or event is wrong is refused on the wire', () => {
  const good: InspectRecord = { machine: 'actor', id: 'a1', seq: 1, time: 1, event: { type: 'X' }, from: null, to: 'PENDING', context: {} };
  inspectRecord(good, '');
  for (const [bad, field] of [
    [{ ...good, machine: 'robot' }, /machine/],
    [{ ...good, event: { kind: 'X' } }, /event\.type/],
    [{ ...good, to: '' }, /to/],
    [{ ...good, context: [] }, /context/],
    [{ ...good, seq: -1 }, /seq/],
  ] as const) {
    assert.throws(() => inspectRecord(bad, ''), field);
  }
});

test('every rule of a record holds whether or not it has exactly the fields publishers send', () => {
  // Records with exactly the eight fields are checked in place (the fast path); the same record
  // with one unknown field more goes field by field. Both must take and refuse the same values.
  const good: InspectRecord = { machine: 'node', id: 'n1', seq: 0, time: 1.5, event: { type: 'HEARTBEAT', seq: 3 }, from: 'ALIVE', to: 'ALIVE', context: { a: 1 } };
  const cases: [Partial<Record<keyof InspectRecord, unknown>>, boolean][] = [
    [{}, true],
    [{ machine: 'placement_group' }, true], [{ machine: 'robot' }, false], [{ machine: 1 }, false],
    [{ id: 'x'.repeat(256) }, true], [{ id: 'x'.repeat(257) }, false], [{ id: '' }, false], [{ id: 7 }, false],
    [{ seq: 2 ** 53 - 1 }, true], [{ seq: 2 ** 53 }, false], [{ seq: -1 }, false], [{ seq: 1.5 }, false], [{ seq: '1' }, false],
    [{ time: -3.25 }, true], [{ time: Number.NaN }, false], [{ time: Number.POSITIVE_INFINITY }, false], [{ time: null }, false],
    [{ event: { type: 'x'.repeat(256) } }, true], [{ event: { type: '' } }, false], [{ event: { type: 'x'.repeat(257) } }, false],
    [{ event: [] }, false], [{ event: null }, false], [{ event: { type: 5 } }, false],
    [{ from: null }, true], [{ from: 'x'.repeat(1024) }, true], [{ from: '' }, false], [{ from: 'x'.repeat(1025) }, false], [{ from: 3 }, false],
    [{ to: 'onNode.ALIVE' }, true], [{ to: '' }, false], [{ to: null }, false], [{ to: 'x'.repeat(1025) }, false],
    [{ context: Object.create(null) }, true], [{ context: [] }, false], [{ context: null }, false], [{ context: new Date(0) }, false],
  ];
  for (const [change, valid] of cases) {
    const exact = { ...good, ...change };
    const extra = { ...exact, added: 'by a newer peer' };
    const label = JSON.stringify(change, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
    for (const record of [exact, extra]) {
      if (valid) {
        const out = inspectRecord(record, '');
        assert.equal({ ...out }, { ...exact }, label);
        assert.not.ok('added' in out, `${label}: unknown fields are dropped`);
      } else {
        assert.throws(() => inspectRecord(record, ''), (err: Error) => err.message.startsWith(Object.keys(change)[0]), label);
      }
    }
  }
  // a missing field, and a missing from (read as null)
  const { from: _from, ...noFrom } = good;
  assert.is(inspectRecord(noFrom, '').from, null);
  const { context: _context, ...noContext } = good;
  assert.throws(() => inspectRecord(noContext, ''), /context/);
});

test.run();
