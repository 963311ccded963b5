// What a raylet service (service.ts) is started with: its bus, its node's config, how it runs
// worker hosts, its log, and the pacing, limits and hooks its parts take, each with its default.
import type { Actor } from 'xstate';
import type { Bus } from '../bus/bus.ts';
import type { NatsAccess } from '../process/flags.ts';
import type { RayletConfig } from './config.ts';
import type { FollowView } from './raylet-tasks.ts';
import type { RayletMachine } from './raylet.machine.ts';

export type HostsOption = { mode: 'inline' } | { mode: 'process'; natsAddress: string; natsAccess?: NatsAccess; workerExecArgv?: readonly string[] };

export interface RayletServiceOptions {
  bus: Bus;
  config: RayletConfig;
  hosts: HostsOption;
  log: (line: string) => void;
  /** Heartbeat pace until the GCS's registration reply sets it; default 500 ms. */
  heartbeatMs?: number;
  /** Pause between registrations nobody answered, and between actor_died retries; default 500 ms. */
  retryMs?: number;
  /** Timeout of each request to the GCS but heartbeats (whose pace bounds them); default 2,000 ms. */
  requestTimeoutMs?: number;
  /** Most worker hosts for tasks; default: the node's whole CPUs, at most the machine's cores (at least 1). */
  maxTaskHosts?: number;
  /** Spills of one task submission for want of room before a raylet that could run it keeps it; default 3. */
  maxSpillHops?: number;
  /**
   * Most tasks waiting in this raylet's queue, and most bytes of their submissions; a task that would
   * wait past either is answered `full` and submitted again by its driver later. Default 100,000
   * tasks and 256 MiB (task-queue.ts).
   */
  maxQueuedTasks?: number;
  maxQueuedTaskBytes?: number;
  /** Worker leases granted to drivers with task results (default idle 100 ms, lifetime 1 s); false: none. */
  workerLeases?: { idleMs: number; lifetimeMs: number } | false;
  /** The fence lease as a fraction of the GCS's node timeout (fence.ts); default 0.6. */
  fenceLeaseFraction?: number;
  /** When the raylet follows gcs.view (raylet-tasks.ts, "Following the view"); default 'with-tasks'. */
  followView?: FollowView;
  /** How long it keeps following after its task work ended; default 30 s. */
  viewLingerMs?: number;
  /**
   * The most bytes one message of a registration lists of what the node runs; a longer list goes
   * ahead in parts (registration-parts.ts). Default RUNNING_PART_BYTES (512 KiB); specs set it low.
   */
  registrationPartBytes?: number;
  /** Handed the Raylet machine's actor system when the machine is created, so inspection (runtime/inspect) can attach to it while someone watches. */
  onActorSystem?: (system: Actor<RayletMachine>['system']) => void;
}
