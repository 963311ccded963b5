// What one raylet's tasks (local-tasks.ts) are built with: the view they are decided on and the
// leases they run under, how a task runs, the hooks they report through, and the bounds and clocks
// their parts keep, each with its default (named where its part applies it).
import type { Rng } from '../../lib/random.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import type { RunTask } from '../worker/task-runner.ts';
import type { RayletView } from './cluster-view.ts';
import type { Leases } from './leases.ts';

export interface LocalTasksOptions {
  view: RayletView;
  leases: Leases;
  /** Runs a task in a worker host; resolves once it ended, rejects when its host died first. */
  run(task: RunTask): Promise<void>;
  /** The cluster's rare resources (from the registration reply): requests for them tolerate their taints. */
  rareResources(): readonly string[];
  rng: Rng;
  log: (line: string) => void;
  /** A task waits because no node can take it; called again only when the explanation changes. */
  onWaiting?(task: { taskId: string; functionName: string }, failure: ScheduleFailure): void;
  /** Default DEFAULT_MAX_SPILL_HOPS. */
  maxSpillHops?: number;
  /** Worker leases granted with results (default idle 100 ms, lifetime 1,000 ms); `false`: none. */
  workerLeases?: { idleMs: number; lifetimeMs: number } | false;
  /** Its driver cancelled a task that runs here (cancel_task, key checked): its runtime-context signal aborts. */
  cancelRunning?(taskId: string): void;
  /** A lease was lost with its task host: drivers pushing to it must hear of it. */
  onLeaseLost?(leaseId: string, cause: string): void;
  /** Ends leases at their task hosts (a running task of one finishes first). */
  revokeLeases?(leaseIds: string[]): void;
  /**
   * Most tasks the queue holds, and most bytes of their submissions (docs/runtime.md, "A raylet's
   * queue is bounded"): a task that would wait past either is answered `full` and not kept. Default
   * DEFAULT_MAX_QUEUED_TASKS and DEFAULT_MAX_QUEUED_TASK_BYTES.
   */
  maxQueued?: number;
  maxQueuedBytes?: number;
  /** The clock of queued tasks' deadlines (ms); default performance.now. */
  now?: () => number;
  /** The wall clock a submission's `deadline` is read against (ms since the epoch); default Date.now. */
  wallNow?: () => number;
}
