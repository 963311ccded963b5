// Waiting for an actor to reach a state (ready(), kill()): its events first, the GCS asked now and
// then in case one was lost.
import type { Observable, Subscription } from 'rxjs';
import { BusClosedError } from '../bus/errors.ts';
import { ActorDiedError, WaitTimeoutError } from '../errors.ts';
import { stallAwareTimeout } from '../process/stall.ts';
import type { ActorInfo } from './cluster-info.types.ts';

/** How long a wait for an actor state goes on events alone before it asks the GCS (waitForState). */
export const RESYNC_MS = { first: 3_000, max: 15_000 } as const;

/** What a wait reads of the actor's handle. */
export interface WaitedActor {
  readonly actorId: string;
  readonly state$: Observable<ActorInfo>;
  info(): Promise<ActorInfo>;
}

/**
 * Resolves with the first state that passes; a DEAD that does not is an ActorDiedError.
 *
 * It follows the actor's actor_state events, and while it waits it also asks the GCS now and then
 * (get_actor after RESYNC_MS.first, doubling up to RESYNC_MS.max): events travel on core NATS and
 * one can be lost — published while the GCS's leader lease had lapsed after a NATS outage, or
 * while this connection was reconnecting — and a wait must not hang on it (the relist of a
 * Kubernetes informer, for the same reason).
 */
export function waitForState(actor: WaitedActor, pass: (info: ActorInfo) => boolean, opts: { what: string; timeoutMs?: number }): Promise<ActorInfo> {
  return new Promise<ActorInfo>((resolve, reject) => {
    let stopTimer: (() => void) | undefined;
    let resync: NodeJS.Timeout | undefined;
    let sub: Subscription | undefined;
    let settled = false;
    const settle = (done: () => void): void => {
      if (settled) return;
      settled = true;
      stopTimer?.();
      clearTimeout(resync);
      sub?.unsubscribe();
      done();
    };
    const judge = (info: ActorInfo): void => {
      if (pass(info)) settle(() => resolve(info));
      else if (info.state === 'DEAD') settle(() => reject(new ActorDiedError(actor.actorId, info.deathCause)));
    };
    sub = actor.state$.subscribe({
      next: judge,
      error: (err: unknown) => settle(() => reject(err)),
      complete: () => settle(() => reject(new BusClosedError())),
    });
    if (settled) {
      sub.unsubscribe();
      return;
    }
    if (opts.timeoutMs !== undefined) {
      // stall-aware: an ALIVE that arrived while the driver's loop was held is read first (runtime/process/stall.ts)
      stopTimer = stallAwareTimeout(() => settle(() => reject(new WaitTimeoutError(opts.what, opts.timeoutMs!))), opts.timeoutMs);
    }
    let backoffMs: number = RESYNC_MS.first;
    const askLater = (): void => {
      resync = setTimeout(() => {
        actor.info().then(
          (info) => {
            if (settled) return;
            judge(info);
            if (!settled) askLater();
          },
          (err: unknown) => {
            if (settled) return;
            if (err instanceof BusClosedError) settle(() => reject(err));
            else askLater(); // the GCS is not answering now: ask again later
          },
        );
        backoffMs = Math.min(backoffMs * 2, RESYNC_MS.max);
      }, backoffMs);
      resync.unref?.();
    };
    askLater();
  });
}
