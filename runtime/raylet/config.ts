import { randomBytes } from 'node:crypto';
import { availableParallelism, hostname, networkInterfaces } from 'node:os';
import { resolve } from 'node:path';
import { builtinNodeLabels } from '../../lib/labels/builtin.ts';
import { labelValueProblem, validateLabels } from '../../lib/labels/validate.ts';
import { parseResources, type ResourceSet } from '../../lib/resources/resource-set.ts';
import { formatTaints, parseTaints } from '../../lib/scheduling/taints.ts';
import { assertToken } from '../../protocols/subjects.ts';

/** What a raylet registers, checked and completed from its options. */
export interface RayletConfig {
  readonly cluster: string;
  readonly nodeId: string;
  readonly nodeName: string;
  readonly nodeIp: string;
  readonly hostname: string;
  /** User labels plus the built-in orrery.io/node-id, node-name and node-ip. */
  readonly labels: Readonly<Record<string, string>>;
  /** `key: value` or `key: "value:Effect"`, the default effect NoSchedule left implicit. */
  readonly taints: Readonly<Record<string, string>>;
  /** Fixed-point units. */
  readonly total: ResourceSet;
  /** Directories this node's worker hosts load code from (protocols/code-source.ts); empty: any file: URL. */
  readonly codeRoots: readonly string[];
}

export interface RayletConfigInput {
  cluster?: string;
  nodeId?: string;
  nodeName?: string;
  nodeIp?: string;
  labels?: Record<string, string>;
  taints?: Record<string, string>;
  resources?: Record<string, number>;
  codeRoots?: readonly string[];
}

/** A node id: 16 lowercase hex digits, a valid subject token. */
export function newNodeId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * Validates a raylet's options (InvalidLabelError, InvalidResourceError, ProtocolError for a bad
 * cluster name) and fills the defaults: CPU = os.availableParallelism(), the node name = the host
 * name (or `node-<id>` when the host name is not a valid label value), the first non-internal IPv4.
 */
export function rayletConfig(input: RayletConfigInput): RayletConfig {
  const cluster = assertToken('cluster', input.cluster ?? 'default');
  const nodeId = assertToken('nodeId', input.nodeId ?? newNodeId());
  const host = hostname();
  const nodeName = input.nodeName ?? (labelValueProblem(host) === undefined && host !== '' ? host : `node-${nodeId}`);
  const nodeIp = input.nodeIp ?? firstIpv4();
  const user = validateLabels(input.labels ?? {});
  const labels = { ...user, ...builtinNodeLabels({ nodeId, nodeName, nodeIp }) };
  const taints = formatTaints(parseTaints(input.taints ?? {}));
  const total = parseResources({ CPU: availableParallelism(), ...input.resources });
  const codeRoots = Object.freeze((input.codeRoots ?? []).map((root) => resolve(root)));
  return { cluster, nodeId, nodeName, nodeIp, hostname: host, labels, taints, total, codeRoots };
}

/** The first non-internal IPv4 address of this machine, else 127.0.0.1. */
export function firstIpv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
