import { networkInterfaces } from 'node:os';
import { OrreryError } from '../../../lib/errors.ts';
import { GcsUnavailableError } from '../../client/errors.ts';
import { rareList } from '../../gcs/flags.ts';
import { NatsServerMissingError, NATS_DEFAULT_PORT, canConnect, findNatsServer } from '../../local/nats-server.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import type { CliIo } from '../io.ts';
import { NODE_FLAGS, nodeFlagArgs } from '../node-flags.ts';
import { AttachedSession, DetachedSession, type Session } from '../sessions.ts';

const FLAGS = { head: 'boolean', gcs: 'boolean', address: 'string', cluster: 'string', block: 'boolean', 'rare-resources': 'string', ...NODE_FLAGS } as const;
const LOCAL_NATS = `nats://127.0.0.1:${NATS_DEFAULT_PORT}`;

/**
 * `orrery start --head [--address URL]`: the GCS and a raylet for this node, on the NATS server at
 * --address / ORRERY_ADDRESS, else the one answering at 127.0.0.1:4222, else a nats-server started
 * there. `orrery start --address URL`: a raylet joining that cluster. Without --block the processes
 * run in the background and `orrery stop` stops them.
 *
 * `orrery start --gcs [--address URL]`: a GCS process alone. With JetStream on the server it is
 * the leader when no GCS holds the cluster's lease, else a hot standby that takes over when the
 * leader stops renewing it (runtime/gcs/leader.ts).
 *
 * `--rare-resources GPU,my_rare` (head and --gcs only) is the GCS's: every node with one of those resources
 * gets the taint `orrery.io/rare-<name>=true`, and requests for them tolerate it automatically
 * (seed 003). `--taints "k=v[:Effect],…"` are this node's static taints.
 */
export async function start(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('start', argv, FLAGS);
  const gcsOnly = args.flags.gcs === true;
  if (gcsOnly && args.flags.head === true) throw new UsageError('start: --gcs starts a GCS alone; --head starts a GCS and a raylet: give one of them', '--gcs');
  const head = args.flags.head === true;
  const block = args.flags.block === true;
  const nodeArgs = nodeFlagArgs('start', args);
  if (gcsOnly && nodeArgs.length > 0) throw new UsageError('start: --gcs starts no raylet: node flags go to `orrery start --address …`', '--gcs');
  const rare = rareResourcesOf(args, head || gcsOnly);
  const cluster = clusterOf('start', args, io.env);
  let address = addressOf('start', args, io.env, null);
  if (gcsOnly) return startGcsAlone({ address, cluster, rare, block, io });
  if (!head && address === undefined) {
    throw new UsageError('start: --address is required to join a cluster (or set ORRERY_ADDRESS; use --head to start a new one)', '--address');
  }
  const detached = block ? undefined : new DetachedSession(io.env);
  const attached = block ? new AttachedSession(io) : undefined;
  const session: Session = (detached ?? attached)!;
  try {
    let startedNats = false;
    const found = address === undefined;
    if (address === undefined) {
      if (await canConnect('127.0.0.1', NATS_DEFAULT_PORT)) address = LOCAL_NATS;
      else if (findNatsServer()) {
        address = await session.startNats();
        startedNats = true;
      } else throw new NatsServerMissingError();
    }
    const gcsRuns = await gcsAnswers(address, cluster);
    if (head && gcsRuns) {
      throw new OrreryError('GCS_RUNNING', `a GCS already serves cluster ${JSON.stringify(cluster)} at ${address}; join it with: orrery start --address ${address}`);
    }
    if (!head && !gcsRuns) {
      throw new GcsUnavailableError(cluster, address);
    }
    const common = ['--address', address, '--cluster', cluster];
    const meta = { cluster, address };
    const gcs = head ? await session.start('gcs', [...common, ...rare], meta) : undefined;
    const raylet = await session.start('raylet', [...common, ...nodeArgs], meta);
    const node = `node ${String(raylet.ready.nodeName)} (${String(raylet.ready.nodeId)})`;
    if (head) {
      const shared = found ? sharedAddress(address) : address;
      const clusterFlag = cluster === 'default' ? '' : ` --cluster ${cluster}`;
      io.out(`Started the head of cluster ${JSON.stringify(cluster)}: GCS (pid ${gcs!.pid}) and ${node} (pid ${raylet.pid})`);
      if (startedNats) io.out(`Started nats-server on port ${NATS_DEFAULT_PORT} (all interfaces)`);
      io.out(`NATS address: ${shared}`);
      io.out('To add a node, run on it:');
      io.out(`  orrery start --address ${shared}${clusterFlag}`);
      io.out(`Drivers connect with ORRERY_ADDRESS=${shared} or connect({ address: '${shared}' })`);
    } else {
      io.out(`Started ${node} (pid ${raylet.pid}) in cluster ${JSON.stringify(cluster)} at ${address}`);
    }
    if (attached) return await attached.block();
    io.out(`Running in the background (logs in ${detached!.runDir}); stop with: orrery stop`);
    return 0;
  } catch (err) {
    await session.abort();
    throw err;
  }
}

/** `orrery start --gcs`: leader or standby, as the lease decides; says which. */
async function startGcsAlone(opts: { address: string | undefined; cluster: string; rare: string[]; block: boolean; io: CliIo }): Promise<number> {
  const { cluster, io } = opts;
  const address = opts.address ?? LOCAL_NATS;
  const session: Session = opts.block ? new AttachedSession(io) : new DetachedSession(io.env);
  try {
    const gcs = await session.start('gcs', ['--address', address, '--cluster', cluster, ...opts.rare], { cluster, address });
    const role = gcs.ready.standby === true ? 'a standby (another GCS holds the leader lease; this one takes over when it stops renewing it)' : 'the leader';
    io.out(`Started a GCS for cluster ${JSON.stringify(cluster)} at ${address} (pid ${gcs.pid}): ${role}`);
    if (session instanceof AttachedSession) return await session.block();
    io.out(`Running in the background (logs in ${(session as DetachedSession).runDir}); stop with: orrery stop`);
    return 0;
  } catch (err) {
    await session.abort();
    throw err;
  }
}

/** --rare-resources, checked as the GCS will; only the head runs a GCS, so only it takes the flag. */
function rareResourcesOf(args: Parameters<typeof stringFlag>[0], head: boolean): string[] {
  const text = stringFlag(args, 'rare-resources');
  if (text === undefined) return [];
  if (!head) throw new UsageError('start: --rare-resources is a cluster setting: give it to the head (orrery start --head)', '--rare-resources');
  try {
    const names = rareList(text);
    return names.length > 0 ? ['--rare-resources', names.join(',')] : [];
  } catch (err) {
    throw new UsageError(`start: ${err instanceof Error ? err.message : String(err)}`, '--rare-resources');
  }
}

/** Whether a GCS answers for `cluster`; an unreachable server is an error naming the address. */
async function gcsAnswers(address: string, cluster: string): Promise<boolean> {
  return withCluster(address, cluster, async (client) => {
    try {
      await client.nodes();
      return true;
    } catch (err) {
      if (err instanceof GcsUnavailableError) return false;
      throw err;
    }
  });
}

/** The address other machines use for a server found or started here: a loopback host replaced by this machine's first external IPv4 address. */
function sharedAddress(address: string): string {
  const ip = Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
  if (!ip) return address;
  return address.replace(/\/\/(127\.0\.0\.1|localhost)(?=[:/,]|$)/g, `//${ip}`);
}
