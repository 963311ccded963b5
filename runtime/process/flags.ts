import { accessSync, constants } from 'node:fs';
import { OrreryError } from '../../lib/errors.ts';
import { DEFAULT_ADDRESS } from '../bus/address.ts';

export { DEFAULT_ADDRESS };

/** A command-line flag or its value is unusable; the message is the one line the user sees. */
export class FlagError extends OrreryError {
  override name = 'FlagError';
  constructor(readonly flag: string, readonly problem: string) {
    super('INVALID_FLAG', `${flag}: ${problem}`, { detail: { flag, problem } });
  }
}

/**
 * The flags of a process (the GCS, a raylet): `--flag value` or `--flag=value`, each at most once,
 * each one of `valueFlags`; `--help`/`-h` anywhere. Every problem is a FlagError naming its flag.
 */
export function scanFlags(argv: readonly string[], valueFlags: ReadonlySet<string>): { given: Map<string, string>; help: boolean } {
  const given = new Map<string, string>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (!valueFlags.has(flag)) throw new FlagError(flag, arg.startsWith('-') ? 'unknown flag' : 'unexpected argument');
    let value: string | undefined;
    if (flag !== arg) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) value = argv[++i];
    if (value === undefined) throw new FlagError(flag, 'needs a value');
    if (given.has(flag)) throw new FlagError(flag, 'given more than once');
    given.set(flag, value);
  }
  return { given, help };
}

/** `--address`, else $ORRERY_ADDRESS, else the local default; an empty one is a FlagError. */
export function addressFlag(given: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): string {
  const address = (given.get('--address') ?? (env.ORRERY_ADDRESS?.trim() || DEFAULT_ADDRESS)).trim();
  if (address === '') throw new FlagError('--address', 'must not be empty');
  return address;
}

/** How a process proves who it is to the NATS server, and checks who the server is. */
export interface NatsAccess {
  /** A credentials file (`orrery auth init`): never the secret itself on a command line. */
  creds?: string;
  tls?: { ca?: string; cert?: string; key?: string };
}

/** The flags every process that connects to NATS takes, beside --address. */
export const ACCESS_FLAGS: readonly string[] = ['--creds', '--tls-ca', '--tls-cert', '--tls-key'];

export const ACCESS_USAGE = `  --creds FILE (or $ORRERY_CREDS): the credentials file of this process's role (orrery auth init);
  --tls-ca / --tls-cert / --tls-key FILE (or $ORRERY_TLS_CA / _CERT / _KEY): TLS to the NATS server`;

/**
 * --creds / --tls-* (else their environment variables). Each file must be readable now, so a typo
 * is a FlagError naming the flag rather than an authorization failure later.
 */
export function accessFlags(given: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): NatsAccess {
  const pick = (flag: string, name: string): string | undefined => {
    const value = given.get(flag) ?? (env[name]?.trim() || undefined);
    if (value === undefined) return undefined;
    if (value.trim() === '') throw new FlagError(flag, 'must not be empty');
    try {
      accessSync(value, constants.R_OK);
    } catch (err) {
      throw new FlagError(flag, `cannot read ${value}${given.has(flag) ? '' : ` (from $${name})`}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    return value;
  };
  const creds = pick('--creds', 'ORRERY_CREDS');
  const tls = { ca: pick('--tls-ca', 'ORRERY_TLS_CA'), cert: pick('--tls-cert', 'ORRERY_TLS_CERT'), key: pick('--tls-key', 'ORRERY_TLS_KEY') };
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new FlagError(tls.cert === undefined ? '--tls-cert' : '--tls-key', 'a client certificate needs both --tls-cert and --tls-key');
  const anyTls = tls.ca !== undefined || tls.cert !== undefined;
  return { ...(creds === undefined ? {} : { creds }), ...(anyTls ? { tls: Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined)) } : {}) };
}

/**
 * How long a daemon (the GCS, a raylet, the autoscaler) keeps trying a NATS server that does not
 * answer yet before it gives up: started beside the server (systemd, a container's entrypoint, an
 * autoscaler's launch during an outage), it waits for it. Once connected, a process rides out any
 * outage whatever this says (the NATS bus reconnects for good, nats-connect.ts); this is the first
 * connection only.
 */
export const CONNECT_WAIT_FLAG = '--connect-wait';

export const CONNECT_WAIT_USAGE = `  --connect-wait SECONDS (or $ORRERY_CONNECT_WAIT): how long to keep trying a NATS server that does not
      answer yet before giving up; default 0, give up at once (refused credentials or TLS are never retried)`;

/** The most a process may be told to wait: a day. Longer is a typo, not a plan. */
const MAX_CONNECT_WAIT_S = 86_400;

/** --connect-wait, else $ORRERY_CONNECT_WAIT, in seconds (fractions allowed); 0 when neither is set. */
export function connectWaitFlag(given: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): number {
  const fromFlag = given.has(CONNECT_WAIT_FLAG);
  const text = fromFlag ? given.get(CONNECT_WAIT_FLAG)! : env.ORRERY_CONNECT_WAIT?.trim();
  if (text === undefined || (!fromFlag && text === '')) return 0;
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_CONNECT_WAIT_S) {
    throw new FlagError(CONNECT_WAIT_FLAG, `expected seconds from 0 to ${MAX_CONNECT_WAIT_S}, got ${JSON.stringify(text)}${fromFlag ? '' : ' (from $ORRERY_CONNECT_WAIT)'}`);
  }
  return seconds;
}
