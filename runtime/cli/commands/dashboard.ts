import { OrreryError } from '../../../lib/errors.ts';
import type { Cluster } from '../../client/cluster.ts';
import { DEFAULT_DASHBOARD_PORT, PortInUseError, startDashboard } from '../../dashboard/server.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, connectForCommand } from '../connection.ts';
import type { CliIo } from '../io.ts';

const FLAGS = { port: 'string', host: 'string', address: 'string', cluster: 'string', trace: 'string' } as const;

/**
 * `orrery dashboard [--port 8265] [--host 127.0.0.1] [--address URL] [--cluster NAME] [--trace FILE]`:
 * serves the dashboard page and its REST API (docs/dashboard.md) until SIGINT/SIGTERM. With --trace
 * the page also steps through a recorded trace; if then no cluster answers, it shows the trace alone.
 */
export async function dashboard(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('dashboard', argv, FLAGS);
  const port = portOf(stringFlag(args, 'port'));
  const host = stringFlag(args, 'host') ?? '127.0.0.1';
  const trace = stringFlag(args, 'trace');
  const address = addressOf('dashboard', args, io.env)!;
  const clusterName = clusterOf('dashboard', args, io.env);

  let cluster: Cluster | undefined;
  try {
    cluster = await connectForCommand(address, clusterName);
  } catch (err) {
    if (trace === undefined) throw err;
    io.err(`orrery: dashboard: no cluster at ${address} (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); showing the trace only`);
  }
  try {
    const server = await startDashboard({ cluster, port, host, ...(trace === undefined ? {} : { trace }) }).catch((err: unknown) => {
      if (err instanceof PortInUseError) {
        throw new OrreryError(err.code, `dashboard: port ${err.port} is already in use; choose another with --port`, { detail: err.detail });
      }
      throw err;
    });
    io.out(`dashboard: ${server.url}`);
    io.err(cluster ? `showing cluster ${JSON.stringify(clusterName)} at ${address} (Ctrl-C to stop)` : 'showing the trace file (Ctrl-C to stop)');
    await untilStopped(io);
    await server.close();
    return 0;
  } finally {
    await cluster?.close();
  }
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
