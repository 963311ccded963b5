// autoscaler_report and autoscaler_status (issue 16, part 6): the GCS keeps the autoscaler's latest
// status for `orrery status`, publishes its events on `events.<type>` and keeps them in the
// recent-events ring like its own; a malformed report is refused with a typed error and changes
// nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Packr } from 'msgpackr';
import { OrreryError } from '../../../lib/errors.ts';
import { PROTOCOL_VERSION } from '../../../protocols/codec.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import type { GcsVerb } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import { AUTOSCALER_EVENT_TYPES, autoscalerStatusReply, type AutoscalerEvent, type AutoscalerStatus } from '../../../protocols/messages/autoscaling.ts';
import { check } from '../../../protocols/validate.ts';
import { Harness } from './support.ts';

const status = (over: Partial<AutoscalerStatus> = {}): AutoscalerStatus => ({
  time: 1_700_000_000_000,
  nodeTypes: [
    { name: 'cpu', live: 1, launching: 0, minWorkers: 1, maxWorkers: 4 },
    { name: 'gpu', live: 0, launching: 1, minWorkers: 0, maxWorkers: 2 },
  ],
  launching: [{ type: 'gpu', name: 'gpu-1a2b', since: 1_699_999_999_000 }],
  demands: [{ description: '{CPU: 1} labelSelector {type: gpu}', count: 2, launch: [{ type: 'gpu', count: 1 }] }],
  infeasible: [{ description: '{GPU: 8}', count: 1, reason: 'no node type has 8 GPU' }],
  failures: [{ type: 'gpu', message: 'launch command exited 1', time: 1_699_999_990_000, retryAt: 1_700_000_020_000 }],
  ...over,
});

const events: AutoscalerEvent[] = AUTOSCALER_EVENT_TYPES.map((type, i) => ({
  type,
  time: 1_700_000_000_000 + i,
  nodeType: 'gpu',
  message: `${type} message`,
  ...(type === 'node_launched' || type === 'node_terminated' ? { nodeName: 'gpu-1a2b', nodeId: 'n-gpu' } : {}),
}));

// raw envelopes: the client's own encode would refuse these bodies before they were sent
const packr = new Packr({ useRecords: false, moreTypes: false });

/** Sends `body` unchecked; the error the GCS answered with. */
async function refusedWith(h: Harness, verb: GcsVerb, body: unknown): Promise<OrreryError> {
  const reply = await h.bus.request(h.s.gcs(verb), packr.pack({ v: PROTOCOL_VERSION, t: verb, b: body }), { timeoutMs: 5000 });
  try {
    decodeReply(reply.data, { value: unknown() });
  } catch (err) {
    assert.instance(err, OrreryError);
    return err as OrreryError;
  }
  throw new Error(`${verb} accepted ${JSON.stringify(body).slice(0, 200)}`);
}

const statusOf = async (h: Harness) => check(autoscalerStatusReply, await h.request('autoscaler_status', 'autoscaler_status', {}));

test('before any report the status is null; a report is kept whole and read back with its age', async () => {
  const h = await Harness.start();
  try {
    assert.equal(await statusOf(h), { status: null });
    assert.equal(await h.request('autoscaler_report', 'autoscaler_report', { status: status(), events: [] }), {});
    const first = await statusOf(h);
    assert.equal(first.status, status());
    assert.ok(first.ageMs !== undefined && first.ageMs >= 0);
    // the latest report wins
    await h.request('autoscaler_report', 'autoscaler_report', { status: status({ nodeTypes: [], launching: [] }), events: [] });
    assert.equal((await statusOf(h)).status!.nodeTypes, []);
  } finally {
    await h.close();
  }
});

test('each event is published on events.<type> with nodeType and message, numbered and listed by list_events like the GCS\'s own', async () => {
  const h = await Harness.start();
  try {
    await h.request('autoscaler_report', 'autoscaler_report', { status: status(), events });
    for (const e of events) {
      const got = await h.events.wait((x) => x.type === e.type, e.type);
      assert.equal({ ...got, seq: undefined }, { ...e, seq: undefined }, e.type);
      assert.ok(got.seq! > 0);
    }
    const listed = await h.request('list_events', 'list_events', { types: [...AUTOSCALER_EVENT_TYPES] });
    assert.equal(listed.events.map((e: AutoscalerEvent) => e.type), [...AUTOSCALER_EVENT_TYPES], 'in the order reported');
    assert.equal(listed.events[1], { ...events[1], seq: listed.events[1].seq });
    const launched = await h.request('list_events', 'list_events', { types: ['node_launched'] });
    assert.equal(launched.events.map((e: AutoscalerEvent) => [e.nodeName, e.nodeId]), [['gpu-1a2b', 'n-gpu']]);
  } finally {
    await h.close();
  }
});

/** Reports that break a bound or a type: each is INVALID_MESSAGE naming the field. */
const malformed: [string, unknown, RegExp][] = [
  ['a status without its time', { status: { ...status(), time: undefined }, events: [] }, /status\.time: expected a number/],
  ['an unknown event type', { status: status(), events: [{ ...events[0], type: 'node_exploded' }] }, /events\[0\]\.type: expected "node_launch_requested"/],
  ['an event without a node type', { status: status(), events: [{ ...events[0], nodeType: '' }] }, /events\[0\]\.nodeType: expected at least 1 character/],
  ['an event message past 4,096 characters', { status: status(), events: [{ ...events[0], message: 'x'.repeat(4097) }] }, /events\[0\]\.message: expected at most 4096/],
  ['more than 1,000 events', { status: status(), events: Array.from({ length: 1001 }, () => events[0]) }, /events: expected at most 1000 item/],
  ['a negative live count', { status: status({ nodeTypes: [{ name: 'cpu', live: -1, launching: 0, minWorkers: 0, maxWorkers: 1 }] }), events: [] }, /status\.nodeTypes\[0\]\.live: expected a number >= 0/],
  ['a demand description past 4,096 characters', { status: status({ demands: [{ description: 'd'.repeat(5000), count: 1 }] }), events: [] }, /status\.demands\[0\]\.description/],
  ['more than 1,000 demands', { status: status({ demands: Array.from({ length: 1001 }, () => ({ description: 'd', count: 1 })) }), events: [] }, /status\.demands: expected at most 1000/],
  ['an infeasible demand without its reason', { status: status({ infeasible: [{ description: 'd', count: 1 } as never] }), events: [] }, /status\.infeasible\[0\]\.reason: expected a string/],
  ['a failure with a text time', { status: status({ failures: [{ type: 'gpu', message: 'm', time: 'now' as never }] }), events: [] }, /status\.failures\[0\]\.time: expected a number/],
];

test('a malformed report is INVALID_MESSAGE naming the field: nothing kept, nothing published, the GCS keeps serving', async () => {
  const h = await Harness.start();
  try {
    await h.request('autoscaler_report', 'autoscaler_report', { status: status(), events: [] });
    const before = await statusOf(h);
    const published = h.events.got.length;
    for (const [name, body, message] of malformed) {
      const err = await refusedWith(h, 'autoscaler_report', body);
      assert.is(err.code, 'INVALID_MESSAGE', name);
      assert.match(err.message, message, name);
    }
    assert.equal((await statusOf(h)).status, before.status, 'the last good status stands');
    assert.is(h.events.got.length, published, 'no event published');
    assert.is(h.gcs.wireErrors().byVerb.autoscaler_report, malformed.length);
    assert.equal(await h.nodes(), [], 'still serving');
  } finally {
    await h.close();
  }
});

test('resource_demands with a limit out of range is INVALID_MESSAGE', async () => {
  const h = await Harness.start();
  try {
    for (const limit of [0, -1, 1.5, 100_001, 'all']) {
      const err = await refusedWith(h, 'resource_demands', { limit });
      assert.is(err.code, 'INVALID_MESSAGE', String(limit));
      assert.match(err.message, /limit: expected/);
    }
    assert.is(h.gcs.wireErrors().byVerb.resource_demands, 5);
  } finally {
    await h.close();
  }
});

test.run();
