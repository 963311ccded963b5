/**
 * A worker host given a call_batch (protocols/call-batch.ts): each call runs as if it had come
 * alone, in the batch's order, and is answered under its token in reply_batch messages.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeReplyBatch, encodeCallBatch } from '../../../protocols/call-batch.ts';
import { encode } from '../../../protocols/codec.ts';
import { encodeCall } from '../../../protocols/fast-path.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { ActorHost } from '../../../runtime/worker/host.ts';
import { until } from '../../helpers/until.ts';
import { call, createSpec } from './support.ts';

const node = { nodeId: 'aaaaaaaaaaaaaaaa', nodeName: 'node-a', labels: { 'orrery.io/node-id': 'aaaaaaaaaaaaaaaa' } };
const broker = new MemoryBroker();
const bus = connectMemoryBus(broker);
const host = new ActorHost({ bus, node });
const s = subjects('default');
let inboxes = 0;

async function spawn(className: string, args: unknown[] = []): Promise<string> {
  const spec = createSpec(className, { args });
  await host.create(spec);
  return spec.actorId;
}

/** What the host answered a batch with: each message's replies by token, as decoded values or errors. */
interface Answered {
  messages: { tokens: string[]; values: unknown[] }[];
  raw: Uint8Array[];
}

/** Publishes `data` to the actor's call subject with a reply subject of its own; collects what comes back. */
function send(actorId: string, data: Uint8Array): Answered {
  const inbox = `_INBOX.spec.batch${inboxes++}`;
  const answered: Answered = { messages: [], raw: [] };
  bus.subscribe(inbox, (msg) => {
    answered.raw.push(msg.data);
    const batch = decodeReplyBatch(msg.data);
    if (batch === undefined) return;
    answered.messages.push({ tokens: batch.tokens, values: batch.replies.map((r) => valueOf(r)) });
  });
  bus.publish(s.actorCall(actorId), data, { reply: inbox });
  return answered;
}

function valueOf(reply: Uint8Array): unknown {
  try {
    return decodeReply(reply, { value: unknown() });
  } catch (err) {
    return { error: (err as { code?: string }).code };
  }
}

/** Every reply the batch got, by token, in arrival order. */
function byToken(a: Answered): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const m of a.messages) m.tokens.forEach((t, i) => out.set(t, m.values[i]));
  return out;
}

test('the calls of a batch run in its order and are answered under their tokens, in one reply_batch when they end in one turn', async () => {
  const id = await spawn('Counter', [10]);
  const calls = [encodeCall('increment', [1]), encodeCall('increment', [2]), encodeCall('get', []), encodeCall('echo', ['x', 2])];
  const answered = send(id, encodeCallBatch(['a', 'b', 'c', 'd'], calls));
  await until('the answers', () => (byToken(answered).size === 4 ? true : undefined));
  assert.equal([...byToken(answered)], [['a', 11], ['b', 13], ['c', 13], ['d', ['x', 2]]]);
  assert.is(answered.messages.length, 1, 'calls that end in one turn answer in one message');
  assert.is(await call(bus, id, 'get'), 13, 'each call ran once');
});

test('a call that ends later is answered in a later reply_batch: the calls that ended first are not held back for it', async () => {
  const spec = createSpec('Counter', { maxConcurrency: 2 });
  await host.create(spec);
  const answered = send(spec.actorId, encodeCallBatch(['slow', 'fast'], [encodeCall('incrementLater', [5]), encodeCall('echo', ['now'])]));
  await until('both answers', () => (byToken(answered).size === 2 ? true : undefined));
  assert.equal(answered.messages, [{ tokens: ['fast'], values: [['now']] }, { tokens: ['slow'], values: [5] }]);
});

test('a bad call inside a batch is answered with its own error; the others run', async () => {
  const id = await spawn('Counter');
  const bad = encode('actor_call', { method: '', args: [] });
  const answered = send(id, encodeCallBatch(['ok', 'bad', 'missing', 'after'], [encodeCall('increment', [1]), bad, encodeCall('nope', []), encodeCall('get', [])]));
  await until('the answers', () => (byToken(answered).size === 4 ? true : undefined));
  const got = byToken(answered);
  assert.is(got.get('ok'), 1);
  assert.equal(got.get('bad'), { error: 'INVALID_MESSAGE' });
  assert.equal(got.get('missing'), { error: 'REMOTE_ERROR' });
  assert.is(got.get('after'), 1);
});

test('a batch that cannot be read is answered with its error as a whole, counted as malformed, and runs nothing', async () => {
  const id = await spawn('Counter', [7]);
  const before = host.malformed.total;
  const cases: [string, Uint8Array][] = [
    ['INVALID_MESSAGE', encodeCallBatch(['a', 'b'], [encodeCall('increment', [1])])], // fewer calls than tokens
    ['INVALID_MESSAGE', encodeCallBatch(['a', 'a'], [encodeCall('increment', [1]), encodeCall('increment', [1])])],
    ['INVALID_MESSAGE', encode('call_batch', { tokens: ['NOT-A-TOKEN'], calls: [encodeCall('increment', [1])] })],
    ['MALFORMED', encodeCallBatch(['a'], [encodeCall('increment', [1])]).slice(0, 30)],
  ];
  for (const [code, data] of cases) {
    const answered = send(id, data);
    await until(`the answer to a batch with ${code}`, () => (answered.raw.length > 0 ? true : undefined));
    assert.is(decodeReplyBatch(answered.raw[0]!), undefined, 'not a reply_batch');
    assert.equal(valueOf(answered.raw[0]!), { error: code });
  }
  assert.is(host.malformed.total - before, cases.length);
  assert.is(await call(bus, id, 'get'), 7, 'nothing ran');
});

test('a host that fenced itself answers each call of a batch ACTOR_FENCED, and runs none', async () => {
  const fenced = new ActorHost({ bus, node });
  const spec = createSpec('Counter', { args: [3] });
  await fenced.create(spec);
  const answered = send(spec.actorId, encodeCallBatch(['a', 'b'], [encodeCall('increment', [1]), encodeCall('increment', [1])]));
  fenced.fence(); // the batch was routed to the actor's subscription, not delivered yet
  await until('the answers', () => (byToken(answered).size === 2 ? true : undefined));
  assert.equal([...byToken(answered)], [['a', { error: 'ACTOR_FENCED' }], ['b', { error: 'ACTOR_FENCED' }]]);
  fenced.unfence();
  assert.is(await call(bus, spec.actorId, 'get'), 3, 'neither call ran');
  fenced.stop();
});

test('a batch published without a reply subject runs its calls and answers nothing', async () => {
  const id = await spawn('Counter');
  bus.publish(s.actorCall(id), encodeCallBatch(['a', 'b'], [encodeCall('increment', [1]), encodeCall('increment', [1])]));
  await until('both calls ran', async () => ((await call(bus, id, 'get')) === 2 ? true : undefined));
});

test('replies too large to share one reply_batch go one at a time; one that cannot go even in its own, to a reply subject that names no inbox, is answered TOO_LARGE, not lost', async () => {
  const id = await spawn('Counter');
  // each fits alone in a reply_batch, two do not fit one; the third is just under the reply limit,
  // which the reply_batch's few bytes more take over
  const near = 1024 * 1024 - 64;
  const answered = send(id, encodeCallBatch(['a', 'b', 'c', 'd'], [encodeCall('big', [600_000]), encodeCall('big', [600_000]), encodeCall('big', [near]), encodeCall('get', [])]));
  await until('the four answers', () => (byToken(answered).size === 4 ? true : undefined));
  const got = byToken(answered);
  assert.is((got.get('a') as string).length, 600_000);
  assert.is((got.get('b') as string).length, 600_000);
  assert.equal(got.get('c'), { error: 'TOO_LARGE' });
  assert.is(got.get('d'), 0);
});

test('a reply that fits a message alone but not a reply_batch goes alone to its call\'s own subject in the caller\'s inbox, with its value', async () => {
  const id = await spawn('Counter');
  // the caller's bus names a batch's reply subject <inbox>._<n> and answers a call by its token
  // wherever it arrives (protocols/call-batch.ts): <inbox>.<token> reaches the same caller
  const inbox = `_INBOX.spec.solo${inboxes++}`;
  const alone = new Map<string, Uint8Array>();
  const batched: Answered = { messages: [], raw: [] };
  bus.subscribe(`${inbox}.*`, (msg) => {
    const token = msg.subject.slice(inbox.length + 1);
    const batch = decodeReplyBatch(msg.data);
    if (token.startsWith('_') && batch !== undefined) batched.messages.push({ tokens: batch.tokens, values: batch.replies.map((r) => valueOf(r)) });
    else alone.set(token, msg.data);
  });
  const near = 1024 * 1024 - 64;
  bus.publish(s.actorCall(id), encodeCallBatch(['a', 'b'], [encodeCall('big', [near]), encodeCall('increment', [1])]), { reply: `${inbox}._7` });
  await until('both answers', () => (alone.size === 1 && byToken(batched).size === 1 ? true : undefined));
  assert.equal([...alone.keys()], ['a'], 'the large reply came alone, under its own token');
  assert.is((valueOf(alone.get('a')!) as string).length, near);
  assert.equal([...byToken(batched)], [['b', 1]], 'the other call was answered in a reply_batch');
});

test('a reply too large for any message is answered TOO_LARGE in the batch, even where it could have gone alone', async () => {
  const id = await spawn('Counter');
  const inbox = `_INBOX.spec.solo${inboxes++}`;
  const alone: string[] = [];
  const batched: Answered = { messages: [], raw: [] };
  bus.subscribe(`${inbox}.*`, (msg) => {
    const batch = decodeReplyBatch(msg.data);
    if (batch === undefined) alone.push(msg.subject);
    else batched.messages.push({ tokens: batch.tokens, values: batch.replies.map((r) => valueOf(r)) });
  });
  bus.publish(s.actorCall(id), encodeCallBatch(['a', 'b'], [encodeCall('big', [1024 * 1024 + 10]), encodeCall('get', [])]), { reply: `${inbox}._0` });
  await until('both answers', () => (byToken(batched).size === 2 ? true : undefined));
  assert.equal(byToken(batched).get('a'), { error: 'TOO_LARGE' });
  assert.is(byToken(batched).get('b'), 0);
  assert.equal(alone, [], 'nothing was sent alone');
});

test.after(() => host.stop());
test.run();
