import { fits, shortOf } from '../../resources/resource-set.ts';
import { describeResource } from '../bundle-resources.ts';
import type { Filter } from './filter.ts';

/**
 * Feasible (the node's total could hold the request) versus available (its free resources hold
 * it now). Infeasible nodes never will; busy ones may once work finishes (seed 004).
 */
export const resourcesFit: Filter = {
  name: 'resources',
  kind: 'resources',
  check(node, attempt) {
    const need = attempt.req.resources;
    if (fits(node.available, need)) return undefined;
    const neverFits = shortOf(node.total, need);
    if (neverFits.length) {
      return { code: 'infeasible', reason: `had less total ${neverFits.map(describeResource).join(', ')} than requested`, detail: { resources: neverFits } };
    }
    const busy = shortOf(node.available, need);
    return { code: 'unschedulable', reason: `had insufficient ${busy.map(describeResource).join(', ')}`, detail: { resources: busy } };
  },
};
