import type { ResourceSet } from '../resources/resource-set.ts';
import type { LabelMatchAnyOf, LabelMatchExpression } from '../selectors/expression.ts';
import type { NodeIdAffinityStrategy } from './strategy.types.ts';
import type { Tolerations } from './taints.ts';

export type TargetKind = 'actor' | 'task' | 'placement_group';

/**
 * A scheduling request after validation (see request.ts): everything the filters need, already
 * parsed, so the hot path does no parsing and no defaulting.
 */
export interface SchedulingRequest {
  readonly target?: { readonly kind: TargetKind; readonly id: string; readonly name?: string };
  /** The requester's namespace; actor-affinity expressions match actor labels in it. */
  readonly namespace: string;
  readonly resources: ResourceSet;
  /**
   * Hard node-label expressions, one list per tier: tier 0 is `labelSelector`, then each
   * `fallbackStrategy` entry in order. Always at least one (possibly empty) tier.
   */
  readonly selectorTiers: readonly (readonly LabelMatchExpression[])[];
  /** Node-label expressions from nodeAffinity / nodeLabelStrategy, hard and soft. */
  readonly nodeAffinity: readonly LabelMatchExpression[];
  /** anyOf(...) groups from nodeAffinity, hard and soft (absent: none). */
  readonly nodeAffinityAnyOf?: readonly LabelMatchAnyOf[];
  /** Actor-label expressions from actorAffinity, hard and soft. */
  readonly actorAffinity: readonly LabelMatchExpression[];
  readonly nodeId?: NodeIdAffinityStrategy;
  readonly tolerations: Tolerations;
  /**
   * Nodes where a running actor's hard anti-affinity matches this request's actor, with those
   * actors' ids (set by the GCS, which knows its residents; see resident-anti-affinity.ts).
   */
  readonly repelledBy?: Readonly<Record<string, readonly string[]>>;
  /** The same for residents whose anti-affinity has a topologyKey: every node of their domain is refused. */
  readonly repelledIn?: readonly { readonly topologyKey: string; readonly domain: string; readonly actors: readonly string[] }[];
  readonly spread: boolean;
}
