import { AsyncLocalStorage } from 'node:async_hooks';
import { OrreryError } from '../../lib/errors.ts';

/** What an actor (or task) can learn about where it runs; see getRuntimeContext(). */
export interface RuntimeContext {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly actorId?: string;
  readonly taskId?: string;
  /** The node's labels as it registered them, built-in `orrery.io/` labels included. */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * The job that owns this actor (or submitted this task): what it creates through connect() inside
   * the worker is owned by that job. Absent for a detached actor and for work created outside a job.
   */
  readonly jobId?: string;
  /** The actor's or task's namespace: the default namespace of connect() inside the worker. */
  readonly namespace?: string;
  /** What connect() with no argument returns here: the host's cluster (worker-cluster.ts). */
  readonly cluster?: { get(): Promise<unknown> };
  /**
   * A task's or an actor method's: aborted when its caller cancels it while it runs (docs/runtime.md,
   * "Cancelling a task", "Cancelling a call"); NEVER_ABORTED for work that cannot be cancelled.
   */
  readonly signal?: AbortSignal;
}

// One store per process, kept on globalThis: a user module that reaches this file through another
// path (a second copy of the package, dist/ beside the source) still sees the host's context.
const KEY = Symbol.for('orrery.runtimeContext');
type Holder = { [KEY]?: AsyncLocalStorage<RuntimeContext> };
const holder = globalThis as Holder;
const storage: AsyncLocalStorage<RuntimeContext> = (holder[KEY] ??= new AsyncLocalStorage<RuntimeContext>());

/** The signal of work that cannot be cancelled: it never aborts (one for the whole process). */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** The runtime context of the actor or task running now, if any (the worker's cluster reads it). */
export function currentContext(): RuntimeContext | undefined {
  return storage.getStore();
}

/** Runs `fn` (an actor constructor or method) with `context` as its runtime context. */
export function runInContext<T>(context: RuntimeContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** What getRuntimeContext() says. */
export interface RuntimeInfo {
  nodeId: string;
  nodeName: string;
  actorId?: string;
  taskId?: string;
  jobId?: string;
  labels: Record<string, string>;
  /**
   * Inside a task or an actor method: aborted when its caller cancels it while it runs (the
   * AbortSignal given with `options({ signal })` is aborted); one given no signal has one that never
   * aborts. Nothing is interrupted: the task or method checks it, or hands it to what it awaits
   * (`fetch(url, { signal })`), and ends as it sees fit — what it returns then goes nowhere. Inside
   * an actor's constructor it never aborts. Not enumerable: spreading or sending the context leaves
   * it out.
   */
  signal?: AbortSignal;
}

/**
 * The runtime context of the actor or task running now: its node id and name, the node's labels,
 * its actor id (or task id), and the cancellation signal of the task or call. Outside an actor constructor or
 * method, or a task, it throws NOT_IN_WORKER.
 */
export function getRuntimeContext(): RuntimeInfo {
  const context = storage.getStore();
  if (context === undefined) {
    throw new OrreryError('NOT_IN_WORKER', 'getRuntimeContext() is only available inside an actor or task running on an orrery worker host');
  }
  const out: RuntimeInfo = {
    nodeId: context.nodeId,
    nodeName: context.nodeName,
    labels: { ...context.labels },
  };
  if (context.actorId !== undefined) out.actorId = context.actorId;
  if (context.taskId !== undefined) out.taskId = context.taskId;
  if (context.jobId !== undefined) out.jobId = context.jobId;
  // not enumerable: the context stays plain data — a method may return it, or log it as JSON —
  // while `getRuntimeContext().signal` reads as any field does
  if (context.signal !== undefined) Object.defineProperty(out, 'signal', { value: context.signal, enumerable: false });
  return out;
}
