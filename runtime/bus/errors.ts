import { OrreryError } from '../../lib/errors.ts';

/** A request found nobody subscribed to its subject. */
export class NoRespondersError extends OrreryError {
  override name = 'NoRespondersError';
  constructor(readonly subject: string, options: { cause?: unknown } = {}) {
    super('NO_RESPONDERS', `no responders for ${subject}`, { ...options, detail: { subject } });
  }
}

/** A request got no answer in time. */
export class TimeoutError extends OrreryError {
  override name = 'TimeoutError';
  constructor(readonly subject: string, readonly timeoutMs: number, options: { cause?: unknown } = {}) {
    super('TIMEOUT', `request to ${subject} timed out after ${timeoutMs} ms`, { ...options, detail: { subject, timeoutMs } });
  }
}

/** The bus is closed or draining, so it takes no new publishes, subscriptions or requests. */
export class BusClosedError extends OrreryError {
  override name = 'BusClosedError';
  constructor(options: { cause?: unknown } = {}) {
    super('BUS_CLOSED', 'the bus is closed', options);
  }
}

/** A subject the bus cannot publish to or subscribe with (empty tokens, wildcards in a publish, …). */
export class InvalidSubjectError extends OrreryError {
  override name = 'InvalidSubjectError';
  constructor(readonly subject: string, readonly rule: string, options: { cause?: unknown } = {}) {
    super('INVALID_SUBJECT', `invalid subject ${JSON.stringify(subject)}: ${rule}`, { ...options, detail: { subject, rule } });
  }
}

/**
 * No server of the given address could be reached. `transient`: nothing answered (refused, timed
 * out, a name that does not resolve yet) — trying again later may work; false when a server answered
 * and refused (credentials, TLS), which waiting does not mend.
 */
export class ConnectionFailedError extends OrreryError {
  override name = 'ConnectionFailedError';
  readonly transient: boolean;
  constructor(readonly address: string, reason: string, options: { cause?: unknown; transient?: boolean } = {}) {
    super('CONNECTION_FAILED', `cannot connect to NATS at ${address}: ${reason}`, { cause: options.cause, detail: { address, reason } });
    this.transient = options.transient ?? false;
  }
}

/**
 * The connection to the server dropped while this request waited for its answer. The server
 * forgets the connection's inbox when it drops, so an answer sent in the gap is lost: the request
 * may or may not have been handled. A request made while the connection is down fails with it too,
 * at once (nats.ts).
 */
export class ConnectionLostError extends OrreryError {
  override name = 'ConnectionLostError';
  constructor(readonly subject: string, options: { cause?: unknown } = {}) {
    super('CONNECTION_LOST', `the connection to the bus was lost: a request to ${subject} has no answer`, { ...options, detail: { subject } });
  }
}

/** The server refused a publish or a subscription for this connection's user. */
export class PermissionDeniedError extends OrreryError {
  override name = 'PermissionDeniedError';
  constructor(readonly operation: 'publish' | 'subscribe', readonly subject: string, options: { cause?: unknown } = {}) {
    super('PERMISSION_DENIED', `the NATS server does not let these credentials ${operation} ${operation === 'publish' ? 'to' : 'on'} ${subject}`, {
      ...options,
      detail: { operation, subject },
    });
  }
}
