import { readFileSync } from 'node:fs';
import { OrreryError } from '../../../lib/errors.ts';
import type { Cluster } from '../../client/cluster.ts';
import { DashboardOptionError, allowedHostNames, checkToken } from '../../dashboard/guard.ts';
import { DEFAULT_DASHBOARD_PORT, PortInUseError, startDashboard } from '../../dashboard/server.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, connectForCommand } from '../connection.ts';
import type { CliIo } from '../io.ts';

const FLAGS = { port: 'string', host: 'string', address: 'string', cluster: 'string', trace: 'string', 'token-file': 'string', 'read-only': 'boolean', 'no-history': 'boolean' } as const;

/** The environment variable a token may come from (never a flag: a command line shows in `ps`). */
export const TOKEN_ENV = 'ORRERY_DASHBOARD_TOKEN';

/**
 * `orrery dashboard [--port 8265] [--host 127.0.0.1] [--host-name NAME]… [--token-file FILE]
 * [--read-only] [--no-history] [--address URL] [--cluster NAME] [--trace FILE]`: serves the dashboard page and its
 * REST API (docs/dashboard.md) until SIGINT/SIGTERM. With --trace the page also steps through a
 * recorded trace; if then no cluster answers, it shows the trace alone. With a token (--token-file,
 * or ORRERY_DASHBOARD_TOKEN) every request needs it; the token is never printed.
 */
export async function dashboard(argv: readonly string[], io: CliIo): Promise<number> {
  const { hostNames, rest } = hostNameFlags(argv);
  const args = parseArgs('dashboard', rest, FLAGS);
  const port = portOf(stringFlag(args, 'port'));
  const host = stringFlag(args, 'host') ?? '127.0.0.1';
  const trace = stringFlag(args, 'trace');
  const readOnly = args.flags['read-only'] === true;
  // history (on by default): the step-through shows what machines did before their page opened
  const history = args.flags['no-history'] !== true;
  const token = tokenOf(stringFlag(args, 'token-file'), io.env);
  try {
    allowedHostNames(host, hostNames);
  } catch (err) {
    if (err instanceof DashboardOptionError) throw new UsageError(`dashboard: --host-name: ${err.message.replace(/^dashboard: hostNames: /, '')}`, '--host-name');
    throw err;
  }
  const address = addressOf('dashboard', args, io.env)!;
  const clusterName = clusterOf('dashboard', args, io.env);

  let cluster: Cluster | undefined;
  try {
    cluster = await connectForCommand(address, clusterName, io.access);
  } catch (err) {
    if (trace === undefined) throw err;
    io.err(`orrery: dashboard: no cluster at ${address} (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); showing the trace only`);
  }
  try {
    const server = await startDashboard({
      cluster,
      port,
      host,
      hostNames,
      readOnly,
      history,
      ...(token === undefined ? {} : { token: token.value }),
      ...(trace === undefined ? {} : { trace }),
    }).catch((err: unknown) => {
      if (err instanceof PortInUseError) {
        throw new OrreryError(err.code, `dashboard: port ${err.port} is already in use; choose another with --port`, { detail: err.detail });
      }
      throw err;
    });
    io.out(`dashboard: ${server.url}`);
    io.err(cluster ? `showing cluster ${JSON.stringify(clusterName)} at ${address} (Ctrl-C to stop)` : 'showing the trace file (Ctrl-C to stop)');
    if (token !== undefined) io.err(`a token is required (read from ${token.source}): sign in at ${server.url}login, or send Authorization: Bearer <token>`);
    else if (!isLoopback(host)) {
      const exposed = readOnly ? 'can see the cluster' : 'can change taints and labels';
      io.err(`warning: listening on ${host} without a token: anyone who can reach this port ${exposed} (give --token-file FILE${readOnly ? '' : ', or --read-only'})`);
    }
    if (readOnly) io.err('read-only: taint and label changes are refused');
    await untilStopped(io);
    await server.close();
    return 0;
  } finally {
    await cluster?.close();
  }
}

/**
 * `--host-name NAME`, as often as needed (parseArgs takes each flag once): the names, and the other
 * arguments.
 */
function hostNameFlags(argv: readonly string[]): { hostNames: string[]; rest: string[] } {
  const hostNames: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === '--host-name' || arg.startsWith('--host-name=')) {
      const value = arg === '--host-name' ? (argv[i + 1]?.startsWith('--') ? undefined : argv[++i]) : arg.slice('--host-name='.length);
      if (value === undefined || value === '') throw new UsageError('dashboard: --host-name needs a value', '--host-name');
      hostNames.push(value);
    } else if (arg === '--token' || arg.startsWith('--token=')) {
      // not the value: it is a secret
      throw new UsageError(`dashboard: --token is not accepted (a command line shows in ps); put the token in a file for --token-file FILE, or in ${TOKEN_ENV}`, '--token');
    } else {
      rest.push(arg);
    }
  }
  return { hostNames, rest };
}

/** The token and where it was read from: --token-file FILE (first), else ORRERY_DASHBOARD_TOKEN; surrounding whitespace dropped. */
function tokenOf(file: string | undefined, env: NodeJS.ProcessEnv): { value: string; source: string } | undefined {
  let value: string;
  let source: string;
  if (file !== undefined) {
    try {
      value = readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`dashboard: --token-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, '--token-file');
    }
    source = file;
  } else if (env[TOKEN_ENV] !== undefined) {
    value = env[TOKEN_ENV]!;
    source = TOKEN_ENV;
  } else {
    return undefined;
  }
  try {
    return { value: checkToken(value.trim()), source };
  } catch (err) {
    if (err instanceof DashboardOptionError) throw new UsageError(`dashboard: ${file !== undefined ? `--token-file: ${file}` : TOKEN_ENV}: ${err.message.replace(/^dashboard: token: /, '')}`, file !== undefined ? '--token-file' : undefined);
    throw err;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

function portOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_DASHBOARD_PORT;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0 || n > 65_535) throw new UsageError(`dashboard: --port: expected a port number from 0 to 65535, got ${JSON.stringify(text)}`, '--port');
  return n;
}

function untilStopped(io: CliIo): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (io.signal?.aborted) return stop();
    io.signal?.addEventListener('abort', stop, { once: true });
  });
}
