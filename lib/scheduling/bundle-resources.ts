/**
 * Placement-group bundles become resources (as in Ray): when a bundle of group G is committed on a
 * node, the node gains `CPU_group_G` (any bundle) and `CPU_group_<i>_G` (bundle i) for each resource
 * it reserved. A request placed in the group asks for those names instead of plain CPU, so
 * "room in the bundle" is an ordinary resource fit.
 */
const PATTERN = /^(.+)_group_(?:(\d+)_)?([A-Za-z0-9-]+)$/;

export function bundleResourceName(resource: string, groupId: string, bundleIndex = -1): string {
  return bundleIndex < 0 ? `${resource}_group_${groupId}` : `${resource}_group_${bundleIndex}_${groupId}`;
}

/**
 * Rewrites a request's resources to draw from a placement group's bundle(s). A request for bundle i
 * asks for both `R_group_i_G` and `R_group_G` (as Ray does): the group-wide name counts what every
 * bundle on the node holds, so work placed in "any bundle" and work placed in bundle i cannot
 * together take more than the bundles reserved.
 */
export function resourcesInBundle(resources: Readonly<Record<string, number>>, groupId: string, bundleIndex = -1): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name in resources) {
    out[bundleResourceName(name, groupId, -1)] = resources[name];
    if (bundleIndex >= 0) out[bundleResourceName(name, groupId, bundleIndex)] = resources[name];
  }
  return out;
}

/** The bundle resources a committed bundle adds to its node: `R_group_G` and `R_group_i_G` for each R it reserved. */
export function bundleResources(resources: Readonly<Record<string, number>>, groupId: string, bundleIndex: number): Record<string, number> {
  return resourcesInBundle(resources, groupId, bundleIndex);
}

/** Human wording of a resource name: `CPU`, or `CPU in placement group G bundle 1`. */
export function describeResource(name: string): string {
  const m = PATTERN.exec(name);
  if (!m) return name;
  return m[2] === undefined ? `${m[1]} in placement group ${m[3]}` : `${m[1]} in placement group ${m[3]} bundle ${m[2]}`;
}
