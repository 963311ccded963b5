import type { ClusterState } from '../../lib/cluster/cluster-state.ts';
import type { PlacedActor } from '../../lib/cluster/sched-node.ts';
import { ACTOR_ID_LABEL } from '../../lib/labels/builtin.ts';
import { PLACEMENT_KEYS, type PlacementOptions } from '../../lib/scheduling/request.ts';
import { formatTaints } from '../../lib/scheduling/taints.ts';
import { encodedSize } from '../../protocols/codec.ts';
import {
  DEFAULT_DEMAND_LIMIT,
  DEMAND_SAMPLE_IDS,
  canonicalJson,
  demandKey,
  type ActorDemandGroup,
  type DemandNode,
  type PlacementGroupDemandGroup,
  type PlacementGroupDemandOptions,
  type ResourceDemandsReply,
} from '../../protocols/messages/autoscaling.ts';
import { PAGE_OVERHEAD_BYTES } from './paging.ts';

/**
 * resource_demands (issue 16, part 2): what waits in the pending queue, grouped by everything that
 * changes where it can go, and the live nodes as the GCS's scheduler holds them — what the
 * autoscaler bin-packs with lib's own scheduler.
 *
 * A group's key is the namespace and a canonical serialization of the placement options and the
 * labels (protocols/messages/autoscaling.ts, `demandKey`): seeds 001 and 003 ("AutoScaler
 * adaptation") — a different strategy, toleration or selector is a different demand. Grouping is
 * cheap: an actor's key is made once, when a call first sees it waiting, and kept in a WeakMap
 * against its registration's options (gone with the actor); after that a call costs a lookup and a
 * count per waiting actor. Groups keep the queue's order (oldest waiting first); `limit` bounds each
 * list.
 */

/** A waiting actor, as the actor directory describes it. */
export interface WaitingActor {
  readonly actorId: string;
  readonly namespace: string;
  /**
   * register_actor's `options` as sent: placement keys, the actor's labels and its other options.
   * The same object for the actor's whole life (its group key is kept against it).
   */
  readonly options: Readonly<Record<string, unknown>>;
  /** Its compiled options: `shape` is its placement options as plain JSON (made once, kept). */
  readonly compiled: { readonly shape: string };
  /** CompileContext.defaultCpus its request was compiled with. */
  readonly defaultCpus: number;
  /** Its last explanation said no node will ever take it ('infeasible'). */
  readonly infeasible: boolean;
  readonly reason: string | undefined;
  /** When that explanation was made (any clock, only compared); undefined when none was. */
  readonly explainedAt: number | undefined;
}

/** A waiting placement group (PENDING, or RESCHEDULING with bundles to place again). */
export interface WaitingGroup {
  readonly pgId: string;
  readonly namespace: string;
  readonly options: PlacementGroupDemandOptions;
  readonly infeasible: boolean;
  readonly reason?: string;
}

export interface DemandSources {
  readonly state: ClusterState;
  readonly rareResources: readonly string[];
  /** The pending queue's ids, oldest first: actor ids, and queue ids of groups. */
  readonly waiting: () => Iterable<string>;
  readonly isGroup: (queueId: string) => boolean;
  readonly actor: (actorId: string) => WaitingActor | undefined;
  readonly group: (queueId: string) => WaitingGroup | undefined;
  /** Bundles reserved or committed per node. */
  readonly bundleCounts: () => ReadonlyMap<string, number>;
  /** Largest reply (the intake's message size). */
  readonly maxBytes: number;
}

interface ActorGroup extends ActorDemandGroup {
  reasonAt: number;
}

export class Demands {
  /** An actor's group key, kept against its registration's options (which never change). */
  readonly #actorKeys = new WeakMap<object, string>();
  /** Plain JSON of an actor's grouped fields → its canonical key, for the actors keyed by the last call. */
  #canonical = new Map<string, string>();
  /** A placed actor's group key on its node (the record lives as long as the placement). */
  readonly #placedKeys = new WeakMap<PlacedActor, string>();

  constructor(private readonly src: DemandSources) {}

  resourceDemands(body: { limit?: number }): ResourceDemandsReply {
    const limit = body.limit ?? DEFAULT_DEMAND_LIMIT;
    const actors = new Map<string, ActorGroup>();
    const groups = new Map<string, PlacementGroupDemandGroup>();
    const canonical = new Map<string, string>();
    let truncated = false;
    for (const id of this.src.waiting()) {
      if (this.src.isGroup(id)) {
        const g = this.src.group(id);
        if (g === undefined) continue;
        const key = demandKey(g.namespace, g.options);
        let group = groups.get(key);
        if (group === undefined) {
          if (groups.size >= limit) {
            truncated = true;
            continue;
          }
          groups.set(key, (group = { namespace: g.namespace, options: g.options, count: 0, infeasible: 0, ids: [] }));
        }
        group.count++;
        if (g.infeasible) group.infeasible++;
        if (g.reason !== undefined) group.reason = g.reason;
        if (group.ids.length < DEMAND_SAMPLE_IDS) group.ids.push(g.pgId);
        continue;
      }
      const a = this.src.actor(id);
      if (a === undefined) continue;
      let key = this.#actorKeys.get(a.options);
      if (key === undefined) {
        // actors registered with equal options share a canonical key, made once; the plain one is
        // the compiled shape (namespace and placement options), usually made already, and the labels
        const plain = `${a.compiled.shape}\u0000${a.defaultCpus}\u0000${JSON.stringify(a.options.labels ?? null)}`;
        key = canonical.get(plain) ?? this.#canonical.get(plain) ?? demandKey(a.namespace, placementOf(a.options), a.options.labels ?? {}, a.defaultCpus);
        canonical.set(plain, key);
        this.#actorKeys.set(a.options, key);
      }
      let group = actors.get(key);
      if (group === undefined) {
        if (actors.size >= limit) {
          truncated = true;
          continue;
        }
        const labels = { ...(a.options.labels as Record<string, string> | undefined) };
        group = { namespace: a.namespace, placement: placementOf(a.options), defaultCpus: a.defaultCpus, labels, count: 0, infeasible: 0, actorIds: [], reasonAt: Number.NEGATIVE_INFINITY };
        actors.set(key, group);
      }
      group.count++;
      if (a.infeasible) group.infeasible++;
      if (a.reason !== undefined && (group.reason === undefined || (a.explainedAt ?? Number.NEGATIVE_INFINITY) > group.reasonAt)) {
        group.reason = a.reason;
        group.reasonAt = a.explainedAt ?? Number.NEGATIVE_INFINITY;
      }
      if (group.actorIds.length < DEMAND_SAMPLE_IDS) group.actorIds.push(a.actorId);
    }
    if (canonical.size > 0) this.#canonical = canonical;
    const reply: ResourceDemandsReply = {
      rareResources: [...this.src.rareResources],
      nodes: this.#nodes(),
      actors: [...actors.values()].map(({ reasonAt: _, ...g }) => g),
      placementGroups: [...groups.values()],
      truncated,
    };
    return this.#fit(reply);
  }

  /** Every ALIVE or DRAINING node, in id order, with its actors grouped by namespace and labels. */
  #nodes(): DemandNode[] {
    const bundles = this.src.bundleCounts();
    const out: DemandNode[] = [];
    for (const node of this.src.state.nodes.values()) {
      if (node.state === 'DEAD') continue;
      const byKey = new Map<string, DemandNode['actors'][number]>();
      for (const placed of node.actors.values()) {
        const key = this.#placedKey(placed);
        let group = byKey.get(key);
        if (group === undefined) byKey.set(key, (group = { namespace: placed.namespace, labels: ownLabels(placed.labels), actorIds: [] }));
        group.actorIds.push(placed.actorId);
      }
      out.push({
        nodeId: node.id,
        name: node.name,
        state: node.state,
        labels: { ...node.labels },
        taints: formatTaints(node.taints),
        total: { ...node.total },
        available: { ...node.available },
        actors: [...byKey.values()],
        bundles: bundles.get(node.id) ?? 0,
      });
    }
    return out.sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  }

  #placedKey(placed: PlacedActor): string {
    let key = this.#placedKeys.get(placed);
    if (key === undefined) {
      key = `${placed.namespace}\u0000${canonicalJson(ownLabels(placed.labels))}`;
      this.#placedKeys.set(placed, key);
    }
    return key;
  }

  /**
   * A reply over the message size (hundreds of thousands of placed actors) keeps DEMAND_SAMPLE_IDS
   * ids per node group, says how many it left out (`actorIdsOmitted`), and is `truncated`.
   */
  #fit(reply: ResourceDemandsReply): ResourceDemandsReply {
    const budget = this.src.maxBytes - PAGE_OVERHEAD_BYTES;
    // trimming can only take off actor ids: while they are small beside the budget, nothing to measure
    let idBytes = 0;
    for (const n of reply.nodes) for (const g of n.actors) for (const id of g.actorIds) idBytes += id.length + 3;
    if (idBytes < budget / 4 || encodedSize(reply) <= budget) return reply;
    for (const n of reply.nodes) {
      for (const g of n.actors) {
        if (g.actorIds.length <= DEMAND_SAMPLE_IDS) continue;
        g.actorIdsOmitted = g.actorIds.length - DEMAND_SAMPLE_IDS;
        g.actorIds = g.actorIds.slice(0, DEMAND_SAMPLE_IDS);
      }
    }
    return { ...reply, truncated: true };
  }
}

/** The placement keys of register_actor's options, as sent (absent keys left out). */
function placementOf(options: Readonly<Record<string, unknown>>): PlacementOptions {
  const out: Record<string, unknown> = {};
  for (const k of PLACEMENT_KEYS) if (options[k] !== undefined && options[k] !== null) out[k] = options[k];
  return out as PlacementOptions;
}

/** An actor's labels without its automatic orrery.io/actor-id. */
function ownLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in labels) if (k !== ACTOR_ID_LABEL) out[k] = labels[k];
  return out;
}
