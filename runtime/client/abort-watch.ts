/**
 * One 'abort' listener per AbortSignal, however many calls and tasks wait on it. Node.js warns
 * (MaxListenersExceededWarning: "Possible EventTarget memory leak detected") once a signal has more
 * than ten listeners, and one controller is how a caller cancels a whole batch: 1,000 tasks given
 * the same signal would add 1,000. Here they share one listener, which goes once the last of them
 * stops watching, so a long-lived signal keeps nothing of the calls that used it.
 */
interface Watchers {
  readonly fns: Set<() => void>;
  readonly listener: () => void;
}

const bySignal = new WeakMap<AbortSignal, Watchers>();

/**
 * Calls `fn` once when `signal` aborts, unless the returned function was called first. A signal
 * already aborted calls nothing: the caller checks `signal.aborted` itself before it watches.
 */
export function watchAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) return noop;
  let watchers = bySignal.get(signal);
  if (watchers === undefined) {
    const fns = new Set<() => void>();
    const listener = (): void => {
      bySignal.delete(signal);
      let first: { error: unknown } | undefined;
      for (const f of fns) {
        try {
          f();
        } catch (error) {
          first ??= { error };
        }
      }
      fns.clear();
      // one watcher's bug does not keep the others from hearing; it surfaces as the listener's would
      if (first !== undefined) throw first.error;
    };
    watchers = { fns, listener };
    bySignal.set(signal, watchers);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { fns, listener } = watchers;
  fns.add(fn);
  return () => {
    if (!fns.delete(fn) || fns.size > 0) return;
    signal.removeEventListener('abort', listener);
    if (bySignal.get(signal)?.fns === fns) bySignal.delete(signal);
  };
}

function noop(): void {}

/** `promise`, or `aborted()` as soon as `signal` aborts; the watch goes once either settles. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal, aborted: () => Error): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined); // settles later unawaited (a gate wait at its deadline): not an unhandled rejection
    return Promise.reject(aborted());
  }
  return new Promise<T>((resolve, reject) => {
    const unwatch = watchAbort(signal, () => reject(aborted()));
    promise.then(
      (value) => (unwatch(), resolve(value)),
      (err: unknown) => (unwatch(), reject(err)),
    );
  });
}
