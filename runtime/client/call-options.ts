// The options of a handle's calls (`handle.options(opts)`), and their checks: a bad one is refused
// when the options are given (INVALID_OPTION), before any call is made with them.
import { InvalidOptionError } from '../../lib/errors.ts';

/** Options of the calls made through `handle.options(opts)`. */
export interface CallOptions {
  /**
   * How long a call may wait for its answer before it fails with TIMEOUT (the method may still be
   * running); default the connection's `callTimeoutMs` (60,000 ms unless connect() set another).
   */
  timeoutMs?: number;
  /**
   * Stops the call when aborted: it fails with CallAbortedError (ABORTED). A call not sent yet —
   * waiting for its actor's creation, held behind calls sent again, at the restart gate — is then
   * never sent. For one already sent the handle publishes cancel_call to its actor: still waiting in
   * the actor's mailbox, it is dropped unstarted; running, its `getRuntimeContext().signal` aborts
   * and the method decides how to end. A cancel lost on the way (a NATS outage) lets it run.
   */
  signal?: AbortSignal;
}

/** The longest timer Node.js keeps (2^31-1 ms): the bound of a call's timeoutMs. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The timeout of calls made with `opts`, `defaultMs` when it names none; throws INVALID_OPTION for an object that is not options or a bad timeoutMs. */
export function callTimeoutOf(opts: CallOptions, defaultMs: number): number {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new InvalidOptionError('options', opts, 'expected an object');
  for (const key of Object.keys(opts)) if (key !== 'timeoutMs' && key !== 'signal') throw new InvalidOptionError(key, (opts as Record<string, unknown>)[key], 'unknown call option; expected timeoutMs or signal');
  const timeoutMs = opts.timeoutMs ?? defaultMs;
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMER_MS) {
    throw new InvalidOptionError('timeoutMs', timeoutMs, `expected a number of ms from 1 to ${MAX_TIMER_MS}`);
  }
  return timeoutMs;
}

/** The signal of calls made with `opts` (checked after callTimeoutOf); INVALID_OPTION for one that is not an AbortSignal. */
export function callSignalOf(opts: CallOptions): AbortSignal | undefined {
  const { signal } = opts;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidOptionError('signal', signal, 'expected an AbortSignal');
  return signal;
}
