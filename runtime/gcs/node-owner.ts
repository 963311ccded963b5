import { timingSafeEqual } from 'node:crypto';
import { OrreryError } from '../../lib/errors.ts';

/**
 * A node speaks only for itself. Its raylet draws a secret when it starts and sends it with its
 * registration; from then on the GCS takes a heartbeat, an actor_died or another registration
 * under that node id only with the same secret. A peer that knows a node's id — every id is in
 * the view — can neither keep a dead node ALIVE with forged heartbeats, nor fail its actors, nor
 * take its id over while it lives. (NATS permissions decide who may send node verbs at all —
 * runtime/auth/roles.ts; this decides which node a sender may speak for.)
 *
 * Secrets live in the GCS's memory only, never in its tables: a GCS that restarts learns each one
 * again from the node's registration (the first one after the restart wins; docs/security.md).
 */
export class NodeNotOwnedError extends OrreryError {
  override name = 'NodeNotOwnedError';
  constructor(readonly nodeId: string, readonly verb: string) {
    super('NODE_NOT_OWNED', `${verb} for node ${nodeId} refused: it does not carry the secret that node registered with`, { detail: { nodeId, verb } });
  }
}

/**
 * The secret a raylet's answer carries (raylet/served-subjects.ts, `signed`): beside the value of an ok
 * answer, in the detail of an error. The GCS acts on an answer to create_actor or a bundle verb only
 * when it carries the node's secret, so another connection subscribed to that node's subjects
 * cannot answer for it (it could only make the request fail, never succeed or die in its name).
 */
export function answerSecret(body: { ok: boolean; value?: unknown; error?: { detail?: unknown } }): string | undefined {
  const holder = body.ok ? body.value : body.error?.detail;
  const secret = holder !== null && typeof holder === 'object' ? (holder as { secret?: unknown }).secret : undefined;
  return typeof secret === 'string' ? secret : undefined;
}

export class NodeOwners {
  readonly #secrets = new Map<string, Buffer>();

  /** Whether `secret` may speak for `nodeId`: a node registered without one is anyone's (old raylets, stub peers in specs). */
  owns(nodeId: string, secret: string | undefined): boolean {
    const known = this.#secrets.get(nodeId);
    if (known === undefined) return true;
    if (secret === undefined) return false;
    const given = Buffer.from(secret, 'utf8');
    return given.length === known.length && timingSafeEqual(given, known);
  }

  /** Throws NODE_NOT_OWNED unless `secret` speaks for `nodeId`. */
  check(nodeId: string, secret: string | undefined, verb: string): void {
    if (!this.owns(nodeId, secret)) throw new NodeNotOwnedError(nodeId, verb);
  }

  set(nodeId: string, secret: string | undefined): void {
    if (secret === undefined) this.#secrets.delete(nodeId);
    else this.#secrets.set(nodeId, Buffer.from(secret, 'utf8'));
  }

  forget(nodeId: string): void {
    this.#secrets.delete(nodeId);
  }
}
