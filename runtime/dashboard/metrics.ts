import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import type { ClusterEvent } from '../client/cluster-info.types.ts';
import type { Cluster } from '../client/cluster.ts';

/**
 * `GET /metrics` (Prometheus text format, prom-client): what the dashboard's connection sees of the
 * cluster. Gauges are read from the GCS when scraped (nodes, actors, placement groups, resources);
 * counters and the creation histogram come from the event stream while the dashboard runs (so they
 * start at zero with it, as counters of any exporter do). docs/dashboard.md has the list and PromQL.
 */
export interface DashboardMetrics {
  readonly contentType: string;
  text(): Promise<string>;
  stop(): void;
}

/** Actors waiting to be ALIVE whose start is remembered at most (older ones are dropped from the histogram). */
const MAX_TRACKED = 100_000;
/** Buckets of actor creation, seconds: from 5 ms to 2 minutes. */
const CREATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function dashboardMetrics(cluster: Cluster): DashboardMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ cluster: cluster.name });

  new Gauge({
    name: 'orrery_nodes',
    help: 'Nodes by state (ALIVE, DRAINING, DEAD).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const n of await cluster.nodes()) this.inc({ state: n.state });
    },
  });
  const resourceTotal = new Gauge({ name: 'orrery_node_resource_total', help: 'A live node\u2019s total of a resource (CPU, GPU, memory in bytes, custom).', labelNames: ['node', 'resource'], registers: [registry] });
  new Gauge({
    name: 'orrery_node_resource_used',
    help: 'What actors and tasks hold of a live node\u2019s resource.',
    labelNames: ['node', 'resource'],
    registers: [registry],
    async collect() {
      this.reset();
      resourceTotal.reset();
      for (const n of await cluster.nodes()) {
        if (n.state === 'DEAD') continue;
        for (const [resource, total] of Object.entries(n.resources.total)) {
          resourceTotal.set({ node: n.name, resource }, total);
          this.set({ node: n.name, resource }, total - (n.resources.available[resource] ?? 0));
        }
      }
    },
  });
  /** The reason of each actor's latest schedule-failed event (constraints, resources, …). */
  const pendingReason = new Map<string, string>();
  new Gauge({
    name: 'orrery_actors',
    help: 'Actors by state (PENDING, SCHEDULED, ALIVE, RESTARTING, DEAD; dead ones as long as the GCS keeps them).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const a of await cluster.actors()) this.inc({ state: a.state });
    },
  });
  new Gauge({
    name: 'orrery_pending_actors',
    help: 'Pending actors by why they wait: constraints, resources, constraints_and_resources, or unknown (no schedule-failed event seen yet).',
    labelNames: ['reason'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const a of await cluster.actors({ states: ['PENDING'] })) this.inc({ reason: pendingReason.get(a.actorId) ?? 'unknown' });
    },
  });
  new Gauge({
    name: 'orrery_placement_groups',
    help: 'Placement groups by state.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const pg of await cluster.placementGroups()) this.inc({ state: pg.state });
    },
  });
  const events = new Counter({ name: 'orrery_events_total', help: 'Cluster events seen since the dashboard started, by type.', labelNames: ['type'], registers: [registry] });
  const scheduleFailed = new Counter({
    name: 'orrery_schedule_failed_total',
    help: 'Schedule-failed events since the dashboard started, by what could not be placed (actor, task, placement_group) and why.',
    labelNames: ['kind', 'reason'],
    registers: [registry],
  });
  const creation = new Histogram({
    name: 'orrery_actor_creation_seconds',
    help: 'From an actor\u2019s registration (its first event, PENDING or SCHEDULED) to ALIVE, for actors registered while the dashboard runs; restarts not included.',
    buckets: CREATION_BUCKETS,
    registers: [registry],
  });

  /** When each actor registered (its first event), until it is ALIVE or DEAD. */
  const startedAt = new Map<string, number>();
  const seen = (e: ClusterEvent): void => {
    events.inc({ type: e.type });
    if (e.type === 'schedule_failed') {
      scheduleFailed.inc({ kind: e.target.kind, reason: e.reason });
      if (e.target.kind === 'actor') pendingReason.set(e.target.id, e.reason);
      return;
    }
    if (e.type !== 'actor_state') return;
    const a = e.actor;
    // its first event: PENDING, or SCHEDULED when the GCS placed it as it registered it
    if ((a.state === 'PENDING' || a.state === 'SCHEDULED') && a.numRestarts === 0 && !startedAt.has(a.actorId)) {
      if (startedAt.size >= MAX_TRACKED) startedAt.delete(startedAt.keys().next().value as string);
      startedAt.set(a.actorId, e.time);
    }
    if (a.state !== 'PENDING') pendingReason.delete(a.actorId);
    if (a.state === 'ALIVE' || a.state === 'DEAD') {
      const start = startedAt.get(a.actorId);
      startedAt.delete(a.actorId);
      if (a.state === 'ALIVE' && start !== undefined) creation.observe(Math.max(0, (e.time - start) / 1000));
    }
  };
  const sub: Subscription = cluster.events$.subscribe({ next: seen, error: () => undefined });

  return {
    contentType: registry.contentType,
    text: () => registry.metrics(),
    stop: () => sub.unsubscribe(),
  };
}
