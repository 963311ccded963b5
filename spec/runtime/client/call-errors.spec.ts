// The errors a call fails with, as they travel: ACTOR_UNAVAILABLE with the actor's pending reason
// keeps it across the wire, and a forged detail (a reason that is not a string) is dropped rather
// than trusted; CallArgumentError and CallAbortedError keep their codes and details.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { decodeReply, encodeError } from '../../../protocols/reply.ts';
import { unknown } from '../../../protocols/validate.ts';
import { CallAbortedError, CallArgumentError, specializeWireError } from '../../../runtime/client/errors.ts';
import { ActorUnavailableError } from '../../../runtime/errors.ts';

const ACTOR = 'a1a1a1a1a1a1a1a1';

/** What a caller gets from a reply carrying `err`. */
function overTheWire(err: unknown): unknown {
  try {
    decodeReply(encodeError(err), { value: unknown() });
  } catch (received) {
    return specializeWireError(received);
  }
  throw new Error('the reply decoded as a value');
}

test('ACTOR_UNAVAILABLE keeps its state and the pending reason across the wire', () => {
  const reason = '0/2 nodes are available: 2 node(s) didn\'t match label selector zone in (b).';
  const back = overTheWire(new ActorUnavailableError(ACTOR, 'PENDING', reason));
  assert.instance(back, ActorUnavailableError);
  const e = back as ActorUnavailableError;
  assert.equal([e.code, e.state, e.reason], ['ACTOR_UNAVAILABLE', 'PENDING', reason]);
  assert.is(e.message, `actor ${ACTOR} is not available (PENDING: ${reason})`);
});

test('a forged ACTOR_UNAVAILABLE whose reason is not a string is specialized without it', () => {
  for (const reason of [42, { nested: 'x' }, ['a'], null]) {
    const forged = new OrreryError('ACTOR_UNAVAILABLE', 'forged', { detail: { actorId: ACTOR, state: 'PENDING', reason } });
    const back = overTheWire(forged) as ActorUnavailableError;
    assert.instance(back, ActorUnavailableError);
    assert.is(back.reason, undefined, JSON.stringify(reason));
    assert.is(back.message, `actor ${ACTOR} is not available (PENDING)`);
  }
});

test('CallArgumentError and CallAbortedError carry stable codes and their details', () => {
  const arg = new CallArgumentError(ACTOR, 'add', 1, 'list[2]', 'a Map cannot be sent as it is');
  assert.is(arg.code, 'INVALID_ARGUMENT');
  assert.equal(arg.detail, { actorId: ACTOR, method: 'add', index: 1, path: 'list[2]', problem: 'a Map cannot be sent as it is' });
  assert.is(arg.message, `argument 1 of add() on actor ${ACTOR} cannot be sent at list[2]: a Map cannot be sent as it is`);
  const notSent = new CallAbortedError(ACTOR, 'add', false, 'user');
  const sent = new CallAbortedError(ACTOR, 'add', true);
  assert.equal([notSent.code, notSent.detail, notSent.cause], ['ABORTED', { actorId: ACTOR, method: 'add', sent: false }, 'user']);
  assert.match(notSent.message, /before it was sent: it will not run$/);
  assert.match(sent.message, /after it was sent: its actor drops it if it has not started and aborts its signal if it runs, but it may still run$/);
});

test.run();
