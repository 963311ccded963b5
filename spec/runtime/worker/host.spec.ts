import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encode } from '../../../protocols/codec.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { unknown } from '../../../protocols/validate.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { ActorDiedError, ActorFencedError, CodeLoadError, CodeSourceRefusedError, RemoteError } from '../../../runtime/errors.ts';
import { ActorHost } from '../../../runtime/worker/host.ts';
import { FIXTURES_URL, openAllGates } from '../../fixtures/actors.ts';
import { until } from '../../helpers/until.ts';
import { DECORATED_URL } from '../../fixtures/decorated.ts';
import { call, createSpec, rejection } from './support.ts';

const node = { nodeId: 'aaaaaaaaaaaaaaaa', nodeName: 'node-a', labels: { 'orrery.io/node-id': 'aaaaaaaaaaaaaaaa', zone: 'z1' } };
const broker = new MemoryBroker();
const bus = connectMemoryBus(broker);
const host = new ActorHost({ bus, node });

async function spawn(className: string, over: Parameters<typeof createSpec>[1] = {}): Promise<string> {
  const spec = createSpec(className, over);
  await host.create(spec);
  return spec.actorId;
}

test('creates an actor from its module and calls it with arguments and results', async () => {
  const id = await spawn('Counter', { args: [10] });
  assert.ok(host.has(id));
  assert.is(await call(bus, id, 'increment', 5), 15);
  assert.is(await call(bus, id, 'get'), 15);
  assert.equal(await call(bus, id, 'echo', 'a', [1, { b: true }], null), ['a', [1, { b: true }], null]);
});

test('async methods are awaited', async () => {
  const id = await spawn('Counter');
  assert.is(await call(bus, id, 'incrementLater', 2), 2);
});

test('a thrown error reaches the caller as RemoteError with the remote name, message and stack', async () => {
  const id = await spawn('Thrower');
  const err = (await rejection(call(bus, id, 'fail', 'bad input'))) as RemoteError;
  assert.instance(err, RemoteError);
  assert.is(err.code, 'REMOTE_ERROR');
  assert.is(err.message, 'bad input');
  assert.is(err.remoteName, 'Error');
  assert.match(err.remoteStack ?? '', /Thrower\.fail/);
  assert.match(err.remoteStack ?? '', /fixtures\/actors\.ts/);

  const lerr = (await rejection(call(bus, id, 'failLater', 'later'))) as RemoteError;
  assert.instance(lerr, RemoteError);
  assert.is(lerr.remoteName, 'ValidationError');
  assert.is(lerr.message, 'later');

  const verr = (await rejection(call(bus, id, 'throwValue', { why: 'no' }))) as RemoteError;
  assert.is(verr.remoteName, 'Error');
  assert.is(verr.message, '{"why":"no"}');
  assert.is(await call(bus, id, 'fail', 'still alive').catch((e: Error) => e.message), 'still alive');
});

test('maxConcurrency 1 runs calls one at a time in arrival order', async () => {
  const id = await spawn('Slow');
  const results = await Promise.all(['a', 'b', 'c'].map((label) => call(bus, id, 'work', label)));
  assert.equal(results, ['a', 'b', 'c']);
  assert.equal(await call(bus, id, 'log'), ['enter a', 'exit a', 'enter b', 'exit b', 'enter c', 'exit c']);
});

test('answers to calls run back to back leave together, each encoded when its call ended, in order', async () => {
  // A spy bus: records each answer and in which synchronous stretch it was sent (a stretch ends
  // at the next microtask). One write per stretch is what reaches the socket on NATS.
  const spyBroker = new MemoryBroker();
  const raw = connectMemoryBus(spyBroker);
  let stretch = 0;
  let open = false;
  const sent: { stretch: number; data: Uint8Array }[] = [];
  const spy: typeof raw = Object.create(raw);
  spy.subscribe = (subject, handler, opts) =>
    raw.subscribe(subject, (msg) => handler({ ...msg, respond: (data: Uint8Array) => {
      if (!open) {
        open = true;
        stretch++;
        queueMicrotask(() => (open = false));
      }
      sent.push({ stretch, data });
      return msg.respond(data);
    } }), opts);
  const spyHost = new ActorHost({ bus: spy, node });
  const spec = createSpec('Slow');
  await spyHost.create(spec);
  const client = connectMemoryBus(spyBroker);
  // log() returns the actor's own array, which the next call changes before this turn ends:
  // its answer must hold what log() returned, not what the array became.
  const calls = [call(client, spec.actorId, 'log'), ...Array.from({ length: 20 }, (_, i) => call(client, spec.actorId, 'work', `w${i}`, 0)), call(client, spec.actorId, 'log')];
  const results = await Promise.all(calls);
  assert.equal(results[0], []);
  assert.equal(results.slice(1, 21), Array.from({ length: 20 }, (_, i) => `w${i}`));
  assert.equal(results[21], Array.from({ length: 20 }, (_, i) => [`enter w${i}`, `exit w${i}`]).flat());
  assert.is(sent.length, 22, 'one answer per call');
  assert.is(new Set(sent.map((x) => x.stretch)).size, 1, 'all sent in one stretch, not one per call');
  spyHost.stop();
  await Promise.all([client.close(), raw.close()]);
});

test('maxConcurrency > 1 overlaps calls: three calls meet inside the actor at once', async () => {
  const id = await spawn('Slow', { maxConcurrency: 3 });
  const results = await Promise.all(['a', 'b', 'c'].map((label) => call(bus, id, 'meet', label, 3)));
  assert.equal(results, ['a', 'b', 'c']);
  assert.equal(await call(bus, id, 'log'), ['enter a', 'enter b', 'enter c', 'exit a', 'exit b', 'exit c']);
});

test('maxConcurrency 2 starts the third call only when one of the first two has finished', async () => {
  const id = await spawn('Slow', { maxConcurrency: 2 });
  const meeting = Promise.all([call(bus, id, 'meet', 'a', 2), call(bus, id, 'meet', 'b', 2), call(bus, id, 'work', 'c', 1)]);
  assert.equal(await meeting, ['a', 'b', 'c']);
  const log = (await call(bus, id, 'log')) as string[];
  assert.equal(log.slice(0, 2), ['enter a', 'enter b']);
  assert.ok(log.indexOf('enter c') > Math.min(log.indexOf('exit a'), log.indexOf('exit b')));
});

test('an unknown method is a REMOTE_ERROR TypeError naming the class and method', async () => {
  const id = await spawn('Counter');
  for (const method of ['nope', 'constructor', 'toString', '__proto__', 'value']) {
    const err = (await rejection(call(bus, id, method))) as RemoteError;
    assert.instance(err, RemoteError, method);
    assert.is(err.remoteName, 'TypeError');
    assert.is(err.message, `Counter.${method} is not a function`);
  }
  assert.is(await call(bus, id, 'increment'), 1);
});

test('a module that cannot be loaded is CODE_LOAD_FAILED', async () => {
  const missing = new URL('./no-such-module.ts', FIXTURES_URL).href;
  const throwing = new URL('./throws-on-load.ts', FIXTURES_URL).href;
  const cases = [
    { moduleUrl: missing, className: 'Counter', reason: /cannot find|not find|ERR_MODULE_NOT_FOUND/i },
    { moduleUrl: throwing, className: 'Counter', reason: /refuses to load/ },
    { moduleUrl: FIXTURES_URL, className: 'Missing', reason: /no export named "Missing"/ },
    { moduleUrl: FIXTURES_URL, className: 'notAClass', reason: /is neither a class nor an actor class from defineActor\(\) \(it is a function\)/ },
    { moduleUrl: FIXTURES_URL, className: 'notAClassValue', reason: /is neither a class nor an actor class from defineActor\(\) \(it is a number\)/ },
  ];
  for (const c of cases) {
    const spec = createSpec(c.className, { moduleUrl: c.moduleUrl });
    const err = (await rejection(host.create(spec))) as CodeLoadError;
    assert.instance(err, CodeLoadError, c.className);
    assert.is(err.code, 'CODE_LOAD_FAILED');
    assert.is(err.detail.moduleUrl, c.moduleUrl);
    assert.is(err.detail.exportName, c.className);
    assert.match(String(err.detail.reason), c.reason);
    assert.not.ok(host.has(spec.actorId));
  }
});

test('a module given as a path rather than a file: URL is CODE_SOURCE_REFUSED and leaves no actor', async () => {
  const spec = createSpec('Counter', { moduleUrl: new URL(FIXTURES_URL).pathname, args: [3] });
  const err = (await rejection(host.create(spec))) as CodeSourceRefusedError;
  assert.instance(err, CodeSourceRefusedError);
  assert.is(err.code, 'CODE_SOURCE_REFUSED');
  assert.is(err.detail.reason, 'not an absolute URL');
  assert.not.ok(host.has(spec.actorId));
});

test('a constructor that throws is a REMOTE_ERROR and leaves no actor', async () => {
  const spec = createSpec('Failing', { args: ['no resources for you'] });
  const err = (await rejection(host.create(spec))) as RemoteError;
  assert.instance(err, RemoteError);
  assert.is(err.remoteName, 'RangeError');
  assert.is(err.message, 'no resources for you');
  assert.match(err.remoteStack ?? '', /new Failing/);
  assert.not.ok(host.has(spec.actorId));
  assert.not.ok(broker.hasInterest(subjects('default').actorCall(spec.actorId)));
});

test('kill unsubscribes the actor and fails the calls in its mailbox with ACTOR_DIED', async () => {
  const id = await spawn('Slow');
  const running = rejection(call(bus, id, 'work', 'a', 50));
  const queued = rejection(call(bus, id, 'work', 'b'));
  await waitFor(async () => host.load(id)?.inFlight === 1 && host.load(id)?.waiting === 1);
  assert.ok(host.kill(id));
  for (const err of await Promise.all([running, queued])) {
    assert.instance(err, ActorDiedError);
    assert.is(err.code, 'ACTOR_DIED');
    assert.is((err as ActorDiedError).deathCause, 'killed');
  }
  assert.not.ok(host.has(id));
  assert.not.ok(broker.hasInterest(subjects('default').actorCall(id)));
  assert.is((await rejection(call(bus, id, 'log'))).code, 'NO_RESPONDERS');
  assert.is(host.kill(id), false);
});

test('getRuntimeContext inside a constructor and methods gives the node and the actor', async () => {
  const id = await spawn('Counter');
  const expected = { nodeId: node.nodeId, nodeName: node.nodeName, labels: node.labels, actorId: id };
  assert.equal(await call(bus, id, 'context'), expected);
  assert.equal(await call(bus, id, 'contextAfterAwait'), expected);
  const other = await spawn('Counter');
  assert.equal(await call(bus, other, 'context'), { ...expected, actorId: other });
});

test('creating the same incarnation twice is one actor; a new incarnation replaces the old', async () => {
  const spec = createSpec('Counter');
  await Promise.all([host.create(spec), host.create(spec)]);
  assert.is(await call(bus, spec.actorId, 'increment'), 1);
  await host.create(spec);
  assert.is(await call(bus, spec.actorId, 'increment'), 2);
  await host.create({ ...spec, incarnation: 1 });
  assert.is(await call(bus, spec.actorId, 'increment'), 1);
});

/** An actor_call of `echo` whose one argument is extension 0x41 holding `data` (hand-made bytes). */
function refCall(data: number[]): Uint8Array {
  const good = encode('actor_call', { method: 'echo', args: [null] });
  const head = good.subarray(0, good.length - 1); // drop the nil argument
  const ext = data.length === 1 || data.length === 2 || data.length === 4 || data.length === 8 || data.length === 16 ? [{ 1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8 }[data.length]!, 0x41, ...data] : [0xc7, data.length, 0x41, ...data];
  return Uint8Array.from([...head, ...ext]);
}

test('malformed calls get typed wire errors and never hurt the actor', async () => {
  const id = await spawn('Counter');
  const subject = subjects('default').actorCall(id);
  const cases: [string, Uint8Array][] = [
    ['MALFORMED', new Uint8Array([0xc1, 0x00, 0xff])],
    ['MALFORMED', encode('actor_call', { method: 'get', args: [] }).slice(0, 5)],
    ['VERSION_MISMATCH', new Uint8Array([0x83, 0xa1, 0x76, 0x09, 0xa1, 0x74, 0xaa, ...Buffer.from('actor_call'), 0xa1, 0x62, 0x80])],
    ['UNKNOWN_TYPE', encode('heartbeat', { nodeId: 'x', seq: 1, available: {} })],
    ['INVALID_MESSAGE', encode('actor_call', { method: '', args: [] })],
    ['INVALID_MESSAGE', encode('actor_call', { method: 'get', args: 'nope' })],
    ['TOO_LARGE', new Uint8Array(1024 * 1024 + 1)],
    // an actor reference (extension 0x41) that is not [actorId, namespace]: a hostile or broken peer's
    ['MALFORMED', refCall([0x92, 0x01, 0xa2, 0x6e, 0x73])],
    ['MALFORMED', refCall([0xa3, 0x61, 0x62, 0x63])],
  ];
  const before = host.malformed.total;
  for (const [code, data] of cases) {
    const msg = await bus.request(subject, data, { timeoutMs: 5000 });
    assert.is((await rejection(Promise.resolve().then(() => decodeReply(msg.data, { value: unknown() })))).code, code);
  }
  assert.is(host.malformed.total - before, cases.length);
  bus.publish(subject, new Uint8Array([1, 2, 3]));
  assert.is(await call(bus, id, 'increment'), 1);
});

test('a result that cannot be sent is answered with its encoding error', async () => {
  const id = await spawn('Counter');
  assert.is((await rejection(call(bus, id, 'big', 2 * 1024 * 1024))).code, 'TOO_LARGE');
  assert.is(await call(bus, id, 'increment'), 1);
});

test('stop kills every actor and refuses new ones', async () => {
  const other = new ActorHost({ bus, node });
  const spec = createSpec('Counter');
  await other.create(spec);
  other.stop();
  assert.is(other.size, 0);
  assert.not.ok(broker.hasInterest(subjects('default').actorCall(spec.actorId)));
  assert.is((await rejection(other.create(createSpec('Counter')))).code, 'ACTOR_DIED');
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setImmediate(resolve));
}

test('fenced, the host answers no call (callers see NO_RESPONDERS) and keeps its actors; unfenced, it answers again with their state', async () => {
  const fenced = new ActorHost({ bus, node });
  const before = createSpec('Counter', { args: [5] });
  await fenced.create(before);
  assert.is(await call(bus, before.actorId, 'increment'), 6);
  fenced.fence();
  const during = createSpec('Counter');
  await fenced.create(during); // created while fenced: not subscribed either
  for (const id of [before.actorId, during.actorId]) {
    const err = (await rejection(call(bus, id, 'get'))) as { code?: string };
    assert.is(err.code, 'NO_RESPONDERS', id);
  }
  assert.ok(fenced.has(before.actorId) && fenced.has(during.actorId));
  fenced.unfence();
  assert.is(await call(bus, before.actorId, 'increment'), 7);
  assert.is(await call(bus, during.actorId, 'get'), 0);
  fenced.stop();
});

test('a call the bus routed to the host before it fenced itself is answered ACTOR_FENCED and does not run; unfenced, the actor has not seen it', async () => {
  const fenced = new ActorHost({ bus, node });
  const spec = createSpec('Counter', { args: [5] });
  await fenced.create(spec);
  const racing = call(bus, spec.actorId, 'increment'); // routed to the actor's subscription, not delivered yet
  fenced.fence();
  const err = await rejection(racing);
  assert.instance(err, ActorFencedError);
  assert.is(err.code, 'ACTOR_FENCED');
  assert.equal(err.detail, { actorId: spec.actorId });
  // the draining subscription has ended: calls made now meet nobody
  assert.is((await rejection(call(bus, spec.actorId, 'get'))).code, 'NO_RESPONDERS');
  fenced.unfence();
  assert.is(await call(bus, spec.actorId, 'get'), 5, 'the fenced call did not run');
  fenced.stop();
});

test('an actor class exported only as what defineActor returned (the decorated form) is created and called', async () => {
  const id = await spawn('Probe', { moduleUrl: DECORATED_URL, args: ['first'] });
  assert.equal(await call(bus, id, 'note', 'a'), { label: 'first', seen: ['a'] });
  assert.equal(await call(bus, id, 'note', 'b'), { label: 'first', seen: ['a', 'b'] });
  assert.equal(await call(bus, id, 'where'), { nodeId: node.nodeId, actorId: id });
});

test('a definition exported under another name than its class is CODE_LOAD_FAILED naming the export to rename', async () => {
  const spec = createSpec('Hidden', { moduleUrl: DECORATED_URL });
  const err = (await rejection(host.create(spec))) as CodeLoadError;
  assert.instance(err, CodeLoadError);
  assert.match(String(err.detail.reason), /the export "Renamed" defines the class "Hidden"/);
  assert.not.ok(host.has(spec.actorId));
});

test('node:, data: and https: modules are CODE_SOURCE_REFUSED and never imported', async () => {
  const flag = '__orreryHostSpecImported';
  const cases = [
    { moduleUrl: 'node:child_process', className: 'ChildProcess', scheme: 'node:' },
    { moduleUrl: `data:text/javascript,globalThis.${flag}=true;export class X {}`, className: 'X', scheme: 'data:' },
    { moduleUrl: 'https://example.com/actors.js', className: 'X', scheme: 'https:' },
  ];
  for (const c of cases) {
    const spec = createSpec(c.className, { moduleUrl: c.moduleUrl });
    const err = (await rejection(host.create(spec))) as CodeSourceRefusedError;
    assert.instance(err, CodeSourceRefusedError, c.moduleUrl);
    assert.is(err.code, 'CODE_SOURCE_REFUSED');
    assert.is(err.detail.scheme, c.scheme);
    assert.not.ok(host.has(spec.actorId));
  }
  assert.is((globalThis as Record<string, unknown>)[flag], undefined, 'the data: module never ran');
});

test('with code roots a host loads files under them only, following symbolic links as the loader does', async () => {
  const fixtures = dirname(fileURLToPath(FIXTURES_URL));
  const outside = mkdtempSync(join(tmpdir(), 'orrery-roots-'));
  const rooted = new ActorHost({ bus, node, codeSources: { roots: [fixtures] } });
  const elsewhere = new ActorHost({ bus, node, codeSources: { roots: [outside] } });
  try {
    const inside = createSpec('Counter', { args: [4] });
    await rooted.create(inside);
    assert.is(await call(bus, inside.actorId, 'get'), 4);

    const refused = createSpec('Counter');
    const err = (await rejection(elsewhere.create(refused))) as CodeSourceRefusedError;
    assert.instance(err, CodeSourceRefusedError);
    assert.is(err.detail.reason, 'outside the code roots of this node');
    assert.not.ok(elsewhere.has(refused.actorId));

    // a link inside the root to a module outside it names a path under the root, but is refused
    const link = join(outside, 'actors-link.ts');
    symlinkSync(fileURLToPath(FIXTURES_URL), link);
    const linked = createSpec('Counter', { moduleUrl: pathToFileURL(link).href });
    const viaLink = (await rejection(elsewhere.create(linked))) as CodeSourceRefusedError;
    assert.instance(viaLink, CodeSourceRefusedError);
    assert.is(viaLink.detail.reason, 'outside the code roots of this node');
  } finally {
    rooted.stop();
    elsewhere.stop();
    rmSync(outside, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// cancelled calls (cancel_call): only the caller's key stops a call, waiting or running

const KEY = '0123456789abcdef0123456789abcdef';
let nextCallId = 0;
const newCallId = (): string => (++nextCallId).toString(16).padStart(32, 'c');

/** Sends a call with a call id and KEY, as a handle given a signal does; its answer, or the error. */
function keyedCall(id: string, callId: string, method: string, ...args: unknown[]): Promise<unknown> {
  return bus
    .request(subjects('default').actorCall(id), encode('actor_call', { method, args, callId, cancelKey: KEY }), { timeoutMs: 5000 })
    .then((msg) => decodeReply(msg.data, { value: unknown() }))
    .catch((err: unknown) => err);
}
const cancel = (id: string, callId: string, cancelKey = KEY): void => bus.publish(subjects('default').actorCall(id), encode('cancel_call', { callId, cancelKey }));

test('a cancelled call waiting in the mailbox is answered ABORTED at once and never runs; the calls behind it do', async () => {
  const id = await spawn('Gate');
  const holding = call(bus, id, 'hold', 'first');
  const waitingId = newCallId();
  const waiting = keyedCall(id, waitingId, 'record', 'cancelled');
  const behind = call(bus, id, 'record', 'behind');
  await until('both wait behind hold', () => (host.load(id)?.waiting === 2 ? true : undefined));
  const before = { ...host.cancels };
  cancel(id, waitingId);
  const err = (await waiting) as { code?: string; message?: string };
  assert.is(err.code, 'ABORTED');
  assert.match(err.message ?? '', /Gate\.record was cancelled by its caller before it started; it did not run/);
  assert.is(host.cancels.dropped - before.dropped, 1);
  openAllGates();
  assert.is(await holding, 'first');
  assert.is(await behind, 'behind');
  assert.equal(await call(bus, id, 'log'), ['first', 'behind']);
});

test("a running call's signal aborts on its cancel, with ABORTED as the reason; its answer still comes", async () => {
  const id = await spawn('Gate', { maxConcurrency: 2 });
  const callId = newCallId();
  const running = keyedCall(id, callId, 'untilAborted', 'long');
  await until('it runs', () => (host.load(id)?.inFlight === 1 ? true : undefined));
  const before = { ...host.cancels };
  cancel(id, callId);
  assert.is(await running, 'aborted: call Gate.untilAborted was cancelled by its caller');
  assert.is(host.cancels.signalled - before.signalled, 1);
  // answered: a late cancel finds nothing
  cancel(id, callId);
  await until('the late cancel is counted', () => (host.cancels.unmatched > before.unmatched ? true : undefined));
});

test('a running call cancelled before its method looked at its signal finds it aborted when it looks', async () => {
  const id = await spawn('Gate');
  const callId = newCallId();
  const running = keyedCall(id, callId, 'holdThenSignal', 'late look');
  await until('it runs', () => (host.load(id)?.inFlight === 1 ? true : undefined));
  const before = { ...host.cancels };
  cancel(id, callId);
  await until('the cancel is taken', () => (host.cancels.signalled > before.signalled ? true : undefined));
  openAllGates();
  assert.is(await running, 'aborted: call Gate.holdThenSignal was cancelled by its caller');
  // a call that was not cancelled looks and finds it not aborted
  const other = keyedCall(id, newCallId(), 'holdThenSignal', 'untouched');
  await until('it runs', () => (host.load(id)?.inFlight === 1 ? true : undefined));
  openAllGates();
  assert.is(await other, 'not aborted');
});

test('a cancel with another key, for another call id, or for a call sent without a key changes nothing', async () => {
  const id = await spawn('Gate');
  const holding = call(bus, id, 'hold', 'first');
  const keyedId = newCallId();
  const keyed = keyedCall(id, keyedId, 'record', 'keyed');
  const plain = call(bus, id, 'record', 'plain');
  await until('both wait behind hold', () => (host.load(id)?.waiting === 2 ? true : undefined));
  const before = { ...host.cancels };
  cancel(id, keyedId, 'f'.repeat(32)); // the right call, a wrong key
  cancel(id, newCallId()); // the right key, no such call
  // the plain call has no id: nothing names it
  await until('three cancels seen', () => (host.cancels.unmatched - before.unmatched === 2 ? true : undefined));
  assert.is(host.cancels.dropped, before.dropped);
  assert.is(host.cancels.signalled, before.signalled);
  openAllGates();
  assert.is(await holding, 'first');
  assert.is(await keyed, 'keyed');
  assert.is(await plain, 'plain');
  assert.equal(await call(bus, id, 'log'), ['first', 'keyed', 'plain']);
});

test('a malformed cancel_call is counted and changes nothing', async () => {
  const id = await spawn('Gate');
  const holding = call(bus, id, 'hold', 'first');
  const keyedId = newCallId();
  const keyed = keyedCall(id, keyedId, 'record', 'keyed');
  await until('it waits behind hold', () => (host.load(id)?.waiting === 1 ? true : undefined));
  const before = host.malformed.total;
  const subject = subjects('default').actorCall(id);
  bus.publish(subject, encode('cancel_call', { callId: keyedId, cancelKey: KEY.toUpperCase() }));
  bus.publish(subject, encode('cancel_call', { callId: keyedId } as never));
  bus.publish(subject, Uint8Array.of(0xc1, 0x00));
  await until('three malformed', () => (host.malformed.total - before === 3 ? true : undefined));
  openAllGates();
  assert.is(await holding, 'first');
  assert.is(await keyed, 'keyed');
});

test("a method's runtime context has a signal that never aborts when its call cannot be cancelled, kept out of the context's fields", async () => {
  const id = await spawn('Gate');
  assert.equal(await call(bus, id, 'signal'), { present: true, aborted: false, enumerable: false });
  assert.equal(await keyedCall(id, newCallId(), 'signal'), { present: true, aborted: false, enumerable: false });
});

test.run();
