import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Starts a private nats-server for a spec: on a free port of 127.0.0.1 (never 4222, where a shared
 * server may run), optionally with JetStream in a temporary store. `stop()` kills it, waits for the
 * exit and removes the store.
 */
export interface NatsServerHandle {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const RESERVED_PORT = 4222;
const READY_TIMEOUT_MS = 10_000;
const ATTEMPTS = 5;

export async function startNatsServer(opts: { jetstream?: boolean } = {}): Promise<NatsServerHandle> {
  const storeDir = opts.jetstream ? await mkdtemp(join(tmpdir(), 'orrery-nats-')) : undefined;
  let lastError: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = await freePort();
    const args = ['-a', HOST, '-p', String(port), ...(storeDir ? ['-js', '-sd', storeDir] : [])];
    const child = spawn(process.env.NATS_SERVER_BIN ?? 'nats-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr?.on('data', (chunk) => (log = (log + chunk).slice(-4000)));
    let spawnError: Error | undefined;
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', (err) => {
        spawnError = err;
        resolve();
      });
    });
    try {
      await waitForPort(port, exited);
      return { url: `nats://${HOST}:${port}`, port, stop: () => stop(child, exited, storeDir) };
    } catch (err) {
      lastError = spawnError ?? (log ? new Error(`${(err as Error).message}: ${log.trim()}`) : err);
      await stop(child, exited, undefined);
      if (!log.includes('address already in use')) break;
    }
  }
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
  throw new Error(`nats-server did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
}

/** A port the OS just handed out for 127.0.0.1 (and not 4222). */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, HOST, () => {
        const address = server.address();
        const p = typeof address === 'object' && address ? address.port : 0;
        server.close(() => resolve(p));
      });
    });
    if (port !== RESERVED_PORT && port !== 0) return port;
  }
}

/** Polls a TCP connect until the server accepts, the process exits, or the deadline passes. */
async function waitForPort(port: number, exited: Promise<void>): Promise<void> {
  let gone = false;
  exited.then(() => (gone = true));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone) throw new Error('nats-server exited before accepting connections');
    if (await canConnect(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nats-server did not accept connections on port ${port} within ${READY_TIMEOUT_MS} ms`);
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function stop(child: ChildProcess, exited: Promise<void>, storeDir: string | undefined): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const killed = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killed);
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
}
