import { ClusterState, NODE_ID_LABEL, compileRequest, parseResources, parseTaints, schedule, seededRng, type Decision, type PlacementOptions } from '../../lib/index.ts';

export interface NodeFixture {
  id: string;
  cpu?: number;
  gpu?: number;
  resources?: Record<string, number>;
  labels?: Record<string, string>;
  taints?: Record<string, string>;
}

/** A cluster from a compact table; every node also carries its built-in orrery.io/node-id label. */
export function cluster(nodes: NodeFixture[], opts: { spreadThreshold?: number } = {}): ClusterState {
  const state = new ClusterState(opts);
  for (const n of nodes) addNode(state, n);
  return state;
}

export function addNode(state: ClusterState, n: NodeFixture): void {
  state.addNode({
    nodeId: n.id,
    labels: { ...n.labels, [NODE_ID_LABEL]: n.id },
    taints: parseTaints(n.taints ?? {}, { allowReserved: true }),
    total: parseResources({ CPU: n.cpu ?? 4, ...(n.gpu ? { GPU: n.gpu } : {}), ...n.resources }),
  });
}

/** Places an actor: allocates its resources and indexes its labels, as the GCS does. */
export function placeActor(state: ClusterState, nodeId: string, actorId: string, opts: { cpu?: number; labels?: Record<string, string>; namespace?: string } = {}): void {
  state.allocate(nodeId, parseResources({ CPU: opts.cpu ?? 0 }));
  state.addActor(nodeId, { actorId, namespace: opts.namespace ?? 'default', labels: opts.labels });
}

export function decide(state: ClusterState, options: PlacementOptions, seed = 1, ctx: { namespace?: string; rareResources?: string[] } = {}): Decision {
  const req = compileRequest(options, { namespace: ctx.namespace ?? 'default', rareResources: ctx.rareResources });
  return schedule(state, req, { rng: seededRng(seed) });
}

/** The node ids a request can land on, over many seeds (random choice among the best window). */
export function landings(state: ClusterState, options: PlacementOptions, seeds = 40): string[] {
  const out = new Set<string>();
  for (let s = 1; s <= seeds; s++) {
    const d = decide(state, options, s);
    if (d.status === 'placed') out.add(d.nodeId);
  }
  return [...out].sort();
}

export function placedOn(d: Decision): string {
  if (d.status !== 'placed') throw new Error(`expected a placement, got ${JSON.stringify(d)}`);
  return d.nodeId;
}

export function failureOf(d: Decision) {
  if (d.status !== 'unschedulable') throw new Error(`expected unschedulable, got ${JSON.stringify(d)}`);
  return d.failure;
}
