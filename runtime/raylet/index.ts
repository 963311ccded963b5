// runtime/raylet — one per node: registers the node with the GCS, heartbeats, runs actors in
// worker hosts (in-process for the memory transport, forked children on NATS), keeps a copy of the
// cluster view from gcs.view, and decides, runs, spills back or queues the tasks submitted to it.
import { rayletConfig, type RayletConfigInput } from './config.ts';
import { RayletService } from './service.ts';
import type { RayletServiceOptions } from './service-options.ts';

export { rayletConfig, firstIpv4, newNodeId, type RayletConfig } from './config.ts';
export { rayletMachine, type RayletContext, type RayletInput } from './raylet.machine.ts';
export { DEFAULT_WORKER_FLAGS, WORKER_ENTRY } from './worker-process.ts';
export { RayletView, type LocalNode, type ViewStats } from './cluster-view.ts';
export { decideTask, feasibleHere, passesHere, type TaskDecision } from './task-decision.ts';
export { DEFAULT_MAX_SPILL_HOPS } from './task-placing.ts';
export { DEFAULT_LEASE_IDLE_MS, DEFAULT_LEASE_LIFETIME_MS } from './worker-leases.ts';

/**
 * A raylet's node (RayletConfigInput: cluster, name, labels, taints, resources, ip — validated by
 * rayletConfig, which fills the defaults) and its service's options (RayletServiceOptions: hosts,
 * pacing, task limits, onActorSystem); `log` defaults to silence.
 */
export interface RayletOptions extends Omit<RayletConfigInput, 'nodeId'>, Omit<RayletServiceOptions, 'config' | 'log'> {
  log?: (line: string) => void;
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
  const { cluster, nodeName, nodeIp, labels, taints, resources, codeRoots, log, ...serviceOptions } = opts;
  const config = rayletConfig({ cluster, nodeName, nodeIp, labels, taints, resources, codeRoots });
  const service = new RayletService({ ...serviceOptions, config, log: log ?? (() => {}) });
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
