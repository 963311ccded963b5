/**
 * One node as the scheduler sees it (SchedNode): its state, labels, taints, resource sets, score
 * and placed actors, with the inputs that register a node and change its resource sets. ClusterState
 * (cluster-state.ts) owns every SchedNode and is the only writer.
 */
import type { ResourceSet } from '../resources/resource-set.ts';
import type { Taint } from '../scheduling/taints.ts';
import type { ActorLabelCounts } from './actor-label-counts.ts';

export type NodeState = 'ALIVE' | 'DRAINING' | 'DEAD';

export interface PlacedActor {
  readonly actorId: string;
  readonly namespace: string;
  /** The actor's labels including its automatic orrery.io/actor-id label. */
  readonly labels: Readonly<Record<string, string>>;
}

/** One node as the scheduler sees it. Read freely; change only through ClusterState. */
export interface SchedNode {
  readonly id: string;
  readonly name: string;
  state: NodeState;
  labels: Readonly<Record<string, string>>;
  taints: readonly Taint[];
  total: ResourceSet;
  available: ResourceSet;
  /** Hybrid-policy score, kept current by ClusterState (see node-order.ts). */
  score: number;
  readonly actors: Map<string, PlacedActor>;
  /**
   * Actor-label counts the node holds without the actors behind them (actor-label-counts.ts): a
   * raylet's view knows a node's actors only this way. Indexed like the labels of `actors`.
   */
  actorLabels?: ActorLabelCounts;
}

export interface NodeInput {
  readonly nodeId: string;
  readonly name?: string;
  readonly state?: NodeState;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly Taint[];
  readonly total: ResourceSet;
  readonly available?: ResourceSet;
}

/** Per-name changes to a node's resource sets (`ClusterState.setResources`). */
export interface ResourceChanges {
  readonly total?: ResourceSet;
  readonly available?: ResourceSet;
  /** Names the node no longer has, in either set. */
  readonly removed?: readonly string[];
}
