// CallResend (runtime/client/call-resend.ts): the order in which one handle's calls that met no
// responder are sent again, and when they fail instead. The handle's part — the bus — is played by
// the spec: `send` records each send, and the spec says how each came back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CallResend, type OutgoingCall } from '../../../runtime/client/call-resend.ts';
import { UnavailableNow } from '../../../runtime/client/restart-gate.ts';
import type { ActorInfo, ActorState } from '../../../runtime/client/cluster-info.types.ts';
import { ActorDiedError } from '../../../runtime/errors.ts';
import { until } from '../../helpers/until.ts';

interface Call extends OutgoingCall {
  readonly name: string;
  live: boolean;
}

const ACTOR = 'a1a1a1a1a1a1a1a1';
const info = (state: ActorState, numRestarts = 0): ActorInfo => ({ actorId: ACTOR, namespace: 'default', className: 'Journal', state, numRestarts, labels: {} });

/** A CallResend whose sends are recorded; `gcs` is what get_actor answers next (a promise the spec may hold). */
function harness(gcs: () => Promise<Error> = async () => new UnavailableNow(ACTOR, info('ALIVE')), creationResyncMs?: { first: number; max: number }) {
  const sends: string[] = [];
  const failed: { name: string; err: unknown }[] = [];
  let asked = 0;
  let sendNo = 0;
  const resend: CallResend<Call> = new CallResend<Call>({
    actorId: ACTOR,
    why: () => {
      asked++;
      return gcs();
    },
    send: (call) => {
      call.sent = ++sendNo;
      sends.push(call.name);
    },
    fail: (call, err) => {
      call.live = false;
      failed.push({ name: call.name, err });
    },
    creationResyncMs,
  });
  const call = (name: string, timeoutMs = 30_000): Call => ({ name, live: true, deadline: Date.now() + timeoutMs, sent: 0, resent: false });
  /** The handle's send: held while the resend holds calls. */
  const make = (c: Call): Call => {
    if (resend.holding) resend.hold(c);
    else {
      c.sent = ++sendNo;
      sends.push(c.name);
    }
    return c;
  };
  /** How a send of `c` came back. */
  const noResponder = (c: Call): void => {
    resend.noResponder(c);
    if (c.resent) resend.back(c);
  };
  const answered = (c: Call): void => {
    resend.answered(c.sent);
    c.live = false;
    if (c.resent) resend.back(c);
  };
  return { resend, sends, failed, call, make, noResponder, answered, asked: () => asked };
}

test('calls that met no responder go again in the order they were sent; a call made meanwhile goes after them', async () => {
  const h = harness();
  const [a, b] = [h.make(h.call('a')), h.make(h.call('b'))];
  h.noResponder(a);
  h.noResponder(b);
  const c = h.make(h.call('c'));
  assert.equal(h.sends, ['a', 'b'], 'c waits behind the parked calls');
  await until('a and b sent again', () => (h.sends.length >= 4 ? true : undefined));
  assert.equal(h.sends, ['a', 'b', 'a', 'b']);
  h.answered(a);
  assert.equal(h.sends.length, 4, 'c still waits: b is out again');
  h.answered(b);
  assert.equal(h.sends, ['a', 'b', 'a', 'b', 'c'], 'then c');
  h.answered(c);
  assert.not.ok(h.resend.holding);
  assert.equal(h.failed, []);
  assert.ok(h.asked() >= 1, 'the GCS was asked where the actor stands');
});

test('a parked call fails, without being sent again, once a call sent after it was answered', async () => {
  const h = harness();
  const [a, b] = [h.make(h.call('a')), h.make(h.call('b'))];
  h.noResponder(a); // the host's subscription arrived between the two sends
  h.answered(b);
  await until('a settled', () => (h.failed.length > 0 ? true : undefined));
  assert.equal(h.sends, ['a', 'b'], 'a was not sent after b ran');
  assert.is(h.failed[0]!.name, 'a');
  assert.is((h.failed[0]!.err as { code?: string }).code, 'ACTOR_UNAVAILABLE');
  assert.not.ok(h.resend.holding);
});

test('the GCS saying DEAD or RESTARTING fails the parked calls with its answer; calls held behind them then go', async () => {
  for (const why of [new ActorDiedError(ACTOR, 'killed'), new UnavailableNow(ACTOR, info('RESTARTING'))]) {
    let answer!: (err: Error) => void;
    const h = harness(() => new Promise((resolve) => (answer = resolve)));
    const a = h.make(h.call('a'));
    h.noResponder(a);
    const b = h.make(h.call('b'));
    // sent again meanwhile, while the GCS has not answered: no responder again
    await until('a sent again', () => (h.sends.length >= 2 ? true : undefined));
    h.noResponder(a);
    answer(why);
    await until('a failed', () => (h.failed.length > 0 ? true : undefined));
    assert.equal(h.failed, [{ name: 'a', err: why }]);
    assert.equal(h.sends.at(-1), 'b', `${why.name}: b went once nothing was parked`);
    assert.ok(b.live);
  }
});

test('a parked call past its time fails rather than being sent again, and the pause does not run past its deadline', async () => {
  const h = harness(() => new Promise(() => {})); // a GCS that never answers holds nothing back
  const a = h.make(h.call('a', 40));
  h.noResponder(a);
  const long = h.make(h.call('long'));
  for (let sends = 2; ; sends++) {
    await until(`send ${sends} or a's failure`, () => (h.sends.length >= sends || h.failed.length > 0 ? true : undefined));
    if (h.failed.length > 0) break;
    h.noResponder(a);
  }
  assert.is(h.failed[0]!.name, 'a');
  assert.is((h.failed[0]!.err as { code?: string }).code, 'ACTOR_UNAVAILABLE');
  assert.ok(Date.now() >= a.deadline, 'not before its deadline');
  assert.equal(h.sends.at(-1), 'long', 'the call held behind it went then');
  assert.is(h.asked(), 1, 'one get_actor at a time');
});

test('a held call with a shorter time than the parked ones fails at its own deadline, unsent, and the others keep their order', async () => {
  const h = harness(() => new Promise(() => {}));
  const a = h.make(h.call('a')); // 30 s
  h.noResponder(a);
  const short = h.make(h.call('short', 60));
  const after = h.make(h.call('after'));
  // a keeps meeting no responder: the parked call outlives the short one's time
  while (h.failed.length === 0) {
    await until(`a sent again or short's failure`, () => (h.sends.at(-1) === 'a' && a.resent) || h.failed.length > 0 ? true : undefined);
    if (h.failed.length === 0) h.noResponder(a);
  }
  assert.equal(h.failed.map((f) => f.name), ['short']);
  assert.is((h.failed[0]!.err as { code?: string }).code, 'ACTOR_UNAVAILABLE');
  assert.ok(Date.now() >= short.deadline, 'not before its deadline');
  assert.ok(Date.now() < a.deadline, 'while the parked call still had time');
  assert.not.ok(h.sends.includes('short'), 'never sent');
  h.answered(a);
  assert.equal(h.sends.slice(-2), ['a', 'after'], 'the call held after it goes once a is through');
  assert.ok(after.live);
});

test('an actor whose creation is under way keeps the calls that met no responder; they go, in order, when it is ALIVE, then the calls held behind them', async () => {
  for (const state of ['PENDING', 'SCHEDULED'] as const) {
    const h = harness(async () => new UnavailableNow(ACTOR, info(state)));
    // `clock` fails at its own deadline, after several of the pauses (10, 20, 40 ms …) at which
    // calls parked for an ALIVE actor are sent again: none is sent again before that
    const [clock, a, b] = [h.make(h.call('clock', 120)), h.make(h.call('a')), h.make(h.call('b'))];
    h.noResponder(clock);
    h.noResponder(a);
    h.noResponder(b);
    const c = h.make(h.call('c'));
    await until(`${state}: waiting for the creation`, () => (h.resend.awaitingCreation ? true : undefined));
    const sentBefore = h.sends.length;
    await until(`${state}: clock's deadline passed`, () => (h.failed.length > 0 ? true : undefined));
    assert.equal(h.failed.map((f) => f.name), ['clock']);
    h.failed.length = 0;
    assert.is(h.sends.length, sentBefore, `${state}: not sent again while the actor is being created`);
    assert.is(h.asked(), 1, `${state}: the GCS asked once`);
    h.resend.alive(info('ALIVE'));
    assert.equal(h.sends.slice(sentBefore), ['a', 'b'], `${state}: the parked calls first, in the order they were sent`);
    h.answered(a);
    h.answered(b);
    assert.equal(h.sends.slice(sentBefore), ['a', 'b', 'c'], `${state}: then the call held behind them`);
    h.answered(c);
    assert.equal(h.failed, []);
    assert.not.ok(h.resend.holding);
  }
});

test('a call waiting for a creation fails unsent at its own deadline, naming the state and why the actor waits; the others keep waiting', async () => {
  const reason = '0/2 nodes are available: 2 node(s) didn\'t match label selector zone in (b).';
  const h = harness(async () => new UnavailableNow(ACTOR, { ...info('PENDING'), pendingReason: 'not placed yet' }));
  const short = h.make(h.call('short', 50));
  const long = h.make(h.call('long'));
  h.noResponder(short);
  h.noResponder(long);
  await until('waiting for the creation', () => (h.resend.awaitingCreation ? true : undefined));
  // an event with the explanation of the latest scheduling attempt
  h.resend.seen({ ...info('PENDING'), pendingReason: reason });
  await until('short failed', () => (h.failed.length > 0 ? true : undefined));
  assert.equal(h.failed.map((f) => f.name), ['short']);
  const err = h.failed[0]!.err as { code?: string; state?: string; reason?: string; message: string };
  assert.is(err.code, 'ACTOR_UNAVAILABLE');
  assert.is(err.state, 'PENDING');
  assert.is(err.reason, reason);
  assert.is(err.message, `actor ${ACTOR} is not available (PENDING: ${reason})`);
  assert.ok(Date.now() >= short.deadline, 'not before its deadline');
  assert.equal(h.sends, ['short', 'long'], 'nothing was sent again');
  assert.ok(h.resend.awaitingCreation, 'long still waits');
  h.resend.alive(info('ALIVE'));
  assert.equal(h.sends, ['short', 'long', 'long']);
});

test('while calls wait for a creation, the GCS is asked again now and then (an ALIVE event may be lost), and its ALIVE sends them', async () => {
  let answer: ActorState = 'PENDING';
  const h = harness(async () => new UnavailableNow(ACTOR, info(answer)), { first: 20, max: 40 });
  const a = h.make(h.call('a'));
  h.noResponder(a);
  await until('asked twice', () => (h.asked() >= 2 ? true : undefined));
  assert.equal(h.sends, ['a'], 'not sent again while it is PENDING');
  answer = 'ALIVE';
  await until('sent once the GCS says ALIVE', () => (h.sends.length >= 2 ? true : undefined));
  assert.equal(h.sends, ['a', 'a']);
  assert.not.ok(h.resend.awaitingCreation);
});

test('an actor PENDING again after a restart does not keep the calls: they fail at once, as for RESTARTING', async () => {
  const why = new UnavailableNow(ACTOR, info('PENDING', 1));
  const h = harness(async () => why);
  const a = h.make(h.call('a'));
  h.noResponder(a);
  await until('a failed', () => (h.failed.length > 0 ? true : undefined));
  assert.equal(h.failed, [{ name: 'a', err: why }]);
  assert.not.ok(h.resend.awaitingCreation);
});

test('a GCS answer from before an ALIVE the handle has seen does not make the calls wait', async () => {
  let answer!: (err: Error) => void;
  const h = harness(() => new Promise((resolve) => (answer = resolve)));
  const a = h.make(h.call('a'));
  h.noResponder(a);
  h.resend.alive(info('ALIVE'));
  answer(new UnavailableNow(ACTOR, info('SCHEDULED')));
  await until('a sent again', () => (h.sends.length >= 2 ? true : undefined));
  assert.not.ok(h.resend.awaitingCreation);
  assert.equal(h.failed, []);
});

test('the GCS saying DEAD while calls wait for a creation fails them with its answer', async () => {
  let dead = false;
  const died = new ActorDiedError(ACTOR, 'creation failed');
  const h = harness(async () => (dead ? died : new UnavailableNow(ACTOR, info('SCHEDULED'))), { first: 20, max: 20 });
  const a = h.make(h.call('a'));
  h.noResponder(a);
  await until('waiting for the creation', () => (h.resend.awaitingCreation ? true : undefined));
  dead = true;
  await until('a failed', () => (h.failed.length > 0 ? true : undefined));
  assert.equal(h.failed, [{ name: 'a', err: died }]);
  assert.not.ok(h.resend.awaitingCreation);
});

test('calls failed by an actor_state event leave the parked list at once: a call made after them is sent, not held until a timer', async () => {
  const h = harness(async () => new UnavailableNow(ACTOR, info('SCHEDULED')));
  const a = h.make(h.call('a'));
  h.noResponder(a);
  await until('waiting for the creation', () => (h.resend.awaitingCreation ? true : undefined));
  a.live = false; // failed by the event (InFlightCalls)
  h.resend.prune();
  assert.not.ok(h.resend.holding);
  assert.not.ok(h.resend.awaitingCreation);
  h.make(h.call('b'));
  assert.equal(h.sends, ['a', 'b'], 'b went at once');
});

test('a call the handle parks unsent (remote()\'s watch saw the actor being created) waits without asking the GCS; ALIVE sends it, then the calls held behind', async () => {
  const h = harness();
  const [clock, a] = [h.call('clock', 60), h.call('a')];
  clock.sent = 1;
  a.sent = 2;
  h.resend.awaitCreationOf(clock, info('PENDING'));
  h.resend.awaitCreationOf(a, info('PENDING'));
  assert.ok(h.resend.holding);
  const b = h.make(h.call('b'));
  await until(`clock's deadline passed`, () => (h.failed.length > 0 ? true : undefined));
  assert.equal(h.failed.map((f) => f.name), ['clock'], 'the call with the short timeout fails at it, unsent');
  assert.equal(h.sends, [], 'nothing sent');
  assert.is(h.asked(), 0, 'the GCS not asked: the watch knows');
  h.resend.alive(info('ALIVE'));
  assert.equal(h.sends, ['a']);
  h.answered(a);
  assert.equal(h.sends, ['a', 'b']);
  h.answered(b);
  assert.not.ok(h.resend.holding);
});

test.run();
