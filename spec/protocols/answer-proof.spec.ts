// The GCS's proofs on its answers to a raylet (protocols/answer-proof.ts): a proof holds only for
// the secret, verb, nonce and answer it was made for — a peer without the secret cannot make one,
// and one seen on an earlier answer does not fit the next request's nonce nor another answer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../lib/errors.ts';
import { answerNonce, canonical, checkProof, provenError, provenValue } from '../../protocols/answer-proof.ts';
import { decodeReplyBody, encodeError, encodeOk } from '../../protocols/reply.ts';

const SECRET = 's'.repeat(40);

/** An answer as the raylet reads it off the wire. */
const okOnWire = (value: unknown) => decodeReplyBody(encodeOk(value));
const errorOnWire = (err: unknown) => decodeReplyBody(encodeError(err));

test('an ok answer proven by the GCS holds for its secret, verb and nonce, across the wire', () => {
  const nonce = answerNonce();
  const answer = okOnWire(provenValue({ known: true, epoch: 3 }, SECRET, 'heartbeat', nonce));
  assert.is(checkProof(answer, SECRET, 'heartbeat', nonce), 'proven');
  assert.is(checkProof(answer, 'x'.repeat(40), 'heartbeat', nonce), 'forged', 'another secret');
  assert.is(checkProof(answer, SECRET, 'heartbeat', answerNonce()), 'forged', "another request's nonce: a seen proof is not reused");
  assert.is(checkProof(answer, SECRET, 'unregister_node', nonce), 'forged', 'another verb');
});

test('a proof covers what the answer says: a value changed under it no longer holds', () => {
  const nonce = answerNonce();
  const proven = provenValue({ known: false, epoch: 3 }, SECRET, 'heartbeat', nonce) as Record<string, unknown>;
  assert.is(checkProof(okOnWire({ ...proven, known: true }), SECRET, 'heartbeat', nonce), 'forged', 'known flipped');
  assert.is(checkProof(okOnWire({ ...proven, epoch: 99 }), SECRET, 'heartbeat', nonce), 'forged', 'epoch raised');
  assert.is(checkProof(okOnWire({ ...proven, nodeTimeoutMs: 1e9 }), SECRET, 'heartbeat', nonce), 'forged', 'a field added');
  assert.is(checkProof(okOnWire({ ...proven, proof: 42 }), SECRET, 'heartbeat', nonce), 'forged', 'a proof that is no string');
});

test('an answer without a proof is unproven, ok or error', () => {
  const nonce = answerNonce();
  assert.is(checkProof(okOnWire({ known: true }), SECRET, 'heartbeat', nonce), 'unproven');
  assert.is(checkProof(errorOnWire(new OrreryError('NODE_NOT_OWNED', 'no')), SECRET, 'heartbeat', nonce), 'unproven');
});

test('an error answer is proven by its code, and only that code', () => {
  const nonce = answerNonce();
  const err = provenError(new OrreryError('NODE_NAME_TAKEN', 'taken', { detail: { holder: 'abc' } }), SECRET, 'register_node', nonce);
  const answer = errorOnWire(err);
  assert.is(checkProof(answer, SECRET, 'register_node', nonce), 'proven');
  assert.is((answer as unknown as { error: { detail: { holder: string } } }).error.detail.holder, 'abc', 'the detail is kept');
  const other = errorOnWire(new OrreryError('STALE_EPOCH', 'x', { detail: { proof: (err.detail as { proof: string }).proof } }));
  assert.is(checkProof(other, SECRET, 'register_node', nonce), 'forged', "another code under the first one's proof");
});

test('a value that is not an object is proven wrapped, and its key order does not matter', () => {
  const nonce = answerNonce();
  assert.is(checkProof(okOnWire(provenValue(7, SECRET, 'actor_died', nonce)), SECRET, 'actor_died', nonce), 'proven');
  assert.is(canonical({ b: 1, a: [1, { d: 2, c: undefined }] }), canonical({ a: [1, { d: 2 }], b: 1 }));
});

test.run();
