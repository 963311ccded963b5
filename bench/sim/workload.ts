import { randomInt, type Rng } from '../../lib/random.ts';
import { parseResources } from '../../lib/resources/resource-set.ts';
import { labelIn, nodeAffinity, nodeIdAffinity, actorAffinity, Exists } from '../../lib/selectors/builders.ts';
import type { SimNodeSpec } from './farm.ts';

/**
 * What the simulator creates: nodes with the labels and taints of a mixed fleet, and actors with a
 * mix of the constraints people use, in proportions a real cluster might see. Everything is drawn
 * from the seeded Rng, so a seed names one cluster and one workload.
 *
 * Each actor kind says what must hold wherever it lands (`check`), written here independently of
 * the scheduler, so the simulator's invariant check does not ask the GCS to grade itself.
 */
export const ZONES = ['z1', 'z2', 'z3', 'z4', 'z5'];
export const RACKS = 20;
/** Every tenth node is a GPU node, tainted so only actors that tolerate the taint go there. */
export const GPU_TAINT = 'gpu';

export function nodeSpec(i: number, rng: Rng): SimNodeSpec {
  const gpu = i % 10 === 9;
  const zone = ZONES[randomInt(rng, ZONES.length)];
  return {
    nodeId: `n${String(i).padStart(5, '0')}`,
    name: `sim-${i}`,
    labels: { zone, rack: `r${randomInt(rng, RACKS)}`, type: gpu ? 'gpu' : 'cpu' },
    taints: gpu ? { [GPU_TAINT]: 'true:NoSchedule' } : {},
    total: parseResources(gpu ? { CPU: 16, GPU: 8, memory: 64 * 2 ** 30 } : { CPU: 16, memory: 64 * 2 ** 30 }),
  };
}

export type ActorKind =
  | 'plain'
  | 'memory'
  | 'zones'
  | 'fallback'
  | 'soft-rack'
  | 'anti'
  | 'affine'
  | 'gpu-tolerant'
  | 'spread'
  | 'node-id'
  | 'infeasible';

/** Share of each kind in the mix (sums to 100). */
export const MIX: readonly (readonly [ActorKind, number])[] = [
  ['plain', 35],
  ['memory', 2],
  ['zones', 15],
  ['fallback', 8],
  ['soft-rack', 8],
  ['anti', 8],
  ['affine', 5],
  ['gpu-tolerant', 6],
  ['spread', 8],
  ['node-id', 4],
  ['infeasible', 1],
];

export interface ActorPlan {
  readonly actorId: string;
  readonly kind: ActorKind;
  readonly options: Record<string, unknown>;
  /** Labels the actor carries (anti-affinity and affinity groups). */
  readonly group?: string;
  /** For node-id affinity: the node it must run on. */
  readonly nodeId?: string;
}

/** Actors per anti-affinity group: small enough that the smallest cluster can honour every group. */
const ANTI_GROUP = 5;

export function actorPlan(i: number, rng: Rng, liveNodes: readonly string[], prefix = 'a'): ActorPlan {
  const actorId = `${prefix}${String(i).padStart(6, '0')}`;
  let roll = randomInt(rng, 100);
  let kind: ActorKind = 'plain';
  for (const [k, share] of MIX) {
    if (roll < share) {
      kind = k;
      break;
    }
    roll -= share;
  }
  switch (kind) {
    case 'plain':
      return { actorId, kind, options: {} };
    case 'memory':
      // holds what it asks for (default actors hold no CPU): 256 MiB, 256 of them fill a node
      return { actorId, kind, options: { memory: 2 ** 28 } };
    case 'zones':
      return { actorId, kind, options: { labelSelector: { zone: 'in(z1,z2)' } } };
    case 'fallback':
      return { actorId, kind, options: { labelSelector: { zone: 'z9' }, fallbackStrategy: [{ labelSelector: { zone: 'z3' } }] } };
    case 'soft-rack':
      return { actorId, kind, options: { schedulingStrategy: nodeAffinity([labelIn('rack', [`r${randomInt(rng, RACKS)}`], true)]) } };
    case 'anti': {
      const group = `svc${Math.floor(i / (ANTI_GROUP * 4))}`;
      return { actorId, kind, group, options: { labels: { app: group }, schedulingStrategy: actorAffinity([{ key: 'app', operator: 'NOT_IN', values: [group], soft: false }]) } };
    }
    case 'affine': {
      const group = `cache${randomInt(rng, 50)}`;
      return { actorId, kind, group, options: { labels: { cache: group }, schedulingStrategy: actorAffinity([{ key: 'cache', operator: 'IN', values: [group], soft: true }]) } };
    }
    case 'gpu-tolerant':
      return { actorId, kind, options: { labelSelector: { type: 'gpu' }, tolerations: { [GPU_TAINT]: Exists() } } };
    case 'spread':
      return { actorId, kind, options: { schedulingStrategy: 'SPREAD' } };
    case 'node-id': {
      const nodeId = liveNodes[randomInt(rng, liveNodes.length)];
      return { actorId, kind, nodeId, options: { schedulingStrategy: nodeIdAffinity(nodeId), maxRestarts: 0 } };
    }
    case 'infeasible':
      return { actorId, kind, options: { labelSelector: { pool: 'reserved' } } };
  }
}

/**
 * What must hold for a placed actor of this kind on this node, or the broken rule; `others` are the
 * plans of the actors on the same node (for anti-affinity).
 */
export function placementProblem(plan: ActorPlan, node: SimNodeSpec, others: readonly ActorPlan[]): string | undefined {
  const gpuNode = Object.hasOwn(node.taints, GPU_TAINT);
  const tolerates = plan.kind === 'gpu-tolerant';
  if (gpuNode && !tolerates) return `${plan.actorId} (${plan.kind}) runs on tainted node ${node.nodeId} without a toleration`;
  switch (plan.kind) {
    case 'zones':
      return ['z1', 'z2'].includes(node.labels.zone) ? undefined : `${plan.actorId} needs zone in (z1,z2), runs in ${node.labels.zone}`;
    case 'fallback':
      return node.labels.zone === 'z3' ? undefined : `${plan.actorId} needs zone z3 (its fallback), runs in ${node.labels.zone}`;
    case 'gpu-tolerant':
      return node.labels.type === 'gpu' ? undefined : `${plan.actorId} needs a gpu node, runs on ${node.nodeId}`;
    case 'anti': {
      const twin = others.find((o) => o !== plan && o.kind === 'anti' && o.group === plan.group);
      return twin ? `${plan.actorId} and ${twin.actorId} (anti-affinity ${plan.group}) share node ${node.nodeId}` : undefined;
    }
    case 'node-id':
      return node.nodeId === plan.nodeId ? undefined : `${plan.actorId} must run on ${plan.nodeId}, runs on ${node.nodeId}`;
    case 'infeasible':
      return `${plan.actorId} has a selector no node matches, yet runs on ${node.nodeId}`;
    default:
      return undefined;
  }
}
