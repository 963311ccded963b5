import { InvalidOptionError, NodeNotFoundError, NodeUnavailableError, OrreryError } from '../../lib/errors.ts';
import { specializeError } from '../errors.ts';

/** A constructor argument that cannot be sent as it is (a class instance, a function, a cycle, nested too deep). */
export class ActorArgumentError extends OrreryError {
  override name = 'ActorArgumentError';
  constructor(readonly className: string, readonly index: number, readonly path: string, readonly problem: string) {
    const where = path ? ` at ${path}` : '';
    super('INVALID_ARGUMENT', `constructor argument ${index} of actor ${className} cannot be sent${where}: ${problem}`, { detail: { className, index, path, problem } });
  }
}

/**
 * An argument of an actor method call that cannot be sent as it is (a class instance, a Map, a
 * function, a cycle, nested too deep): refused before anything is sent, rather than arriving changed
 * (a Map as an object, a function as null).
 */
export class CallArgumentError extends OrreryError {
  override name = 'CallArgumentError';
  constructor(readonly actorId: string, readonly method: string, readonly index: number, readonly path: string, readonly problem: string) {
    const where = path ? ` at ${path}` : '';
    super('INVALID_ARGUMENT', `argument ${index} of ${method}() on actor ${actorId} cannot be sent${where}: ${problem}`, { detail: { actorId, method, index, path, problem } });
  }
}

/**
 * A call whose `signal` (handle.options({ signal })) was aborted. `sent` says whether it had left:
 * one not sent will not run; one sent may still run, or be running, as after a TIMEOUT. The
 * signal's reason is the cause.
 */
export class CallAbortedError extends OrreryError {
  override name = 'CallAbortedError';
  constructor(readonly actorId: string, readonly method: string, readonly sent: boolean, reason?: unknown) {
    super('ABORTED', `call ${method}() on actor ${actorId} was aborted ${sent ? 'after it was sent: its actor drops it if it has not started and aborts its signal if it runs, but it may still run' : 'before it was sent: it will not run'}`, {
      cause: reason,
      detail: { actorId, method, sent },
    });
  }
}

/** Nothing answers on the GCS subjects of this cluster: no GCS runs, or the cluster name is wrong. */
export class GcsUnavailableError extends OrreryError {
  override name = 'GcsUnavailableError';
  constructor(readonly cluster: string, readonly address: string, options: { cause?: unknown } = {}) {
    super('GCS_UNAVAILABLE', `no GCS answers for cluster ${JSON.stringify(cluster)} at ${address}`, { ...options, detail: { cluster, address } });
  }
}

const libByCode: Record<string, (d: Record<string, unknown>) => OrreryError> = {
  NODE_NOT_FOUND: (d) => new NodeNotFoundError(String(d.nodeId)),
  NODE_UNAVAILABLE: (d) => new NodeUnavailableError(String(d.nodeId), Array.isArray(d.reasons) ? d.reasons.map(String) : []),
  INVALID_OPTION: (d) => new InvalidOptionError(String(d.option), d.value, String(d.rule)),
};

/**
 * A wire error re-created as the class a caller can `instanceof`: the runtime's classes
 * (RemoteError, ActorDiedError, …) and the lib's that the GCS answers with (NODE_NOT_FOUND, …).
 */
export function specializeWireError(err: unknown): unknown {
  if (!(err instanceof OrreryError) || err.constructor !== OrreryError) return err;
  const make = libByCode[err.code];
  return make ? make(err.detail as Record<string, unknown>) : specializeError(err);
}
