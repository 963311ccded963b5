import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../lib/errors.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { frozen } from '../helpers/frozen.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';
import { runBusConformance } from '../runtime/bus/conformance.ts';

let server: NatsServerHandle | undefined;

runBusConformance('nats', {
  before: async () => {
    server = await startNatsServer();
  },
  after: async () => {
    await server?.stop();
  },
  connect: () => connectNatsBus({ servers: server!.url, name: 'orrery-bus-spec' }),
  outage: {
    // SIGKILL: the connections drop with no goodbye, as in a crash; the server comes back on its port
    down: async () => {
      process.kill(server!.pid, 'SIGKILL');
      await server!.stop();
    },
    up: async () => {
      server = await startNatsServer({ port: server!.port });
    },
  },
});

test('the helper starts servers on free ports other than 4222 and stops them', async () => {
  const [a, b] = await Promise.all([startNatsServer(), startNatsServer({ jetstream: true })]);
  try {
    assert.is.not(a.port, 4222);
    assert.is.not(a.port, b.port);
    const bus = await connectNatsBus({ servers: ` ${a.url} , ${b.url} ` });
    await bus.flush();
    await bus.close();
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  const err = await connectNatsBus({ servers: a.url, connectTimeoutMs: 1000 }).then(() => undefined, (e: unknown) => e);
  assert.instance(err, OrreryError);
  assert.is((err as OrreryError).code, 'CONNECTION_FAILED');
  assert.match((err as OrreryError).message, a.url.replace('nats://', ''));
});

test('close() whose drain is waiting on a frozen server that then dies closes all the same', async () => {
  const s = await startNatsServer();
  try {
    const bus = await connectNatsBus({ servers: s.url, name: 'orrery-bus-spec-drain' });
    bus.subscribe('drain.echo', (m) => m.respond(m.data));
    await bus.request('drain.echo', new Uint8Array([1]), { timeoutMs: 5000 }); // the inbox is subscribed too
    process.kill(s.pid, 'SIGSTOP');
    await until('the server frozen', () => (frozen(s.pid) ? true : undefined));
    // the drain's flushes wait for a server that answers nothing; then it dies with no goodbye
    const closing = bus.close().then(() => 'closed', (e: unknown) => e);
    process.kill(s.pid, 'SIGKILL');
    let bound: NodeJS.Timeout | undefined;
    const hung = new Promise<string>((resolve) => (bound = setTimeout(() => resolve('still closing 20 s later'), 20_000)));
    assert.is(await Promise.race([closing, hung]).finally(() => clearTimeout(bound)), 'closed');
    assert.is(await Promise.race([bus.closed.then(() => 'closed'), new Promise((r) => setTimeout(r, 0, 'open'))]), 'closed');
  } finally {
    await s.stop();
  }
});

test('an empty address list is a CONNECTION_FAILED error', async () => {
  const err = await connectNatsBus({ servers: ' , ' }).then(() => undefined, (e: unknown) => e);
  assert.is((err as OrreryError).code, 'CONNECTION_FAILED');
});

test.run();
