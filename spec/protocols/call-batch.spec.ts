import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCallBatch, decodeReplyBatch, encodeCallBatch, encodeReplyBatch, isCallBatch, soloReplySubject } from '../../protocols/call-batch.ts';
import { encode } from '../../protocols/codec.ts';
import { encodeCall } from '../../protocols/fast-path.ts';
import { MAX_BATCH_CALLS } from '../../protocols/messages/actor.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';

const call = encodeCall('add', [1, 'two']);

test('a call_batch round-trips its tokens and call bytes, and is told apart from a lone call', () => {
  const bytes = encodeCallBatch(['0', 'z9'], [call, encodeCall('get', [])]);
  assert.ok(isCallBatch(bytes));
  assert.not.ok(isCallBatch(call));
  assert.not.ok(isCallBatch(encodeReplyBatch(['0'], [call])));
  const batch = decodeCallBatch(bytes);
  assert.equal(batch.tokens, ['0', 'z9']);
  assert.equal(batch.calls.map((c) => [...c]), [[...call], [...encodeCall('get', [])]]);
});

test('a call_batch is refused with INVALID_MESSAGE when its tokens and calls do not pair up, or it is too long', () => {
  const code = (bytes: Uint8Array): string | undefined => {
    try {
      decodeCallBatch(bytes);
      return undefined;
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };
  assert.is(code(encodeCallBatch(['a'], [call, call])), 'INVALID_MESSAGE');
  assert.is(code(encodeCallBatch(['a', 'a'], [call, call])), 'INVALID_MESSAGE');
  assert.is(code(encode('call_batch', { tokens: [], calls: [] })), 'INVALID_MESSAGE');
  assert.is(code(encode('call_batch', { tokens: ['x.y'], calls: [call] })), 'INVALID_MESSAGE');
  const many = Array.from({ length: MAX_BATCH_CALLS + 1 }, (_, i) => i.toString(36));
  assert.is(code(encodeCallBatch(many, many.map(() => call))), 'INVALID_MESSAGE');
  assert.is(code(encodeCallBatch(many.slice(1), many.slice(1).map(() => call))), undefined);
});

test('a reply_batch reads back by token; an error reply or a broken one is not a reply_batch', () => {
  const replies = [encodeOk(3), encodeError(new Error('no'))];
  const batch = decodeReplyBatch(encodeReplyBatch(['b', 'a'], replies));
  assert.equal(batch?.tokens, ['b', 'a']);
  assert.equal(batch?.replies.map((r) => [...r]), replies.map((r) => [...r]));
  assert.is(decodeReplyBatch(encodeError(new Error('could not read the batch'))), undefined);
  assert.is(decodeReplyBatch(encodeReplyBatch(['a'], [encodeOk(1)]).slice(0, 20)), undefined);
  assert.is(decodeReplyBatch(encodeReplyBatch(['a', 'a'], [encodeOk(1), encodeOk(2)])), undefined);
});

test('a call\'s reply goes alone to the batch\'s inbox under the call\'s token, and only from a batch reply subject of that shape', () => {
  assert.is(soloReplySubject('_INBOX.c.driver.main.abc123._4', 'k9'), '_INBOX.c.driver.main.abc123.k9');
  assert.is(soloReplySubject('_INBOX.x._0', '0'), '_INBOX.x.0');
  // not a batch's reply subject: its last token does not start with _, or there is no inbox before it
  assert.is(soloReplySubject('_INBOX.x.y', 'a'), undefined);
  assert.is(soloReplySubject('_0', 'a'), undefined);
  assert.is(soloReplySubject('.', 'a'), undefined);
  // not a call token: it would name another subject (a wildcard, a deeper token, a batch token)
  for (const token of ['', '*', '>', 'a.b', '_1', 'A', 'x'.repeat(17)]) assert.is(soloReplySubject('_INBOX.x._0', token), undefined, token);
});

test.run();
