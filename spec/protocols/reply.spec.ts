import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NodeNotFoundError, OrreryError } from '../../lib/errors.ts';
import { encode } from '../../protocols/codec.ts';
import { errorResult, fromWireError, okResult, ProtocolError, toWireError } from '../../protocols/errors.ts';
import { heartbeat } from '../../protocols/messages/node.ts';
import { decodeReply, encodeError, encodeOk, encodeReply } from '../../protocols/reply.ts';
import { num, unknown } from '../../protocols/validate.ts';

function thrown(run: () => unknown): OrreryError {
  try {
    run();
  } catch (err) {
    assert.instance(err, OrreryError);
    return err as OrreryError;
  }
  throw new Error('expected an error');
}

test('toWireError keeps code, message and detail of an OrreryError', () => {
  assert.equal(toWireError(new NodeNotFoundError('n7')), {
    code: 'NODE_NOT_FOUND',
    message: 'node "n7" is not in the cluster',
    detail: { nodeId: 'n7' },
  });
  assert.equal(toWireError(new OrreryError('X', 'no detail')), { code: 'X', message: 'no detail' });
});

test('anything else becomes INTERNAL with its message', () => {
  assert.equal(toWireError(new TypeError('boom')), { code: 'INTERNAL', message: 'boom' });
  assert.equal(toWireError('plain'), { code: 'INTERNAL', message: 'plain' });
  assert.equal(errorResult(new Error('e')), { ok: false, error: { code: 'INTERNAL', message: 'e' } });
  assert.equal(okResult(3), { ok: true, value: 3 });
});

test('fromWireError re-creates the error: ProtocolError for protocol codes, OrreryError otherwise', () => {
  const domain = fromWireError({ code: 'NODE_NOT_FOUND', message: 'gone', detail: { nodeId: 'n7' } });
  assert.instance(domain, OrreryError);
  assert.is(domain.code, 'NODE_NOT_FOUND');
  assert.equal(domain.detail, { nodeId: 'n7' });
  const protocol = fromWireError({ code: 'INVALID_MESSAGE', message: 'bad', detail: { path: 'seq' } });
  assert.instance(protocol, ProtocolError);
  assert.is(protocol.code, 'INVALID_MESSAGE');
});

test('a success reply round-trips, its value checked by the caller', () => {
  assert.equal(decodeReply(encodeOk({ nodeId: 'n', seq: 1, available: { CPU: 1 } }), { value: heartbeat }), { nodeId: 'n', seq: 1, available: { CPU: 1 } });
  assert.is(decodeReply(encodeReply(okResult(undefined)), { value: unknown() }), undefined);
  const err = thrown(() => decodeReply(encodeOk({ nodeId: 'n', seq: 'one', available: {} }), { value: heartbeat }));
  assert.is(err.code, 'INVALID_MESSAGE');
  assert.is(err.message, 'value.seq: expected a number');
});

test('an error reply is thrown again on the receiving side with the same code and detail', () => {
  const err = thrown(() => decodeReply(encodeError(new NodeNotFoundError('n7')), { value: num() }));
  assert.is(err.code, 'NODE_NOT_FOUND');
  assert.equal(err.detail, { nodeId: 'n7' });
  assert.is(err.message, 'node "n7" is not in the cluster');
});

test('a reply that is not a reply is a protocol error', () => {
  const err = thrown(() => decodeReply(encode('heartbeat', { nodeId: 'n', seq: 1, available: {} }), { value: num() }));
  assert.instance(err, ProtocolError);
  assert.is(err.code, 'UNKNOWN_TYPE');
  assert.is(thrown(() => decodeReply(new Uint8Array([0xc1]), { value: num() })).code, 'MALFORMED');
});

test.run();
