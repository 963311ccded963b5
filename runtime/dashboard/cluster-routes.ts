import type { Cluster } from '../client/cluster.ts';
import type { NodeInfo, PlacementGroupInfo } from '../client/cluster-info.types.ts';
import { CLUSTER_EVENT_TYPES as EVENT_TYPES } from '../../protocols/messages/cluster.ts';
import { HttpError, readJson, sendJson, stringRecord } from './http.ts';
import { actorStates, pagedList } from './list-query.ts';
import type { Router } from './router.ts';
import { openEventStream, type EventStreamWriter } from './sse.ts';

/** A client that may already have `placementGroups()` (another change adds it to the Cluster API). */
type MaybeWithPlacementGroups = Cluster & { placementGroups?: () => Promise<PlacementGroupInfo[]> };

/**
 * The cluster half of the REST API (docs/dashboard.md): nodes, actors, placement groups, recent and
 * live events, and taint and label changes. Without a cluster (a dashboard showing only a trace
 * file) every route answers 503 NO_CLUSTER.
 */
export function clusterRoutes(router: Router, cluster: Cluster | undefined, streams: Set<EventStreamWriter>): void {
  const client = (): MaybeWithPlacementGroups => {
    if (!cluster) throw new HttpError(503, 'NO_CLUSTER', 'this dashboard is not connected to a cluster (it shows a trace file only)');
    return cluster;
  };
  router
    .on('GET', '/api/nodes', async (_req, res, _params, url) => sendJson(res, 200, pagedList(await client().nodes(), (n) => n.nodeId, url)))
    .on('GET', '/api/nodes/:id', async (_req, res, { id }) => sendJson(res, 200, await nodeOf(client(), id)))
    .on('GET', '/api/actors', async (_req, res, _params, url) => {
      const filter = actorStates(url);
      sendJson(res, 200, pagedList(await client().actors(filter), (a) => a.actorId, url));
    })
    .on('GET', '/api/placement-groups', async (_req, res, _params, url) => {
      const c = client();
      sendJson(res, 200, pagedList(typeof c.placementGroups === 'function' ? await c.placementGroups() : [], (pg) => pg.id, url));
    })
    .on('GET', '/api/events', async (_req, res, _params, url) => sendJson(res, 200, await client().recentEvents(eventQuery(url))))
    .on('GET', '/api/events/stream', (req, res) => {
      const c = client();
      const stream = openEventStream(req, res, streams);
      const sub = c.events$.subscribe({ next: (event) => stream.send('cluster', event, event.seq), complete: () => stream.close() });
      stream.onClose(() => sub.unsubscribe());
    })
    .on('POST', '/api/explain', async (req, res) => {
      // a dry run (docs/scheduling.md, "explain"): { "options": {…} } for an actor, { "placementGroup": {…} } for a group
      const body = await readJson(req);
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'INVALID_BODY', 'expected a JSON object { "options": {…} } or { "placementGroup": {…} }');
      const { options, placementGroup } = body as { options?: unknown; placementGroup?: unknown };
      const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
      if (isObject(options) === isObject(placementGroup)) throw new HttpError(400, 'INVALID_BODY', 'expected exactly one of "options" (an actor) and "placementGroup", each a JSON object');
      const c = client();
      sendJson(res, 200, isObject(options) ? await c.explain(options) : await c.explainPlacementGroup(placementGroup as never));
    }, { read: true })
    .on('POST', '/api/nodes/:id/taints', async (req, res, { id }) => {
      const add = stringRecord(await readJson(req), 'taints');
      sendJson(res, 200, await client().setNodeTaints(id, { add }));
    })
    .on('DELETE', '/api/nodes/:id/taints/:key', async (_req, res, { id, key }) => {
      const c = client();
      const node = await nodeOf(c, id);
      if (!Object.hasOwn(node.taints, key)) throw new HttpError(404, 'TAINT_NOT_FOUND', `node ${node.name} (${node.nodeId}) has no taint ${JSON.stringify(key)}`);
      sendJson(res, 200, await c.setNodeTaints(id, { remove: [key] }));
    })
    .on('POST', '/api/nodes/:id/labels', async (req, res, { id }) => {
      const set = stringRecord(await readJson(req), 'labels');
      sendJson(res, 200, await client().setNodeLabels(id, { set }));
    })
    .on('DELETE', '/api/nodes/:id/labels/:key', async (_req, res, { id, key }) => {
      const c = client();
      const node = await nodeOf(c, id);
      if (!Object.hasOwn(node.labels, key)) throw new HttpError(404, 'LABEL_NOT_FOUND', `node ${node.name} (${node.nodeId}) has no label ${JSON.stringify(key)}`);
      sendJson(res, 200, await c.setNodeLabels(id, { remove: [key] }));
    });
}

async function nodeOf(cluster: Cluster, nodeId: string): Promise<NodeInfo> {
  const node = (await cluster.nodes()).find((n) => n.nodeId === nodeId);
  if (!node) throw new HttpError(404, 'NODE_NOT_FOUND', `node ${JSON.stringify(nodeId)} is not in the cluster`);
  return node;
}

/** `?types=a,b&afterSeq=N&limit=N` of GET /api/events; a bad value is 400 BAD_QUERY naming it. */
function eventQuery(url: URL): { types?: string[]; afterSeq?: number; limit?: number } {
  const out: { types?: string[]; afterSeq?: number; limit?: number } = {};
  const types = url.searchParams.get('types');
  if (types !== null) {
    out.types = types.split(',').map((t) => t.trim());
    const unknown = out.types.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (unknown !== undefined) throw new HttpError(400, 'BAD_QUERY', `types: unknown event type ${JSON.stringify(unknown)} (expected ${EVENT_TYPES.join(', ')})`);
  }
  const afterSeq = wholeNumber(url, 'afterSeq', 0, Number.MAX_SAFE_INTEGER);
  if (afterSeq !== undefined) out.afterSeq = afterSeq;
  const limit = wholeNumber(url, 'limit', 1, 10_000);
  if (limit !== undefined) out.limit = limit;
  return out;
}

function wholeNumber(url: URL, name: string, min: number, max: number): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new HttpError(400, 'BAD_QUERY', `${name}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return n;
}
