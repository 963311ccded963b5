import type { Observable, Subscription } from 'rxjs';
import { NodeNotFoundError, OrreryError } from '../../lib/errors.ts';
import { encode } from '../../protocols/codec.ts';
import { nodeInfo } from '../../protocols/messages/cluster.ts';
import { taskOutcome, type SubmitTask, type TaskLease, type TaskOutcome } from '../../protocols/messages/task.ts';
import { decodeReply } from '../../protocols/reply.ts';
import { refsDecoded } from '../../protocols/actor-ref.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import { type Validator } from '../../protocols/validate.ts';
import type { Bus } from '../bus/bus.ts';
import { NoRespondersError } from '../bus/errors.ts';
import type { ClusterEvent } from './cluster-info.types.ts';
import { specializeWireError } from './errors.ts';
import type { GcsClient } from './gcs-client.ts';
import { NoNodesError, TaskAbortedError, TaskNodeDiedError, TaskQueueFullError, TaskWorkerDiedError } from './task-errors.ts';
import { abortable, watchAbort } from './abort-watch.ts';
import { newRandomId } from './random-id.ts';

/** What the submitter needs from its cluster connection (the ClusterClient provides it). */
export interface TaskContext {
  readonly bus: Bus;
  readonly gcs: GcsClient;
  readonly subjects: ClusterSubjects;
  readonly callTimeoutMs: number;
  readonly events$: Observable<ClusterEvent>;
  /** `value` (a decoded payload) with each actor reference in it made a handle on this connection. */
  revive(value: unknown): unknown;
}

/** One task to run, its options already validated. */
export interface TaskSpec {
  readonly taskId: string;
  readonly code: SubmitTask['code'];
  readonly namespace: string;
  readonly options: Record<string, unknown>;
  /** -1: no limit. */
  readonly maxRetries: number;
  /** How long the driver waits for each run's answer (a submission, a push to a lease); absent: callTimeoutMs. */
  readonly timeoutMs?: number;
  /** The job on whose behalf it runs: actors it creates through connect() are owned by it (docs/jobs.md). */
  readonly jobId?: string;
  readonly pin?: { readonly nodeId: string; readonly soft: boolean };
  /** Aborting it cancels the task (TaskRunOptions.signal); `cancelKey` goes with every submission and push of it. */
  readonly signal?: AbortSignal;
  readonly cancelKey?: string;
}

/**
 * How long the driver waits for one answer about `spec` — its own `timeoutMs`, else the connection's
 * call timeout — and when that ends on its wall clock: both go in the message (submit_task,
 * leased_task), so that a raylet or task host never starts it after the driver gave up.
 */
export function answerWait(spec: Pick<TaskSpec, 'timeoutMs'>, callTimeoutMs: number): { timeoutMs: number; deadline: number } {
  const timeoutMs = spec.timeoutMs ?? callTimeoutMs;
  return { timeoutMs, deadline: Date.now() + timeoutMs };
}

/** How a request about a task ends when the task's signal aborts (TaskSubmitter.cancelling). */
export interface AbortWatch {
  readonly signal: AbortSignal;
  aborted(): Error;
  /** Tells whoever holds the task to drop it if it has not started. */
  cancel(): void;
}

/** A task's result, with where it ran and how it got there. */
export interface TaskResult<R = unknown> {
  readonly value: R;
  readonly taskId: string;
  /** The node that ran it (the last raylet asked). */
  readonly nodeId: string;
  /** The raylets asked for the run that returned, in order: the first is where the driver sent it. */
  readonly route: readonly string[];
  /** Runs started: 1, plus one per retry after a node or worker host died. */
  readonly attempts: number;
}

/** A fresh task id: 16 lowercase hex characters (random-id.ts). */
export const newTaskId = newRandomId;

/** Requests in a row that found no raylet to take the task before the driver gives up. */
const MAX_REFUSALS = 20;
const FIRST_PAUSE_MS = 50;
const MAX_PAUSE_MS = 1000;

/** How one task is doing across its runs. */
export interface Tries {
  /** Runs that failed with their node or worker host so far. */
  attempt: number;
  /**
   * Whether a raylet or a worker may run it, or may have: true once it is sent, false again when
   * an answer says it did not run there (spillback, busy, resubmit, no responder, a lease gone).
   * What an abort reports as `sent`.
   */
  sent?: boolean;
  lastLoss?: { nodeId: string } | { cause: string };
}

export class NodeDied extends Error {
  constructor(readonly nodeId: string) {
    super(`node ${nodeId} died`);
  }
}

/**
 * The driver's side of tasks (docs/runtime.md, "Tasks"). A task goes to one raylet with
 * submit_task: the one its hard node-id affinity names, else the driver's home raylet — a live node
 * picked at random once, and again when it goes. The raylet answers with the result, or sends the
 * driver on (spillback) to the node its view prefers; the driver follows, counting hops.
 *
 * The driver knows where its task is at every moment (the last raylet that took it), so a
 * `node_dead` event for that node — or no raylet answering on its subject — means the task is lost
 * there: it is submitted again from the start, up to `maxRetries` times, as is a task whose worker
 * host died (TASK_WORKER_DIED). A task that threw is not retried.
 *
 * Live nodes come from one list_nodes, then node events; one events$ subscription serves every task.
 */
export class TaskSubmitter {
  private live: Set<string> | undefined;
  private loading: Promise<Set<string>> | undefined;
  private home: string | undefined;
  private readonly deathWatchers = new Map<string, Set<() => void>>();
  /** Nodes seen dead (node ids are never reused). */
  private readonly dead = new Set<string>();
  private readonly sub: Subscription;

  constructor(private readonly ctx: TaskContext) {
    this.sub = ctx.events$.subscribe({ next: (event) => this.onEvent(event) });
  }

  /** Runs a task through raylets alone (no lease): submissions, spillbacks and retries. */
  async run(spec: TaskSpec): Promise<TaskResult> {
    const outcome = await this.submit(spec, { attempt: 0 }, false);
    if ('busy' in outcome) throw new OrreryError('PROTOCOL', 'a raylet answered busy to a submission that did not ask for a lease');
    return outcome.result;
  }

  /**
   * Submits a task to raylets until it has run: follows spillbacks, and after a node or worker host
   * died submits it again from the start while `maxRetries` allows (counted in `tries`). With
   * `wantLease`, asks the raylet that runs it for a worker lease, returned with the result — or
   * hears `busy` when no node has room for it now (it did not run).
   */
  async submit(spec: TaskSpec, tries: Tries, wantLease: boolean): Promise<{ result: TaskResult; lease?: TaskLease } | { busy: true }> {
    let refusals = 0;
    /** When a raylet first answered `full` to this run, and how many times since. */
    let full: { since: number; times: number } | undefined;
    for (;;) {
      this.checkAborted(spec, tries);
      let target = await this.entry(spec, refusals);
      const route: string[] = [];
      for (let hops = 0; ; hops++) {
        // aborted while it was answered elsewhere (a spillback) or waited for a node: not sent again
        this.checkAborted(spec, tries);
        route.push(target);
        let outcome: TaskOutcome;
        try {
          const visited = route.length > 1 ? route.slice(0, -1) : undefined;
          // timeoutMs: a raylet that queues it drops it once this request has timed out here
          const wait = answerWait(spec, this.ctx.callTimeoutMs);
          const body = {
            taskId: spec.taskId,
            code: spec.code,
            namespace: spec.namespace,
            options: spec.options,
            hops,
            visited,
            attempt: tries.attempt,
            ...wait,
            ...(wantLease ? { lease: true } : {}),
            ...(spec.jobId === undefined ? {} : { jobId: spec.jobId }),
            ...(spec.cancelKey === undefined ? {} : { cancelKey: spec.cancelKey }),
          };
          const data = encode('submit_task', body);
          tries.sent = true;
          outcome = await this.request(target, this.ctx.subjects.raylet(target, 'submit_task'), data, taskOutcome, undefined, wait.timeoutMs, this.cancelling(spec, this.ctx.subjects.raylet(target, 'cancel_task')));
          if (outcome.kind !== 'done') tries.sent = false;
        } catch (err) {
          if (err instanceof NoRespondersError) tries.sent = false;
          if (err instanceof NoRespondersError) {
            // nothing serves that raylet's subject: the node is gone, and the task never reached it
            this.forget(target);
            if (spec.pin && !spec.pin.soft && target === spec.pin.nodeId) throw new NodeNotFoundError(target);
            refusals++;
            break;
          }
          this.lost(spec, tries, err);
          break;
        }
        if (outcome.kind === 'done') {
          const result = { value: outcome.value, taskId: spec.taskId, nodeId: target, route, attempts: tries.attempt + 1 };
          return outcome.lease ? { result, lease: outcome.lease } : { result };
        }
        if (outcome.kind === 'resubmit') {
          this.forget(target);
          refusals++;
          break;
        }
        if (outcome.kind === 'busy') return { busy: true };
        if (outcome.kind === 'full') {
          // the raylet that would keep it has no room in its queue: the same submission again,
          // after a pause, for as long as the task's timeout — then it fails, never having run
          full ??= { since: Date.now(), times: 0 };
          const waitedMs = Date.now() - full.since;
          const timeoutMs = spec.timeoutMs ?? this.ctx.callTimeoutMs;
          const { queued, maxQueued, queuedBytes, maxQueuedBytes } = outcome;
          if (waitedMs >= timeoutMs) throw new TaskQueueFullError(spec.taskId, target, { queued, maxQueued, queuedBytes, maxQueuedBytes }, waitedMs);
          const delayMs = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** full.times++, timeoutMs - waitedMs);
          const pause = new Promise((resolve) => setTimeout(resolve, delayMs));
          await (spec.signal === undefined ? pause : abortable(pause, spec.signal, () => new TaskAbortedError(spec.taskId, spec.code.functionName, false, spec.signal!.reason)));
          route.pop();
          hops--;
          continue;
        }
        refusals = 0;
        target = outcome.nodeId;
      }
    }
  }

  /**
   * A run failed: a node death or a worker host's (counted, and thrown again once `maxRetries` is
   * used up), or anything else (thrown as its class at once: RemoteError, CodeLoadError, …).
   */
  lost(spec: TaskSpec, tries: Tries, err: unknown): void {
    if (err instanceof NodeDied) {
      tries.lastLoss = { nodeId: err.nodeId };
    } else {
      const specialized = specializeWireError(err);
      if (!(specialized instanceof OrreryError) || specialized.code !== 'TASK_WORKER_DIED') throw specialized;
      tries.lastLoss = { cause: String(specialized.detail.cause ?? specialized.message) };
    }
    tries.attempt++;
    if (spec.maxRetries !== -1 && tries.attempt > spec.maxRetries) {
      const loss = tries.lastLoss;
      throw 'nodeId' in loss ? new TaskNodeDiedError(spec.taskId, loss.nodeId, tries.attempt) : new TaskWorkerDiedError(spec.taskId, loss.cause, tries.attempt);
    }
  }

  /** Throws TaskAbortedError when the task's signal has aborted. */
  checkAborted(spec: TaskSpec, tries: Tries): void {
    if (spec.signal?.aborted) throw new TaskAbortedError(spec.taskId, spec.code.functionName, tries.sent === true, spec.signal.reason);
  }

  /**
   * What request() does when the task's signal aborts while it waits for an answer: it fails the
   * task at once (`sent`: the request is out) and publishes cancel_task on `subject` — the raylet's,
   * or the lease's — which drops the task there if it is still queued. Undefined without a signal.
   */
  cancelling(spec: TaskSpec, subject: string): AbortWatch | undefined {
    const { signal, cancelKey } = spec;
    if (signal === undefined || cancelKey === undefined) return undefined;
    return {
      signal,
      aborted: () => new TaskAbortedError(spec.taskId, spec.code.functionName, true, signal.reason),
      cancel: () => {
        try {
          this.ctx.bus.publish(subject, encode('cancel_task', { taskId: spec.taskId, cancelKey }));
        } catch {
          // a closed bus: nothing of the task will be answered to this driver anyway
        }
      },
    };
  }

  /** Whether a node is (as far as this driver knows) alive. */
  isLive(nodeId: string): boolean {
    return !this.dead.has(nodeId);
  }

  /** Ends the node-event subscription (the client closed). */
  close(): void {
    this.sub.unsubscribe();
  }

  /** Where a (re)submission starts: the pinned node for a hard pin or a live soft one, else home. */
  private async entry(spec: TaskSpec, refusals: number): Promise<string> {
    if (refusals >= MAX_REFUSALS) throw new NoNodesError(`${refusals} submissions in a row found no raylet to take it`);
    const pin = spec.pin;
    if (pin && !pin.soft) return pin.nodeId;
    let live = await this.liveNodes();
    if (live.size === 0 || (refusals > 0 && this.home === undefined)) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.max(0, refusals - 1))));
      live = await this.liveNodes(true);
      if (live.size === 0) throw new NoNodesError('the cluster has no live node');
    }
    if (pin && live.has(pin.nodeId)) return pin.nodeId;
    if (this.home === undefined || !live.has(this.home)) {
      const ids = [...live];
      this.home = ids[Math.floor(Math.random() * ids.length)];
    }
    return this.home;
  }

  private async liveNodes(refresh = false): Promise<Set<string>> {
    if (this.live && !refresh) return this.live;
    this.loading ??= this.ctx.gcs.all('list_nodes', {}, nodeInfo).then(
      (nodes) => {
        this.loading = undefined;
        this.live = new Set(nodes.filter((n) => n.state === 'ALIVE').map((n) => n.nodeId));
        return this.live;
      },
      (err: unknown) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
  }

  forget(nodeId: string): void {
    this.live?.delete(nodeId);
    if (this.home === nodeId) this.home = undefined;
  }

  private onEvent(event: ClusterEvent): void {
    if (event.type === 'node_added' || event.type === 'node_alive') {
      if (event.node.state === 'ALIVE') this.live?.add(event.node.nodeId);
    } else if (event.type === 'node_draining') {
      this.forget(event.node.nodeId);
    } else if (event.type === 'node_dead') {
      this.forget(event.node.nodeId);
      this.dead.add(event.node.nodeId);
      const watchers = this.deathWatchers.get(event.node.nodeId);
      if (watchers) for (const w of [...watchers]) w();
    }
  }

  /**
   * One request about a task on node `nodeId` (a submit_task to its raylet, or a task pushed to a
   * lease there); rejects with NodeDied when that node is declared dead first, and with
   * `extraDeath` when `onLost` is called (the lease died with its host).
   */
  request<T>(nodeId: string, subject: string, data: Uint8Array, value: Validator<T>, onLost?: (fail: (err: Error) => void) => () => void, timeoutMs = this.ctx.callTimeoutMs, abort?: AbortWatch): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = (done: () => void): void => {
        if (settled) return;
        settled = true;
        unwatch();
        done();
      };
      const unwatchDeath = this.watchDeath(nodeId, () => finish(() => reject(new NodeDied(nodeId))));
      const unwatchLoss = onLost?.((err) => finish(() => reject(err)));
      // the answer that may still come (ABORTED from a raylet that dropped it, or a result) is dropped by finish()
      const unwatchAbort = abort && watchAbort(abort.signal, () => finish(() => (reject(abort.aborted()), abort.cancel())));
      const unwatch = (): void => {
        unwatchDeath();
        unwatchLoss?.();
        unwatchAbort?.();
      };
      this.ctx.bus.request(subject, data, { timeoutMs }).then(
        (msg) => {
          try {
            const refs = refsDecoded();
            let outcome = decodeReply(msg.data, { value });
            // a handle the task returned arrives as a reference: a handle on this connection
            if (refsDecoded() !== refs) outcome = this.ctx.revive(outcome) as T;
            finish(() => resolve(outcome));
          } catch (err) {
            finish(() => reject(err));
          }
        },
        (err: unknown) => finish(() => reject(err)),
      );
    });
  }

  private watchDeath(nodeId: string, onDeath: () => void): () => void {
    let set = this.deathWatchers.get(nodeId);
    if (!set) this.deathWatchers.set(nodeId, (set = new Set()));
    set.add(onDeath);
    return () => {
      set.delete(onDeath);
      if (set.size === 0 && this.deathWatchers.get(nodeId) === set) this.deathWatchers.delete(nodeId);
    };
  }
}
