// Which failures of a first connection to NATS may mend by waiting (ConnectionFailedError.transient),
// and connectNatsBusWaiting, which tries those again: against a port nothing listens on, a peer that
// hangs up before speaking NATS, and one that speaks just enough NATS to refuse the credentials.
import { createServer, type Server } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connectNatsBus } from '../../../runtime/bus/nats-connect.ts';
import { connectNatsBusWaiting } from '../../../runtime/bus/connect-wait.ts';
import { ConnectionFailedError } from '../../../runtime/bus/errors.ts';

async function listening(onSocket: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

test('a refused connection is transient: a later attempt may find the server', async () => {
  const { server, port } = await listening(() => undefined);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const err = await connectNatsBus({ servers: `nats://127.0.0.1:${port}` }).catch((e: unknown) => e);
  assert.instance(err, ConnectionFailedError);
  assert.ok((err as ConnectionFailedError).transient, (err as Error).message);
});

test('a peer that accepts and hangs up before speaking NATS is transient (a server starting or stopping)', async () => {
  const { server, port } = await listening((socket) => socket.destroy());
  try {
    const err = await connectNatsBus({ servers: `nats://127.0.0.1:${port}` }).catch((e: unknown) => e);
    assert.instance(err, ConnectionFailedError);
    assert.ok((err as ConnectionFailedError).transient, (err as Error).message);
  } finally {
    server.close();
  }
});

test('connectNatsBusWaiting tries a transient failure again until the wait is over, then throws the last failure', async () => {
  let attempts = 0;
  const { server, port } = await listening((socket) => {
    attempts++;
    socket.destroy();
  });
  const waiting: string[] = [];
  try {
    const err = await connectNatsBusWaiting({ servers: `nats://127.0.0.1:${port}` }, { waitMs: 600, onWaiting: (e) => waiting.push(e.code) }).catch((e: unknown) => e);
    assert.instance(err, ConnectionFailedError);
    assert.ok(attempts >= 2, `tried more than once (${attempts})`);
    assert.equal(waiting, ['CONNECTION_FAILED'], 'said once that it waits');
  } finally {
    server.close();
  }
});

test('connectNatsBusWaiting does not try again a server that refused', async () => {
  let attempts = 0;
  const { server, port } = await listening((socket) => {
    attempts++;
    socket.write('INFO {"server_id":"x","version":"2.9.0","max_payload":1048576,"auth_required":true,"proto":1}\r\n');
    socket.on('data', () => socket.end('-ERR \'Authorization Violation\'\r\n'));
  });
  try {
    const err = await connectNatsBusWaiting({ servers: `nats://127.0.0.1:${port}` }, { waitMs: 60_000, onWaiting: () => assert.unreachable('no wait') }).catch((e: unknown) => e);
    assert.instance(err, ConnectionFailedError);
    assert.is(attempts, 1);
  } finally {
    server.close();
  }
});

test('a server that answers and refuses the credentials is not transient', async () => {
  // speaks just enough NATS to ask for auth, then says "Authorization Violation"
  const { server, port } = await listening((socket) => {
    socket.write('INFO {"server_id":"x","version":"2.9.0","max_payload":1048576,"auth_required":true,"proto":1}\r\n');
    socket.on('data', () => socket.end('-ERR \'Authorization Violation\'\r\n'));
  });
  try {
    const err = await connectNatsBus({ servers: `nats://127.0.0.1:${port}` }).catch((e: unknown) => e);
    assert.instance(err, ConnectionFailedError);
    assert.match((err as Error).message, /authoriz/i);
    assert.is((err as ConnectionFailedError).transient, false);
  } finally {
    server.close();
  }
});

test.run();
