import { availableParallelism } from 'node:os';
import { fromUnits } from '../../lib/resources/quantity.ts';
import type { CodeSourcePolicy } from '../../protocols/code-source.ts';
import type { HostLease } from '../../protocols/ipc.ts';
import type { Bus } from '../bus/bus.ts';
import type { HostNode } from '../worker/host.ts';
import type { RayletConfig } from './config.ts';
import type { Fence } from './fence.ts';
import type { HostsOption } from './service-options.ts';
import type { WorkerHost } from './worker-host.ts';
import { WorkerProcess } from './worker-process.ts';

/**
 * How the raylet starts a worker host when its actors or tasks need one (local-actors.ts, `launch`):
 * inline or as a child process, with the lease the fence holds now (fence.ts) and the code roots it
 * may load from.
 */
export interface HostLauncherDeps {
  readonly hosts: HostsOption;
  readonly bus: Bus;
  readonly config: RayletConfig;
  readonly log: (line: string) => void;
  readonly fence: Pick<Fence, 'remainingMs'>;
}

export class HostLauncher {
  private readonly node: HostNode;

  constructor(private readonly deps: HostLauncherDeps) {
    const { config } = deps;
    this.node = { nodeId: config.nodeId, nodeName: config.nodeName, labels: config.labels };
  }

  launch(): Promise<WorkerHost> {
    const { hosts, bus, config, log } = this.deps;
    const lease = this.hostLease();
    // Loaded on first use: a raylet process runs its hosts as children and never holds the worker's
    // ActorHost and TaskRunner itself (spec/runtime/process-graphs.spec.ts keeps them out of it).
    if (hosts.mode === 'inline') {
      return import('./worker-host.ts').then(({ InlineWorkerHost }) => new InlineWorkerHost({ bus, cluster: config.cluster, node: this.node, log, lease, codeSources: codeSources(config) }));
    }
    return WorkerProcess.start({ cluster: config.cluster, natsAddress: hosts.natsAddress, natsAccess: hosts.natsAccess, node: this.node, log, execArgv: hosts.workerExecArgv, lease, freshLease: () => this.hostLease(), codeRoots: config.codeRoots });
  }

  /** The lease a host starts with: what is left of the raylet's, or fenced; none when not armed. */
  private hostLease(): HostLease | undefined {
    const remainingMs = this.deps.fence.remainingMs();
    if (remainingMs === undefined) return undefined;
    return remainingMs > 0 ? { type: 'renew', remainingMs, sentAt: Date.now() } : { type: 'fence' };
  }
}

/** Where this node's worker hosts may load code from: its code roots (protocols/code-source.ts). */
export function codeSources(config: RayletConfig): CodeSourcePolicy {
  return { roots: config.codeRoots };
}

/** Task hosts: one per whole CPU of the node, no more than the machine has cores, at least one. */
export function defaultTaskHosts(cpuUnits: number): number {
  return Math.max(1, Math.min(Math.floor(fromUnits('CPU', cpuUnits)), availableParallelism()));
}
