// Actor references in user payloads (protocols/actor-ref.ts): a handle travels as msgpack extension
// type 0x41 holding [actorId, namespace], a malformed one is refused as MALFORMED, and the helpers
// that turn references into handles (and carry them over the IPC channel) touch nothing else.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ACTOR_REF_EXT, ActorRef, containsRef, refsDecoded, refsFromIpc, refsToIpc, reviveRefs } from '../../protocols/actor-ref.ts';
import { decode, encode } from '../../protocols/codec.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import { plainDataProblem } from '../../protocols/plain-data.ts';

/** What a handle is to the codec: a subclass of ActorRef with state of its own. */
class FakeHandle extends ActorRef {
  readonly secret = 'connection state that must not travel';
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('a handle is packed as extension 0x41 holding the msgpack array [actorId, namespace], and nothing else of it', () => {
  const bytes = encode('reply', { ok: true, value: new FakeHandle('abc', 'ns') });
  // fixext 8 (0xd7), type 0x41, then fixarray(2) "abc" "ns" — written out by hand from the msgpack spec
  const ext = 'd7' + '41' + '92' + 'a3616263' + 'a26e73';
  assert.ok(hex(bytes).endsWith(ext), hex(bytes));
  assert.not.ok(hex(bytes).includes(Buffer.from('connection state').toString('hex')));
  assert.is(ACTOR_REF_EXT, 0x41);
});

test('decoding gives a bare ActorRef with the id and namespace, and counts it', () => {
  const before = refsDecoded();
  const { body } = decode(encode('reply', { ok: true, value: { workers: [new FakeHandle('w1', 'default'), new FakeHandle('w2', 'team')] } }));
  const workers = (body as { value: { workers: ActorRef[] } }).value.workers;
  assert.is(refsDecoded() - before, 2);
  assert.equal(workers.map((w) => [w.actorId, w.namespace, Object.getPrototypeOf(w) === ActorRef.prototype]), [['w1', 'default', true], ['w2', 'team', true]]);
});

/** A reply whose value is extension 0x41 with `data` (hand-made: no encoder would write these). */
function replyWithExt(data: number[]): Uint8Array {
  const good = encode('reply', { ok: true, value: null });
  const head = good.subarray(0, good.length - 1); // drop the nil value
  const ext = data.length === 8 ? [0xd7, 0x41, ...data] : [0xc7, data.length, 0x41, ...data];
  return Uint8Array.from([...head, ...ext]);
}

test('a malformed reference makes the whole message MALFORMED, whatever is wrong with it', () => {
  const str = (s: string): number[] => [0xa0 | s.length, ...Buffer.from(s)];
  const cases: Record<string, number[]> = {
    'not an array': str('abc'),
    'one item': [0x91, ...str('abc')],
    'three items': [0x93, ...str('a'), ...str('b'), ...str('c')],
    'a number for the id': [0x92, 0x01, ...str('ns')],
    'an empty namespace': [0x92, ...str('abc'), 0xa0],
    'an id over 256 characters': [0x92, 0xda, 0x01, 0x2c, ...Buffer.from('x'.repeat(300)), ...str('ns')],
    'trailing bytes': [0x92, ...str('abc'), ...str('ns'), 0xc0],
    'truncated': [0x92, ...str('abc'), 0xa5, 0x61],
    'not UTF-8': [0x92, 0xa2, 0xff, 0xfe, ...str('ns')],
  };
  for (const [what, data] of Object.entries(cases)) {
    try {
      decode(replyWithExt(data));
      assert.unreachable(`${what}: decoded`);
    } catch (err) {
      assert.instance(err, ProtocolError, what);
      assert.is((err as ProtocolError).code, 'MALFORMED', what);
    }
  }
});

test('payload rules: a handle may be sent anywhere a payload goes; other class instances still may not', () => {
  assert.is(plainDataProblem([1, { h: new FakeHandle('a', 'b') }]), undefined);
  assert.equal(plainDataProblem({ m: new Map() }), { path: 'm', problem: 'a Map cannot be sent as it is; send plain objects, arrays, strings, numbers, booleans, Date, Uint8Array or actor handles' });
  // the validators every process applies where a payload enters take decoded references
  const { body } = decode(encode('submit_task', { taskId: 't1', code: { moduleUrl: 'file:///m.js', functionName: 'f', args: [new FakeHandle('a1', 'default')] }, namespace: 'default', options: {}, hops: 0, attempt: 0 }));
  assert.ok((body as { code: { args: unknown[] } }).code.args[0] instanceof ActorRef);
});

test('reviveRefs replaces bare references only, copying just the containers on their path', () => {
  const ref = new ActorRef('a1', 'default');
  const handle = new FakeHandle('a2', 'default');
  const untouched = { deep: [1, 2] };
  const value = { list: [ref, 3], handle, untouched, when: new Date(0) };
  const out = reviveRefs(value, (r) => `handle:${r.actorId}`) as typeof value & { list: unknown[] };
  assert.equal(out.list, ['handle:a1', 3]);
  assert.is(out.handle, handle, 'a handle is one already');
  assert.is(out.untouched, untouched, 'a branch without references is the same object');
  assert.is(value.list[0], ref, 'the input is not changed');
  assert.is(reviveRefs(untouched, () => 'x'), untouched);
  assert.ok(containsRef(value));
  assert.not.ok(containsRef(untouched));
});

test('over the IPC channel (structured clone) a reference keeps its class; a look-alike object stays data', () => {
  const message = { type: 'tasks', tasks: [{ id: 1, task: { code: { args: [new FakeHandle('a1', 'ns'), { actorId: 'x', namespace: 'y' }] } } }] };
  const across = structuredClone(refsToIpc(message)) as typeof message;
  const back = refsFromIpc(across) as typeof message;
  const [ref, lookalike] = back.tasks[0]!.task.code.args as unknown[];
  assert.ok(ref instanceof ActorRef);
  assert.equal([(ref as ActorRef).actorId, (ref as ActorRef).namespace], ['a1', 'ns']);
  assert.not.ok(lookalike instanceof ActorRef, 'a plain object with the same fields is not a reference');
  assert.equal(lookalike, { actorId: 'x', namespace: 'y' });
  // without the channel's form, class state is lost: why the conversion exists
  assert.not.ok((structuredClone(message).tasks[0]!.task.code.args[0] as object) instanceof ActorRef);
});

test.run();
