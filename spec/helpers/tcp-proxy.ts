// A TCP proxy in front of a nats-server, for specs that cut one process off the bus while the others
// stay on it: the process connects through the proxy, and cut() drops its connections (the server
// sees them go at once, as when a cable is pulled and the kernel says so) and refuses new ones until
// mend(). What is published to the process's subjects meanwhile reaches nobody — unlike a frozen
// process, whose socket buffers it.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** `nats://127.0.0.1:<port>`: the address to give the process. */
  readonly url: string;
  /** Drops every connection through the proxy and refuses new ones until mend(); returns how many it dropped. */
  cut(): number;
  /** Accepts connections again. */
  mend(): void;
  /** How many connections it has accepted and passed on. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let refusing = false;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (refusing) return void client.destroy();
    accepted++;
    const upstream = connect(Number(port), hostname);
    open.add(client).add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const cut = (): number => {
    refusing = true;
    const dropped = open.size / 2; // each connection is a client socket and its upstream
    for (const socket of open) socket.destroy();
    open.clear();
    return dropped;
  };
  return {
    url: `nats://127.0.0.1:${address.port}`,
    cut,
    mend() {
      refusing = false;
    },
    get accepted() {
      return accepted;
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
