/**
 * How the autoscaler starts and stops machines. A provider only runs them: the autoscaler decides
 * what to launch (lib/autoscaling), learns that a node is up when its raylet registers with the GCS
 * under the name it was given, and drains a node before it asks for it to be terminated.
 *
 * To add a provider (a Kubernetes one would create a pod running `orrery start --address … --block`
 * with the request's flags): implement NodeProvider, make `launch` resolve once the machine is asked
 * for (not when it has registered) and reject with one line when it cannot be, and make `terminate`
 * idempotent — it is called for a node that never registered too.
 */
export interface LaunchRequest {
  readonly nodeType: string;
  /** The name the node must register under (`--node-name`): how the autoscaler recognises it. */
  readonly nodeName: string;
  /** Every label the node must carry, orrery.io/node-group included. */
  readonly labels: Readonly<Record<string, string>>;
  /** `key: value` or `key: "value:Effect"`, as `--taints` takes them. */
  readonly taints: Readonly<Record<string, string>>;
  /** User quantities ({ CPU: 4, GPU: 1 }). */
  readonly resources: Readonly<Record<string, number>>;
  /** The NATS address(es) the node joins. */
  readonly address: string;
  readonly cluster: string;
  /**
   * How long the node may wait for a NATS server that does not answer yet (`--connect-wait`): the
   * autoscaler gives its launch timeout, so a node started during an outage joins when the server is
   * back rather than exiting and being launched again.
   */
  readonly connectWaitSeconds?: number;
}

export interface ProvidedNode {
  readonly nodeType: string;
  readonly nodeName: string;
  /** Once it registered. */
  readonly nodeId?: string;
}

/** A node a provider runs for the cluster: launched, by this autoscaler or an earlier one, and not terminated. */
export interface LaunchedNode {
  readonly nodeName: string;
  /** Its node type; when left out, read from its name (`<cluster>-<type>-<6 hex>`). */
  readonly nodeType?: string;
  /** When its launch was asked for (ms since the epoch); when left out, when it was taken over. */
  readonly since?: number;
}

export interface NodeProvider {
  readonly kind: string;
  launch(req: LaunchRequest): Promise<void>;
  terminate(node: ProvidedNode): Promise<void>;
  /**
   * Optional: the nodes this provider runs for the cluster, registered or not. An autoscaler started
   * again takes those that have not registered yet as launches in flight — counted against the
   * demand and given up after the launch timeout like its own — rather than launching again for the
   * same demand (Ray's autoscaler asks its provider the same: non_terminated_nodes). Without it, a
   * launch an earlier autoscaler left in flight is seen only once its node registers.
   */
  launched?(): Promise<readonly LaunchedNode[]>;
  /** Releases what the provider holds; launched nodes keep running (`orrery down` terminates them). */
  close(): Promise<void>;
}

/** The `orrery start` flags that make a raylet what the request describes. */
export function rayletArgs(req: LaunchRequest): string[] {
  const args = ['--address', req.address, '--cluster', req.cluster, '--node-name', req.nodeName];
  const labels = Object.entries(req.labels).map(([k, v]) => `${k}=${v}`).join(',');
  if (labels) args.push('--labels', labels);
  const taints = Object.entries(req.taints).map(([k, v]) => `${k}=${v}`).join(',');
  if (taints) args.push('--taints', taints);
  args.push('--resources', JSON.stringify(req.resources));
  if (req.connectWaitSeconds !== undefined && req.connectWaitSeconds > 0) args.push('--connect-wait', String(req.connectWaitSeconds));
  return args;
}

/** The environment a `command` provider's shell commands see. */
export function launchEnv(req: LaunchRequest | (ProvidedNode & { address: string; cluster: string })): Record<string, string> {
  const env: Record<string, string> = {
    ORRERY_NODE_TYPE: req.nodeType,
    ORRERY_NODE_NAME: req.nodeName,
    ORRERY_ADDRESS: req.address,
    ORRERY_CLUSTER: req.cluster,
  };
  if ('labels' in req) {
    env.ORRERY_NODE_LABELS = Object.entries(req.labels).map(([k, v]) => `${k}=${v}`).join(',');
    env.ORRERY_NODE_TAINTS = Object.entries(req.taints).map(([k, v]) => `${k}=${v}`).join(',');
    env.ORRERY_NODE_RESOURCES = JSON.stringify(req.resources);
    env.ORRERY_START_ARGS = rayletArgs(req).map(shellQuote).join(' ');
  }
  if ('nodeId' in req && req.nodeId) env.ORRERY_NODE_ID = req.nodeId;
  return env;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=,@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
