/**
 * The cluster and the constraint mix of the end-to-end bench's actor-creation section.
 *
 * Four nodes of 100 CPUs: two in region `us`, two in `eu`, one zone each; the last is a dedicated
 * pool with the taint `dedicated=bench` (NoSchedule). Every actor asks for 0.01 CPU, so 10,000 need
 * 100 of the 400 CPUs and nothing waits for resources: the figure is the runtime's, not a queue's.
 *
 * Actor i gets kind i mod 7 — one seventh each — and, within a kind, one of a few variants picked by
 * a seeded generator, so every run submits the same kinds and variants in the same order; affinity
 * peers are drawn from whichever earlier actors are registered by then.
 */
import {
  Exists, actorAffinity, affinity, antiAffinity, labelIn, nodeAffinity, seededRng, type Rng,
} from '../../lib/index.ts';
import type { ActorOptions, NodeInfo, NodeSpec } from '../../runtime/index.ts';

export const CPUS_PER_NODE = 100;
export const CPUS_PER_ACTOR = 0.01;

export const NODES: NodeSpec[] = [
  { name: 'us-a', resources: { CPU: CPUS_PER_NODE }, labels: { region: 'us', zone: 'us-a', pool: 'general' } },
  { name: 'us-b', resources: { CPU: CPUS_PER_NODE }, labels: { region: 'us', zone: 'us-b', pool: 'general' } },
  { name: 'eu-a', resources: { CPU: CPUS_PER_NODE }, labels: { region: 'eu', zone: 'eu-a', pool: 'general' } },
  { name: 'eu-b', resources: { CPU: CPUS_PER_NODE }, labels: { region: 'eu', zone: 'eu-b', pool: 'dedicated' }, taints: { dedicated: 'bench' } },
];

export const KINDS = ['plain', 'label selector', 'node affinity', 'actor affinity', 'anti-affinity', 'tolerations', 'SPREAD'] as const;
export type Kind = (typeof KINDS)[number];

/** Whether an actor of this request may serve as an affinity peer: it cannot land on the tainted node. */
export const peerable = (req: Request): boolean => !req.allowed.has('eu-b');

/** What one actor asked for, kept to check where it landed. */
export interface Request {
  readonly kind: Kind;
  readonly options: ActorOptions;
  /** Nodes it may land on (by name), from its label selector / node affinity / tolerations. */
  readonly allowed: ReadonlySet<string>;
  /** Actors it must share a node with (one of them), or must not. */
  readonly with?: readonly string[];
  readonly without?: readonly string[];
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
const untainted = new Set(['us-a', 'us-b', 'eu-a']);
const all = new Set(['us-a', 'us-b', 'eu-a', 'eu-b']);

export class Mix {
  private readonly rng: Rng;

  constructor(seed = 7) {
    this.rng = seededRng(seed);
  }

  /**
   * The request of actor i. `earlier` are actors already registered (so placed: their actor-id
   * label is on their node) that cannot be on the tainted node — an affinity peer there would leave
   * an actor without the toleration waiting forever. Affinity kinds refer to them, and fall back to
   * plain while there are too few.
   */
  next(i: number, earlier: readonly string[]): Request {
    const base: ActorOptions = { numCpus: CPUS_PER_ACTOR };
    const kind = KINDS[i % KINDS.length];
    const rng = this.rng;
    switch (kind) {
      case 'label selector': {
        const v = pick<{ labelSelector: Record<string, string>; allowed: string[] }>(rng, [
          { labelSelector: { region: 'eu' }, allowed: ['eu-a'] },
          { labelSelector: { zone: 'in(us-a,eu-a)' }, allowed: ['us-a', 'eu-a'] },
          { labelSelector: { region: '!in(eu)' }, allowed: ['us-a', 'us-b'] },
        ]);
        return { kind, options: { ...base, labelSelector: v.labelSelector }, allowed: new Set(v.allowed) };
      }
      case 'node affinity': {
        const v = pick(rng, [
          { strategy: nodeAffinity([labelIn('region', ['us']), labelIn('zone', ['us-b'], true)]), allowed: ['us-a', 'us-b'] },
          { strategy: nodeAffinity([labelIn('zone', ['us-a', 'eu-a'])]), allowed: ['us-a', 'eu-a'] },
        ]);
        return { kind, options: { ...base, schedulingStrategy: v.strategy }, allowed: new Set(v.allowed) };
      }
      case 'actor affinity': {
        if (earlier.length === 0) return { kind, options: base, allowed: untainted };
        const peer = pick(rng, earlier);
        return { kind, options: { ...base, schedulingStrategy: actorAffinity(affinity([peer])) }, allowed: untainted, with: [peer] };
      }
      case 'anti-affinity': {
        if (earlier.length < 2) return { kind, options: base, allowed: untainted };
        const peers = [pick(rng, earlier), pick(rng, earlier)];
        return { kind, options: { ...base, schedulingStrategy: actorAffinity(antiAffinity(peers)) }, allowed: untainted, without: peers };
      }
      case 'tolerations': {
        // Half may go anywhere, tainted node included; half ask for the dedicated pool itself.
        if (rng() < 0.5) return { kind, options: { ...base, tolerations: { dedicated: Exists() } }, allowed: all };
        return { kind, options: { ...base, tolerations: { dedicated: Exists() }, labelSelector: { pool: 'dedicated' } }, allowed: new Set(['eu-b']) };
      }
      case 'SPREAD':
        return { kind, options: { ...base, schedulingStrategy: 'SPREAD' }, allowed: untainted };
      default:
        return { kind, options: base, allowed: untainted };
    }
  }
}

/**
 * Constraint violations among placed actors: a node it may not use, an affinity peer elsewhere, an
 * anti-affinity peer on the same node. Should be 0; a bench that counted misplaced actors as
 * created would be measuring the wrong thing.
 */
export function violations(
  requests: readonly (Request | undefined)[],
  ids: readonly (string | undefined)[],
  nodeOf: ReadonlyMap<string, string>,
  nodes: readonly NodeInfo[],
): number {
  const nameOf = new Map(nodes.map((n) => [n.nodeId, n.name]));
  const where = (actorId: string): string | undefined => {
    const nodeId = nodeOf.get(actorId);
    return nodeId === undefined ? undefined : nameOf.get(nodeId);
  };
  let bad = 0;
  requests.forEach((req, i) => {
    const id = ids[i];
    if (!req || id === undefined) return;
    const at = where(id);
    if (at === undefined) return;
    if (!req.allowed.has(at)) bad++;
    else if (req.with && !req.with.some((p) => where(p) === at)) bad++;
    else if (req.without && req.without.some((p) => where(p) === at)) bad++;
  });
  return bad;
}
