import { assertToken } from '../../protocols/subjects.ts';
import { connect } from '../client/connect.ts';
import type { Cluster } from '../client/cluster.ts';
import { UsageError, stringFlag, type ParsedArgs } from './args.ts';
import type { NatsAccess } from '../process/flags.ts';

/** Commands wait this long for the first connection and for each GCS answer. */
const CONNECT_TIMEOUT_MS = 3000;
const REQUEST_TIMEOUT_MS = 5000;

/** --cluster, else ORRERY_CLUSTER, else 'default'. */
export function clusterOf(command: string, args: ParsedArgs, env: NodeJS.ProcessEnv): string {
  const flag = stringFlag(args, 'cluster');
  const [name, source] = flag !== undefined ? [flag, '--cluster'] : env.ORRERY_CLUSTER ? [env.ORRERY_CLUSTER, 'ORRERY_CLUSTER'] : ['default', ''];
  try {
    assertToken('cluster', name);
  } catch {
    throw new UsageError(`${command}: ${source}: ${JSON.stringify(name)} is not a cluster name (no '.', '*', '>' or whitespace)`, source);
  }
  return name;
}

/** A client for one command; an unreachable server is a ConnectionFailedError naming the address. */
export function connectForCommand(address: string, cluster: string, access: NatsAccess = {}): Promise<Cluster> {
  // a command is not a job: it owns nothing, and `orrery list jobs` does not list itself
  return connect({ address, cluster, connectTimeoutMs: CONNECT_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, job: false, ...access });
}

/** Runs `use` with a client and closes it whatever happens. */
export async function withCluster<T>(address: string, cluster: string, use: (c: Cluster) => Promise<T>, access: NatsAccess = {}): Promise<T> {
  const client = await connectForCommand(address, cluster, access);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}
