import type { Condition, LabelMatchExpression, NodeAffinityTerm } from '../selectors/expression.ts';

/**
 * Scheduling strategies, as data. The builders in lib/selectors/builders.ts make them; the
 * scheduler reads them. Every variant survives msgpackr encoding (plain objects and arrays).
 */
export interface ActorAffinityStrategy {
  readonly type: 'ACTOR_AFFINITY';
  readonly expressions: readonly LabelMatchExpression[];
}

export interface NodeAffinityStrategy {
  readonly type: 'NODE_AFFINITY';
  /** Expressions and anyOf(...) groups, ANDed. */
  readonly expressions: readonly NodeAffinityTerm[];
}

/** Ray's NodeAffinitySchedulingStrategy: one node by id, hard or soft. */
export interface NodeIdAffinityStrategy {
  readonly type: 'NODE_ID_AFFINITY';
  readonly nodeId: string;
  readonly soft: boolean;
  /** Soft only: when the node is alive but busy, place elsewhere instead of waiting for it. */
  readonly spillOnUnavailable: boolean;
  /** Hard only: when the node cannot take the request now, fail at once instead of waiting. */
  readonly failOnUnavailable: boolean;
}

/** Ray's NodeLabelSchedulingStrategy: hard and soft conditions on node labels. */
export interface NodeLabelStrategy {
  readonly type: 'NODE_LABEL';
  readonly hard: Readonly<Record<string, Condition>>;
  readonly soft: Readonly<Record<string, Condition>>;
}

export interface PlacementGroupStrategy {
  readonly type: 'PLACEMENT_GROUP';
  readonly placementGroupId: string;
  /** -1: any bundle of the group with room. */
  readonly bundleIndex: number;
}

export type SchedulingStrategy =
  | 'DEFAULT'
  | 'SPREAD'
  | ActorAffinityStrategy
  | NodeAffinityStrategy
  | NodeIdAffinityStrategy
  | NodeLabelStrategy
  | PlacementGroupStrategy;
