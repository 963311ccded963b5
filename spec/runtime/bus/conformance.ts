import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import type { Bus, BusMsg, BusStatus } from '../../../runtime/bus/bus.ts';
import { ConnectionLostError, NoRespondersError, TimeoutError } from '../../../runtime/bus/errors.ts';

/**
 * The behaviour every Bus must share, run against the memory bus and a real nats-server. Each test
 * opens its own connections through `connect` and uses subjects under a fresh prefix.
 */
export interface BusUnderTest {
  connect(): Promise<Bus>;
  /**
   * Takes the server down (abruptly) and brings it back at the same address, for the
   * dropped-connection cases; a bus with no connection to lose (memory) has none and skips them.
   */
  outage?: { down(): Promise<void>; up(): Promise<void> };
  before?(): Promise<void>;
  after?(): Promise<void>;
}

/** Bound of a wait across a server outage (reconnection is attempted every 250 ms). */
const OUTAGE_WAIT_MS = 20_000;
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const read = (m: BusMsg): string => new TextDecoder().decode(m.data);

/** How long the stall cases hold the process: well past their requests' 100-ms timeouts. */
const STALL_FOR_MS = 600;

/** Holds this process's event loop, as a stalled process is held. */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Bounds a wait on a real condition, so a broken bus fails the test instead of hanging the suite. */
function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), ms)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Collects messages and resolves `reached(n)` once `n` have arrived. */
function collector() {
  const got: BusMsg[] = [];
  const waiters: { n: number; resolve(): void }[] = [];
  return {
    got,
    handler: (m: BusMsg) => {
      got.push(m);
      for (const w of waiters) if (got.length >= w.n) w.resolve();
    },
    reached: (n: number, what = `${n} messages`) =>
      within(
        new Promise<void>((resolve) => (got.length >= n ? resolve() : waiters.push({ n, resolve }))),
        what,
      ),
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}

export function runBusConformance(name: string, target: BusUnderTest): void {
  const test = suite<{ open: Bus[]; prefix: string }>(`bus conformance: ${name}`, { open: [], prefix: '' });
  let run = 0;
  const connect = async (ctx: { open: Bus[] }) => {
    const bus = await target.connect();
    ctx.open.push(bus);
    return bus;
  };
  /** A round trip through `sub`'s connection: everything published to it before has been handled. */
  const sync = async (ctx: { open: Bus[]; prefix: string }, pub: Bus, sub: Bus) => {
    const subject = `${ctx.prefix}.sync`;
    const s = sub.subscribe(subject, (m) => m.respond(m.data));
    await sub.flush();
    await within(pub.request(subject, text('sync'), { timeoutMs: 5000 }), 'sync reply');
    s.unsubscribe();
  };

  if (target.before) test.before(target.before);
  if (target.after) test.after(target.after);
  test.before.each((ctx) => {
    ctx.open = [];
    ctx.prefix = `t${++run}x${process.pid}`;
  });
  test.after.each(async (ctx) => {
    await Promise.all(ctx.open.map((b) => b.close()));
  });

  test('delivers to an exact subject with data intact and no reply subject', async (ctx) => {
    const [pub, sub] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    sub.subscribe(`${ctx.prefix}.exact`, c.handler);
    await sub.flush();
    pub.publish(`${ctx.prefix}.exact`, text('one'));
    pub.publish(`${ctx.prefix}.exact`, new Uint8Array([0, 255, 7]));
    await c.reached(2);
    assert.equal(c.got.map((m) => m.subject), [`${ctx.prefix}.exact`, `${ctx.prefix}.exact`]);
    assert.is(read(c.got[0]), 'one');
    assert.equal([...c.got[1].data], [0, 255, 7]);
    assert.is(c.got[0].reply, undefined);
    assert.is(c.got[0].respond(text('x')), false);
  });

  const wildcardCases: { pattern: string; want: string[] }[] = [
    { pattern: 'w.*', want: ['w.b'] },
    { pattern: 'w.*.c', want: ['w.b.c', 'w.bb.c'] },
    { pattern: 'w.>', want: ['w.b', 'w.b.c', 'w.b.c.d', 'w.bb.c'] },
    { pattern: 'w.b.>', want: ['w.b.c', 'w.b.c.d'] },
    { pattern: 'w.b.c', want: ['w.b.c'] },
    { pattern: '*.b', want: ['w.b', 'x.b'] },
  ];
  const published = ['w', 'w.b', 'w.b.c', 'w.b.c.d', 'x.b', 'w.bb.c', 'wb'];

  test("matches '*' as one token and '>' as one or more trailing tokens, nothing else", async (ctx) => {
    const [pub, sub] = [await connect(ctx), await connect(ctx)];
    const got = new Map<string, string[]>();
    for (const c of wildcardCases) {
      const seen: string[] = [];
      got.set(c.pattern, seen);
      sub.subscribe(`${ctx.prefix}.${c.pattern}`, (m) => seen.push(m.subject.slice(ctx.prefix.length + 1)));
    }
    await sub.flush();
    for (const s of published) pub.publish(`${ctx.prefix}.${s}`, text(s));
    await sync(ctx, pub, sub);
    for (const c of wildcardCases) assert.equal(got.get(c.pattern), c.want, c.pattern);
  });

  test('a queue group gets each message once, shared among members; plain subscribers get every one', async (ctx) => {
    const [pub, a, b] = [await connect(ctx), await connect(ctx), await connect(ctx)];
    const subject = `${ctx.prefix}.work`;
    const [workerA, workerB, solo, plain] = [collector(), collector(), collector(), collector()];
    a.subscribe(subject, workerA.handler, { queue: 'workers' });
    b.subscribe(subject, workerB.handler, { queue: 'workers' });
    b.subscribe(subject, solo.handler, { queue: 'auditors' });
    a.subscribe(subject, plain.handler);
    await Promise.all([a.flush(), b.flush()]);
    for (let i = 0; i < 100; i++) pub.publish(subject, text(String(i)));
    await plain.reached(100);
    await solo.reached(100);
    await sync(ctx, pub, a);
    await sync(ctx, pub, b);
    const shared = [...workerA.got, ...workerB.got].map(read);
    assert.is(shared.length, 100);
    assert.is(new Set(shared).size, 100);
    assert.ok(workerA.got.length > 0 && workerB.got.length > 0, `split ${workerA.got.length}/${workerB.got.length}`);
  });

  test('request resolves with the first reply', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    let seenReply: string | undefined;
    server.subscribe(`${ctx.prefix}.echo`, (m) => {
      seenReply = m.reply;
      m.respond(text(`echo:${read(m)}`));
    });
    await server.flush();
    const answer = await within(client.request(`${ctx.prefix}.echo`, text('hi'), { timeoutMs: 5000 }), 'echo');
    assert.is(read(answer), 'echo:hi');
    assert.type(seenReply, 'string');
    assert.is(answer.subject, seenReply);
  });

  test('requestCallback calls back after it returned, with the answer — or with the error request() rejects with', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    server.subscribe(`${ctx.prefix}.cb`, (m) => m.respond(text(`cb:${read(m)}`)));
    await server.flush();
    /** Runs one requestCallback; records whether the callback came before it returned. */
    const viaCallback = (subject: string, timeoutMs = 5000) => {
      const calls: { err?: Error; msg?: BusMsg }[] = [];
      let returned = false;
      let early = false;
      const done = new Promise<void>((resolve) =>
        client.requestCallback(subject, text('hi'), { timeoutMs }, (err, msg) => {
          if (!returned) early = true;
          calls.push({ err, msg });
          resolve();
        }),
      );
      returned = true;
      return within(done, `callback of ${subject}`).then(() => ({ calls, early }));
    };
    const answered = await viaCallback(`${ctx.prefix}.cb`);
    assert.is(answered.early, false);
    assert.is(answered.calls.length, 1);
    assert.is(answered.calls[0]!.err, undefined);
    assert.is(read(answered.calls[0]!.msg!), 'cb:hi');

    const nobody = await viaCallback(`${ctx.prefix}.nobody`);
    assert.instance(nobody.calls[0]!.err, NoRespondersError);
    assert.is(nobody.calls[0]!.msg, undefined);

    const invalid = await viaCallback(`${ctx.prefix}..bad`);
    assert.is(invalid.early, false, 'even an invalid subject is reported later, not thrown');
    assert.is((invalid.calls[0]!.err as OrreryError).code, 'INVALID_SUBJECT');

    server.subscribe(`${ctx.prefix}.silent`, () => {});
    await server.flush();
    const silent = await viaCallback(`${ctx.prefix}.silent`, 50);
    assert.instance(silent.calls[0]!.err, TimeoutError);

    await client.close();
    const closed = await viaCallback(`${ctx.prefix}.cb`);
    assert.is(closed.early, false);
    assert.is((closed.calls[0]!.err as OrreryError).code, 'BUS_CLOSED');
    for (const r of [answered, nobody, invalid, silent, closed]) assert.is(r.calls.length, 1);
  });

  test('a request nobody subscribes to fails with NO_RESPONDERS', async (ctx) => {
    const client = await connect(ctx);
    const err = await rejection(client.request(`${ctx.prefix}.nobody`, text('?'), { timeoutMs: 5000 }));
    assert.instance(err, NoRespondersError);
    assert.is((err as OrreryError).code, 'NO_RESPONDERS');
    assert.is((err as NoRespondersError).subject, `${ctx.prefix}.nobody`);
  });

  test('NO_RESPONDERS once the responder has left, and answers again once one is back', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const subject = `${ctx.prefix}.fickle`;
    const first = server.subscribe(subject, (m) => m.respond(text('first')));
    await server.flush();
    assert.is(read(await within(client.request(subject, text('?'), { timeoutMs: 5000 }), 'first answer')), 'first');
    first.unsubscribe();
    await server.flush();
    const err = await rejection(client.request(subject, text('?'), { timeoutMs: 5000 }));
    assert.instance(err, NoRespondersError);
    assert.is((err as NoRespondersError).subject, subject);
    server.subscribe(subject, (m) => m.respond(text('second')));
    await server.flush();
    assert.is(read(await within(client.request(subject, text('?'), { timeoutMs: 5000 }), 'second answer')), 'second');
  });

  test('an empty answer is an answer, not NO_RESPONDERS', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    server.subscribe(`${ctx.prefix}.empty`, (m) => m.respond(new Uint8Array(0)));
    await server.flush();
    const answer = await within(client.request(`${ctx.prefix}.empty`, text('?'), { timeoutMs: 5000 }), 'empty answer');
    assert.is(answer.data.length, 0);
  });

  test('concurrent requests each get their own answer, even when answered in reverse order', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const n = 200;
    const held: BusMsg[] = [];
    server.subscribe(`${ctx.prefix}.batch`, (m) => {
      held.push(m);
      if (held.length === n) for (const h of held.reverse()) h.respond(text(`re:${read(h)}`));
    });
    await server.flush();
    const answers = await within(
      Promise.all(Array.from({ length: n }, (_, i) => client.request(`${ctx.prefix}.batch`, text(String(i)), { timeoutMs: 5000 }))),
      `${n} answers`,
    );
    assert.equal(answers.map(read), Array.from({ length: n }, (_, i) => `re:${i}`));
    assert.is(new Set(answers.map((a) => a.subject)).size, n, 'a reply subject per request');
  });

  test('a request nobody answers fails with TIMEOUT', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    server.subscribe(`${ctx.prefix}.silent`, c.handler);
    await server.flush();
    const started = Date.now();
    const err = await rejection(client.request(`${ctx.prefix}.silent`, text('?'), { timeoutMs: 100 }));
    assert.instance(err, TimeoutError);
    assert.is((err as OrreryError).code, 'TIMEOUT');
    assert.is((err as TimeoutError).subject, `${ctx.prefix}.silent`);
    assert.is((err as TimeoutError).timeoutMs, 100);
    assert.ok(Date.now() - started >= 90, 'waited for the timeout');
    assert.is(c.got.length, 1);
  });

  test('an answer that reached the requester while its process was stalled past the timeout settles the request, not TIMEOUT', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    server.subscribe(`${ctx.prefix}.stall`, async (m) => {
      m.respond(text('answered in time'));
      await null; // the answer is written (nats.js flushes in a microtask; the memory broker delivers in its next pass)
      // then this process stalls — a long GC, a blocked loop, a freeze — well past the request's timeout:
      // the answer waits unread, and Node.js runs expired timers before it reads
      busyFor(STALL_FOR_MS);
    });
    await server.flush();
    const started = performance.now();
    const answer = await within(client.request(`${ctx.prefix}.stall`, text('?'), { timeoutMs: 100 }), 'the answer');
    assert.is(read(answer), 'answered in time');
    assert.ok(performance.now() - started >= STALL_FOR_MS, 'the process did stall past the timeout');
  });

  test('a process that stays overloaded still times out: a late timer waits at most its timeout again', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    server.subscribe(`${ctx.prefix}.silent`, c.handler);
    await server.flush();
    // every turn of the loop holds it 80 ms, so every timer fires late
    let overloaded = true;
    const hold = (): void => {
      if (!overloaded) return;
      busyFor(80);
      setImmediate(hold);
    };
    const started = performance.now();
    const err = rejection(client.request(`${ctx.prefix}.silent`, text('?'), { timeoutMs: 100 }));
    setImmediate(hold);
    try {
      // without a bound on the looks it would wait as long as the overload lasts: here, for ever
      const failed = await within(err, 'the TIMEOUT while overloaded', 3000);
      assert.is((failed as OrreryError).code, 'TIMEOUT');
      assert.ok(performance.now() - started >= 100, 'not before its timeout');
    } finally {
      overloaded = false;
    }
  });

  test('an answer after its request timed out is dropped and settles no other request', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    server.subscribe(`${ctx.prefix}.late`, c.handler);
    await server.flush();
    const err = await rejection(client.request(`${ctx.prefix}.late`, text('one'), { timeoutMs: 50 }));
    assert.is((err as OrreryError).code, 'TIMEOUT');
    const second = client.request(`${ctx.prefix}.late`, text('two'), { timeoutMs: 5000 });
    await c.reached(2);
    assert.is.not(c.got[0].reply, c.got[1].reply);
    c.got[0].respond(text('late answer to one'));
    await server.flush();
    c.got[1].respond(text('answer to two'));
    assert.is(read(await within(second, 'answer to two')), 'answer to two');
  });

  test('a reply subject is used again once its answer arrived, and never again after its request timed out', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const silent = collector();
    server.subscribe(`${ctx.prefix}.echo`, (m) => m.respond(text(`re:${read(m)}`)));
    server.subscribe(`${ctx.prefix}.silent`, silent.handler);
    await server.flush();
    const ask = (body: string) => within(client.request(`${ctx.prefix}.echo`, text(body), { timeoutMs: 5000 }), `answer to ${body}`);
    const first = await ask('one');
    const second = await ask('two');
    assert.is(read(second), 're:two');
    assert.is(second.subject, first.subject, 'an answered request frees its reply subject for the next');
    // the freed subject goes to the next request, which times out: from then on it is retired
    assert.is((await rejection(client.request(`${ctx.prefix}.silent`, text('?'), { timeoutMs: 50 })) as OrreryError).code, 'TIMEOUT');
    assert.is(silent.got[0].reply, first.subject);
    const third = client.request(`${ctx.prefix}.echo`, text('three'), { timeoutMs: 5000 });
    silent.got[0].respond(text('late answer to the silent request'));
    await server.flush();
    const answer = await within(third, 'answer to three');
    assert.is(read(answer), 're:three', 'the late answer settled nothing');
    assert.is.not(answer.subject, first.subject, 'a timed-out reply subject is not used again');
  });

  test('close() fails pending requests with BUS_CLOSED, as it does requests made while closing or after', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    server.subscribe(`${ctx.prefix}.hold`, c.handler);
    await server.flush();
    // rejection() takes each promise at once, so no rejection goes unhandled while close() runs.
    const pending = [1, 2, 3].map((i) => rejection(client.request(`${ctx.prefix}.hold`, text(String(i)), { timeoutMs: 60_000 })));
    await c.reached(3);
    const closing = client.close();
    const during = await rejection(client.request(`${ctx.prefix}.hold`, text('during'), { timeoutMs: 60_000 }));
    assert.is((during as OrreryError).code, 'BUS_CLOSED');
    await within(closing, 'close');
    for (const p of pending) {
      const err = await within(p, 'pending request settled');
      assert.instance(err, OrreryError);
      assert.is((err as OrreryError).code, 'BUS_CLOSED');
    }
    const after = await rejection(client.request(`${ctx.prefix}.hold`, text('after'), { timeoutMs: 60_000 }));
    assert.is((after as OrreryError).code, 'BUS_CLOSED');
  });

  test('unsubscribe stops delivery at once, even mid-stream, and resolves closed', async (ctx) => {
    const [pub, sub] = [await connect(ctx), await connect(ctx)];
    const seen: string[] = [];
    const s = sub.subscribe(`${ctx.prefix}.stream`, (m) => {
      seen.push(read(m));
      if (seen.length === 3) s.unsubscribe();
    });
    let lateDeliveries = 0;
    const early = sub.subscribe(`${ctx.prefix}.stream`, () => lateDeliveries++);
    early.unsubscribe();
    await sub.flush();
    for (let i = 0; i < 10; i++) pub.publish(`${ctx.prefix}.stream`, text(String(i)));
    await within(s.closed, 'subscription closed');
    await within(early.closed, 'early subscription closed');
    await sync(ctx, pub, sub);
    assert.equal(seen, ['0', '1', '2']);
    assert.is(lateDeliveries, 0);
  });

  test('drain delivers the messages already on their way, then ends: requests sent before it are answered, later ones find no responder', async (ctx) => {
    const [client, server] = [await connect(ctx), await connect(ctx)];
    const s = server.subscribe(`${ctx.prefix}.drain`, (m) => m.respond(text(`ok:${read(m)}`)));
    await server.flush();
    // sent before the drain starts; the server has routed them to the subscription
    const before = [1, 2, 3].map((i) => client.request(`${ctx.prefix}.drain`, text(String(i)), { timeoutMs: 5000 }));
    await client.flush();
    const drained = s.drain();
    const answers = await within(Promise.all(before), 'answers to the requests sent before the drain');
    assert.equal(answers.map(read), ['ok:1', 'ok:2', 'ok:3']);
    await within(drained, 'drain');
    await within(s.closed, 'subscription closed');
    await sync(ctx, client, server);
    const after = await rejection(client.request(`${ctx.prefix}.drain`, text('late'), { timeoutMs: 5000 }));
    assert.instance(after, NoRespondersError);
  });

  test('one subscription receives 1,000 messages in publish order', async (ctx) => {
    const [pub, sub] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    sub.subscribe(`${ctx.prefix}.ordered`, c.handler);
    await sub.flush();
    for (let i = 0; i < 1000; i++) pub.publish(`${ctx.prefix}.ordered`, text(String(i)));
    await c.reached(1000);
    assert.equal(c.got.map(read), Array.from({ length: 1000 }, (_, i) => String(i)));
  });

  test('close() on the publisher sends what it published before closing', async (ctx) => {
    const [pub, sub] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    sub.subscribe(`${ctx.prefix}.last`, c.handler);
    await sub.flush();
    for (let i = 0; i < 200; i++) pub.publish(`${ctx.prefix}.last`, text(String(i)));
    await pub.close();
    await c.reached(200);
    assert.is(c.got.length, 200);
  });

  test('close() on the subscriber hands queued messages to handlers, then ends everything', async (ctx) => {
    const [pub, sub] = [await connect(ctx), await connect(ctx)];
    const c = collector();
    const s = sub.subscribe(`${ctx.prefix}.drain`, c.handler);
    await sub.flush();
    for (let i = 0; i < 100; i++) pub.publish(`${ctx.prefix}.drain`, text(String(i)));
    await pub.flush();
    await within(sub.close(), 'drain');
    assert.is(c.got.length, 100);
    await within(s.closed, 'subscription closed by drain');
    await within(sub.closed, 'bus closed');
    try {
      sub.publish(`${ctx.prefix}.drain`, text('late'));
      assert.unreachable('publish after close');
    } catch (err) {
      assert.is((err as OrreryError).code, 'BUS_CLOSED');
    }
  });

  /** Records a bus's onStatus reports; `heard(s)` resolves once `s` has been reported. */
  const statuses = (bus: Bus) => {
    const seen: BusStatus[] = [];
    const waiters: { status: BusStatus; resolve(): void }[] = [];
    bus.onStatus((status) => {
      seen.push(status);
      for (const w of waiters) if (w.status === status) w.resolve();
    });
    return {
      seen,
      heard: (status: BusStatus) =>
        within(new Promise<void>((resolve) => (seen.includes(status) ? resolve() : waiters.push({ status, resolve }))), `status ${status}`, OUTAGE_WAIT_MS),
    };
  };

  const outage = target.outage;
  if (outage) {
    test('a dropped connection fails the requests waiting on it with CONNECTION_LOST, reports disconnected then reconnected, and serves again', async (ctx) => {
      const [client, server] = [await connect(ctx), await connect(ctx)];
      const held = collector();
      server.subscribe(`${ctx.prefix}.svc`, (m) => (read(m) === 'hold' ? held.handler(m) : m.respond(text(`ok:${read(m)}`))));
      await server.flush();
      const heard = statuses(client);
      let removedHeard = 0;
      client.onStatus(() => removedHeard++)();
      const waiting = rejection(client.request(`${ctx.prefix}.svc`, text('hold'), { timeoutMs: 60_000 }));
      await held.reached(1, 'the held request at its responder');
      await outage.down();
      const err = await within(waiting, 'the waiting request failed', OUTAGE_WAIT_MS);
      assert.instance(err, ConnectionLostError);
      assert.is((err as ConnectionLostError).code, 'CONNECTION_LOST');
      assert.is((err as ConnectionLostError).subject, `${ctx.prefix}.svc`);
      await heard.heard('disconnected');
      const serverHeard = statuses(server);
      await outage.up();
      await heard.heard('reconnected');
      await serverHeard.heard('reconnected');
      assert.equal(heard.seen, ['disconnected', 'reconnected']);
      assert.is(removedHeard, 0, 'a listener removed before the drop hears nothing');
      // 'reconnected' means the subscriptions were sent again; a round trip on the responder's
      // connection means the server has them
      await server.flush();
      // the held request's late answer finds nobody waiting; a new request is answered
      held.got[0].respond(text('late'));
      assert.is(read(await within(client.request(`${ctx.prefix}.svc`, text('again'), { timeoutMs: OUTAGE_WAIT_MS }), 'answer after the reconnect')), 'ok:again');
    });

    test('a request made while the connection is down fails at once with CONNECTION_LOST; once it is back, requests are answered', async (ctx) => {
      const bus = await connect(ctx);
      bus.subscribe(`${ctx.prefix}.echo`, (m) => m.respond(m.data));
      await bus.flush();
      const heard = statuses(bus);
      await outage.down();
      await heard.heard('disconnected');
      const err = await within(rejection(bus.request(`${ctx.prefix}.echo`, text('made while down'), { timeoutMs: 60_000 })), 'the request made while down failed', OUTAGE_WAIT_MS);
      assert.instance(err, ConnectionLostError);
      await outage.up();
      await heard.heard('reconnected');
      await bus.flush();
      assert.is(read(await within(bus.request(`${ctx.prefix}.echo`, text('back'), { timeoutMs: OUTAGE_WAIT_MS }), 'answer after the reconnect', OUTAGE_WAIT_MS)), 'back');
    });

    test('close() while the connection is down ends it: closed resolves, and no reconnect outlives it', async (ctx) => {
      const bus = await connect(ctx);
      bus.subscribe(`${ctx.prefix}.echo`, (m) => m.respond(m.data));
      assert.is(read(await bus.request(`${ctx.prefix}.echo`, text('up'), { timeoutMs: 5000 })), 'up', 'the inbox is open');
      const heard = statuses(bus);
      await outage.down();
      await heard.heard('disconnected');
      // a closing driver whose server is gone: close() must not wait for a server that may never return
      await within(bus.close(), 'close() while disconnected', OUTAGE_WAIT_MS);
      await within(bus.closed, 'the bus closed', OUTAGE_WAIT_MS);
      await outage.up();
      const err = await rejection(bus.request(`${ctx.prefix}.echo`, text('after'), { timeoutMs: 1000 }));
      assert.is((err as { code?: string }).code, 'BUS_CLOSED', 'a closed bus stays closed once the server is back');
      assert.equal(heard.seen, ['disconnected'], 'it never reconnected');
    });
  }

  test.run();
}
