// startNatsServer (runtime/local/nats-server.ts), which every integration suite and local cluster
// uses: a port that accepts connections is not taken for its server unless that server said it
// listens. Two suites that draw the same free port at once used to end up on one server: the
// loser's nats-server exited with "address already in use" a few milliseconds after the winner's
// port had already answered the loser's probe.
import { createServer, type Server } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../lib/errors.ts';
import { canConnect, freePort, startNatsServer } from '../helpers/nats-server.ts';

test('a port another process already serves is refused, not taken for a nats-server', async () => {
  const port = await freePort();
  const squatter: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
  try {
    assert.ok(await canConnect('127.0.0.1', port), 'the port answers');
    const err = await startNatsServer({ port }).catch((e: unknown) => e);
    assert.instance(err, OrreryError);
    assert.is((err as OrreryError).code, 'NATS_SERVER_FAILED');
    assert.match((err as Error).message, /address already in use|exited before accepting connections/);
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});

test('a server on a free port is returned once it listens, and answers there', async () => {
  const server = await startNatsServer();
  try {
    assert.ok(await canConnect('127.0.0.1', server.port));
    assert.match(server.url, new RegExp(`:${server.port}$`));
  } finally {
    await server.stop();
  }
});

test.run();
