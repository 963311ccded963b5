import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ProtocolError } from '../../protocols/errors.ts';
import { GcsVerb, parseSubject, RayletVerb, subjects, type ParsedSubject } from '../../protocols/subjects.ts';

const s = subjects('prod');

const builders: { name: string; subject: string; want: string; parsed?: ParsedSubject }[] = [
  { name: 'gcs verb', subject: s.gcs('register_node'), want: 'orrery.prod.gcs.register_node', parsed: { kind: 'gcs', cluster: 'prod', verb: 'register_node' } },
  { name: 'view deltas', subject: s.view(), want: 'orrery.prod.gcs.view', parsed: { kind: 'view', cluster: 'prod' } },
  {
    name: 'raylet verb',
    subject: s.raylet('node-1', 'prepare_bundle'),
    want: 'orrery.prod.raylet.node-1.prepare_bundle',
    parsed: { kind: 'raylet', cluster: 'prod', nodeId: 'node-1', verb: 'prepare_bundle' },
  },
  { name: 'actor call', subject: s.actorCall('a1b2'), want: 'orrery.prod.actor.a1b2.call', parsed: { kind: 'actor_call', cluster: 'prod', actorId: 'a1b2' } },
  { name: 'event', subject: s.event('node_added'), want: 'orrery.prod.events.node_added', parsed: { kind: 'event', cluster: 'prod', type: 'node_added' } },
  {
    name: 'inspection',
    subject: s.inspect('actor', 'a1'),
    want: 'orrery.prod.inspect.actor.a1',
    parsed: { kind: 'inspect', cluster: 'prod', machine: 'actor', id: 'a1' },
  },
  { name: 'all events', subject: s.allEvents(), want: 'orrery.prod.events.>' },
  { name: 'all inspection', subject: s.allInspect(), want: 'orrery.prod.inspect.>' },
  { name: 'one machine inspected', subject: s.allInspect('node'), want: 'orrery.prod.inspect.node.*' },
  { name: 'every verb of a raylet', subject: s.rayletAll('n7'), want: 'orrery.prod.raylet.n7.*' },
  { name: 'the whole cluster', subject: s.all(), want: 'orrery.prod.>' },
];

for (const b of builders) {
  test(`builds ${b.name}`, () => {
    assert.is(b.subject, b.want);
    if (b.parsed) assert.equal(parseSubject(b.subject), b.parsed);
  });
}

test('every verb round-trips through parseSubject', () => {
  for (const verb of Object.values(GcsVerb)) assert.equal(parseSubject(s.gcs(verb)), { kind: 'gcs', cluster: 'prod', verb });
  for (const verb of Object.values(RayletVerb)) {
    assert.equal(parseSubject(s.raylet('n', verb)), { kind: 'raylet', cluster: 'prod', nodeId: 'n', verb });
  }
});

function protocolError(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (err) {
    assert.instance(err, ProtocolError);
    return err as ProtocolError;
  }
  throw new Error('expected a ProtocolError');
}

const badTokens = ['', 'a.b', 'a*', '>', 'with space', 'tab\t', 'new\nline'];
for (const bad of badTokens) {
  test(`rejects the token ${JSON.stringify(bad)} in every position`, () => {
    const attempts: [string, () => unknown][] = [
      ['cluster', () => subjects(bad)],
      ['nodeId', () => s.raylet(bad, 'lease')],
      ['actorId', () => s.actorCall(bad)],
      ['event type', () => s.event(bad)],
      ['machine', () => s.inspect(bad, 'x')],
      ['id', () => s.inspect('x', bad)],
      ['nodeId', () => s.rayletAll(bad)],
    ];
    for (const [part, run] of attempts) {
      const err = protocolError(run);
      assert.is(err.code, 'PROTOCOL');
      assert.equal(err.detail, { part, value: bad });
    }
  });
}

test('rejects verbs that are not in the protocol, even from untyped callers', () => {
  assert.is(protocolError(() => s.gcs('view' as GcsVerb)).code, 'PROTOCOL');
  assert.is(protocolError(() => s.raylet('n', 'register_node' as RayletVerb)).code, 'PROTOCOL');
  assert.is(protocolError(() => subjects(42 as unknown as string)).code, 'PROTOCOL');
});

const notOurs = [
  'orrery.prod',
  'other.prod.gcs.heartbeat',
  'orrery.prod.gcs.unknown_verb',
  'orrery.prod.gcs.heartbeat.extra',
  'orrery.prod.raylet.n1.register_node',
  'orrery.prod.actor.a1.cast',
  'orrery.prod.events.>',
  'orrery.prod.inspect.actor',
  'orrery..gcs.heartbeat',
  'orrery.prod.nothing.here',
];
for (const subject of notOurs) {
  test(`parseSubject refuses ${subject}`, () => {
    assert.is(protocolError(() => parseSubject(subject)).code, 'PROTOCOL');
  });
}

test.run();
