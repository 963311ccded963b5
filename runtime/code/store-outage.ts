/**
 * The code store through a NATS outage (docs/code-shipping.md, "Failures"): an operation on it that
 * nobody answered — it timed out, the connection was lost or closed under it, JetStream was briefly
 * away (a server restarting, a cluster electing) — is started again, pausing 100 ms doubling to 1 s,
 * for up to the outage a GCS request rides out (gcs-client.ts, DEFAULT_GCS_OUTAGE_MS). A refusal
 * (permissions) or a missing object is an answer, and is not retried.
 */
export const STORE_OUTAGE_MS = 15_000;

/**
 * Whether `err` is a store operation nobody answered. JetStream missing (no responders to its API)
 * counts only when the store is `known` to exist — it answered before, or a message named code in
 * it; otherwise it is a server without JetStream.
 */
export function unanswered(err: unknown, known: boolean): boolean {
  const e = err as { name?: string; message?: string; code?: string } | null;
  if (e?.name === 'PermissionViolationError' || e?.code === 'PERMISSION_DENIED' || /permissions? violation|authorization violation/i.test(e?.message ?? '')) return false;
  if (e?.code === 'JETSTREAM_UNAVAILABLE' || e?.name === 'NoRespondersError' || /no responders/i.test(e?.message ?? '')) return known;
  if (e?.code === 'TIMEOUT' || e?.code === 'CONNECTION_LOST' || e?.code === 'JETSTREAM_NOT_READY') return true;
  return e?.name === 'TimeoutError' || /time(d)? ?out|disconnect|connection (lost|closed)|temporarily unavailable/i.test(e?.message ?? '');
}

/** `op`, started again while it goes unanswered (see above) and `STORE_OUTAGE_MS` has not passed. */
export async function throughOutages<T>(op: () => Promise<T>, known: () => boolean, outageMs = STORE_OUTAGE_MS): Promise<T> {
  const deadline = Date.now() + outageMs;
  for (let pause = 100; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await op();
    } catch (err) {
      if (!unanswered(err, known()) || Date.now() + pause > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
