import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import { MAX_TASK_HOPS } from '../../protocols/messages/task.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { respond } from '../worker/respond.ts';
import type { LocalTasksOptions } from './local-tasks-options.ts';
import type { RunningTasks } from './running-tasks.ts';
import { decideTask, feasibleHere, onwardTarget, passesHere } from './task-decision.ts';
import type { Task } from './task-queue.ts';

/** Spills of one submission for want of room, after which a raylet that could run it keeps it. */
export const DEFAULT_MAX_SPILL_HOPS = 3;

/**
 * What one raylet's tasks (local-tasks.ts) do with a task's decision on the view (task-decision.ts):
 * start it here (running-tasks.ts), spill it back to another node within the hop limits, answer its
 * error, or leave it to wait — telling why when it could not run here even with room.
 */
export class TaskPlacing {
  readonly #maxSpillHops: number;

  constructor(
    private readonly opts: Pick<LocalTasksOptions, 'view' | 'rng' | 'onWaiting' | 'maxSpillHops'>,
    private readonly running: RunningTasks,
  ) {
    this.#maxSpillHops = opts.maxSpillHops ?? DEFAULT_MAX_SPILL_HOPS;
  }

  /**
   * Decides a task and acts on the decision; false when it has to wait here. `waits`, during one
   * drain, holds the requests already decided to wait: within a drain resources are only taken, so
   * a task of the same request would wait too, and is not decided again against every node.
   */
  place(task: Task, waits?: Map<SchedulingRequest, { readonly failure: ScheduleFailure }>): boolean {
    const { view } = this.opts;
    const waited = waits?.get(task.req);
    if (waited !== undefined) {
      this.#waiting(task, waited);
      return false;
    }
    const decision = decideTask(view.state, task.req, view.localNodeId, { rng: this.opts.rng });
    switch (decision.kind) {
      case 'local':
        this.running.start(task);
        return true;
      case 'spill':
        // A task spilled here already runs here when it fits now: this node was preferred, and the
        // view that prefers another one does not see the load of tasks there (Ray's grant-or-reject).
        if (task.body.hops > 0 && passesHere(view.state, task.req, view.localNodeId)) {
          this.running.start(task);
          return true;
        }
        const target = this.#spillTarget(task, decision.nodeId);
        if (target !== undefined) {
          view.reserve(target, task.req.resources);
          respond(task.msg, () => encodeOk({ kind: 'spillback', nodeId: target }));
          return true;
        }
        if (passesHere(view.state, task.req, view.localNodeId)) {
          this.running.start(task);
          return true;
        }
        return false;
      case 'fail':
        respond(task.msg, () => encodeError(decision.error));
        return true;
      case 'wait':
        waits?.set(task.req, decision);
        this.#waiting(task, decision);
        return false;
    }
  }

  /**
   * Where a task goes when the view prefers another node, within the wire's hop limit: the raylet the
   * driver asked first spills freely; a raylet a task was spilled to passes it on only to a node it
   * has not visited, fewer than `maxSpillHops` times in all — and always when this node could never
   * run it (its labels changed under it). Undefined: it stays here.
   */
  #spillTarget(task: Task, preferred: string): string | undefined {
    const { hops, visited = [] } = task.body;
    if (hops + 1 > MAX_TASK_HOPS) return undefined;
    const { view } = this.opts;
    const mustGo = !feasibleHere(view.state, task.req, view.localNodeId);
    if (hops === 0 || (mustGo && !visited.includes(preferred))) return preferred;
    if (!mustGo && hops >= this.#maxSpillHops) return undefined;
    if (!visited.includes(preferred)) return preferred;
    return onwardTarget(view.state, task.req, visited, { localNodeId: view.localNodeId, rng: this.opts.rng }) ?? (mustGo ? preferred : undefined);
  }

  /**
   * A task that could run here once there is room is just queued (a busy cluster is not a failure);
   * one that could not gets its explanation published when it changes.
   */
  #waiting(task: Task, decision: { readonly failure: ScheduleFailure }): void {
    if (!this.opts.onWaiting || feasibleHere(this.opts.view.state, task.req, this.opts.view.localNodeId)) return;
    const { failure } = decision;
    if (failure.message === task.lastMessage) return;
    task.lastMessage = failure.message;
    this.opts.onWaiting({ taskId: task.body.taskId, functionName: task.body.code.functionName }, failure);
  }
}
