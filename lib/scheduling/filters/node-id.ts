import type { Filter, Rejection } from './filter.ts';

const OTHER_NODE: Rejection = { code: 'infeasible', reason: "didn't match the requested node id" };

/** A hard node-id affinity admits exactly one node. */
export const nodeIdAffinity: Filter = {
  name: 'node-id-affinity',
  kind: 'constraint',
  check(node, attempt) {
    return attempt.nodeId === undefined || attempt.nodeId === node.id ? undefined : OTHER_NODE;
  },
};
