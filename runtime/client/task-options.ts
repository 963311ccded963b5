import { InvalidOptionError } from '../../lib/errors.ts';
import { compileRequest, PLACEMENT_KEYS } from '../../lib/scheduling/request.ts';
import type { TaskOptions } from './actor-options.ts';

/**
 * The options of a task: placement (TaskOptions, shared with actors: resources, labelSelector and
 * fallbackStrategy, tolerations, schedulingStrategy) plus `maxRetries` — how many times a task whose
 * node or worker host died is run again (default 3, as Ray; -1 for no limit; 0 for never) — and
 * `timeoutMs`, how long the driver waits for each run's answer, queued and running (default the
 * connection's `callTimeoutMs`, 60,000 ms): then the task fails TIMEOUT, and a raylet or task host
 * that still holds it queued drops it. A task that throws is not retried: it rejects with RemoteError.
 */
export type TaskRunOptions = TaskOptions & {
  maxRetries?: number;
  timeoutMs?: number;
  /**
   * Cancels the task when aborted: it fails at once with TaskAbortedError (`ABORTED`); not sent yet,
   * it never runs; queued on a raylet or a worker lease, it is dropped there unstarted; running, it
   * sees it in getRuntimeContext().signal (nothing in a worker is interrupted) and its result is
   * discarded. Retries stop.
   */
  signal?: AbortSignal;
};

/** The longest `timeoutMs` (what a Node.js timer takes: about 24.8 days). */
export const MAX_TASK_TIMEOUT_MS = 2_147_483_647;

export const DEFAULT_MAX_RETRIES = 3;

const KNOWN = new Set<string>([...PLACEMENT_KEYS, 'maxRetries', 'timeoutMs', 'signal']);

/** Task options after validation. */
export interface ValidatedTaskOptions {
  /** The placement options as plain data, undefined fields left out: what submit_task carries. */
  readonly wire: Record<string, unknown>;
  /** -1: no limit. */
  readonly maxRetries: number;
  /** How long the driver waits for each run's answer; absent: the connection's callTimeoutMs. */
  readonly timeoutMs?: number;
  /** The node a node-id affinity pins the task to, and whether the pin is hard. */
  readonly pin?: { readonly nodeId: string; readonly soft: boolean };
}

/**
 * Checks task options at the call — placement through lib's compileRequest — and throws the first
 * problem as a typed error (INVALID_OPTION, INVALID_SELECTOR, INVALID_LABEL, INVALID_RESOURCE)
 * naming the option. Unknown option names (an actor's `name`, a misspelling) are errors too.
 */
export function validateTaskOptions(opts: TaskRunOptions, ctx: { namespace: string; taskId?: string; name?: string }): ValidatedTaskOptions {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new InvalidOptionError('options', opts, 'expected an object');
  for (const key of Object.keys(opts)) {
    if (!KNOWN.has(key)) throw new InvalidOptionError(key, (opts as Record<string, unknown>)[key], `unknown task option; expected one of ${[...KNOWN].join(', ')}`);
  }
  const maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
  if (typeof maxRetries !== 'number' || !Number.isInteger(maxRetries) || maxRetries < -1) {
    throw new InvalidOptionError('maxRetries', maxRetries, 'expected an integer -1 or more (-1: no limit)');
  }
  if (opts.signal !== undefined && !(opts.signal instanceof AbortSignal)) throw new InvalidOptionError('signal', opts.signal, 'expected an AbortSignal');
  const { timeoutMs } = opts;
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TASK_TIMEOUT_MS)) {
    throw new InvalidOptionError('timeoutMs', timeoutMs, `expected a whole number of milliseconds from 1 to ${MAX_TASK_TIMEOUT_MS}`);
  }
  const target = ctx.taskId === undefined ? undefined : { kind: 'task' as const, id: ctx.taskId, ...(ctx.name === undefined ? {} : { name: ctx.name }) };
  const req = compileRequest(opts, { namespace: ctx.namespace, target });
  const wire: Record<string, unknown> = {};
  for (const key of PLACEMENT_KEYS) if (opts[key] !== undefined) wire[key] = opts[key];
  const pin = req.nodeId ? { nodeId: req.nodeId.nodeId, soft: req.nodeId.soft === true } : undefined;
  return { wire, maxRetries, ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(pin ? { pin } : {}) };
}
