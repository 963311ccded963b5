// The code store through a NATS outage (store-outage.ts): which failures are waited out, and an
// operation started again until it is answered or the outage bound has passed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { throughOutages, unanswered } from '../../../runtime/code/store-outage.ts';

const named = (name: string, message = ''): Error => Object.assign(new Error(message), { name });
const coded = (code: string): OrreryError => new OrreryError(code, code);

const cases: [string, unknown, boolean, boolean][] = [
  // what, the error, when the store is known, waited out?
  ['a timeout (nats.js)', named('TimeoutError', 'timeout'), false, true],
  ['a timeout (the bus)', coded('TIMEOUT'), false, true],
  ['the connection lost under it', coded('CONNECTION_LOST'), false, true],
  ['the connection closed under it', new Error('connection closed'), false, true],
  ['JetStream electing', new Error('JetStream system temporarily unavailable'), false, true],
  ['JetStream not ready', coded('JETSTREAM_NOT_READY'), false, true],
  ['JetStream missing, store never seen: a server without it', coded('JETSTREAM_UNAVAILABLE'), false, false],
  ['JetStream missing, store seen before: an outage', coded('JETSTREAM_UNAVAILABLE'), true, true],
  ['no responders, store seen before', named('NoRespondersError', 'no responders'), true, true],
  ['a permission refusal', named('PermissionViolationError', 'Permissions Violation for Publish'), true, false],
  ['PERMISSION_DENIED', coded('PERMISSION_DENIED'), true, false],
  ['anything else (a corrupt bundle)', coded('BUNDLE_CORRUPT'), true, false],
];
for (const [what, err, known, waited] of cases) {
  test(`${what}: ${waited ? 'waited out' : 'an answer'}`, () => assert.is(unanswered(err, known), waited));
}

test('an operation unanswered twice, then answered, is answered', async () => {
  let calls = 0;
  const value = await throughOutages(async () => {
    if (++calls < 3) throw coded('CONNECTION_LOST');
    return 'bundle';
  }, () => false);
  assert.equal([value, calls], ['bundle', 3]);
});

test('an answer that is a refusal is thrown at once', async () => {
  let calls = 0;
  const err = await throughOutages(async () => {
    calls++;
    throw coded('PERMISSION_DENIED');
  }, () => true).catch((e: unknown) => e);
  assert.is((err as OrreryError).code, 'PERMISSION_DENIED');
  assert.is(calls, 1);
});

test('past the outage bound the last failure is thrown', async () => {
  let calls = 0;
  const err = await throughOutages(async () => {
    calls++;
    throw coded('TIMEOUT');
  }, () => true, 250).catch((e: unknown) => e);
  assert.is((err as OrreryError).code, 'TIMEOUT');
  assert.ok(calls >= 2 && calls <= 4, `tried ${calls} times in 250 ms (pauses 100, 200 ms)`);
});

test.run();
