import { randomInt } from 'node:crypto';
import { seededRng } from '../../lib/random.ts';
import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import { decode, encode } from '../../protocols/codec.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import { messages } from '../../protocols/messages/registry.ts';
import type { SubmitTask } from '../../protocols/messages/task.ts';
import { viewDelta, type NodeView, type ViewDelta } from '../../protocols/messages/view.ts';
import { decodeReply, encodeError } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import type { Bus, BusMsg, Subscription } from '../bus/bus.ts';
import type { MalformedCounter } from '../worker/malformed.ts';
import { cancelKeyMatches, encodeCancelled } from '../worker/cancel.ts';
import { respond } from '../worker/respond.ts';
import { RayletView, type ViewStats } from './cluster-view.ts';
import type { RayletConfig } from './config.ts';
import type { HostManager } from './host-manager.ts';
import type { Leases } from './leases.ts';
import { LocalTasks } from './local-tasks.ts';

const SUBMIT_REGISTRY = { submit_task: messages.submit_task } as const;
const CANCEL_REGISTRY = { cancel_task: messages.cancel_task } as const;
const VIEW_REGISTRY = { view_delta: messages.view_delta } as const;
/**
 * Least time between two load reports of this raylet. They go to the GCS, which forwards the latest
 * of each node in its next view delta (at most every 100 ms by default), so reporting more often
 * than about twice per view period would only be thrown away there.
 */
const LOAD_INTERVAL_MS = 50;
/**
 * How long a raylet keeps following `gcs.view` after its task work ended: the last submission, with
 * no task queued or running and no worker lease left (see RayletTasks, "Following the view").
 */
export const DEFAULT_VIEW_LINGER_MS = 30_000;

/**
 * When a raylet follows the cluster view: 'with-tasks' (the default) from its first task submission
 * until it has had no task work for the linger time, 'always' from its start.
 */
export type FollowView = 'with-tasks' | 'always';

export interface RayletTasksOptions {
  bus: Bus;
  subjects: ClusterSubjects;
  config: RayletConfig;
  leases: Leases;
  hosts: HostManager;
  malformed: MalformedCounter;
  log: (line: string) => void;
  /** Timeout of the view_snapshot request. */
  requestTimeoutMs: number;
  retryMs?: number;
  maxSpillHops?: number;
  /** The queue's bounds (LocalTasks). */
  maxQueuedTasks?: number;
  maxQueuedTaskBytes?: number;
  workerLeases?: { idleMs: number; lifetimeMs: number } | false;
  /** Default 'with-tasks'. */
  followView?: FollowView;
  /** Default DEFAULT_VIEW_LINGER_MS. */
  viewLingerMs?: number;
}

/**
 * The task side of a raylet (docs/runtime.md, "Tasks" and "Label sync"): its copy of the cluster
 * view, kept from `gcs.view` (a gap asks `gcs.view_snapshot`), which also forwards the other
 * raylets' load reports; its own load report on `raylet.<nodeId>.load`, which only the GCS hears (so
 * load traffic grows with the nodes, not their square); the
 * `submit_task` subject, whose messages it decodes and hands to LocalTasks; and the events tasks and
 * leases publish (`schedule_failed` for a task no node can take, `lease_revoked`).
 *
 * Following the view. Only task decisions read the view (the GCS places actors), so a raylet
 * follows `gcs.view` only while it has task work: a submission subscribes it and reads a snapshot,
 * and the submissions that arrive before that snapshot is applied wait for it (at most the request
 * timeout; after that they are decided on the view as it was, and the snapshot, asked for again
 * after each failure, decides the queued ones afresh when it comes). Once no submission came for
 * `viewLingerMs` and no task is queued or running and no worker lease is held, it unsubscribes.
 * Before, every raylet applied every delta: CPU and traffic on every node for each actor placed
 * anywhere, which grew with the number of nodes (bench:e2e --nodes). A raylet's own node (its
 * resources, leases and bundles) is its own accounting and always current; what a paused view
 * misses of it (labels and taints the GCS changed, actor labels placed here) matters only to tasks
 * and leases, and the snapshot brings it when they come. `followView: 'always'` keeps the old way.
 */
export class RayletTasks {
  readonly view: RayletView;
  readonly tasks: LocalTasks;
  private rareResources: readonly string[] = [];
  /** The leases' totalVersion the view last took. */
  private knownTotal: number;
  /** This raylet's load reports: the last one's time and what it said (none is sent that says the same). */
  private load = { seq: 0, last: Number.NEGATIVE_INFINITY, timer: undefined as NodeJS.Timeout | undefined, said: undefined as Readonly<Record<string, number>> | undefined };
  private closed = false;
  /** The gcs.view subscription while following; see "Following the view". */
  private viewSub: Subscription | undefined;
  /** Submissions waiting for the view's snapshot, with the timer that stops the wait. */
  private waiting: { submits: [SubmitTask, BusMsg & { reply: string }][]; bytes: number; timer: NodeJS.Timeout } | undefined;
  private lastSubmit = Number.NEGATIVE_INFINITY;
  /** Submissions cancelled while they waited for the view's snapshot (LocalTasks counts the queued ones). */
  private cancelledWaiting = 0;
  private lingerTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: RayletTasksOptions) {
    const { config } = opts;
    this.knownTotal = opts.leases.totalVersion;
    this.view = new RayletView({
      local: { nodeId: config.nodeId, name: config.nodeName, labels: config.labels, taints: config.taints, total: config.total },
      requestSnapshot: () => this.snapshot(),
      onChange: () => this.tasks.viewChanged(),
      onLocalChange: () => this.tasks.localChanged(),
      log: (line) => opts.log(`raylet ${config.nodeId}: ${line}`),
      retryMs: opts.retryMs,
    });
    this.tasks = new LocalTasks({
      view: this.view,
      leases: opts.leases,
      run: (task) => opts.hosts.runTask(task),
      rareResources: () => this.rareResources,
      rng: seededRng(randomInt(2 ** 31)),
      log: opts.log,
      onWaiting: (task, failure) => this.publishWaiting(task, failure),
      onLeaseLost: (leaseId, cause) => this.publishLeaseLost(leaseId, cause),
      revokeLeases: (leaseIds) => opts.hosts.revokeLeases(leaseIds),
      cancelRunning: (taskId) => opts.hosts.cancelTasks([taskId]),
      maxSpillHops: opts.maxSpillHops,
      maxQueued: opts.maxQueuedTasks,
      maxQueuedBytes: opts.maxQueuedTaskBytes,
      workerLeases: opts.workerLeases,
    });
  }

  private get nodeId(): string {
    return this.opts.config.nodeId;
  }

  stats(): { tasks: ReturnType<LocalTasks['stats']>; view: ViewStats & { following: boolean } } {
    const tasks = this.tasks.stats();
    return { tasks: { ...tasks, cancelled: tasks.cancelled + this.cancelledWaiting }, view: { ...this.view.stats(), following: this.following } };
  }

  /**
   * Subscribes this raylet's `submit_task` (the caller ends it) and — with `followView: 'always'` —
   * `gcs.view`, which stop() ends; otherwise the view is followed from the first submission.
   */
  subscribe(): Subscription[] {
    const { bus, subjects } = this.opts;
    if (this.opts.followView === 'always') this.follow();
    return [bus.subscribe(subjects.raylet(this.nodeId, 'submit_task'), (msg) => this.onSubmit(msg)), bus.subscribe(subjects.raylet(this.nodeId, 'cancel_task'), (msg) => this.onCancel(msg))];
  }

  /** Whether this raylet follows gcs.view now. */
  get following(): boolean {
    return this.viewSub !== undefined;
  }

  /** Starts following gcs.view (a snapshot first); submissions wait for it, see "Following the view". */
  private follow(): void {
    if (this.viewSub !== undefined || this.closed) return;
    const { bus, subjects } = this.opts;
    this.viewSub = bus.subscribe(subjects.view(), (msg) => this.onView(msg));
    this.waiting = { submits: [], bytes: 0, timer: setTimeout(() => this.viewReady(), this.opts.requestTimeoutMs) };
    this.view.refresh().then(() => this.viewReady());
    if (this.opts.followView !== 'always') this.checkIdleLater();
  }

  /** The view's snapshot was applied (or the wait for it ended): waiting submissions are decided. */
  private viewReady(): void {
    const waiting = this.waiting;
    if (waiting === undefined) return;
    this.waiting = undefined;
    clearTimeout(waiting.timer);
    if (this.closed) return;
    for (const [body, msg] of waiting.submits) this.tasks.submit(body, msg);
  }

  private checkIdleLater(): void {
    const linger = this.opts.viewLingerMs ?? DEFAULT_VIEW_LINGER_MS;
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = undefined;
      if (this.closed || this.viewSub === undefined) return;
      const { running, queued, leases } = this.tasks.stats();
      const idleFor = performance.now() - this.lastSubmit;
      if (idleFor < linger || running > 0 || queued > 0 || leases > 0 || this.waiting !== undefined) return this.checkIdleLater();
      this.viewSub.unsubscribe();
      this.viewSub = undefined;
    }, Math.max(50, linger / 2));
    this.lingerTimer.unref?.();
  }

  /** From the registration reply: requests for these resources tolerate their taints. */
  setRareResources(resources: readonly string[]): void {
    this.rareResources = resources;
    // a GCS that has just registered this node (it may have restarted) has not heard its load
    this.load.said = undefined;
    this.reportLoad();
  }

  /**
   * The node's leases changed: the view sees it, queued tasks may fit, other raylets will hear it.
   * When its total changed too (a placement-group bundle committed or cancelled here), the view's
   * own node takes the new total, every queued task is decided again (one that could never run here
   * may now), and worker leases drawing on resources the node no longer has are revoked.
   */
  leasesChanged(): void {
    const { leases } = this.opts;
    this.view.setLocalResources(leases.total, leases.used(), leases.takeChanged());
    if (leases.totalVersion !== this.knownTotal) {
      this.knownTotal = leases.totalVersion;
      this.tasks.localChanged();
      this.tasks.viewChanged();
    } else {
      this.tasks.resourcesFreed();
    }
    this.reportLoad();
  }

  stop(how: 'stop' | 'crash'): void {
    this.closed = true;
    clearTimeout(this.load.timer);
    clearTimeout(this.lingerTimer);
    this.viewSub?.unsubscribe();
    this.viewSub = undefined;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) clearTimeout(waiting.timer);
    this.view.stop();
    if (how === 'crash') this.tasks.crash();
    else this.tasks.stop();
    // submissions that were waiting for the view are answered as queued ones are (`resubmit`), or not at all after a crash
    for (const [body, msg] of waiting?.submits ?? []) this.tasks.submit(body, msg);
  }

  /** submit_task: decoded here (malformed ones answered with their wire error), decided by LocalTasks. */
  private onSubmit(msg: BusMsg): void {
    let body;
    try {
      // a module URL that is not file: is refused here (CODE_SOURCE_REFUSED, by the validator); the
      // node's code roots are checked where the task runs, by its task host, as this raylet may
      // spill it to a node with other roots
      body = decode(msg.data, { registry: SUBMIT_REGISTRY }).body;
    } catch (err) {
      this.opts.malformed.count(err);
      respond(msg, () => encodeError(err));
      return;
    }
    if (msg.reply === undefined) {
      this.opts.malformed.count(new ProtocolError('INVALID_MESSAGE', 'submit_task without a reply subject: nobody could receive its result'));
      return;
    }
    this.lastSubmit = performance.now();
    this.follow();
    const { waiting } = this;
    if (waiting === undefined) return this.tasks.submit(body, msg as BusMsg & { reply: string });
    // held until the view's snapshot comes, within the queue's bounds as queued tasks are
    if (!this.tasks.refuseIfFull(msg, waiting.submits.length, waiting.bytes, msg.data.byteLength)) {
      waiting.submits.push([body, msg as BusMsg & { reply: string }]);
      waiting.bytes += msg.data.byteLength;
    }
  }

  /**
   * cancel_task: a task its driver aborted leaves this raylet unstarted when it is still here —
   * waiting for the view's snapshot, or queued — and submitted with that key; one running here
   * with that key has its signal aborted in its task host (LocalTasks.cancel). Anything else
   * changes nothing: a malformed cancel is counted, one for a task not here is not (it came after
   * the task's end, or the task went elsewhere).
   */
  private onCancel(msg: BusMsg): void {
    let body;
    try {
      body = decode(msg.data, { registry: CANCEL_REGISTRY }).body;
    } catch (err) {
      this.opts.malformed.count(err);
      return;
    }
    const waiting = this.waiting?.submits;
    const at = waiting?.findIndex(([submitted]) => submitted.taskId === body.taskId) ?? -1;
    if (at >= 0 && cancelKeyMatches(waiting![at]![0].cancelKey, body.cancelKey)) {
      const [[, submission]] = waiting!.splice(at, 1);
      this.waiting!.bytes -= submission.data.byteLength;
      this.cancelledWaiting++;
      respond(submission, () => encodeCancelled(body.taskId));
      return;
    }
    this.tasks.cancel(body.taskId, body.cancelKey);
  }

  /** A delta on gcs.view; one that does not decode is counted and dropped (a gap will show later). */
  private onView(msg: BusMsg): void {
    let delta: ViewDelta;
    try {
      delta = decode(msg.data, { registry: VIEW_REGISTRY }).body;
    } catch (err) {
      this.opts.malformed.count(err);
      return;
    }
    this.view.receive(delta);
  }

  /**
   * The whole view, read in pages (gcs.view_snapshot): every page of one snapshot, or — when the GCS
   * no longer keeps it (SNAPSHOT_MOVED) — again from the first page, a few times.
   */
  private async snapshot(): Promise<ViewDelta> {
    const ask = async (query: { after?: string; version?: number }): Promise<ViewDelta> => {
      // an unguessable reply subject, as the raylet's other requests to the GCS (gcs-link.ts, askGcs)
      const msg = await this.opts.bus.request(this.opts.subjects.gcs('view_snapshot'), encode('view_snapshot', query), { timeoutMs: this.opts.requestTimeoutMs, unguessableReply: true });
      return decodeReply(msg.data, { value: viewDelta });
    };
    for (let attempt = 1; ; attempt++) {
      const first = await ask({});
      const upserts = [...first.upserts];
      const loads = [...(first.loads ?? [])];
      let next = first.next;
      try {
        while (next !== undefined) {
          const page = await ask({ after: next, version: first.version });
          upserts.push(...page.upserts);
          loads.push(...(page.loads ?? []));
          next = page.next;
        }
      } catch (err) {
        if ((err as { code?: string }).code === 'SNAPSHOT_MOVED' && attempt < 5) continue;
        throw err;
      }
      return { version: first.version, previous: 0, upserts: joinNodeRuns(upserts), removals: [], ...(loads.length ? { loads } : {}) };
    }
  }

  /** Publishes this node's free resources for the GCS to pass on: now, or when LOAD_INTERVAL_MS has passed. */
  private reportLoad(): void {
    if (this.load.timer !== undefined || this.closed) return;
    const wait = this.load.last + LOAD_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.load.timer = setTimeout(() => {
        this.load.timer = undefined;
        this.reportLoad();
      }, wait);
      return;
    }
    const available = this.opts.leases.availableWithoutBundles();
    if (this.load.said && sameSet(this.load.said, available)) return;
    this.load.last = performance.now();
    this.load.said = { ...available };
    const report = { nodeId: this.nodeId, seq: ++this.load.seq, available };
    this.publish(this.opts.subjects.raylet(this.nodeId, 'load'), () => encode('raylet_load', report), 'its load');
  }

  /** A task no node can take: schedule_failed on events.schedule_failed, as the GCS publishes for actors. */
  private publishWaiting(task: { taskId: string; functionName: string }, failure: ScheduleFailure): void {
    const event = {
      type: 'schedule_failed',
      time: Date.now(),
      target: { kind: 'task', id: task.taskId, name: task.functionName },
      reason: failure.reason,
      message: failure.message.slice(0, 65_536),
      nodes: failure.nodes.map((n) => ({ nodeId: n.nodeId, reasons: [...n.reasons] })),
    };
    this.publish(this.opts.subjects.event('schedule_failed'), () => encode('event', event), `schedule_failed for task ${task.taskId}`);
  }

  /**
   * A lease died with its task host: `lease_revoked` on events.lease_revoked, so a driver waiting on
   * a task pushed to it retries (it cannot hear it from the host, which is gone).
   */
  private publishLeaseLost(leaseId: string, cause: string): void {
    const event = { type: 'lease_revoked', time: Date.now(), target: { kind: 'lease', id: leaseId, nodeId: this.nodeId }, reason: 'worker_died', message: cause.slice(0, 4096) };
    this.publish(this.opts.subjects.event('lease_revoked'), () => encode('event', event), `lease_revoked for ${leaseId}`);
  }

  /** Fire and forget: a failure is logged, never thrown into the raylet's work. */
  private publish(subject: string, data: () => Uint8Array, what: string): void {
    try {
      this.opts.bus.publish(subject, data());
    } catch (err) {
      this.opts.log(`raylet ${this.nodeId}: cannot publish ${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

function sameSet(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  return n === Object.keys(b).length;
}

/**
 * A snapshot's upserts with the runs of one node joined: the GCS sends a node too large for half a
 * page (the resource names of thousands of bundles) as consecutive upserts, each with a run of its
 * names (runtime/gcs/view.ts, snapshotParts); the first carries its label counts.
 */
export function joinNodeRuns(upserts: readonly NodeView[]): NodeView[] {
  const out: NodeView[] = [];
  for (const n of upserts) {
    const last = out.at(-1);
    if (last === undefined || last.nodeId !== n.nodeId || last.resources === undefined || n.resources === undefined) {
      out.push(n);
      continue;
    }
    Object.assign(last.resources.total, n.resources.total);
    Object.assign(last.resources.available, n.resources.available);
  }
  return out;
}
