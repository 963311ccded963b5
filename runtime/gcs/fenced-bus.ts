import { OrreryError } from '../../lib/errors.ts';
import type { Bus, BusMsg, MsgHandler, RequestCallback, Subscription } from '../bus/bus.ts';

/**
 * The bus as a GCS under a leader lease sees it (leader.ts): while `valid()` is false nothing goes
 * out and nothing comes in — publishes are dropped, requests fail with STALE_EPOCH, and messages
 * that arrive are not handled (so not answered). A GCS frozen past its lease and resumed may run
 * its timers and read its socket before it learns it lost the lease; through this it can neither
 * answer a request nor tell a raylet anything in that moment. One clock read per message.
 */
export interface Validity {
  valid(): boolean;
  /** Told when valid() changes. */
  onValidityChange(listener: (valid: boolean) => void): () => void;
}

/**
 * `onStatus` reports the lease like the connection: 'disconnected' while either the connection is
 * down or the lease is not valid (the GCS hears nothing then, so its node timeouts must not run:
 * nodes.ts), 'reconnected' once both are good again.
 */
export function fencedBus(bus: Bus, lease: Validity): Bus {
  const valid = (): boolean => lease.valid();
  const stale = (): Error => new OrreryError('STALE_EPOCH', 'this GCS no longer holds the leader lease');
  return {
    publish(subject: string, data: Uint8Array, opts?: { reply?: string }): void {
      if (valid()) bus.publish(subject, data, opts);
    },
    subscribe(subject: string, handler: MsgHandler, opts?: { queue?: string }): Subscription {
      return bus.subscribe(subject, (msg: BusMsg) => (valid() ? handler(answeredWhileValid(msg, valid)) : undefined), opts);
    },
    request(subject: string, data: Uint8Array, opts: { timeoutMs: number }): Promise<BusMsg> {
      return valid() ? bus.request(subject, data, opts) : Promise.reject(stale());
    },
    requestCallback(subject: string, data: Uint8Array, opts: { timeoutMs: number }, done: RequestCallback): void {
      if (valid()) bus.requestCallback(subject, data, opts, done);
      else queueMicrotask(() => done(stale(), undefined));
    },
    onStatus: (listener) => {
      let connected = true;
      let leaseOk = lease.valid();
      let heard = connected && leaseOk;
      const update = (): void => {
        const now = connected && leaseOk;
        if (now === heard) return;
        heard = now;
        listener(now ? 'reconnected' : 'disconnected');
      };
      const offBus = bus.onStatus((status) => {
        connected = status === 'reconnected';
        update();
      });
      const offLease = lease.onValidityChange((ok) => {
        leaseOk = ok;
        update();
      });
      return () => {
        offBus();
        offLease();
      };
    },
    flush: () => bus.flush(),
    close: () => bus.close(),
    get closed() {
      return bus.closed;
    },
    ...(bus.keyValue ? { keyValue: () => bus.keyValue!() } : {}),
  };
}

/** The message with its answer dropped if the lease ran out while the handler worked. */
function answeredWhileValid(msg: BusMsg, valid: () => boolean): BusMsg {
  if (msg.reply === undefined) return msg;
  return { subject: msg.subject, data: msg.data, reply: msg.reply, respond: (data) => valid() && msg.respond(data) };
}
