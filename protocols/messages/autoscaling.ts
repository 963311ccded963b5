import type { PlacementOptions } from '../../lib/scheduling/request.ts';
import { array, bool, literal, num, object, optional, plainData, record, str, type Infer, type Validator } from '../validate.ts';
import { id, labels, resourceSet, taints } from './common.ts';

/**
 * The GCS side of the autoscaler (issue 16, parts 2 and 6):
 *
 *   autoscaler → GCS   resource_demands     what is waiting, grouped, and the nodes as the GCS's scheduler sees them
 *   autoscaler → GCS   autoscaler_report    its status and its events (published as `events.<type>`)
 *   anyone → GCS       autoscaler_status    the latest status, for `orrery status`
 *
 * Units, two forms on purpose:
 *   - `nodes[].total` / `available` are fixed-point units, exactly as NodeInfoWire.resources
 *     (lib/resources/quantity.ts: 1 CPU = 10,000 units, memory in bytes) — feed them to a
 *     ClusterState as they are;
 *   - `actors[].placement` and `placementGroups[].options` are what the driver sent, in the user's
 *     quantities ({ numCpus: 0.5 }, bundles { CPU: 2 }) — the form lib's compileRequest(placement,
 *     { namespace, defaultCpus, rareResources }) and compilePlacementGroup(options, { rareResources })
 *     take, so the autoscaler compiles exactly what the GCS compiled.
 */

// ---- resource_demands ----

/** Most demand groups a resource_demands reply lists by default (`limit`). */
export const DEFAULT_DEMAND_LIMIT = 1000;
/** Sample ids a demand group carries. */
export const DEMAND_SAMPLE_IDS = 5;

/**
 * `limit`: most groups in each of `actors` and `placementGroups` (oldest waiting first); `truncated`
 * in the reply says more were left out.
 */
export const resourceDemands = object({ limit: optional(num({ int: true, min: 1, max: 100_000 })) });

const namespace = str({ min: 1, max: 256 });
const sampleIds = array(id, { max: DEMAND_SAMPLE_IDS });
const count = num({ int: true, min: 0 });
const reason = optional(str({ max: 65_536 }));

export interface DemandNode {
  nodeId: string;
  name: string;
  state: 'ALIVE' | 'DRAINING';
  labels: Record<string, string>;
  /** NodeInfoWire.taints' form: `key: value` or `key: "value:Effect"`. */
  taints: Record<string, string>;
  /** Fixed-point units, as NodeInfoWire.resources. */
  total: Record<string, number>;
  available: Record<string, number>;
  /** Actors placed on the node, grouped by namespace and labels (without orrery.io/actor-id). */
  actors: { namespace: string; labels: Record<string, string>; actorIds: string[]; actorIdsOmitted?: number }[];
  /** Placement-group bundles reserved or committed on the node. */
  bundles: number;
}

export interface ActorDemandGroup {
  namespace: string;
  /** The actor's placement options as the driver sent them (user quantities). */
  placement: PlacementOptions;
  /** CompileContext.defaultCpus the GCS compiled the actor with. */
  defaultCpus: number;
  /** The actor's own labels, without orrery.io/actor-id. */
  labels: Record<string, string>;
  count: number;
  /** How many wait because no node could ever take them (explanation code 'infeasible'). */
  infeasible: number;
  /** The latest pending reason of one of them. */
  reason?: string;
  /** Up to DEMAND_SAMPLE_IDS ids. */
  actorIds: string[];
}

/** lib/scheduling/bundles/request.ts PlacementGroupOptions as sent (user quantities), without `name`. */
export interface PlacementGroupDemandOptions {
  bundles: Record<string, number>[];
  strategy: 'PACK' | 'SPREAD' | 'STRICT_PACK' | 'STRICT_SPREAD';
  bundleLabelSelector?: Record<string, unknown>[];
  fallbackStrategy?: unknown[];
  tolerations?: Record<string, unknown>;
}

export interface PlacementGroupDemandGroup {
  namespace: string;
  options: PlacementGroupDemandOptions;
  count: number;
  infeasible: number;
  reason?: string;
  ids: string[];
}

export interface ResourceDemandsReply {
  rareResources: string[];
  nodes: DemandNode[];
  actors: ActorDemandGroup[];
  placementGroups: PlacementGroupDemandGroup[];
  /** More groups than `limit`, or node actor ids trimmed to fit one message. */
  truncated: boolean;
}

const demandNode = object({
  nodeId: id,
  name: str({ min: 1, max: 256 }),
  state: literal('ALIVE', 'DRAINING'),
  labels,
  taints,
  total: resourceSet,
  available: resourceSet,
  actors: array(object({ namespace, labels, actorIds: array(id, { max: 1_000_000 }), actorIdsOmitted: optional(num({ int: true, min: 1 })) }), { max: 1_000_000 }),
  bundles: count,
});

const actorDemandGroup = object({
  namespace,
  placement: record(plainData(), { maxKeys: 64 }),
  defaultCpus: num({ min: 0 }),
  labels,
  count,
  infeasible: count,
  reason,
  actorIds: sampleIds,
});

const placementGroupDemandGroup = object({
  namespace,
  options: object({
    bundles: array(record(num({ min: 0 }), { maxKeys: 1024 }), { min: 1, max: 10_000 }),
    strategy: literal('PACK', 'SPREAD', 'STRICT_PACK', 'STRICT_SPREAD'),
    bundleLabelSelector: optional(array(record(plainData(), { maxKeys: 1024 }), { max: 10_000 })),
    fallbackStrategy: optional(array(plainData(), { max: 64 })),
    tolerations: optional(record(plainData(), { maxKeys: 256 })),
  }),
  count,
  infeasible: count,
  reason,
  ids: sampleIds,
});

/** The reply to resource_demands, as the client checks it. */
export const resourceDemandsReply = object({
  rareResources: array(str({ min: 1, max: 128 }), { max: 64 }),
  nodes: array(demandNode, { max: 100_000 }),
  actors: array(actorDemandGroup, { max: 100_000 }),
  placementGroups: array(placementGroupDemandGroup, { max: 100_000 }),
  truncated: bool(),
}) as unknown as Validator<ResourceDemandsReply>;

/**
 * The grouping key of a demand: its namespace and a canonical serialization (object keys sorted at
 * every depth, arrays in order) of what decides where it can go — an actor's placement options and
 * labels, a group's options. Equal keys, one group (seeds 001 and 003, "AutoScaler adaptation": a
 * different strategy or toleration is a different demand). The autoscaler may use it as the demand's
 * identity across rounds.
 */
export function demandKey(namespace: string, ...parts: unknown[]): string {
  return canonicalJson([namespace, ...parts]);
}

/** JSON with every object's keys sorted; undefined object fields are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

// ---- autoscaler_report / autoscaler_status ----

/** The autoscaler's events, published by the GCS on `events.<type>` with `nodeType` and `message`. */
export const AUTOSCALER_EVENT_TYPES = ['node_launch_requested', 'node_launched', 'node_launch_failed', 'node_drained', 'node_terminated', 'demand_infeasible'] as const;
export type AutoscalerEventType = (typeof AUTOSCALER_EVENT_TYPES)[number];

export interface AutoscalerStatus {
  /** ms since epoch */
  time: number;
  nodeTypes: { name: string; live: number; launching: number; minWorkers: number; maxWorkers: number }[];
  /** Launches requested whose node has not registered yet. */
  launching: { type: string; name: string; since: number }[];
  /** Demands the autoscaler acts on, with what it launches for them. */
  demands: { description: string; count: number; launch?: { type: string; count: number }[] }[];
  /** Demands no node type can ever satisfy, with why. */
  infeasible: { description: string; count: number; reason: string }[];
  /** Recent launch failures. */
  failures: { type: string; message: string; time: number; retryAt?: number }[];
}

export interface AutoscalerEvent {
  type: AutoscalerEventType;
  time: number;
  nodeType: string;
  nodeName?: string;
  nodeId?: string;
  message: string;
}

/** Bounds of a report: what one status may list, and how long its strings may be. */
export const AUTOSCALER_LIMITS = { nodeTypes: 256, launching: 10_000, demands: 1000, failures: 1000, events: 1000, text: 4096 } as const;

const text = str({ max: AUTOSCALER_LIMITS.text });
const typeName = str({ min: 1, max: 256 });
const time = num({ min: 0 });
const n = num({ int: true, min: 0 });

export const autoscalerStatus = object({
  time,
  nodeTypes: array(object({ name: typeName, live: n, launching: n, minWorkers: n, maxWorkers: n }), { max: AUTOSCALER_LIMITS.nodeTypes }),
  launching: array(object({ type: typeName, name: str({ min: 1, max: 256 }), since: time }), { max: AUTOSCALER_LIMITS.launching }),
  demands: array(object({ description: text, count: n, launch: optional(array(object({ type: typeName, count: n }), { max: AUTOSCALER_LIMITS.nodeTypes })) }), { max: AUTOSCALER_LIMITS.demands }),
  infeasible: array(object({ description: text, count: n, reason: text }), { max: AUTOSCALER_LIMITS.demands }),
  failures: array(object({ type: typeName, message: text, time, retryAt: optional(time) }), { max: AUTOSCALER_LIMITS.failures }),
}) satisfies Validator<AutoscalerStatus>;

export const autoscalerEvent = object({
  type: literal(...AUTOSCALER_EVENT_TYPES),
  time,
  nodeType: typeName,
  nodeName: optional(str({ min: 1, max: 256 })),
  nodeId: optional(id),
  message: text,
}) satisfies Validator<AutoscalerEvent>;

/** autoscaler → GCS (`gcs.autoscaler_report`): the reply is `{}`. */
export const autoscalerReport = object({
  status: autoscalerStatus,
  events: array(autoscalerEvent, { max: AUTOSCALER_LIMITS.events }),
});
export type AutoscalerReport = Infer<typeof autoscalerReport>;

/** anyone → GCS (`gcs.autoscaler_status`): body `{}`. */
export const autoscalerStatusQuery = object({});

export interface AutoscalerStatusReply {
  /** null: no autoscaler has reported since this GCS started. */
  status: AutoscalerStatus | null;
  /** How long ago the status arrived, by the GCS's clock. */
  ageMs?: number;
}

const statusOrNull: Validator<AutoscalerStatus | null> = (value, path) => (value === null || value === undefined ? null : autoscalerStatus(value, path));

export const autoscalerStatusReply = object({
  status: statusOrNull,
  ageMs: optional(num({ min: 0 })),
}) as unknown as Validator<AutoscalerStatusReply>;
