import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeNotFoundError } from '../../lib/errors.ts';
import { CONFIG_FILE, authInit, credsFile } from '../auth/init.ts';
import type { Role } from '../auth/roles.ts';
import { connect } from '../client/connect.ts';
import type { Cluster } from '../client/cluster.ts';
import type { NodeInfo } from '../client/cluster-info.types.ts';
import type { LocalCluster, LocalClusterOptions, NodeSpec } from './local-cluster.types.ts';
import { nodeInfoOf } from './memory-cluster.ts';
import { startNatsServer, type NatsServerHandle } from './nats-server.ts';
import { rayletFlags, resolveNodeSpec, type ResolvedNodeSpec } from './node-spec.ts';
import { descendants, signal } from './process-tree.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from './runtime-process.ts';

/**
 * A cluster of real processes on NATS: nats-server (spawned on a free port unless an address is
 * given), a GCS process, one raylet process per node, and a client in this process. Everything it
 * starts is stopped by stop(), and SIGKILLed if this process exits first.
 */
export async function startProcessCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  const specs = opts.nodes.map((spec, i) => resolveNodeSpec(spec, `node-${i + 1}`));
  const clusterName = opts.cluster ?? 'default';
  const raylets = new Map<string, RuntimeProcess>();
  const children = new Set<RuntimeProcess>();
  let nats: NatsServerHandle | undefined;
  let gcs: RuntimeProcess | undefined;
  let client: Cluster | undefined;
  let added = specs.length;
  const onExit = (): void => {
    for (const child of children) for (const pid of [child.pid, ...descendants(child.pid)]) signal(pid, 'SIGKILL');
    if (nats) signal(nats.pid, 'SIGKILL');
  };
  process.once('exit', onExit);

  const track = (child: RuntimeProcess): RuntimeProcess => {
    children.add(child);
    void child.exited.then(() => children.delete(child));
    return child;
  };
  const spawnOpts = { onLine: opts.onOutput, nodeFlags: opts.nodeFlags };

  let address = opts.address;
  const rare = [
    ...(opts.rareResources?.length ? ['--rare-resources', opts.rareResources.join(',')] : []),
    ...(opts.jobTimeoutMs === undefined ? [] : ['--job-timeout-ms', String(opts.jobTimeoutMs)]),
  ];
  /** Every GCS process started, leader and standbys. */
  const gcses: RuntimeProcess[] = [];
  const tempAuth = opts.auth === true ? mkdtempSync(join(tmpdir(), 'orrery-auth-')) : undefined;
  const authDir = tempAuth ?? (typeof opts.auth === 'object' ? opts.auth.dir : undefined);
  if (authDir !== undefined && !existsSync(join(authDir, CONFIG_FILE))) authInit({ dir: authDir, cluster: clusterName });
  const creds = (role: Role): string[] => (authDir === undefined ? [] : ['--creds', credsFile(authDir, role)]);
  const common = (): string[] => ['--address', address!, '--cluster', clusterName];
  const startNode = async (spec: ResolvedNodeSpec): Promise<RuntimeProcess> => {
    const raylet = track(await spawnRuntimeProcess('raylet', [...common(), ...creds('node'), ...rayletFlags(spec)], spawnOpts));
    raylets.set(String(raylet.ready.nodeId), raylet);
    return raylet;
  };

  const stop = async (): Promise<void> => {
    await client?.close().catch(() => undefined);
    await Promise.all([...raylets.values()].map((r) => r.stop()));
    raylets.clear();
    await gcs?.stop();
    await Promise.all([...children].map((c) => c.stop()));
    await nats?.stop();
    if (tempAuth) rmSync(tempAuth, { recursive: true, force: true });
    process.removeListener('exit', onExit);
  };

  try {
    if (address === undefined) {
      // with JetStream, as `orrery start --head` runs it: the GCS keeps its tables there
      nats = await startNatsServer({ jetstream: true, ...(authDir === undefined ? {} : { config: join(authDir, CONFIG_FILE) }) });
      address = nats.url;
    }
    gcs = track(await spawnRuntimeProcess('gcs', [...common(), ...creds('gcs'), ...rare], spawnOpts));
    gcses.push(gcs);
    await Promise.all(specs.map(startNode));
    client = await connect({ address, cluster: clusterName, ...(authDir === undefined ? {} : { creds: credsFile(authDir, 'admin') }) });
  } catch (err) {
    await stop();
    throw err;
  }
  const cluster = client;
  return {
    cluster,
    address,
    transport: 'nats',
    ...(authDir === undefined ? {} : { authDir }),
    addNode: async (spec: NodeSpec): Promise<NodeInfo> => {
      const raylet = await startNode(resolveNodeSpec(spec, `node-${++added}`));
      return nodeInfoOf(await cluster.nodes(), String(raylet.ready.nodeId));
    },
    rayletPid: (nodeId: string): number | undefined => raylets.get(nodeId)?.pid,
    startGcs: async (): Promise<void> => {
      gcses.push(track(await spawnRuntimeProcess('gcs', [...common(), ...creds('gcs'), ...rare], spawnOpts)));
    },
    killLeaderGcs: async (): Promise<void> => {
      // the leader: the newest epoch a live GCS process said it holds (READY, or its log on taking over)
      const epochOf = (p: RuntimeProcess): number => {
        const said = [...p.recentOutput().matchAll(/holding the leader lease with epoch (\d+)/g)].map((m) => Number(m[1]));
        return Math.max(typeof p.ready.epoch === 'number' ? p.ready.epoch : 0, ...said);
      };
      const live = gcses.filter((p) => children.has(p));
      const leader = live.reduce<RuntimeProcess | undefined>((best, p) => (best === undefined || epochOf(p) > epochOf(best) ? p : best), undefined);
      if (!leader) throw new Error('no GCS process runs');
      gcses.splice(gcses.indexOf(leader), 1);
      await leader.crash();
    },
    reloadNats: (): void => {
      if (!nats) throw new Error('this cluster did not start its nats-server');
      process.kill(nats.pid, 'SIGHUP');
    },
    restartNats: async (o: { downMs?: number } = {}): Promise<void> => {
      if (!nats) throw new Error('this cluster did not start its nats-server');
      await nats.restart(o);
    },
    killNode: async (nodeId: string): Promise<void> => {
      const raylet = raylets.get(nodeId);
      if (!raylet) throw new NodeNotFoundError(nodeId);
      raylets.delete(nodeId);
      await raylet.crash();
    },
    stop,
  };
}
