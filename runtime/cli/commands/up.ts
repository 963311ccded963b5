import { resolve } from 'node:path';
import { OrreryError } from '../../../lib/errors.ts';
import { NODE_GROUP_LABEL } from '../../../lib/labels/builtin.ts';
import { nodeNamePattern } from '../../autoscaler/autoscaler.ts';
import { loadAutoscalerConfig, type AutoscalerConfig } from '../../autoscaler/config.ts';
import { providerFor } from '../../autoscaler/providers.ts';
import { ConnectionFailedError } from '../../bus/errors.ts';
import { GcsUnavailableError } from '../../client/errors.ts';
import { isRunning, runsCommand, signal } from '../../local/process-tree.ts';
import { NATS_DEFAULT_PORT, NatsServerMissingError, canConnect, findNatsServer } from '../../local/nats-server.ts';
import { UsageError, parseArgs } from '../args.ts';
import { addressOf } from '../address.ts';
import { connectForCommand, withCluster } from '../connection.ts';
import type { CliIo } from '../io.ts';
import { readRecords, runDir, writeRecords, type ProcessRecord } from '../run-dir.ts';
import { DetachedSession } from '../sessions.ts';
import { accessArgs, gcsAnswers } from './start.ts';
import { GCS_SETTING_FLAGS, gcsSettingsOf } from '../gcs-settings.ts';

const LOCAL_NATS = `nats://127.0.0.1:${NATS_DEFAULT_PORT}`;
const GRACE_MS = 10_000;

/**
 * `orrery up CONFIG [--address URL] [--wait S] [GCS settings]`: the cluster the config describes.
 * Starts what is missing — a nats-server (as `orrery start --head` does, when none answers), the GCS
 * (when none serves the config's cluster; with the GCS settings given, gcs-settings.ts) — then the
 * autoscaler process, which launches the minWorkers nodes;
 * waits until they are up, printing each as it registers. Everything it starts runs in the
 * background, recorded for `orrery down CONFIG`.
 */
export async function up(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('up', argv, { address: 'string', wait: 'string', ...GCS_SETTING_FLAGS }, 1);
  const gcsArgs = gcsSettingsOf(args, true, io.env, 'up');
  const file = configArg('up', args.positionals[0]);
  const config = loadConfig('up', file);
  const wait = waitSeconds(args.flags.wait, config);
  const { cluster } = config;
  if (readRecords(runDir(io.env)).some((r) => r.role === 'autoscaler' && r.cluster === cluster && isRunning(r.pid))) {
    throw new OrreryError('AUTOSCALER_RUNNING', `an autoscaler for cluster ${JSON.stringify(cluster)} already runs from this machine; stop it with: orrery down ${file}`);
  }
  const session = new DetachedSession(io.env);
  try {
    let address = addressOf('up', args, io.env, null);
    if (address === undefined) {
      if (await canConnect('127.0.0.1', NATS_DEFAULT_PORT)) address = LOCAL_NATS;
      else if (findNatsServer()) {
        address = await session.startNats({ autoscaler: cluster });
        io.out(`Started nats-server on 127.0.0.1:${NATS_DEFAULT_PORT} (this machine only).`);
      } else throw new NatsServerMissingError();
    }
    const meta = { cluster, address, autoscaler: cluster };
    if (!(await gcsAnswers(address, cluster, io.access ?? {}))) {
      const gcs = await session.start('gcs', ['--address', address, '--cluster', cluster, ...accessArgs(io.access ?? {}), ...gcsArgs], meta);
      io.out(`Started the GCS of cluster ${JSON.stringify(cluster)} (pid ${gcs.pid}).`);
    } else if (gcsArgs.length > 0) {
      // a setting that would silently not apply is worse than none
      throw new UsageError(`up: ${gcsArgs[0]} is the GCS's, and a GCS already serves cluster ${JSON.stringify(cluster)} at ${address}: it keeps its own settings (stop it to start one with these)`, gcsArgs[0]);
    }
    const scaler = await session.start('autoscaler', ['--config', file, '--address', address, ...accessArgs(io.access ?? {})], meta);
    const types = config.nodeTypes.map((t) => `${t.name} (${t.minWorkers}-${t.maxWorkers})`).join(', ');
    io.out(`Started the autoscaler (pid ${scaler.pid}, ${config.provider.type} provider): node types ${types}.`);
    const wanted = config.nodeTypes.filter((t) => t.minWorkers > 0);
    if (wanted.length > 0 && wait > 0) await waitForMinWorkers(address, config, wanted, wait, io);
    io.out(`Cluster ${JSON.stringify(cluster)} is up at ${address}. Status: orrery status; events: orrery events --follow; stop: orrery down ${file}`);
    return 0;
  } catch (err) {
    await session.abort();
    throw err;
  }
}

/**
 * `orrery down CONFIG [--address URL]`: stops the autoscaler, terminates every node it launched
 * (its provider's terminate; nodes it did not launch are left alone), then the GCS and nats-server
 * if `orrery up` started them.
 */
export async function down(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('down', argv, { address: 'string' }, 1);
  const file = configArg('down', args.positionals[0]);
  const config = loadConfig('down', file);
  const { cluster } = config;
  const dir = runDir(io.env);
  const mine = readRecords(dir).filter((r) => r.autoscaler === cluster);
  const scalers = mine.filter((r) => r.role === 'autoscaler');
  for (const r of scalers) await stopRecord(r, io);
  const address = addressOf('down', args, io.env, null) ?? mine.find((r) => r.address)?.address ?? LOCAL_NATS;
  const names = new Set(mine.filter((r) => r.role === 'raylet' && r.nodeName).map((r) => r.nodeName!));
  // a command provider's nodes are on other machines: the GCS knows their names
  try {
    const nodes = await withCluster(address, cluster, (c) => c.nodes(), io.access ?? {});
    for (const n of nodes) {
      const type = n.labels[NODE_GROUP_LABEL];
      if (n.state !== 'DEAD' && type !== undefined && nodeNamePattern(cluster, type).test(n.name)) names.add(n.name);
    }
  } catch (err) {
    // nothing to ask: the nodes recorded here are all there is to terminate
    if (!(err instanceof GcsUnavailableError) && !(err instanceof ConnectionFailedError)) throw err;
  }
  const provider = providerFor(config, { address, env: io.env });
  for (const name of [...names].sort()) {
    const type = config.nodeTypes.find((t) => nodeNamePattern(cluster, t.name).test(name))?.name ?? '';
    await provider.terminate({ nodeType: type, nodeName: name });
    io.out(`terminated node ${name}${type ? ` (${type})` : ''}`);
  }
  await provider.close();
  for (const role of ['gcs', 'nats-server'] as const) for (const r of mine.filter((x) => x.role === role)) await stopRecord(r, io);
  writeRecords(dir, readRecords(dir).filter((r) => !mine.some((m) => m.pid === r.pid && m.startedAt === r.startedAt)));
  if (scalers.length === 0 && names.size === 0) io.out(`no autoscaler or autoscaled nodes of cluster ${JSON.stringify(cluster)} were found`);
  return 0;
}

function configArg(command: string, path: string | undefined): string {
  if (path === undefined) throw new UsageError(`${command}: missing the cluster config file (orrery ${command} cluster.yaml)`);
  return resolve(path);
}

function loadConfig(command: string, file: string): AutoscalerConfig {
  try {
    return loadAutoscalerConfig(file);
  } catch (err) {
    throw new UsageError(`${command}: ${(err as Error).message}`);
  }
}

function waitSeconds(flag: string | boolean | undefined, config: AutoscalerConfig): number {
  if (flag === undefined) return config.launchTimeoutSeconds;
  const n = Number(flag);
  if (typeof flag !== 'string' || flag.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`up: --wait: expected seconds (got ${JSON.stringify(flag)})`, '--wait');
  return n;
}

/** Prints each type's registered count as it grows, until every type has its minWorkers. */
async function waitForMinWorkers(address: string, config: AutoscalerConfig, wanted: AutoscalerConfig['nodeTypes'], seconds: number, io: CliIo): Promise<void> {
  const client = await connectForCommand(address, config.cluster, io.access ?? {});
  try {
    const deadline = Date.now() + seconds * 1000;
    let last = '';
    for (;;) {
      const nodes = await client.nodes();
      const up = wanted.map((t) => ({ t, n: nodes.filter((n) => n.state === 'ALIVE' && n.labels[NODE_GROUP_LABEL] === t.name).length }));
      const line = `minWorkers: ${up.map(({ t, n }) => `${t.name} ${Math.min(n, t.minWorkers)}/${t.minWorkers}`).join(', ')}`;
      if (line !== last) io.out(line);
      last = line;
      if (up.every(({ t, n }) => n >= t.minWorkers)) return;
      if (Date.now() > deadline) {
        io.err(`orrery up: the minWorkers nodes are not all up after ${seconds} s; the autoscaler keeps trying (orrery status shows why)`);
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await client.close();
  }
}

async function stopRecord(r: ProcessRecord, io: CliIo): Promise<void> {
  const what = `${r.role} (pid ${r.pid})`;
  if (!runsCommand(r.pid, r.command)) return io.out(`${what} was not running`);
  signal(-r.pid, 'SIGTERM');
  const deadline = Date.now() + GRACE_MS;
  while (isRunning(r.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  signal(-r.pid, 'SIGKILL');
  io.out(`stopped ${what}`);
}
