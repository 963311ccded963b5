/**
 * requestBatch on a real nats-server: several requests in one message, each settled by its own
 * answer — as it would be alone — and never by an answer meant for another request.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BatchRequest, Bus, BusMsg } from '../../runtime/bus/bus.ts';
import { NoRespondersError, TimeoutError } from '../../runtime/bus/errors.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { CALL_BATCH_CODEC, decodeCallBatch, encodeReplyBatch } from '../../protocols/call-batch.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

let server: NatsServerHandle;
const buses: Bus[] = [];
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const read = (m: BusMsg): string => new TextDecoder().decode(m.data);

test.before(async () => {
  server = await startNatsServer();
});
test.after(async () => {
  await Promise.all(buses.map((b) => b.close().catch(() => undefined)));
  await server.stop();
});

async function connect(): Promise<Bus> {
  const bus = await connectNatsBus({ servers: server.url, name: 'orrery-bus-batch-spec' });
  buses.push(bus);
  return bus;
}

type Outcome = { err?: Error; msg?: BusMsg };

/** `bodies` as one batch; each outcome settles its promise (and records how often its callback ran). */
function batch(bus: Bus, subject: string, bodies: string[], timeoutMs = 10_000): { outcomes: Promise<Outcome>[]; calls: number[] } {
  const calls = bodies.map(() => 0);
  const requests: BatchRequest[] = [];
  const outcomes = bodies.map(
    (body, i) =>
      new Promise<Outcome>((resolve) => {
        requests.push({ data: text(body), timeoutMs, done: (err, msg) => (calls[i]!++, resolve({ err, msg })) });
      }),
  );
  bus.requestBatch!(subject, requests, CALL_BATCH_CODEC);
  return { outcomes, calls };
}

/** A responder that hands every batch it gets to `onBatch`, with its tokens and bodies. */
function responder(bus: Bus, subject: string, onBatch: (msg: BusMsg, tokens: string[], bodies: string[]) => void): void {
  bus.subscribe(subject, (msg) => {
    const b = decodeCallBatch(msg.data);
    onBatch(msg, b.tokens, b.calls.map((c) => new TextDecoder().decode(c)));
  });
}

test('one message carries the batch; each request gets its own answer, by token, across several answer messages', async () => {
  const [client, host] = [await connect(), await connect()];
  let messages = 0;
  responder(host, 'batch.echo', (msg, tokens, bodies) => {
    messages++;
    // the last two first, in reverse order, then the first one in a message of its own
    msg.respond(encodeReplyBatch([tokens[2]!, tokens[1]!], [text(`re:${bodies[2]}`), text(`re:${bodies[1]}`)]));
    msg.respond(encodeReplyBatch([tokens[0]!], [text(`re:${bodies[0]}`)]));
  });
  await host.flush();
  const { outcomes, calls } = batch(client, 'batch.echo', ['a', 'b', 'c']);
  const got = await Promise.all(outcomes);
  assert.equal(got.map((o) => read(o.msg!)), ['re:a', 're:b', 're:c']);
  assert.equal(got.map((o) => o.err), [undefined, undefined, undefined]);
  assert.is(messages, 1);
  await client.flush();
  assert.equal(calls, [1, 1, 1]);
});

test('an answer for a token of no request of the batch settles nothing; a token answered twice counts once', async () => {
  const [client, host] = [await connect(), await connect()];
  const batches: { msg: BusMsg; tokens: string[] }[] = [];
  responder(host, 'batch.hold', (msg, tokens) => batches.push({ msg, tokens }));
  await host.flush();
  const first = batch(client, 'batch.hold', ['1', '2']);
  const second = batch(client, 'batch.hold', ['3']);
  await until('both batches at the host', () => (batches.length === 2 ? true : undefined));
  const [one, two] = batches as [(typeof batches)[0], (typeof batches)[0]];
  // the first batch's reply subject names the second batch's token: not its request, ignored
  one.msg.respond(encodeReplyBatch([two.tokens[0]!, one.tokens[0]!], [text('wrong'), text('right:1')]));
  one.msg.respond(encodeReplyBatch([one.tokens[0]!, one.tokens[1]!], [text('again:1'), text('right:2')]));
  two.msg.respond(encodeReplyBatch([two.tokens[0]!], [text('right:3')]));
  const got = await Promise.all([...first.outcomes, ...second.outcomes]);
  assert.equal(got.map((o) => read(o.msg!)), ['right:1', 'right:2', 'right:3']);
  await client.flush();
  assert.equal([...first.calls, ...second.calls], [1, 1, 1]);
});

test('an answer that is not a batch of answers is the answer to every request of the batch still waiting', async () => {
  const [client, host] = [await connect(), await connect()];
  responder(host, 'batch.whole', (msg, tokens) => {
    msg.respond(encodeReplyBatch([tokens[0]!], [text('own answer')]));
    msg.respond(text('could not read your batch'));
  });
  await host.flush();
  const got = await Promise.all(batch(client, 'batch.whole', ['x', 'y', 'z']).outcomes);
  assert.equal(got.map((o) => read(o.msg!)), ['own answer', 'could not read your batch', 'could not read your batch']);
});

test('a batch nobody subscribes to fails each request with NO_RESPONDERS', async () => {
  const client = await connect();
  const got = await Promise.all(batch(client, 'batch.nobody', ['a', 'b']).outcomes);
  for (const o of got) assert.instance(o.err, NoRespondersError);
});

test('each request of a batch has its own timeout; a late answer to a timed-out one is dropped', async () => {
  const [client, host] = [await connect(), await connect()];
  const held: { msg: BusMsg; tokens: string[] }[] = [];
  responder(host, 'batch.slow', (msg, tokens) => held.push({ msg, tokens }));
  await host.flush();
  const requests: BatchRequest[] = [];
  const outcomes = [50, 10_000].map((timeoutMs) => new Promise<Outcome>((resolve) => requests.push({ data: text('?'), timeoutMs, done: (err, msg) => resolve({ err, msg }) })));
  client.requestBatch!('batch.slow', requests, CALL_BATCH_CODEC);
  const short = await outcomes[0]!;
  assert.instance(short.err, TimeoutError);
  const { msg, tokens } = held[0]!;
  msg.respond(encodeReplyBatch(tokens, [text('too late'), text('in time')]));
  const long = await outcomes[1]!;
  assert.is(read(long.msg!), 'in time');
});

test('a batch on a closed bus fails each request with BUS_CLOSED, after requestBatch returned', async () => {
  const client = await connect();
  await client.close();
  let returned = false;
  const early: boolean[] = [];
  const requests: BatchRequest[] = [];
  const outcomes = [0, 1].map((i) => new Promise<Outcome>((resolve) => requests.push({ data: text('?'), timeoutMs: 1000, done: (err) => (early[i] = !returned, resolve({ err })) })));
  client.requestBatch!('batch.closed', requests, CALL_BATCH_CODEC);
  returned = true;
  const got = await Promise.all(outcomes);
  assert.equal(got.map((o) => (o.err as { code?: string }).code), ['BUS_CLOSED', 'BUS_CLOSED']);
  assert.equal(early, [false, false]);
});

test.run();
