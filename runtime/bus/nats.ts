import { connect, errors, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';
import { invokeHandler, rethrowLater, type Bus, type BusMsg, type BusOptions, type MsgHandler, type Subscription } from './bus.ts';
import { BusClosedError, ConnectionFailedError, InvalidSubjectError, NoRespondersError, TimeoutError } from './errors.ts';
import { assertQueue, assertSubject } from './subject-syntax.ts';

export interface NatsBusOptions extends BusOptions {
  /** NATS server URLs, comma-separated (`nats://10.0.0.1:4222,nats://10.0.0.2:4222`). */
  servers: string;
  /** Connection name shown by the server's monitoring (e.g. `raylet-<nodeId>`). */
  name?: string;
  /** Pause between reconnect attempts; default 250 ms. Reconnection never gives up. */
  reconnectTimeWaitMs?: number;
  /** How long the first connection may take; default 5,000 ms. */
  connectTimeoutMs?: number;
}

/** Connects to NATS; a server that cannot be reached is a ConnectionFailedError naming the address. */
export async function connectNatsBus(opts: NatsBusOptions): Promise<Bus> {
  const servers = opts.servers
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const address = servers.join(',') || opts.servers;
  if (servers.length === 0) throw new ConnectionFailedError(address, 'no server address given');
  try {
    const nc = await connect({
      servers,
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: opts.reconnectTimeWaitMs ?? 250,
      timeout: opts.connectTimeoutMs ?? 5000,
      // Without this nats.js captures a stack trace for every request (to decorate a timeout that
      // almost never happens); that was a third of a driver's CPU in the call benchmark. Our bus
      // errors name the subject themselves.
      noAsyncTraces: true,
    });
    return new NatsBus(nc, opts);
  } catch (cause) {
    throw new ConnectionFailedError(address, cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** The Bus over one nats.js connection; errors of the client are mapped to the bus error classes. */
class NatsBus implements Bus {
  readonly closed: Promise<void>;
  private readonly onError: (err: unknown, msg: BusMsg) => void;

  constructor(private readonly nc: NatsConnection, opts: BusOptions) {
    this.closed = nc.closed().then(() => undefined);
    this.onError = opts.onHandlerError ?? rethrowLater;
  }

  publish(subject: string, data: Uint8Array, opts: { reply?: string } = {}): void {
    assertSubject(subject, 'publish');
    if (opts.reply !== undefined) assertSubject(opts.reply, 'publish');
    mapped(() => this.nc.publish(subject, data, opts.reply === undefined ? undefined : { reply: opts.reply }));
  }

  subscribe(subject: string, handler: MsgHandler, opts: { queue?: string } = {}): Subscription {
    assertSubject(subject, 'subscribe');
    const { queue } = opts;
    if (queue !== undefined) assertQueue(queue);
    const sub = mapped(() =>
      this.nc.subscribe(subject, {
        queue,
        callback: (err, msg) => {
          if (!err) invokeHandler(handler, wrap(msg), this.onError);
        },
      }),
    );
    return {
      subject,
      queue,
      unsubscribe: () => {
        if (!sub.isClosed() && !this.nc.isClosed()) sub.unsubscribe();
      },
      closed: sub.closed.then(() => undefined),
    };
  }

  async request(subject: string, data: Uint8Array, opts: { timeoutMs: number }): Promise<BusMsg> {
    assertSubject(subject, 'publish');
    try {
      return wrap(await this.nc.request(subject, data, { timeout: opts.timeoutMs }));
    } catch (err) {
      if (err instanceof errors.TimeoutError) throw new TimeoutError(subject, opts.timeoutMs, { cause: err });
      if (err instanceof errors.NoRespondersError || (err instanceof errors.RequestError && err.isNoResponders())) {
        throw new NoRespondersError(subject, { cause: err });
      }
      throw mapError(err);
    }
  }

  async flush(): Promise<void> {
    try {
      await this.nc.flush();
    } catch (err) {
      throw mapError(err);
    }
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed() && !this.nc.isDraining()) {
      try {
        await this.nc.drain();
      } catch (err) {
        if (!this.nc.isClosed()) throw mapError(err);
      }
    }
    await this.closed;
  }
}

function wrap(msg: Msg): BusMsg {
  const reply = msg.reply || undefined;
  return { subject: msg.subject, data: msg.data, reply, respond: (data) => mapped(() => msg.respond(data)) };
}

function mapped<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw mapError(err);
  }
}

function mapError(err: unknown): Error {
  if (err instanceof errors.ClosedConnectionError || err instanceof errors.DrainingConnectionError) return new BusClosedError({ cause: err });
  if (err instanceof errors.InvalidSubjectError) return new InvalidSubjectError('', err.message, { cause: err });
  if (err instanceof OrreryError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new OrreryError('BUS_ERROR', `NATS: ${message}`, { cause: err });
}
