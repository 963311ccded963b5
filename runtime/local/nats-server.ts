import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, openSync, closeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { OrreryError } from '../../lib/errors.ts';

/**
 * Starts a nats-server for a local cluster or for `orrery start --head` (the run-time twin of
 * spec/helpers/nats-server.ts). By default on a free port of 127.0.0.1 that is never 4222, where a
 * shared server may run; `port` asks for a fixed one. `detached` runs it in the background with its
 * output in a log file, so it outlives the process that started it.
 */
export interface NatsServerHandle {
  readonly url: string;
  readonly port: number;
  /** The server process now (a restart() makes a new one). */
  readonly pid: number;
  stop(): Promise<void>;
  /**
   * A crash and a comeback: SIGKILL, then — once the port is closed, `downMs` more have passed and
   * `until` (asked every 20 ms, if given) holds — the same server again on the same port with the
   * same JetStream store. For chaos runs and specs of a NATS outage; not for a detached server.
   */
  restart(opts?: { downMs?: number; until?: () => boolean }): Promise<void>;
}

export interface NatsServerOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** A fixed port; default a free one other than 4222. */
  port?: number;
  /** JetStream on, its store in a temporary directory removed at stop (or in `storeDir`). */
  jetstream?: boolean;
  /** JetStream on with its store here, kept at stop (`orrery start --head`: the run dir). */
  storeDir?: string;
  /** Serve nats-server's HTTP monitoring (/connz, /varz, …) on this port of the same host. */
  monitorPort?: number;
  detached?: { logFile: string };
  /**
   * A configuration file (`orrery auth init`'s, with its users). `host` and `port` override its
   * `listen`; JetStream and its store are the file's (nats-server refuses a store given twice), so
   * `jetstream` and `storeDir` are ignored.
   */
  config?: string;
  /** A member of a cluster of servers (routes): see startNatsCluster. */
  cluster?: { readonly name: string; readonly serverName: string; readonly port: number; readonly routes: readonly string[] };
}

const LOCALHOST = '127.0.0.1';
export const NATS_DEFAULT_PORT = 4222;
const READY_TIMEOUT_MS = 10_000;
const ATTEMPTS = 5;

/** nats-server is not installed: the message names the fixes. */
export class NatsServerMissingError extends OrreryError {
  override name = 'NatsServerMissingError';
  constructor() {
    super(
      'NATS_SERVER_MISSING',
      'nats-server is not installed (not found on PATH): install it (Debian/Ubuntu: sudo apt-get install -y nats-server), set NATS_SERVER_BIN to its path, or pass the address of a running NATS server',
    );
  }
}

/** The nats-server binary: NATS_SERVER_BIN, else the first `nats-server` on PATH; undefined when neither. */
export function findNatsServer(): string | undefined {
  const explicit = process.env.NATS_SERVER_BIN;
  if (explicit) return isExecutable(explicit) ? explicit : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, 'nats-server'))) return join(dir, 'nats-server');
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const bin = findNatsServer();
  if (!bin) throw new NatsServerMissingError();
  const host = opts.host ?? LOCALHOST;
  const probeHost = host === '0.0.0.0' ? LOCALHOST : host;
  const tempStore = opts.jetstream && opts.storeDir === undefined && opts.config === undefined ? await mkdtemp(join(tmpdir(), 'orrery-nats-')) : undefined;
  const storeDir = opts.config === undefined ? (opts.storeDir ?? tempStore) : undefined;
  let lastError: unknown;
  for (let attempt = 0; attempt < (opts.port === undefined ? ATTEMPTS : 1); attempt++) {
    const port = opts.port ?? (await freePort());
    const c = opts.cluster;
    const clustered = c ? ['--server_name', c.serverName, '--cluster_name', c.name, '--cluster', `nats://${probeHost}:${c.port}`, ...(c.routes.length ? ['--routes', c.routes.join(',')] : [])] : [];
    const args = [...(opts.config ? ['-c', opts.config] : []), '-a', host, '-p', String(port), ...(storeDir ? ['-js', '-sd', storeDir] : []), ...(opts.monitorPort === undefined ? [] : ['-m', String(opts.monitorPort)]), ...clustered];
    const { child, log, listening } = launch(bin, args, opts.detached);
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    try {
      // a configuration file may send the log elsewhere: then the port alone tells
      await waitForPort(probeHost, port, exited, opts.config === undefined ? listening : undefined);
      if (opts.detached) child.unref();
      const url = `nats://${probeHost}:${port}`;
      let current = { child, exited };
      return {
        url,
        port,
        get pid() {
          return current.child.pid!;
        },
        stop: () => stop(current.child, current.exited, tempStore),
        restart: async ({ downMs = 0, until } = {}) => {
          current.child.kill('SIGKILL');
          await current.exited;
          while (await canConnect(probeHost, port, 200)) await new Promise((resolve) => setTimeout(resolve, 10));
          if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
          while (until !== undefined && !until()) await new Promise((resolve) => setTimeout(resolve, 20));
          const next = launch(bin, args, undefined);
          const nextExited = new Promise<void>((resolve) => {
            next.child.once('exit', () => resolve());
            next.child.once('error', () => resolve());
          });
          current = { child: next.child, exited: nextExited };
          await waitForPort(probeHost, port, nextExited, opts.config === undefined ? next.listening : undefined);
        },
      };
    } catch (err) {
      lastError = log() ? new Error(`${(err as Error).message}: ${log().trim()}`) : err;
      await stop(child, exited, undefined);
      if (!log().includes('address already in use') || opts.port !== undefined) break;
    }
  }
  if (tempStore) await rm(tempStore, { recursive: true, force: true });
  throw new OrreryError('NATS_SERVER_FAILED', `nats-server did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
}

/**
 * Starts nats-server. `listening` says whether it has logged that it listens for clients: a port
 * that accepts connections may be another process's (two suites that drew the same free port, the
 * other's server bound first, and ours is about to exit with "address already in use"). Undefined
 * when its log goes to a file.
 */
function launch(bin: string, args: string[], detached: { logFile: string } | undefined): { child: ChildProcess; log: () => string; listening?: () => boolean } {
  if (detached) {
    const fd = openSync(detached.logFile, 'a');
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd], detached: true });
    closeSync(fd);
    return { child, log: () => '' };
  }
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  let listening = false;
  child.stderr?.on('data', (chunk) => {
    text = (text + chunk).slice(-4000);
    listening ||= text.includes('Listening for client connections on');
  });
  return { child, log: () => text, listening: () => listening };
}

/** A port the OS just handed out for 127.0.0.1 (and not 4222). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, LOCALHOST, () => {
        const address = server.address();
        const p = typeof address === 'object' && address ? address.port : 0;
        server.close(() => resolve(p));
      });
    });
    if (port !== NATS_DEFAULT_PORT && port !== 0) return port;
  }
}

/**
 * Polls a TCP connect until the server accepts — and, when its log can be read, has said it listens
 * (`listening`: so a port some other process serves is not taken for ours) — the process exits, or
 * the deadline passes.
 */
async function waitForPort(host: string, port: number, exited: Promise<void>, listening?: () => boolean): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gone) throw new Error('nats-server exited before accepting connections');
    if ((listening === undefined || listening()) && (await canConnect(host, port)) && !gone) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`nats-server did not accept connections on port ${port} within ${READY_TIMEOUT_MS} ms`);
}

/** Whether something accepts TCP connections at host:port. */
export function canConnect(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function stop(child: ChildProcess, exited: Promise<void>, storeDir: string | undefined): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const killed = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killed);
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
}

export interface NatsClusterHandle {
  /** With `monitor`, each server's HTTP monitoring port (/connz, /varz, /jsz). */
  readonly servers: readonly (NatsServerHandle & { readonly monitorPort?: number })[];
  /** Every server's URL, comma-separated: the address to give orrery's processes. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * `size` nats-servers on loopback, each routed to the others, each with JetStream (its store in a
 * temporary directory): a NATS cluster, as a deployment across machines runs one. Resolves once
 * JetStream answers through every server (the cluster has elected its meta leader), so streams with
 * up to `size` replicas can be created at once.
 */
export async function startNatsCluster(opts: { size?: number; name?: string; readyTimeoutMs?: number; monitor?: boolean } = {}): Promise<NatsClusterHandle> {
  const size = opts.size ?? 3;
  const name = opts.name ?? 'orrery';
  const clusterPorts: number[] = [];
  while (clusterPorts.length < size) {
    const p = await freePort();
    if (!clusterPorts.includes(p)) clusterPorts.push(p);
  }
  const routes = clusterPorts.map((p) => `nats://${LOCALHOST}:${p}`);
  const servers: NatsServerHandle[] = [];
  try {
    for (let i = 0; i < size; i++) {
      const monitorPort = opts.monitor ? await freePort() : undefined;
      const server = await startNatsServer({ jetstream: true, ...(monitorPort ? { monitorPort } : {}), cluster: { name, serverName: `${name}-${i}`, port: clusterPorts[i], routes: routes.filter((_, j) => j !== i) } });
      servers.push(Object.assign(server, { monitorPort }));
    }
    await jetStreamReady(servers.map((s) => s.url), opts.readyTimeoutMs ?? 30_000);
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
  return { servers, url: servers.map((s) => s.url).join(','), stop: async () => void (await Promise.all(servers.map((s) => s.stop()))) };
}

/** Waits until each server answers a JetStream account-info request. */
async function jetStreamReady(urls: readonly string[], timeoutMs: number): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const deadline = Date.now() + timeoutMs;
  for (const url of urls) {
    const nc = await connect({ servers: url, noRandomize: true });
    try {
      for (;;) {
        try {
          const jsm = await jetstreamManager(nc, { timeout: 2000 });
          await jsm.getAccountInfo();
          break;
        } catch (err) {
          if (Date.now() > deadline) throw new OrreryError('NATS_SERVER_FAILED', `JetStream of the NATS cluster is not ready at ${url} after ${timeoutMs} ms: ${err instanceof Error ? err.message : String(err)}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    } finally {
      await nc.close();
    }
  }
}
