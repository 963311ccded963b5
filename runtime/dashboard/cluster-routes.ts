import type { Hono, MiddlewareHandler } from 'hono';
import type { Cluster } from '../client/cluster.ts';
import type { NodeInfo, PlacementGroupInfo } from '../client/cluster-info.types.ts';
import { CLUSTER_EVENT_TYPES as EVENT_TYPES } from '../../protocols/messages/cluster.ts';
import { dryRunChecks, type DashboardEnv } from './checks.ts';
import { HttpError, bodyUpTo, jsonReply, readJson, stringRecord } from './http.ts';
import { actorStates, pagedList, queryOf, type Query } from './list-query.ts';
import { eventStream, type EventStreamWriter } from './sse.ts';

/** A client that may already have `placementGroups()` (another change adds it to the Cluster API). */
type MaybeWithPlacementGroups = Cluster & { placementGroups?: () => Promise<PlacementGroupInfo[]> };

export interface ClusterRoutesOptions {
  /** Absent: a dashboard showing only a trace file; every route answers 503 NO_CLUSTER. */
  cluster: Cluster | undefined;
  streams: Set<EventStreamWriter>;
  /** What runs before a route that changes something (changeChecks: read-only, JSON body). */
  change: MiddlewareHandler<DashboardEnv>;
}

/**
 * The cluster half of the REST API (docs/dashboard.md): nodes, actors, placement groups, what the
 * GCS is doing, recent and live events, and taint and label changes.
 */
export function clusterRoutes(app: Hono<DashboardEnv>, { cluster, streams, change }: ClusterRoutesOptions): void {
  const client = (): MaybeWithPlacementGroups => {
    if (!cluster) throw new HttpError(503, 'NO_CLUSTER', 'this dashboard is not connected to a cluster (it shows a trace file only)');
    return cluster;
  };
  const body = bodyUpTo();
  app
    .get('/api/nodes', async (c) => jsonReply(c, 200, pagedList(await client().nodes(), (n) => n.nodeId, queryOf(c))))
    .get('/api/nodes/:id', async (c) => jsonReply(c, 200, await nodeOf(client(), c.req.param('id'))))
    .get('/api/actors', async (c) => {
      const filter = actorStates(queryOf(c));
      return jsonReply(c, 200, pagedList(await client().actors(filter), (a) => a.actorId, queryOf(c)));
    })
    .get('/api/placement-groups', async (c) => {
      const pgs = client();
      return jsonReply(c, 200, pagedList(typeof pgs.placementGroups === 'function' ? await pgs.placementGroups() : [], (pg) => pg.id, queryOf(c)));
    })
    // answered at once while a restarted GCS recovers, when the lists above wait for it
    .get('/api/gcs', async (c) => jsonReply(c, 200, await client().gcsStatus()))
    .get('/api/events', async (c) => jsonReply(c, 200, await client().recentEvents(eventQuery(queryOf(c)))))
    .get('/api/events/stream', (c) => {
      const events$ = client().events$;
      return eventStream(c, streams, (stream) => {
        const sub = events$.subscribe({ next: (event) => stream.send('cluster', event, event.seq), complete: () => stream.close() });
        stream.onClose(() => sub.unsubscribe());
      });
    })
    .post('/api/explain', dryRunChecks, body, async (c) => {
      // a dry run (docs/scheduling.md, "explain"): { "options": {…} } for an actor, { "placementGroup": {…} } for a group
      const request = await readJson(c);
      if (request === null || typeof request !== 'object' || Array.isArray(request)) throw new HttpError(400, 'INVALID_BODY', 'expected a JSON object { "options": {…} } or { "placementGroup": {…} }');
      const { options, placementGroup } = request as { options?: unknown; placementGroup?: unknown };
      const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
      if (isObject(options) === isObject(placementGroup)) throw new HttpError(400, 'INVALID_BODY', 'expected exactly one of "options" (an actor) and "placementGroup", each a JSON object');
      const cl = client();
      return jsonReply(c, 200, isObject(options) ? await cl.explain(options) : await cl.explainPlacementGroup(placementGroup as never));
    })
    .post('/api/nodes/:id/taints', change, body, async (c) => {
      const add = stringRecord(await readJson(c), 'taints');
      return jsonReply(c, 200, await client().setNodeTaints(c.req.param('id'), { add }));
    })
    .delete('/api/nodes/:id/taints/:key', change, async (c) => {
      const { id, key } = c.req.param();
      const cl = client();
      const node = await nodeOf(cl, id);
      if (!Object.hasOwn(node.taints, key)) throw new HttpError(404, 'TAINT_NOT_FOUND', `node ${node.name} (${node.nodeId}) has no taint ${JSON.stringify(key)}`);
      return jsonReply(c, 200, await cl.setNodeTaints(id, { remove: [key] }));
    })
    .post('/api/nodes/:id/labels', change, body, async (c) => {
      const set = stringRecord(await readJson(c), 'labels');
      return jsonReply(c, 200, await client().setNodeLabels(c.req.param('id'), { set }));
    })
    .delete('/api/nodes/:id/labels/:key', change, async (c) => {
      const { id, key } = c.req.param();
      const cl = client();
      const node = await nodeOf(cl, id);
      if (!Object.hasOwn(node.labels, key)) throw new HttpError(404, 'LABEL_NOT_FOUND', `node ${node.name} (${node.nodeId}) has no label ${JSON.stringify(key)}`);
      return jsonReply(c, 200, await cl.setNodeLabels(id, { remove: [key] }));
    });
}

async function nodeOf(cluster: Cluster, nodeId: string): Promise<NodeInfo> {
  const node = (await cluster.nodes()).find((n) => n.nodeId === nodeId);
  if (!node) throw new HttpError(404, 'NODE_NOT_FOUND', `node ${JSON.stringify(nodeId)} is not in the cluster`);
  return node;
}

/** `?types=a,b&afterSeq=N&limit=N` of GET /api/events; a bad value is 400 BAD_QUERY naming it. */
function eventQuery(query: Query): { types?: string[]; afterSeq?: number; limit?: number } {
  const out: { types?: string[]; afterSeq?: number; limit?: number } = {};
  const types = query('types');
  if (types !== undefined) {
    out.types = types.split(',').map((t) => t.trim());
    const unknown = out.types.find((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (unknown !== undefined) throw new HttpError(400, 'BAD_QUERY', `types: unknown event type ${JSON.stringify(unknown)} (expected ${EVENT_TYPES.join(', ')})`);
  }
  const afterSeq = wholeNumber(query, 'afterSeq', 0, Number.MAX_SAFE_INTEGER);
  if (afterSeq !== undefined) out.afterSeq = afterSeq;
  const limit = wholeNumber(query, 'limit', 1, 10_000);
  if (limit !== undefined) out.limit = limit;
  return out;
}

function wholeNumber(query: Query, name: string, min: number, max: number): number | undefined {
  const text = query(name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new HttpError(400, 'BAD_QUERY', `${name}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return n;
}
