import type { Filter, Rejection } from './filter.ts';

const DRAINING: Rejection = { code: 'infeasible', reason: 'were draining' };
const DEAD: Rejection = { code: 'infeasible', reason: 'were dead' };

/** Only ALIVE nodes take new work. */
export const nodeStatus: Filter = {
  name: 'node-status',
  kind: 'constraint',
  check(node) {
    if (node.state === 'ALIVE') return undefined;
    return node.state === 'DRAINING' ? DRAINING : DEAD;
  },
};
