import type { ClusterState } from '../cluster/cluster-state.ts';
import type { SchedNode } from '../cluster/sched-node.ts';
import type { NodeOrder } from '../cluster/node-order.ts';
import { NODE_SCOPE, actorScope } from '../label-index/label-index.ts';
import type { LabelMatchExpression } from '../selectors/expression.ts';
import type { Attempt } from './filters/filter.ts';

/**
 * The narrowest node set an attempt's constraints imply, from the label index: a hard node-id pin,
 * or the IN / EXISTS expression (node labels or actor labels) that matches the fewest nodes.
 * Undefined when nothing is selective (NOT_IN, DOES_NOT_EXIST, GT and LT admit most nodes).
 * Filters still run on every candidate; this only decides where to look.
 */
export interface Candidates {
  readonly size: number;
  ids(): Iterable<string>;
  /**
   * Every selective node-label expression's candidates in the cluster's (score, id) order, merged
   * from the per-value orders ClusterState keeps, so a picker can walk them best-first. A node that
   * passes is in each of these sets, so walking them side by side finds it after at most
   * (walks × the shortest walk) steps, whichever expression that turns out to be.
   */
  readonly walks: readonly (() => Iterable<SchedNode>)[];
  /**
   * The per-value orders of the walk with the fewest nodes: a passing node is in one of them, so a
   * window's passing nodes can be sampled and collected from these alone (pickOrdered).
   */
  readonly narrowest?: readonly NodeOrder<SchedNode>[];
  /** How many nodes each walk holds, in the order of `walks`. */
  readonly walkSizes?: readonly number[];
}

/** Merging more per-value orders than this costs more than it saves. */
const MAX_MERGED_ORDERS = 8;

export function candidatesFor(state: ClusterState, attempt: Attempt): Candidates | undefined {
  if (attempt.nodeId !== undefined) {
    const id = attempt.nodeId;
    return { size: 1, ids: () => [id], walks: [] };
  }
  let best: Omit<Candidates, 'walks'> | undefined;
  const walks: (() => Iterable<SchedNode>)[] = [];
  let narrowest: NodeOrder<SchedNode>[] | undefined;
  let narrowestSize = Infinity;
  const walkSizes: number[] = [];
  const walkable = (orders: NodeOrder<SchedNode>[], size: number): void => {
    if (orders.length > MAX_MERGED_ORDERS) return;
    walks.push(() => mergeOrders(orders));
    walkSizes.push(size);
    if (size < narrowestSize) {
      narrowestSize = size;
      narrowest = orders;
    }
  };
  const consider = (scope: string, expr: LabelMatchExpression): void => {
    const values = expr.operator === 'IN' ? expr.values : expr.operator === 'EXISTS' ? undefined : null;
    if (values === null) return;
    const size = values ? state.index.countByKeyValue(scope, expr.key, values) : state.index.countByKey(scope, expr.key);
    if (scope === NODE_SCOPE) {
      const all = values ?? state.index.valuesOf(scope, expr.key);
      if (all.length <= MAX_MERGED_ORDERS) walkable(all.map((v) => state.labelOrder(expr.key, v)).filter((o) => o !== undefined), size);
    }
    if (best && size >= best.size) return;
    const ids = values ? () => state.index.nodesByKeyValue(scope, expr.key, values) : () => state.index.nodesByKey(scope, expr.key);
    best = { size, ids };
  };
  for (const expr of attempt.selector) consider(NODE_SCOPE, expr);
  for (const expr of attempt.nodeAffinity) consider(NODE_SCOPE, expr);
  /**
   * Affinity over a topology domain (IN / EXISTS with a topologyKey) admits the nodes of the domains
   * that hold a peer: those domains come from the per-domain aggregation in O(result), and their
   * nodes from the node-label orders of topologyKey=domain, which are walks like any label's.
   */
  const considerTopology = (expr: LabelMatchExpression): void => {
    if (expr.operator !== 'IN' && expr.operator !== 'EXISTS') return;
    const domains = state.topology(expr.topologyKey!);
    const scope = actorScope(expr.namespace ?? attempt.req.namespace);
    const found = expr.operator === 'IN' ? domains.nodesByKeyValue(scope, expr.key, expr.values) : domains.nodesByKey(scope, expr.key);
    const orders: NodeOrder<SchedNode>[] = [];
    let size = 0;
    for (const domain of found) {
      const order = state.labelOrder(expr.topologyKey!, domain);
      if (order) orders.push(order), (size += order.size);
    }
    walkable(orders, size);
    if (best && size >= best.size) return;
    best = { size, ids: () => idsOf(orders) };
  };
  for (const expr of attempt.actorAffinity) {
    if (expr.topologyKey === undefined) consider(actorScope(expr.namespace ?? attempt.req.namespace), expr);
    else considerTopology(expr);
  }
  return best && Object.assign({}, best, { walks, walkSizes }, narrowest ? { narrowest } : {});
}

function* idsOf(orders: readonly NodeOrder<SchedNode>[]): Generator<string> {
  for (const order of orders) for (let i = 0; i < order.size; i++) yield order.at(i).id;
}

/** Walks several (score, id)-ordered node lists as one, best first. A node has one value per key, so the lists are disjoint. */
function* mergeOrders(orders: readonly NodeOrder<SchedNode>[]): Generator<SchedNode> {
  const at = orders.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < orders.length; i++) {
      if (at[i] >= orders[i].size) continue;
      if (best < 0 || before(orders[i].at(at[i]), orders[best].at(at[best]))) best = i;
    }
    if (best < 0) return;
    yield orders[best].at(at[best]++);
  }
}

/** Does node a come before node b in the hybrid order? */
export function before(a: SchedNode, b: SchedNode): boolean {
  return a.score < b.score || (a.score === b.score && a.id < b.id);
}
