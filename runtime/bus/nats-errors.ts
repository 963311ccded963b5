// nats.js's errors as the bus's error classes (errors.ts), for NatsBus (nats.ts) and the messages
// it hands out.
import { errors } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';
import { BusClosedError, InvalidSubjectError, PermissionDeniedError } from './errors.ts';

/** Runs a call into nats.js; what it throws is thrown as the bus's error (mapError). */
export function mapped<T>(run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw mapError(err);
  }
}

/**
 * The bus's error for what nats.js threw; an OrreryError (our own checks') passes as it is, anything
 * unknown is BUS_ERROR.
 */
export function mapError(err: unknown): Error {
  if (err instanceof errors.ClosedConnectionError || err instanceof errors.DrainingConnectionError) return new BusClosedError({ cause: err });
  if (err instanceof errors.InvalidSubjectError) return new InvalidSubjectError('', err.message, { cause: err });
  if (err instanceof OrreryError) return err;
  if (err instanceof errors.PermissionViolationError) return new PermissionDeniedError(err.operation === 'publish' ? 'publish' : 'subscribe', err.subject, { cause: err });
  // the server's max_payload (1 MiB by default): what the receivers' intakes would refuse as TOO_LARGE
  if (err instanceof errors.InvalidArgumentError && /max_payload/.test(err.message)) return new OrreryError('TOO_LARGE', `NATS: the message is larger than the server's max_payload`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new OrreryError('BUS_ERROR', `NATS: ${message}`, { cause: err });
}
