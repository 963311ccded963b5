// A free port of 127.0.0.1 that accepts each connection and hangs up at once, as a NATS server
// starting or stopping may: for specs of a first connection that waits for its server. `attempts`
// counts the connections (one per attempt); `close()` frees the port for a real server.
import { createServer } from 'node:net';
import { freePort } from './nats-server.ts';

export interface HangUpPort {
  readonly port: number;
  readonly attempts: number;
  close(): Promise<void>;
}

export async function hangUpPort(): Promise<HangUpPort> {
  const port = await freePort();
  let attempts = 0;
  const server = createServer((socket) => {
    attempts++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  let closed: Promise<void> | undefined;
  return {
    port,
    get attempts() {
      return attempts;
    },
    close: () => (closed ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}
