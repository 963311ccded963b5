import { InvalidOptionError } from '../../lib/errors.ts';
import { assertToken } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import { resolveAddress } from '../bus/address.ts';
import { ConnectionFailedError } from '../bus/errors.ts';
import { connectMemoryBus } from '../bus/memory.ts';
import { connectNatsBus, type TlsFiles } from '../bus/nats-connect.ts';
import { connectNatsBusWaiting } from '../bus/connect-wait.ts';
import { ClusterClient, type Cluster } from './cluster.ts';
import type { JobSpec } from './job-session.ts';
import { MEMORY_SCHEME, lookupMemoryBroker } from './memory-registry.ts';
import { codeShipper, packRuntimeEnv } from '../code/shipper.ts';

export { DEFAULT_ADDRESS, resolveAddress } from '../bus/address.ts';

export interface ConnectOptions {
  /**
   * NATS URL(s), comma-separated, or `memory://<id>` for a local cluster on the memory transport.
   * Default: env ORRERY_ADDRESS, else nats://127.0.0.1:4222 (where `orrery start --head` serves).
   */
  address?: string;
  /** The cluster name, the second subject token. Default 'default'. */
  cluster?: string;
  /** The default namespace for named actors. Default 'default'. */
  namespace?: string;
  /** Limit for one request to the GCS; default 10,000 ms. */
  requestTimeoutMs?: number;
  /**
   * Limit for one actor call or task submission; default 60,000 ms. A call that reaches it fails
   * with TIMEOUT (the method may still be running); `handle.options({ timeoutMs })` sets it per call.
   */
  callTimeoutMs?: number;
  /** How long the first NATS connection may take; default 5,000 ms. */
  connectTimeoutMs?: number;
  /**
   * How long to keep trying a NATS server that does not answer yet (refused, timed out, a name not
   * resolving yet) before failing with CONNECTION_FAILED — for a driver started beside the cluster
   * (a container, a compose file), as `--connect-wait` is for the daemons. Default 0: fail at once.
   * A server that answers and refuses (credentials, TLS) fails at once whatever this says.
   */
  connectWaitMs?: number;
  /**
   * A credentials file for a server with authentication (`orrery auth init` writes one per role:
   * driver.creds, observer.creds, admin.creds). Default: env ORRERY_CREDS, else none.
   */
  creds?: string;
  /** TLS files for a server that requires TLS: the CA, and a client certificate and key. */
  tls?: TlsFiles;
  /**
   * The connection is a job (docs/jobs.md): registered with the GCS, heartbeating, finished on
   * close(); what it creates is owned by it unless `lifetime: 'detached'`. `{ name }` names the job
   * in `orrery list jobs`. `false`: not a job (a tool that only reads; what it creates is owned by
   * nobody). Default `{}`.
   */
  job?: JobSpec | false;
  /**
   * Ray's runtime_env. `workingDir`: a directory shipped to the nodes as it is at connect()
   * (node_modules and .git left out, at most 100 MiB: InvalidOptionError past it); modules in it are
   * loaded from the shipped copy, named by their path inside it (docs/code-shipping.md).
   */
  runtimeEnv?: { workingDir?: string };
}

/** The longest timer Node.js keeps; the bound of every limit here. */
const NO_LIMIT_MS = 2 ** 31 - 1;
/** No call waits for ever by default: one whose answer never comes fails after a minute. */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

/** Where a worker host keeps its cluster (runtime/worker/worker-cluster.ts), and the runtime context that names it (context.ts). */
const WORKER_CLUSTER = Symbol.for('orrery.workerCluster');
const RUNTIME_CONTEXT = Symbol.for('orrery.runtimeContext');
type WorkerClusters = { [WORKER_CLUSTER]?: { get(): Promise<Cluster> }; [RUNTIME_CONTEXT]?: { getStore(): { cluster?: { get(): Promise<unknown> } } | undefined } };

/** The cluster of the worker host running this code, if it runs in one. */
function workerCluster(): Promise<Cluster> | undefined {
  const g = globalThis as WorkerClusters;
  const inContext = g[RUNTIME_CONTEXT]?.getStore()?.cluster;
  if (inContext !== undefined) return inContext.get() as Promise<Cluster>;
  return g[WORKER_CLUSTER]?.get();
}

/**
 * Connects a driver to a cluster. An unreachable server is a CONNECTION_FAILED error naming the address.
 *
 * Inside an actor or a task, `connect()` with no argument returns the cluster the worker belongs to,
 * on the worker host's own connection: what it creates is owned by the job of the calling actor
 * or task (docs/jobs.md), and its close() does nothing. With options it connects anew, as anywhere.
 */
export async function connect(opts?: ConnectOptions): Promise<Cluster> {
  if (opts === undefined) {
    const worker = workerCluster();
    if (worker !== undefined) return worker;
    opts = {};
  }
  const address = resolveAddress(opts.address);
  const cluster = opts.cluster ?? 'default';
  const namespace = opts.namespace ?? 'default';
  checkToken('cluster', cluster);
  if (typeof namespace !== 'string' || namespace === '') throw new InvalidOptionError('namespace', namespace, 'expected a non-empty string');
  const requestTimeoutMs = positive('requestTimeoutMs', opts.requestTimeoutMs, 10_000);
  const callTimeoutMs = positive('callTimeoutMs', opts.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS);
  const workingDir = packRuntimeEnv(opts.runtimeEnv);
  const creds = opts.creds ?? (process.env.ORRERY_CREDS?.trim() || undefined);
  const connectWaitMs = orZero('connectWaitMs', opts.connectWaitMs);
  const bus = await openBus(address, opts.connectTimeoutMs, connectWaitMs, { creds, tls: opts.tls });
  if (workingDir !== undefined) codeShipper(bus, cluster).useWorkingDir(workingDir);
  const job = opts.job === false ? undefined : checkJob(opts.job ?? {});
  // a job's heartbeat thread opens a connection of its own, as this one was opened (job-session.ts)
  const beatConnection = address.startsWith(MEMORY_SCHEME)
    ? undefined
    : { servers: address, ...(creds === undefined ? {} : { creds }), ...(opts.tls === undefined ? {} : { tls: opts.tls }), ...(opts.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: opts.connectTimeoutMs }) };
  return ClusterClient.open(bus, { address, cluster, namespace, requestTimeoutMs, callTimeoutMs, ownsBus: true, ...(job === undefined ? {} : { job }), ...(beatConnection === undefined ? {} : { beatConnection }) });
}

async function openBus(address: string, connectTimeoutMs: number | undefined, waitMs: number, access: { creds?: string; tls?: TlsFiles }): Promise<Bus> {
  if (address.startsWith(MEMORY_SCHEME)) {
    const broker = lookupMemoryBroker(address);
    if (!broker) throw new ConnectionFailedError(address, 'no local cluster with this address runs in this process');
    return connectMemoryBus(broker);
  }
  const opts = { servers: address, name: 'orrery-driver', connectTimeoutMs, ...(access.creds === undefined ? {} : { creds: access.creds }), ...(access.tls === undefined ? {} : { tls: access.tls }) };
  return waitMs > 0 ? connectNatsBusWaiting(opts, { waitMs }) : connectNatsBus(opts);
}

function checkJob(job: JobSpec): JobSpec {
  if (job === null || typeof job !== 'object' || Array.isArray(job)) throw new InvalidOptionError('job', job, 'expected { name?, heartbeat? } or false');
  for (const key of Object.keys(job)) if (key !== 'name' && key !== 'heartbeat') throw new InvalidOptionError(`job.${key}`, (job as Record<string, unknown>)[key], 'unknown job option; expected name or heartbeat');
  if (job.heartbeat !== undefined && job.heartbeat !== 'thread' && job.heartbeat !== 'loop') throw new InvalidOptionError('job.heartbeat', job.heartbeat, "expected 'thread' or 'loop'");
  if (job.name !== undefined && (typeof job.name !== 'string' || job.name.length === 0 || job.name.length > 256)) {
    throw new InvalidOptionError('job.name', job.name, 'expected a non-empty string of at most 256 characters');
  }
  return job;
}

function checkToken(option: string, value: unknown): void {
  try {
    assertToken(option, value);
  } catch {
    throw new InvalidOptionError(option, value, "expected a non-empty name without '.', '*', '>' or whitespace");
  }
}

function orZero(option: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !(value >= 0) || value > NO_LIMIT_MS) throw new InvalidOptionError(option, value, `expected a number of ms from 0 to ${NO_LIMIT_MS}`);
  return value;
}

function positive(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || value > NO_LIMIT_MS) {
    throw new InvalidOptionError(option, value, `expected a number of ms from 1 to ${NO_LIMIT_MS}`);
  }
  return value;
}
