// runtime/raylet — one per node: registers the node with the GCS, heartbeats, runs actors in
// worker hosts (in-process for the memory transport, forked children on NATS), keeps a copy of the
// cluster view from gcs.view, and decides, runs, spills back or queues the tasks submitted to it.
import type { Bus } from '../bus/bus.ts';
import { rayletConfig } from './config.ts';
import { RayletService } from './service.ts';

export { rayletConfig, firstIpv4, newNodeId, type RayletConfig } from './config.ts';
export { rayletMachine, type RayletContext, type RayletInput } from './raylet.machine.ts';
export { DEFAULT_WORKER_FLAGS, WORKER_ENTRY } from './worker-process.ts';
export { RayletView, type LocalNode, type ViewStats } from './cluster-view.ts';
export { decideTask, feasibleHere, passesHere, type TaskDecision } from './task-decision.ts';
export { DEFAULT_LEASE_IDLE_MS, DEFAULT_LEASE_LIFETIME_MS, DEFAULT_MAX_SPILL_HOPS } from './local-tasks.ts';

export interface RayletOptions {
  bus: Bus;
  /** Cluster name, the second subject token; default 'default'. */
  cluster?: string;
  /** Default: the host name (or `node-<id>` when it is not a valid label value). */
  nodeName?: string;
  /** User labels; validated here (the `orrery.io/` prefix is reserved). */
  labels?: Record<string, string>;
  /** Taints: `'v'` or `'v:Effect'` per key. */
  taints?: Record<string, string>;
  /** User-facing quantities (`{ CPU: 4, GPU: 1, my_res: 2 }`); CPU defaults to os.availableParallelism(). */
  resources?: Record<string, number>;
  /**
   * Where actors run: on the raylet's bus in this process, or in forked worker processes that
   * connect to `natsAddress` (`workerExecArgv`: extra node flags, default DEFAULT_WORKER_FLAGS).
   */
  hosts: { mode: 'inline' } | { mode: 'process'; natsAddress: string; workerExecArgv?: readonly string[] };
  /** Default: the first non-internal IPv4 address, else 127.0.0.1. */
  nodeIp?: string;
  log?: (line: string) => void;
  /** Heartbeat pace until the GCS's registration reply sets it; default 500 ms. */
  heartbeatMs?: number;
  /** Pause between registration attempts that found no GCS, and between actor_died retries; default 500 ms. */
  retryMs?: number;
  /** Timeout of each request to the GCS; default 2,000 ms. */
  requestTimeoutMs?: number;
  /** Most worker hosts for tasks; default: the node's whole CPUs, at most the machine's cores (at least 1). */
  maxTaskHosts?: number;
  /** Spills of one task submission for want of room before a raylet that could run it keeps it; default 3. */
  maxSpillHops?: number;
  /** Worker leases granted to drivers with task results (default idle 100 ms, lifetime 1 s); false: none. */
  workerLeases?: { idleMs: number; lifetimeMs: number } | false;
}

export interface RayletHandle {
  readonly nodeId: string;
  readonly nodeName: string;
  /** Graceful: stops the worker hosts and unsubscribes. */
  stop(): Promise<void>;
  /** Abrupt, for an in-process killNode: heartbeats, subscriptions and hosts end; the GCS is not told. */
  crash(): Promise<void>;
  /** Resolves once the raylet has stopped: by stop()/crash(), or with `error` when the GCS refused to register it again. */
  readonly closed: Promise<{ error?: { code: string; message: string } }>;
  /** What the raylet is doing, for operators and specs. */
  stats(): ReturnType<RayletService['stats']>;
}

/**
 * Starts a raylet on `bus`: subscribes its subjects, registers with the GCS (retrying while no GCS
 * answers), and resolves once registered. Invalid labels, taints or resources reject at once
 * (INVALID_LABEL, INVALID_RESOURCE); a GCS that refuses the registration rejects with its error.
 */
export async function startRaylet(opts: RayletOptions): Promise<RayletHandle> {
  const config = rayletConfig(opts);
  const service = new RayletService({
    bus: opts.bus,
    config,
    hosts: opts.hosts,
    log: opts.log ?? (() => {}),
    heartbeatMs: opts.heartbeatMs,
    retryMs: opts.retryMs,
    requestTimeoutMs: opts.requestTimeoutMs,
    maxTaskHosts: opts.maxTaskHosts,
    maxSpillHops: opts.maxSpillHops,
    workerLeases: opts.workerLeases,
  });
  await service.start();
  return {
    nodeId: config.nodeId,
    nodeName: config.nodeName,
    stop: () => service.stop(),
    crash: () => service.crash(),
    closed: service.closed,
    stats: () => service.stats(),
  };
}
