import { existsSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { OrreryError } from '../../../lib/errors.ts';
import { GcsUnavailableError } from '../../client/errors.ts';
import { rareList } from '../../gcs/flags.ts';
import { NatsServerMissingError, NATS_DEFAULT_PORT, canConnect, findNatsServer } from '../../local/nats-server.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf } from '../connection.ts';
import type { CliIo } from '../io.ts';
import { NODE_FLAGS, nodeFlagArgs } from '../node-flags.ts';
import { AttachedSession, DetachedSession, type Session } from '../sessions.ts';
import { readRecords, runDir } from '../run-dir.ts';
import { readCredentials } from '../../auth/credentials.ts';
import { READY_TIMEOUT_MS } from '../../local/runtime-process.ts';
import { CONFIG_FILE, authInit, credsFile } from '../../auth/init.ts';
import type { Role } from '../../auth/roles.ts';
import type { NatsAccess } from '../../process/flags.ts';
import { connectWaitOf, gcsAnswersWithin } from '../gcs-wait.ts';
import { GCS_SETTING_FLAGS, gcsSettingsOf } from '../gcs-settings.ts';
export { gcsAnswers } from '../gcs-wait.ts';

const FLAGS = { head: 'boolean', gcs: 'boolean', address: 'string', cluster: 'string', block: 'boolean', 'rare-resources': 'string', 'auth-dir': 'string', listen: 'string', 'connect-wait': 'string', ...GCS_SETTING_FLAGS, ...NODE_FLAGS } as const;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);
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
 * (seed 003). `--taints "k=v[:Effect],…"` are this node's static taints. The GCS's settings
 * (`--job-timeout-ms`, `--node-timeout-ms`, `--create-timeout-ms`, …; head and --gcs only) go to the
 * GCS it starts (gcs-settings.ts).
 *
 * `--connect-wait SECONDS` (or $ORRERY_CONNECT_WAIT): how long to wait for a NATS server, and a
 * joining node for its cluster's GCS, that does not answer yet — a machine booting beside them, or a
 * node an autoscaler launches during an outage — instead of failing at once. The processes started
 * get the same wait for their own first connection.
 */
export async function start(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('start', argv, FLAGS);
  const gcsOnly = args.flags.gcs === true;
  if (gcsOnly && args.flags.head === true) throw new UsageError('start: --gcs starts a GCS alone; --head starts a GCS and a raylet: give one of them', '--gcs');
  const head = args.flags.head === true;
  const block = args.flags.block === true;
  const nodeArgs = nodeFlagArgs('start', args);
  if (gcsOnly && nodeArgs.length > 0) throw new UsageError('start: --gcs starts no raylet: node flags go to `orrery start --address …`', '--gcs');
  const gcsArgs = [...rareResourcesOf(args, head || gcsOnly), ...gcsSettingsOf(args, head || gcsOnly, io.env)];
  const cluster = clusterOf('start', args, io.env);
  const waitSeconds = connectWaitOf(args, io.env);
  const waitArgs = waitSeconds > 0 ? ['--connect-wait', String(waitSeconds)] : [];
  let address = addressOf('start', args, io.env, null);
  const listen = stringFlag(args, 'listen');
  if (listen !== undefined && (!head || address !== undefined)) {
    throw new UsageError('start: --listen is where the nats-server that `orrery start --head` starts listens; it takes no --address', '--listen');
  }
  let authDir = stringFlag(args, 'auth-dir');
  if (authDir !== undefined && !head) throw new UsageError(`start: --auth-dir is the head's; ${gcsOnly ? 'a GCS alone takes --creds DIR/gcs.creds' : 'a joining node takes --creds DIR/node.creds'}`, '--auth-dir');
  if (head && io.access?.creds !== undefined) {
    throw new UsageError('start: --head runs a GCS and a raylet, two roles with two credentials: give --auth-dir DIR (gcs.creds and node.creds in it) rather than --creds', '--creds');
  }
  // a server reachable from other machines is never started open: its keys go into the run dir
  if (listen !== undefined && !LOOPBACK_HOSTS.has(listen) && authDir === undefined) authDir = join(runDir(io.env), `auth-${cluster}`);
  const auth = authDir === undefined ? undefined : authFiles(authDir, cluster, io);
  const tls = io.access?.tls;
  const accessOf = (role: Role): NatsAccess => (auth ? { creds: auth.creds(role), ...(tls ? { tls } : {}) } : (io.access ?? {}));
  if (gcsOnly) return startGcsAlone({ address, cluster, gcsArgs: [...gcsArgs, ...waitArgs], block, io, waitSeconds });
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
      const taken = await canConnect('127.0.0.1', NATS_DEFAULT_PORT);
      if (taken && auth) {
        throw new OrreryError('NATS_RUNNING', `a NATS server already listens on 127.0.0.1:${NATS_DEFAULT_PORT}: orrery starts a server with authentication only on a free port; stop that one, or run it with -c ${auth.config} and pass --address`);
      }
      if (taken) address = LOCAL_NATS;
      else if (findNatsServer()) {
        address = await session.startNats({ host: listen, config: auth?.config });
        startedNats = true;
      } else throw new NatsServerMissingError();
    }
    const observer = auth ? { creds: auth.creds('observer'), ...(tls ? { tls } : {}) } : (io.access ?? {});
    const gcsRuns = await gcsAnswersWithin(waitSeconds, address, cluster, observer, { wanted: !head, io });
    if (head && gcsRuns) {
      throw new OrreryError('GCS_RUNNING', `a GCS already serves cluster ${JSON.stringify(cluster)} at ${address}; join it with: orrery start --address ${address}`);
    }
    if (!head && !gcsRuns) {
      throw new GcsUnavailableError(cluster, address);
    }
    const common = ['--address', address, '--cluster', cluster];
    const meta = { cluster, address };
    const readyTimeoutMs = READY_TIMEOUT_MS + waitSeconds * 1000;
    const gcs = head ? await session.start('gcs', [...common, ...accessArgs(accessOf('gcs')), ...gcsArgs, ...waitArgs], meta, { readyTimeoutMs }) : undefined;
    const raylet = await session.start('raylet', [...common, ...accessArgs(accessOf('node')), ...nodeArgs, ...waitArgs, ...nameOfAnotherRaylet(nodeArgs, detached)], meta, { readyTimeoutMs });
    const node = `node ${String(raylet.ready.nodeName)} (${String(raylet.ready.nodeId)})`;
    if (head) {
      // a server orrery started listens on loopback only: its address is not one to share
      const shared = (found && !startedNats) || (listen !== undefined && !LOOPBACK_HOSTS.has(listen)) ? sharedAddress(address) : address;
      const clusterFlag = cluster === 'default' ? '' : ` --cluster ${cluster}`;
      io.out(`Started the head of cluster ${JSON.stringify(cluster)}: GCS (pid ${gcs!.pid}) and ${node} (pid ${raylet.pid})`);
      const on = `${listen ?? '127.0.0.1'}:${NATS_DEFAULT_PORT}`;
      if (startedNats && auth) io.out(`Started nats-server on ${on} with authentication (${auth.config}).`);
      else if (startedNats) {
        io.out(`Started nats-server on ${on}: this machine only, without authentication (docs/security.md).`);
        io.out('For nodes on other machines, start the head with --listen 0.0.0.0 (authentication on, keys in the run dir) or --auth-dir DIR.');
      }
      io.out(`NATS address: ${shared}`);
      if (auth) {
        io.out(`Credentials of each role are in ${auth.dir} (mode 0600; copy only the one a machine needs).`);
        io.out('To add a node, copy node.creds to it and run there:');
        io.out(`  orrery start --address ${shared}${clusterFlag} --creds ${auth.creds('node')}`);
        io.out(`Drivers connect with ORRERY_ADDRESS=${shared} ORRERY_CREDS=${auth.creds('driver')}, or connect({ address: '${shared}', creds: '${auth.creds('driver')}' })`);
      } else {
        io.out('To add a node, run on it:');
        io.out(`  orrery start --address ${shared}${clusterFlag}${io.access?.creds ? ' --creds FILE' : ''}`);
        io.out(`Drivers connect with ORRERY_ADDRESS=${shared} or connect({ address: '${shared}' })`);
      }
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
async function startGcsAlone(opts: { address: string | undefined; cluster: string; gcsArgs: string[]; block: boolean; io: CliIo; waitSeconds: number }): Promise<number> {
  const { cluster, io } = opts;
  const address = opts.address ?? LOCAL_NATS;
  const session: Session = opts.block ? new AttachedSession(io) : new DetachedSession(io.env);
  try {
    const readyTimeoutMs = READY_TIMEOUT_MS + opts.waitSeconds * 1000;
    const gcs = await session.start('gcs', ['--address', address, '--cluster', cluster, ...accessArgs(io.access ?? {}), ...opts.gcsArgs], { cluster, address }, { readyTimeoutMs });
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

/** The address other machines use for a server found or started here: a loopback host replaced by this machine's first external IPv4 address. */
function sharedAddress(address: string): string {
  const ip = Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
  if (!ip) return address;
  return address.replace(/\/\/(127\.0\.0\.1|localhost)(?=[:/,]|$)/g, `//${ip}`);
}

/** The flags that hand a process its credentials and TLS files (paths: no secret on a command line). */
export function accessArgs(access: NatsAccess): string[] {
  return [
    ...(access.creds === undefined ? [] : ['--creds', access.creds]),
    ...(access.tls?.ca === undefined ? [] : ['--tls-ca', access.tls.ca]),
    ...(access.tls?.cert === undefined ? [] : ['--tls-cert', access.tls.cert]),
    ...(access.tls?.key === undefined ? [] : ['--tls-key', access.tls.key]),
  ];
}

/**
 * The head's credentials: DIR as `orrery auth init` wrote it, or written now when DIR holds none.
 * Keys already there are kept (a restarted head keeps its nodes' credentials valid) but must be
 * this cluster's.
 */
function authFiles(dir: string, cluster: string, io: CliIo): { dir: string; config: string; creds(role: Role): string } {
  const config = join(dir, CONFIG_FILE);
  if (!existsSync(config)) {
    authInit({ dir, cluster });
    io.out(`Wrote a nats-server configuration and credentials for cluster ${JSON.stringify(cluster)} to ${dir} (orrery auth init).`);
  } else {
    const written = readCredentials(credsFile(dir, 'gcs')).cluster;
    if (written !== undefined && written !== cluster) {
      throw new UsageError(`start: ${dir} holds the credentials of cluster ${JSON.stringify(written)}, not ${JSON.stringify(cluster)}`, '--auth-dir');
    }
  }
  return { dir, config, creds: (role) => credsFile(dir, role) };
}

/**
 * A node name is one live node's (NODE_NAME_TAKEN), and a raylet is named after its host unless
 * told otherwise: a second `orrery start` on a host whose run dir already runs a raylet under the
 * host's name gets `--node-name <host>-2` (then -3, …), so the common case of several nodes on one
 * machine just works. An explicit --node-name is left as it is.
 */
function nameOfAnotherRaylet(nodeArgs: readonly string[], session: DetachedSession | undefined): string[] {
  if (session === undefined || nodeArgs.includes('--node-name')) return [];
  const host = hostname();
  const taken = new Set(readRecords(session.runDir).filter((r) => r.role === 'raylet' && alive(r.pid)).map((r) => r.nodeName));
  if (!taken.has(host)) return [];
  let k = 2;
  while (taken.has(`${host}-${k}`)) k++;
  return ['--node-name', `${host}-${k}`];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
