import type { Demand, LiveNode } from '../../lib/autoscaling/types.ts';
import { compilePlacementGroup, type PlacementGroupOptions } from '../../lib/scheduling/bundles/request.ts';
import { compileRequest } from '../../lib/scheduling/request.ts';
import { parseTaints } from '../../lib/scheduling/taints.ts';
import type { AutoscalerStatus, DemandNode, ResourceDemandsReply } from '../../protocols/messages/autoscaling.ts';

/**
 * What the autoscaler reads out of a resource_demands reply, apart from its rounds (autoscaler.ts):
 * each demand group compiled with lib's own compileRequest / compilePlacementGroup (a hostile or
 * stale reply is checked like a driver's options; a group it cannot read is reported, not acted on),
 * the nodes as lib/autoscaling's decide() takes them, and the names it gives the nodes it launches.
 */

/** The names the autoscaler gives the nodes of a type: `<cluster>-<type>-<6 hex>`. */
export function nodeNamePattern(cluster: string, type: string): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${esc(cluster)}-${esc(type)}-[0-9a-f]{6}$`);
}

/** The reply's demand groups as decide() takes them, each described in one line; those that do not compile, as infeasible with why. */
export function demandsOf(reply: ResourceDemandsReply): { demands: Demand[]; described: Map<string, string>; invalid: AutoscalerStatus['infeasible'] } {
  const demands: Demand[] = [];
  const described = new Map<string, string>();
  const invalid: AutoscalerStatus['infeasible'] = [];
  reply.actors.forEach((g, i) => {
    const description = `${g.count} actor${g.count === 1 ? '' : 's'} ${brief({ ...g.placement, ...(Object.keys(g.labels).length ? { labels: g.labels } : {}) })}${g.namespace === 'default' ? '' : ` in ${g.namespace}`}`;
    try {
      const request = compileRequest(g.placement, { namespace: g.namespace, defaultCpus: g.defaultCpus, rareResources: reply.rareResources });
      const key = `actor:${i}`;
      demands.push({ kind: 'actor', key, request, labels: g.labels, count: g.count });
      described.set(key, description);
    } catch (err) {
      invalid.push({ description, count: g.count, reason: `options the autoscaler cannot read: ${(err as Error).message}` });
    }
  });
  reply.placementGroups.forEach((g, i) => {
    const description = `${g.count} placement group${g.count === 1 ? '' : 's'} ${brief(g.options)}${g.namespace === 'default' ? '' : ` in ${g.namespace}`}`;
    try {
      const request = compilePlacementGroup(g.options as unknown as PlacementGroupOptions, { rareResources: reply.rareResources });
      const key = `pg:${i}`;
      demands.push({ kind: 'placement_group', key, request, count: g.count });
      described.set(key, description);
    } catch (err) {
      invalid.push({ description, count: g.count, reason: `options the autoscaler cannot read: ${(err as Error).message}` });
    }
  });
  return { demands, described, invalid };
}

/** No actors, no bundles, and every resource free (no task leases). */
export function idle(n: DemandNode): boolean {
  if (n.actors.length > 0 || n.bundles > 0) return false;
  for (const name in n.total) if ((n.available[name] ?? 0) !== n.total[name]) return false;
  return true;
}

/** A node of the reply as decide() takes it. */
export function liveNode(n: DemandNode): LiveNode {
  return {
    nodeId: n.nodeId,
    name: n.name,
    state: n.state,
    labels: n.labels,
    taints: parseTaints(n.taints, { allowReserved: true }),
    total: n.total,
    available: n.available,
    actors: n.actors.flatMap((g) => g.actorIds.map((actorId) => ({ actorId, namespace: g.namespace, labels: g.labels }))),
  };
}

/** A compact one-line form of options: `{numGpus: 1, labelSelector: {type: gpu}}`. */
function brief(value: unknown): string {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? value : JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(brief).join(', ')}]`;
  return `{${Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}: ${brief(v)}`).join(', ')}}`;
}

/** A status line cut to what one report carries. */
export function clip<T extends { description: string }>(d: T): T {
  return d.description.length > 4096 ? { ...d, description: `${d.description.slice(0, 4093)}...` } : d;
}
