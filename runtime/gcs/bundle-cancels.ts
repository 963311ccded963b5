import type { BundleClient, BundleOutcome } from './bundle-client.ts';

/** The first pause before an unanswered cancel_bundle is sent again, doubling up to the second. */
const CANCEL_RETRY_MS = 250;
const CANCEL_RETRY_MAX_MS = 5_000;

/**
 * Cancels of bundles on their raylets, sent again while unanswered. One that got no answer — the
 * request timed out, or this GCS's own fence refused it while its lease was lapsed — is sent again
 * after a pause (250 ms, doubling to 5 s) for as long as `stillWanted` says (the node lives and the
 * GCS has not placed that bundle there again); a cancel is idempotent on the raylet. Before, it was
 * only logged, and the raylet kept the bundle's resources leased until it next registered: the GCS
 * counted them free, the raylet refused every prepare that needed them. (A NATS server frozen for
 * 3 s in a burst of 10,000 groups left ~10 such cancels, refused by the lapsed fence.)
 */
export class BundleCancels {
  #stopped = false;
  readonly #retries = new Set<NodeJS.Timeout>();

  constructor(private readonly deps: { readonly bundles: BundleClient; readonly stillWanted: (nodeId: string, bundle: { pgId: string; index: number }) => boolean }) {}

  /** Sends the cancel; resolves with the first attempt's outcome. */
  cancel(nodeId: string, bundle: { pgId: string; index: number }, attempt = 0): Promise<BundleOutcome> {
    const outcome = this.deps.bundles.cancel(nodeId, bundle);
    void outcome.then((o) => {
      if (o.ok || !o.unanswered || this.#stopped) return;
      const timer = setTimeout(
        () => {
          this.#retries.delete(timer);
          if (this.#stopped || !this.deps.stillWanted(nodeId, bundle)) return;
          void this.cancel(nodeId, bundle, attempt + 1);
        },
        Math.min(CANCEL_RETRY_MAX_MS, CANCEL_RETRY_MS * 2 ** attempt),
      );
      timer.unref();
      this.#retries.add(timer);
    });
    return outcome;
  }

  /** The GCS stops: nothing is sent again. */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
  }
}
