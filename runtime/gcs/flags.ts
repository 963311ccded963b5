import { parseResources } from '../../lib/resources/resource-set.ts';
import { assertToken } from '../../protocols/subjects.ts';
import { DEFAULT_MAX_DEAD_ACTORS, DEFAULT_MAX_DEAD_NODES, DEFAULT_MAX_REMOVED_GROUPS } from './dead-actors.ts';
import { DEFAULT_CODE_SWEEP_MS, MIN_CODE_SWEEP_MS } from './code-sweep.ts';
import { DEFAULT_JOB_TIMEOUT_MS } from './jobs.ts';

/** Default --create-timeout-ms (GcsService's createTimeoutMs). */
export const DEFAULT_CREATE_TIMEOUT_MS = 30_000;
import { ACCESS_FLAGS, ACCESS_USAGE, accessFlags, addressFlag, CONNECT_WAIT_FLAG, CONNECT_WAIT_USAGE, connectWaitFlag, DEFAULT_ADDRESS, FlagError, scanFlags, type NatsAccess } from '../process/flags.ts';

export { DEFAULT_ADDRESS, FlagError };

export interface GcsFlags {
  address: string;
  /** Credentials and TLS for the NATS connection. */
  access: NatsAccess;
  /** How long to keep trying a NATS server that does not answer yet (seconds; 0: give up at once). */
  connectWaitSeconds: number;
  cluster: string;
  rareResources: string[];
  heartbeatMs: number;
  nodeTimeoutMs: number;
  /** Dead actors the GCS remembers (dead-actors.ts). */
  maxDeadActors: number;
  maxDeadNodes: number;
  maxRemovedGroups: number;
  /** Where the tables live: `auto` (JetStream KV when the server has it), `on` (KV or fail), `off` (memory). */
  persist: 'auto' | 'on' | 'off';
  /** The recovery grace window (gcs.machine.ts). */
  graceMs: number;
  /** How long the leader lease lasts without renewal (leader.ts). */
  leaseMs: number;
  /** A job (driver connection) with no heartbeat for this long is FINISHED (jobs.ts). */
  jobTimeoutMs: number;
  /** How long the GCS waits for a raylet's answer to create_actor before asking again (raylets.ts). */
  createTimeoutMs: number;
  /** Chunks in the code store left unnamed and unchanged this long are removed; 0: never (code-sweep.ts). */
  codeSweepMs: number;
  help: boolean;
}


export const USAGE = `usage: gcs [--address URL] [--cluster NAME] [--rare-resources GPU,my_rare]
           [--heartbeat-ms N] [--node-timeout-ms N] [--max-dead-actors N] [--max-dead-nodes N]
           [--max-removed-groups N]
           [--persist auto|on|off | --no-persist] [--grace-ms N] [--lease-ms N] [--job-timeout-ms N]
           [--create-timeout-ms N] [--code-sweep-ms N] [--creds FILE] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--connect-wait SECONDS]
  --address defaults to $ORRERY_ADDRESS, then ${DEFAULT_ADDRESS}; --cluster to "default";
  --heartbeat-ms to $ORRERY_HEARTBEAT_MS, then 500 (at least 10); --node-timeout-ms to
  $ORRERY_NODE_TIMEOUT_MS, then 3000 (longer than a heartbeat): a node is DEAD after missing
  about node-timeout / heartbeat beats in a row (6 by default); --max-dead-actors to
  $ORRERY_MAX_DEAD_ACTORS, then ${DEFAULT_MAX_DEAD_ACTORS}: the newest dead actors the GCS keeps listed;
  --max-dead-nodes to $ORRERY_MAX_DEAD_NODES, then ${DEFAULT_MAX_DEAD_NODES}: the newest dead nodes it keeps listed;
  --max-removed-groups to $ORRERY_MAX_REMOVED_GROUPS, then ${DEFAULT_MAX_REMOVED_GROUPS}: the newest removed placement groups;
  --persist to $ORRERY_PERSIST, then auto: the tables in JetStream KV when the NATS server has
  JetStream (a restarted GCS recovers them), in memory otherwise; --no-persist is --persist off;
  --grace-ms to $ORRERY_GRACE_MS, then 3000: how long a restarted GCS waits for
  raylets to register again before it reconciles; --lease-ms to $ORRERY_LEASE_MS, then 2000: with
  persistence, GCS processes share one leader lease; the others wait as standbys and one takes over
  when the leader has not renewed it for this long; --job-timeout-ms to $ORRERY_JOB_TIMEOUT_MS, then
  ${DEFAULT_JOB_TIMEOUT_MS}: a driver's job with no heartbeat for this long is finished and the actors and
  placement groups it owns are killed (docs/jobs.md); --create-timeout-ms to $ORRERY_CREATE_TIMEOUT_MS,
  then 30000: how long a create_actor waits for its raylet's answer before it is asked again (a
  constructor may run longer: docs/failover.md); --code-sweep-ms to $ORRERY_CODE_SWEEP_MS,
  then ${DEFAULT_CODE_SWEEP_MS}: chunks in the code store that no bundle names and that have not
  changed for this long (an upload cut off) are removed; 0 never, else at least 1000
  (docs/code-shipping.md)
${ACCESS_USAGE}
${CONNECT_WAIT_USAGE}`;

const VALUE_FLAGS = new Set(['--address', '--cluster', '--rare-resources', '--heartbeat-ms', '--node-timeout-ms', '--max-dead-actors', '--max-dead-nodes', '--max-removed-groups', '--persist', '--grace-ms', '--lease-ms', '--job-timeout-ms', '--create-timeout-ms', '--code-sweep-ms', CONNECT_WAIT_FLAG, ...ACCESS_FLAGS]);

/** Parses the GCS's flags (`--flag value` or `--flag=value`); every problem is a FlagError naming its flag. */
export function parseGcsFlags(argv: readonly string[], env: NodeJS.ProcessEnv): GcsFlags {
  const noPersist = argv.includes('--no-persist');
  const { given, help } = scanFlags(argv.filter((a) => a !== '--no-persist'), VALUE_FLAGS);
  if (noPersist && given.has('--persist')) throw new FlagError('--no-persist', 'cannot be given with --persist');

  const address = addressFlag(given, env);
  let cluster: string;
  try {
    cluster = assertToken('cluster', given.get('--cluster') ?? 'default');
  } catch {
    throw new FlagError('--cluster', "must be one subject token: not empty, no '.', '*', '>' or whitespace");
  }
  const heartbeatMs = integer(...fromFlagOrEnv(given, '--heartbeat-ms', env, 'ORRERY_HEARTBEAT_MS'), 500, 10);
  const nodeTimeoutMs = integer(...fromFlagOrEnv(given, '--node-timeout-ms', env, 'ORRERY_NODE_TIMEOUT_MS'), 3000, 1);
  if (nodeTimeoutMs <= heartbeatMs) throw new FlagError('--node-timeout-ms', `must be longer than the heartbeat (${heartbeatMs} ms)`);
  const maxDeadActors = integer(...fromFlagOrEnv(given, '--max-dead-actors', env, 'ORRERY_MAX_DEAD_ACTORS'), DEFAULT_MAX_DEAD_ACTORS, 0, 'a whole number');
  const maxDeadNodes = integer(...fromFlagOrEnv(given, '--max-dead-nodes', env, 'ORRERY_MAX_DEAD_NODES'), DEFAULT_MAX_DEAD_NODES, 0, 'a whole number');
  const maxRemovedGroups = integer(...fromFlagOrEnv(given, '--max-removed-groups', env, 'ORRERY_MAX_REMOVED_GROUPS'), DEFAULT_MAX_REMOVED_GROUPS, 0, 'a whole number');
  const [persistFrom, persistText] = fromFlagOrEnv(given, '--persist', env, 'ORRERY_PERSIST');
  const persist = noPersist ? 'off' : (persistText ?? 'auto');
  if (persist !== 'auto' && persist !== 'on' && persist !== 'off') throw new FlagError(persistFrom, `expected auto, on or off, got ${JSON.stringify(persistText)}`);
  const graceMs = integer(...fromFlagOrEnv(given, '--grace-ms', env, 'ORRERY_GRACE_MS'), 3000, 0);
  const leaseMs = integer(...fromFlagOrEnv(given, '--lease-ms', env, 'ORRERY_LEASE_MS'), 2000, 100);
  const jobTimeoutMs = integer(...fromFlagOrEnv(given, '--job-timeout-ms', env, 'ORRERY_JOB_TIMEOUT_MS'), DEFAULT_JOB_TIMEOUT_MS, 100);
  const createTimeoutMs = integer(...fromFlagOrEnv(given, '--create-timeout-ms', env, 'ORRERY_CREATE_TIMEOUT_MS'), DEFAULT_CREATE_TIMEOUT_MS, 100);
  const [sweepFrom, sweepText] = fromFlagOrEnv(given, '--code-sweep-ms', env, 'ORRERY_CODE_SWEEP_MS');
  const codeSweepMs = integer(sweepFrom, sweepText, DEFAULT_CODE_SWEEP_MS, 0);
  // a grace shorter than an upload can pause between chunks would remove a running upload's chunks
  if (codeSweepMs > 0 && codeSweepMs < MIN_CODE_SWEEP_MS) throw new FlagError(sweepFrom, `expected 0 (off) or at least ${MIN_CODE_SWEEP_MS} ms, got ${JSON.stringify(sweepText)}`);
  const access = accessFlags(given, env);
  const connectWaitSeconds = connectWaitFlag(given, env);
  return { address, access, connectWaitSeconds, cluster, rareResources: rareList(given.get('--rare-resources')), heartbeatMs, nodeTimeoutMs, maxDeadActors, maxDeadNodes, maxRemovedGroups, persist, graceMs, leaseMs, jobTimeoutMs, createTimeoutMs, codeSweepMs, help };
}

/** The flag's value, else the environment variable's (named as the source of a bad value). */
function fromFlagOrEnv(given: Map<string, string>, flag: string, env: NodeJS.ProcessEnv, variable: string): [string, string | undefined] {
  if (given.has(flag)) return [flag, given.get(flag)];
  const value = env[variable]?.trim();
  return value ? [variable, value] : [flag, undefined];
}

function integer(flag: string, text: string | undefined, fallback: number, min: number, what = 'a whole number of milliseconds'): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < min) throw new FlagError(flag, `expected ${what} >= ${min}, got ${JSON.stringify(text)}`);
  return n;
}

/** `GPU,my_rare` → the resource names (deduplicated); a bad name is a FlagError on --rare-resources. */
export function rareList(text: string | undefined): string[] {
  if (text === undefined || text.trim() === '') return [];
  const names = text.split(',').map((s) => s.trim());
  for (const name of names) {
    if (name === '') throw new FlagError('--rare-resources', "empty resource name (a stray ',')");
    try {
      parseResources({ [name]: 1 });
    } catch {
      throw new FlagError('--rare-resources', `not a resource name: ${JSON.stringify(name)}`);
    }
  }
  return [...new Set(names)];
}
