import type { Filter, Rejection } from './filter.ts';

export const RESIDENT_ANTI_AFFINITY = 'had an actor whose anti-affinity excludes this one';

/**
 * The other half of hard anti-affinity (Kubernetes' InterPodAffinity "existing pods' anti-affinity
 * rules"): a node is refused when an actor already running there has a hard anti-affinity term that
 * matches the newcomer. The GCS knows its residents' terms and passes the repelling nodes in the
 * request (`repelledBy`: node → those residents; `repelledIn`: topology domains, for residents whose
 * term has a topologyKey), so this check is O(1 + domains) and its reason names the resident's rule,
 * with the residents in `detail`. Residents move, so it may fit later.
 */
const rejected = (detail: Rejection['detail']): Rejection => ({ code: 'unschedulable', reason: RESIDENT_ANTI_AFFINITY, detail });

export const residentAntiAffinity: Filter = {
  name: 'resident-anti-affinity',
  kind: 'constraint',
  check(node, attempt) {
    const by = attempt.req.repelledBy;
    if (by !== undefined && Object.hasOwn(by, node.id)) return rejected({ actors: by[node.id] });
    for (const d of attempt.req.repelledIn ?? []) {
      if (Object.hasOwn(node.labels, d.topologyKey) && node.labels[d.topologyKey] === d.domain) return rejected({ ...d });
    }
    return undefined;
  },
};
