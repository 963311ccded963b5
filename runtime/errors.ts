import { OrreryError } from '../lib/errors.ts';
import { CodeSourceRefusedError } from '../protocols/code-source.ts';

export { CodeSourceRefusedError };

/**
 * Errors of the running cluster. Each has a stable `code`; the wire carries the code and detail,
 * and the receiving side re-creates the same class with errorFromWire().
 */

/** An exception thrown inside a remote actor or task, with the remote name, message and stack. */
export class RemoteError extends OrreryError {
  override name = 'RemoteError';
  readonly remoteName: string;
  readonly remoteStack?: string;
  constructor(remote: { name: string; message: string; stack?: string }) {
    super('REMOTE_ERROR', remote.message, { detail: { name: remote.name, message: remote.message, stack: remote.stack } });
    this.remoteName = remote.name;
    this.remoteStack = remote.stack;
    if (remote.stack) this.stack = `${this.name}: ${remote.message}\n    --- remote ${remote.name} ---\n${remote.stack}`;
  }
}

/** The actor is dead for good (killed, or out of restarts); `deathCause` says why. */
export class ActorDiedError extends OrreryError {
  override name = 'ActorDiedError';
  constructor(readonly actorId: string, readonly deathCause?: string) {
    super('ACTOR_DIED', `actor ${actorId} is dead${deathCause ? `: ${deathCause}` : ''}`, { detail: { actorId, deathCause } });
  }
}

/** The actor exists but cannot take calls right now (not yet alive, or restarting). */
export class ActorUnavailableError extends OrreryError {
  override name = 'ActorUnavailableError';
  /** `reason`: why the actor waits, when it waits for a node (its pendingReason: "0/4 nodes are available: …"). */
  constructor(readonly actorId: string, readonly state?: string, readonly reason?: string) {
    super('ACTOR_UNAVAILABLE', `actor ${actorId} is not available${state ? ` (${state}${reason ? `: ${reason}` : ''})` : ''}`, { detail: { actorId, state, ...(reason === undefined ? {} : { reason }) } });
  }
}

/**
 * A call reached the actor's worker host after the host had fenced itself (its raylet's lease ran
 * out: runtime/raylet/fence.ts), and was answered without running. Like NO_RESPONDERS it proves
 * the method did not run, so an actor handle sends such a call again rather than failing it
 * (runtime/client/call-resend.ts); a caller sees it only from a client that predates it.
 */
export class ActorFencedError extends OrreryError {
  override name = 'ActorFencedError';
  constructor(readonly actorId: string) {
    super('ACTOR_FENCED', `actor ${actorId} did not run the call: its worker host has fenced itself until its raylet's lease is renewed`, { detail: { actorId } });
  }
}

/**
 * A raylet that is stopping (SIGTERM, `orrery stop`) answers a create it can no longer finish —
 * one that arrives while it stops, or whose worker host it stops meanwhile — with this, not with the
 * host's exit: the constructor did nothing wrong, so the GCS counts it as the node going away
 * (a restart, as for a node that died), not as a creation that failed (DEAD at once).
 */
export class NodeStoppingError extends OrreryError {
  override name = 'NodeStoppingError';
  constructor(readonly nodeId: string, readonly actorId: string) {
    super('NODE_STOPPING', `node ${nodeId} is stopping: actor ${actorId} was not created there`, { detail: { nodeId, actorId } });
  }
}

export class ActorNotFoundError extends OrreryError {
  override name = 'ActorNotFoundError';
  constructor(what: { actorId?: string; name?: string; namespace?: string }) {
    const label = what.actorId ?? `${what.namespace ?? 'default'}/${what.name}`;
    super('ACTOR_NOT_FOUND', `no actor ${label}`, { detail: what });
  }
}

/** A name is already taken in its namespace. */
export class ActorNameTakenError extends OrreryError {
  override name = 'ActorNameTakenError';
  constructor(name: string, namespace: string) {
    super('ACTOR_NAME_TAKEN', `an actor named ${JSON.stringify(name)} already exists in namespace ${JSON.stringify(namespace)}`, { detail: { name, namespace } });
  }
}

/** Another live node holds this node name (register_node; names are unique among live nodes). */
export class NodeNameTakenError extends OrreryError {
  override name = 'NodeNameTakenError';
  constructor(readonly nodeName: string, readonly holder: string) {
    super('NODE_NAME_TAKEN', `the node name ${JSON.stringify(nodeName)} belongs to live node ${holder}; a name is free again once its node is dead`, { detail: { name: nodeName, holder } });
  }
}

/**
 * A registration that came in parts (gcs.register_running, then register_node) found its earlier
 * parts missing, out of another batch or beyond what the GCS holds: nothing of it was taken. The
 * raylet registers again from the start (a GCS that restarted or took over between the parts never
 * saw them).
 */
export class RegistrationIncompleteError extends OrreryError {
  override name = 'RegistrationIncompleteError';
  constructor(readonly nodeId: string, reason: string) {
    super('REGISTRATION_INCOMPLETE', `the registration of node ${nodeId} came in parts and ${reason}; the raylet registers again from its first part`, { detail: { nodeId } });
  }
}

/** No placement group with this id, or with this name in this namespace. */
export class PlacementGroupNotFoundError extends OrreryError {
  override name = 'PlacementGroupNotFoundError';
  constructor(what: { pgId?: string; name?: string; namespace?: string }) {
    const label = what.pgId ?? `${what.namespace ?? 'default'}/${what.name}`;
    super('PLACEMENT_GROUP_NOT_FOUND', `no placement group ${label}`, { detail: what });
  }
}

/** A placement group name is already taken in its namespace. */
export class PlacementGroupNameTakenError extends OrreryError {
  override name = 'PlacementGroupNameTakenError';
  constructor(name: string, namespace: string) {
    super('PLACEMENT_GROUP_NAME_TAKEN', `a placement group named ${JSON.stringify(name)} already exists in namespace ${JSON.stringify(namespace)}`, { detail: { name, namespace } });
  }
}

/** The placement group was removed (by remove(), or because it could never be placed); `removedCause` says why. */
export class PlacementGroupRemovedError extends OrreryError {
  override name = 'PlacementGroupRemovedError';
  constructor(readonly pgId: string, readonly removedCause?: string) {
    super('PLACEMENT_GROUP_REMOVED', `placement group ${pgId} was removed${removedCause ? `: ${removedCause}` : ''}`, { detail: { pgId, removedCause } });
  }
}

/** No job with this id (jobs are a driver connection each: docs/jobs.md). */
export class JobNotFoundError extends OrreryError {
  override name = 'JobNotFoundError';
  constructor(readonly jobId: string) {
    super('JOB_NOT_FOUND', `no job ${jobId}`, { detail: { jobId } });
  }
}

/**
 * The job has finished — closed, or the GCS stopped hearing its heartbeats — so its connection may
 * create nothing more, and the actors and placement groups it owned are gone. `reason` says why.
 */
export class JobFinishedError extends OrreryError {
  override name = 'JobFinishedError';
  constructor(readonly jobId: string, readonly reason?: string, readonly endMessage?: string) {
    super('JOB_FINISHED', `job ${jobId} has finished${endMessage ? `: ${endMessage}` : reason ? ` (${reason})` : ''}`, { detail: { jobId, reason, endMessage } });
  }
}

/** A request about a job that does not carry the secret the job registered with. */
export class JobNotOwnedError extends OrreryError {
  override name = 'JobNotOwnedError';
  constructor(readonly jobId: string, readonly verb: string) {
    super('JOB_NOT_OWNED', `${verb} for job ${jobId} refused: it does not carry the secret that job registered with`, { detail: { jobId, verb } });
  }
}

/** Waiting (ready(), a call) took longer than allowed. */
export class WaitTimeoutError extends OrreryError {
  override name = 'TimeoutError';
  constructor(what: string, timeoutMs: number) {
    super('TIMEOUT', `${what} did not complete within ${timeoutMs} ms`, { detail: { timeoutMs } });
  }
}

/** The module or class/function of an actor or task cannot be loaded in a worker host. */
export class CodeLoadError extends OrreryError {
  override name = 'CodeLoadError';
  constructor(moduleUrl: string, exportName: string, reason: string) {
    super('CODE_LOAD_FAILED', `cannot load ${exportName} from ${moduleUrl}: ${reason}`, { detail: { moduleUrl, exportName, reason } });
  }
}

const byCode: Record<string, (detail: Record<string, unknown>, message: string) => OrreryError> = {
  REMOTE_ERROR: (d, m) => new RemoteError({ name: String(d.name ?? 'Error'), message: String(d.message ?? m), stack: d.stack as string | undefined }),
  ACTOR_DIED: (d) => new ActorDiedError(String(d.actorId), d.deathCause as string | undefined),
  ACTOR_UNAVAILABLE: (d) => new ActorUnavailableError(String(d.actorId), d.state as string | undefined, typeof d.reason === 'string' ? d.reason : undefined),
  ACTOR_FENCED: (d) => new ActorFencedError(String(d.actorId)),
  NODE_STOPPING: (d) => new NodeStoppingError(String(d.nodeId), String(d.actorId)),
  ACTOR_NOT_FOUND: (d) => new ActorNotFoundError(d as { actorId?: string; name?: string; namespace?: string }),
  ACTOR_NAME_TAKEN: (d) => new ActorNameTakenError(String(d.name), String(d.namespace)),
  NODE_NAME_TAKEN: (d) => new NodeNameTakenError(String(d.name), String(d.holder)),
  PLACEMENT_GROUP_NOT_FOUND: (d) => new PlacementGroupNotFoundError(d as { pgId?: string; name?: string; namespace?: string }),
  PLACEMENT_GROUP_NAME_TAKEN: (d) => new PlacementGroupNameTakenError(String(d.name), String(d.namespace)),
  PLACEMENT_GROUP_REMOVED: (d) => new PlacementGroupRemovedError(String(d.pgId), d.removedCause as string | undefined),
  JOB_NOT_FOUND: (d) => new JobNotFoundError(String(d.jobId)),
  JOB_FINISHED: (d) => new JobFinishedError(String(d.jobId), d.reason as string | undefined, d.endMessage as string | undefined),
  JOB_NOT_OWNED: (d) => new JobNotOwnedError(String(d.jobId), String(d.verb)),
  CODE_LOAD_FAILED: (d) => new CodeLoadError(String(d.moduleUrl), String(d.exportName), String(d.reason)),
  CODE_SOURCE_REFUSED: (d) => new CodeSourceRefusedError(String(d.moduleUrl), String(d.reason), typeof d.scheme === 'string' ? { scheme: d.scheme } : {}),
};

/** Re-creates a runtime error class from a wire error's code (others stay as they are). */
export function specializeError(err: OrreryError): OrreryError {
  const make = byCode[err.code];
  return make ? make(err.detail as Record<string, unknown>, err.message) : err;
}
