import { randomBytes } from 'node:crypto';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import type { LeaseGrant } from '../worker/task-leases.ts';
import type { LocalTasksOptions } from './local-tasks-options.ts';
import { feasibleHere } from './task-decision.ts';
import type { Task } from './task-queue.ts';

/** A lease ends after this long without a task… */
export const DEFAULT_LEASE_IDLE_MS = 100;
/** …and takes no task after this long: the next task with its options is decided afresh. */
export const DEFAULT_LEASE_LIFETIME_MS = 1000;

const newLeaseId = (): string => randomBytes(8).toString('hex');

/**
 * The worker leases one raylet's tasks (local-tasks.ts) grant with a task whose driver asked for one
 * (docs/runtime.md, "Worker leases"), until they end: the holder of each one's resources, which stay
 * leased after its task until its task host ends it or dies with it, and its tasks' request, which
 * has it revoked once this node no longer meets that request's hard constraints.
 */
export class WorkerLeases {
  /** Leases granted and not yet ended: the holder of their resources, and their tasks' request. */
  readonly #leased = new Map<string, { holder: string; req: SchedulingRequest; revoked?: boolean }>();

  constructor(private readonly opts: Pick<LocalTasksOptions, 'view' | 'leases' | 'workerLeases' | 'revokeLeases'>) {}

  get size(): number {
    return this.#leased.size;
  }

  has(leaseId: string): boolean {
    return this.#leased.has(leaseId);
  }

  grantFor(task: Task): LeaseGrant | undefined {
    const config = this.opts.workerLeases ?? { idleMs: DEFAULT_LEASE_IDLE_MS, lifetimeMs: DEFAULT_LEASE_LIFETIME_MS };
    if (!task.body.lease || config === false || task.req.spread) return undefined;
    return { leaseId: newLeaseId(), idleMs: config.idleMs, lifetimeMs: config.lifetimeMs };
  }

  /** The lease granted with a task that starts: `holder` holds its resources. */
  granted(leaseId: string, holder: string, req: SchedulingRequest): void {
    this.#leased.set(leaseId, { holder, req });
  }

  /** The lease's task lost its worker host (running-tasks.ts), and the lease's resources went back with it. */
  forget(leaseId: string): void {
    this.#leased.delete(leaseId);
  }

  /** A task host ended a lease: its resources go back. */
  ended(leaseId: string): void {
    const lease = this.#leased.get(leaseId);
    if (lease === undefined) return;
    this.#leased.delete(leaseId);
    this.opts.leases.release(lease.holder);
  }

  /** Revokes the leases whose tasks' hard constraints no longer hold here (LocalTasks.localChanged). */
  revokeStale(): void {
    const { view } = this.opts;
    const stale = [...this.#leased].filter(([, l]) => !l.revoked && !feasibleHere(view.state, l.req, view.localNodeId));
    for (const [, lease] of stale) lease.revoked = true;
    if (stale.length > 0) this.opts.revokeLeases?.(stale.map(([id]) => id));
  }
}
