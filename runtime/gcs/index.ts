// runtime/gcs — the global control service: node and actor tables, actor scheduling with lib's
// pipeline, the pending queue, events and the cluster-view broadcast, served on `gcs.<verb>`.
import type { PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import type { ActorInfoWire } from '../../protocols/messages/actor.ts';
import type { NodeInfoWire } from '../../protocols/messages/cluster.ts';
import type { JobInfoWire } from '../../protocols/messages/job.ts';
import type { PendingQueueStats } from './pending-queue.ts';
import type { GcsOptions } from './gcs-options.ts';
import { GcsService } from './service.ts';
import type { WireErrorCounts } from './wire.ts';

export type { GcsOptions } from './gcs-options.ts';
export type { WireErrorCounts } from './wire.ts';
export type { PendingQueueStats, KickReason } from './pending-queue.ts';
export { MemoryStore, type GcsStore, type NodeRecord, type ActorRecord } from './store.ts';
export { gcsMachine, type GcsMachine } from './gcs.machine.ts';
export { nodeMachine, type NodeMachine } from './node.machine.ts';
export { actorMachine, actorStateOf, KILLED, type ActorMachine, type ActorState } from './actor.machine.ts';

/** What the GCS holds, as plain data: for specs, `orrery status` and debugging. */
export interface GcsTables {
  /** The Gcs machine's state: starting, serving, stopping, stopped, failed. */
  readonly state: string;
  readonly nodes: NodeInfoWire[];
  readonly actors: ActorInfoWire[];
  readonly placementGroups: PlacementGroupInfoWire[];
  /** The job table: drivers' connections, RUNNING and FINISHED (jobs.ts). */
  readonly jobs: JobInfoWire[];
  /** The cluster view's current version. */
  readonly viewVersion: number;
  readonly pending: PendingQueueStats;
  /** Actor machines running now, and actors asleep (ALIVE, machine stopped until their next event). */
  readonly actorMachines: { readonly running: number; readonly asleep: number };
  /** Answers from raylets refused because they did not carry their node's secret. */
  readonly forgedAnswers: number;
}

export interface GcsHandle {
  readonly cluster: string;
  /** Graceful: subjects unsubscribed, timers cleared, every machine stopped. The bus stays open. */
  stop(): Promise<void>;
  /** The node and actor tables, the view version and the pending queue, now. */
  snapshot(): GcsTables;
  /** Messages refused as malformed so far, by wire error code and by verb. */
  wireErrors(): WireErrorCounts;
}

/** Starts a GCS on `opts.bus`; resolves once it serves every request subject. */
export async function startGcs(opts: GcsOptions): Promise<GcsHandle> {
  const service = new GcsService(opts);
  await service.start();
  return {
    cluster: service.cluster,
    stop: () => service.stop(),
    snapshot: () => ({
      state: String(service.actor.getSnapshot().value),
      nodes: service.nodes.list(),
      actors: service.actors.list(),
      placementGroups: service.groups.list(),
      jobs: service.jobs.list(),
      viewVersion: service.view.version,
      pending: service.queue.stats(),
      actorMachines: service.actors.machines,
      forgedAnswers: service.forgedAnswers,
    }),
    wireErrors: () => service.intake.counts(),
  };
}
