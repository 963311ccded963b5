import type { NodeInput } from '../cluster/sched-node.ts';
import type { ResourceSet } from '../resources/resource-set.ts';
import type { PlacementGroupRequest } from '../scheduling/bundles/request.ts';
import type { SchedulingRequest } from '../scheduling/request.types.ts';
import type { Taint } from '../scheduling/taints.ts';

/**
 * A kind of node the autoscaler may launch (Ray's `available_node_types`, with the labels of seed 001
 * and the taints of seed 003). Resources are in units (lib/resources/quantity.ts), like every
 * resource set in lib/.
 */
export interface NodeType {
  readonly name: string;
  readonly resources: ResourceSet;
  /** The user's labels; a launched node also carries `orrery.io/node-group=<name>`. */
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly minWorkers: number;
  readonly maxWorkers: number;
  /** Relative price of one node. When every candidate has one, the cheapest set of launches wins; otherwise the fewest. */
  readonly cost?: number;
}

/** A placed actor on a live node, as the GCS reports it. */
export interface LiveActor {
  readonly actorId: string;
  readonly namespace: string;
  readonly labels?: Readonly<Record<string, string>>;
}

/** A node of the cluster as it stands. Its type is its `orrery.io/node-group` label, if any. */
export interface LiveNode extends NodeInput {
  readonly actors?: readonly LiveActor[];
}

/** Pending actors that go to the same places: `count` of one request with the same labels. */
export interface ActorDemand {
  readonly kind: 'actor';
  /** Stable identity of the demand across rounds (the GCS's grouping key). */
  readonly key: string;
  readonly request: SchedulingRequest;
  /** The actors' own labels (without orrery.io/actor-id): placing one adds them to its node. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly count: number;
}

/** Pending placement groups with the same bundles, strategy, selectors and tolerations. */
export interface GroupDemand {
  readonly kind: 'placement_group';
  readonly key: string;
  readonly request: PlacementGroupRequest;
  readonly count: number;
}

export type Demand = ActorDemand | GroupDemand;

export interface AutoscalingInput {
  readonly nodeTypes: readonly NodeType[];
  readonly nodes: readonly LiveNode[];
  /** Per type, launches requested whose node has not registered yet: they count as nodes already. */
  readonly launching?: Readonly<Record<string, number>>;
  readonly demands: readonly Demand[];
  /** The cluster's rare resources: a type holding one carries its taint (seed 003 follow-on). */
  readonly rareResources?: readonly string[];
  /** Seed for the scheduler's random choices, so a decision is reproducible. */
  readonly seed?: number;
}

/**
 * What became of one demand in a round:
 *   placed      fits on the live nodes, the nodes being launched, or the ones this round launches
 *   waiting     some units wait: the nodes that could take them exist (busy), or the types that
 *               could are at maxWorkers (`atMax`), or the scheduler would not use a new node
 *   infeasible  no live node and no node type can ever take it; `reason` says why
 */
export interface DemandOutcome {
  readonly key: string;
  readonly kind: Demand['kind'];
  readonly count: number;
  /** Units that fit on nodes that exist or are launching already. */
  readonly onExisting: number;
  /** Units placed on nodes this round launches, and those launches by type. */
  readonly onNew: number;
  readonly launch: Readonly<Record<string, number>>;
  readonly waiting: number;
  readonly status: 'placed' | 'waiting' | 'infeasible';
  /** For waiting and infeasible: why, in one line. */
  readonly reason?: string;
  /** Waiting because every type that could take it is at maxWorkers. */
  readonly atMax?: boolean;
}

export interface AutoscalingDecision {
  /** Nodes to launch now, by type: minWorkers first, then what the demands need. */
  readonly launch: Readonly<Record<string, number>>;
  /** The part of `launch` that only brings types up to minWorkers. */
  readonly forMinWorkers: Readonly<Record<string, number>>;
  readonly demands: readonly DemandOutcome[];
}
