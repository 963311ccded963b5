// Connecting to NATS: the bus's connection options, and a first connection's failure told apart
// (may it mend by waiting, or not). What the connection then carries is NatsBus's (nats.ts).
import { connect, credsAuthenticator, nkeyAuthenticator } from '@nats-io/transport-node';
import { readCredentials, redactAddress } from '../auth/credentials.ts';
import type { Bus, BusOptions } from './bus.ts';
import { ConnectionFailedError } from './errors.ts';
import { NatsBus } from './nats.ts';

export interface NatsBusOptions extends BusOptions {
  /**
   * NATS server URLs, comma-separated (`nats://10.0.0.1:4222,nats://10.0.0.2:4222`). The first is
   * tried first — list the server nearest the process first (its own machine's); the others, in a
   * random order, are where it goes when that one is gone.
   */
  servers: string;
  /** Connection name shown by the server's monitoring (e.g. `raylet-<nodeId>`). */
  name?: string;
  /** Pause between reconnect attempts; default 250 ms. Reconnection never gives up. */
  reconnectTimeWaitMs?: number;
  /** How long the first connection may take; default 5,000 ms. */
  connectTimeoutMs?: number;
  /**
   * A credentials file (`orrery auth init`'s `<role>.creds`, or a NATS `.creds`): the user the
   * server knows this process as. Its inbox prefix, when it names one, is where answers arrive.
   */
  creds?: string;
  /** TLS for servers that require it: PEM files of the CA, and of a client certificate and key. */
  tls?: TlsFiles;
}

export interface TlsFiles {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Connects to NATS; a server that cannot be reached is a ConnectionFailedError naming the address. */
export async function connectNatsBus(opts: NatsBusOptions): Promise<Bus> {
  const servers = opts.servers
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const address = redactAddress(servers.join(',') || opts.servers);
  if (servers.length === 0) throw new ConnectionFailedError(address, 'no server address given');
  const creds = opts.creds === undefined ? undefined : readCredentials(opts.creds);
  const tls = opts.tls === undefined ? undefined : { caFile: opts.tls.ca, certFile: opts.tls.cert, keyFile: opts.tls.key };
  try {
    const nc = await connect({
      servers: preferFirst(servers),
      noRandomize: true,
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: opts.reconnectTimeWaitMs ?? 250,
      timeout: opts.connectTimeoutMs ?? 5000,
      // Our requests do not go through nats.js's request() (see NatsBus.request, nats.ts), but
      // nothing else needs its async stack traces either.
      noAsyncTraces: true,
      ...(creds === undefined ? {} : { authenticator: creds.kind === 'jwt' ? credsAuthenticator(creds.secret) : nkeyAuthenticator(creds.secret) }),
      ...(creds?.inboxPrefix === undefined ? {} : { inboxPrefix: creds.inboxPrefix }),
      ...(tls === undefined ? {} : { tls }),
    });
    return new NatsBus(nc, opts, creds?.inboxPrefix);
  } catch (cause) {
    // nats.js's messages carry no secret, but a URL with a password might be echoed in one
    const reason = redactAddress(cause instanceof Error ? cause.message : String(cause));
    const hint = /authoriz|authentica/i.test(reason) ? (creds === undefined ? ' (the server requires credentials: --creds FILE or ORRERY_CREDS)' : ` (the server refused the credentials in ${creds.path})`) : '';
    throw new ConnectionFailedError(address, reason + hint, { cause, transient: hint === '' && mayMend(cause) });
  }
}

/**
 * Whether a first connection's failure may mend by waiting: a server that refused (credentials,
 * TLS, its certificate) or an address that cannot be a server will not; a refused or reset socket,
 * a timeout, a name that does not resolve yet, a peer that hung up before speaking NATS (a server
 * starting or stopping, a load balancer with no server behind it) may.
 */
const WILL_NOT_MEND = /authoriz|authentica|credential|permission|nkey|jwt|tls|ssl|certificate|invalid url|unsupported protocol/i;

function mayMend(cause: unknown): boolean {
  if (!(cause instanceof Error)) return false;
  const causes = [cause.message, String((cause as { cause?: unknown }).cause ?? '')];
  return !causes.some((m) => WILL_NOT_MEND.test(m));
}

/**
 * The first server, then the rest shuffled: nats.js would shuffle them all, so a process given its own
 * machine's server first could start on any other; with the rest in one fixed order, every process
 * that loses the same server would go to the same next one.
 */
function preferFirst(servers: readonly string[]): string[] {
  const rest = servers.slice(1);
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [rest[i], rest[j]] = [rest[j], rest[i]];
  }
  return [servers[0], ...rest];
}
