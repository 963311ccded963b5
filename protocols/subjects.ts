import { ProtocolError } from './errors.ts';

/**
 * The only module that forms subject strings. Grammar (every <token> is non-empty, without '.',
 * '*', '>' or whitespace):
 *
 *   orrery.<cluster>.gcs.<verb>               requests to the GCS (answered by the lease holder)
 *   orrery.<cluster>.gcs.view                 cluster-view deltas published by the GCS
 *   orrery.<cluster>.raylet.<nodeId>.<verb>   requests to one raylet
 *   orrery.<cluster>.actor.<actorId>.call     calls to one actor
 *   orrery.<cluster>.events.<type>            lifecycle and schedule-failed events
 *   orrery.<cluster>.inspect.<machine>.<id>   inspection events of one machine instance
 *
 * `view` is not a GCS verb, so `gcs.<verb>` and `gcs.view` never collide; a GCS subscribes to each
 * verb rather than to `gcs.*`, which would also catch its own view deltas.
 */
export const ROOT = 'orrery';

/*
 * The GCS subscribes its request subjects without a queue group: only the holder of the leader lease
 * answers (runtime/gcs/leader.ts). With a queue group, a GCS frozen after a standby took over would
 * still be handed its share of every request until the server noticed the dead connection (minutes
 * with default pings), and those requests — heartbeats among them — would go unanswered.
 */

export const GcsVerb = {
  register_node: 'register_node',
  /** Part of what a raylet registering again runs, ahead of its register_node (protocols/messages/node.ts). */
  register_running: 'register_running',
  heartbeat: 'heartbeat',
  /** A raylet that stops gracefully says so: its node is DEAD at once (protocols/messages/node.ts). */
  unregister_node: 'unregister_node',
  register_actor: 'register_actor',
  kill_actor: 'kill_actor',
  get_actor: 'get_actor',
  list_nodes: 'list_nodes',
  list_actors: 'list_actors',
  list_placement_groups: 'list_placement_groups',
  create_pg: 'create_pg',
  remove_pg: 'remove_pg',
  get_pg: 'get_pg',
  set_node_labels: 'set_node_labels',
  set_node_taints: 'set_node_taints',
  drain_node: 'drain_node',
  view_snapshot: 'view_snapshot',
  actor_died: 'actor_died',
  list_events: 'list_events',
  explain: 'explain',
  /** The autoscaler's verbs (protocols/messages/autoscaling.ts). */
  resource_demands: 'resource_demands',
  autoscaler_report: 'autoscaler_report',
  autoscaler_status: 'autoscaler_status',
  /** Jobs (protocols/messages/job.ts). */
  register_job: 'register_job',
  job_heartbeat: 'job_heartbeat',
  finish_job: 'finish_job',
  list_jobs: 'list_jobs',
  /** What the GCS is doing now (recovering, serving): answered at once, where the reads wait while it recovers. */
  gcs_status: 'gcs_status',
} as const;
export type GcsVerb = (typeof GcsVerb)[keyof typeof GcsVerb];

export const RayletVerb = {
  lease: 'lease',
  create_actor: 'create_actor',
  kill_actor: 'kill_actor',
  prepare_bundle: 'prepare_bundle',
  commit_bundle: 'commit_bundle',
  cancel_bundle: 'cancel_bundle',
  submit_task: 'submit_task',
  /** Published by a driver (not a request): drop a queued task it aborted (messages/task.ts, cancel_task). */
  cancel_task: 'cancel_task',
  /** Published by the raylet itself (not a request): its node's free resources, for the GCS to fold into the view. */
  load: 'load',
} as const;
export type RayletVerb = (typeof RayletVerb)[keyof typeof RayletVerb];

const GCS_VERBS = new Set<string>(Object.values(GcsVerb));
const RAYLET_VERBS = new Set<string>(Object.values(RayletVerb));
const BAD_TOKEN = /[.*>\s]/;

/** Throws unless `value` can be one subject token; `part` names it in the error. */
export function assertToken(part: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || BAD_TOKEN.test(value)) {
    throw new ProtocolError('PROTOCOL', `invalid subject ${part} ${JSON.stringify(value)}: must be a non-empty token without '.', '*', '>' or whitespace`, {
      detail: { part, value },
    });
  }
  return value;
}

function assertVerb(kind: 'gcs' | 'raylet', verb: string): void {
  const known = kind === 'gcs' ? GCS_VERBS : RAYLET_VERBS;
  if (!known.has(verb)) {
    throw new ProtocolError('PROTOCOL', `unknown ${kind} verb ${JSON.stringify(verb)}`, { detail: { part: `${kind} verb`, value: verb } });
  }
}

/** Subject builders for one cluster; the cluster name is checked once, every other token per call. */
export interface ClusterSubjects {
  readonly cluster: string;
  gcs(verb: GcsVerb): string;
  view(): string;
  raylet(nodeId: string, verb: RayletVerb): string;
  actorCall(actorId: string): string;
  event(type: string): string;
  inspect(machine: string, id: string): string;
  /** Every event type: `orrery.<cluster>.events.>`. */
  allEvents(): string;
  /** Every inspected machine, or every instance of one machine. */
  allInspect(machine?: string): string;
  /** Every verb of one raylet: `orrery.<cluster>.raylet.<nodeId>.*`. */
  rayletAll(nodeId: string): string;
  /** Every raylet's load report: `orrery.<cluster>.raylet.*.load` (the GCS's one subscription to them). */
  allLoads(): string;
  /** Everything in the cluster: `orrery.<cluster>.>`. */
  all(): string;
}

export function subjects(cluster: string): ClusterSubjects {
  const base = `${ROOT}.${assertToken('cluster', cluster)}`;
  return {
    cluster,
    gcs: (verb) => {
      assertVerb('gcs', assertToken('verb', verb));
      return `${base}.gcs.${verb}`;
    },
    view: () => `${base}.gcs.view`,
    raylet: (nodeId, verb) => {
      assertToken('nodeId', nodeId);
      assertVerb('raylet', assertToken('verb', verb));
      return `${base}.raylet.${nodeId}.${verb}`;
    },
    actorCall: (actorId) => `${base}.actor.${assertToken('actorId', actorId)}.call`,
    event: (type) => `${base}.events.${assertToken('event type', type)}`,
    inspect: (machine, id) => `${base}.inspect.${assertToken('machine', machine)}.${assertToken('id', id)}`,
    allEvents: () => `${base}.events.>`,
    allInspect: (machine) => (machine === undefined ? `${base}.inspect.>` : `${base}.inspect.${assertToken('machine', machine)}.*`),
    rayletAll: (nodeId) => `${base}.raylet.${assertToken('nodeId', nodeId)}.*`,
    allLoads: () => `${base}.raylet.*.${RayletVerb.load}`,
    all: () => `${base}.>`,
  };
}

/** An incoming subject split back into its parts. */
export type ParsedSubject =
  | { readonly kind: 'gcs'; readonly cluster: string; readonly verb: GcsVerb }
  | { readonly kind: 'view'; readonly cluster: string }
  | { readonly kind: 'raylet'; readonly cluster: string; readonly nodeId: string; readonly verb: RayletVerb }
  | { readonly kind: 'actor_call'; readonly cluster: string; readonly actorId: string }
  | { readonly kind: 'event'; readonly cluster: string; readonly type: string }
  | { readonly kind: 'inspect'; readonly cluster: string; readonly machine: string; readonly id: string };

/** Parses a concrete subject of the grammar above; anything else is a ProtocolError. */
export function parseSubject(subject: string): ParsedSubject {
  const t = typeof subject === 'string' ? subject.split('.') : [];
  const fail = (): never => {
    throw new ProtocolError('PROTOCOL', `not an orrery subject: ${JSON.stringify(subject)}`, { detail: { part: 'subject', value: subject } });
  };
  if (t.length < 4 || t[0] !== ROOT || t.some((token) => token.length === 0 || BAD_TOKEN.test(token))) return fail();
  const [, cluster, area] = t;
  if (area === 'gcs' && t.length === 4) {
    if (t[3] === 'view') return { kind: 'view', cluster };
    if (GCS_VERBS.has(t[3])) return { kind: 'gcs', cluster, verb: t[3] as GcsVerb };
  }
  if (area === 'raylet' && t.length === 5 && RAYLET_VERBS.has(t[4])) {
    return { kind: 'raylet', cluster, nodeId: t[3], verb: t[4] as RayletVerb };
  }
  if (area === 'actor' && t.length === 5 && t[4] === 'call') return { kind: 'actor_call', cluster, actorId: t[3] };
  if (area === 'events' && t.length === 4) return { kind: 'event', cluster, type: t[3] };
  if (area === 'inspect' && t.length === 5) return { kind: 'inspect', cluster, machine: t[3], id: t[4] };
  return fail();
}
