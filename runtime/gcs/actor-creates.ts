import { actorStateOf, type ActorContext } from './actor.machine.ts';
import type { ActorEntry } from './actor-entry.ts';
import type { CreateOutcome, RayletClient } from './raylets.ts';

/**
 * create_actor for the actor directory (actors.ts), which the Actor machine asks for on entering
 * SCHEDULED: the request its raylet gets, sent again only while the actor still waits for it, and
 * what the answer does to the actor's machine — or, for an incarnation no longer waited for there,
 * the kill of the orphan it made.
 */
export interface ActorCreatesDeps {
  readonly raylets: Pick<RayletClient, 'create' | 'kill'>;
  readonly nodeUnreachable: (nodeId: string) => void;
}

/** Where and which incarnation a create_actor was sent for. */
interface Sent {
  readonly nodeId: string;
  readonly incarnation: number;
}

export class ActorCreates {
  constructor(private readonly deps: ActorCreatesDeps) {}

  /** Sends the create of the actor `context` places (nothing when it is not placed). */
  request(entry: ActorEntry, context: ActorContext): void {
    const { nodeId, incarnation, actorId } = context;
    if (nodeId === undefined) return;
    const reg = entry.registration;
    const request = {
      actorId,
      code: reg.code,
      namespace: reg.namespace,
      ...(reg.name === undefined ? {} : { name: reg.name }),
      labels: context.labels,
      resources: context.resources,
      maxConcurrency: entry.compiled.maxConcurrency,
      isolation: entry.compiled.isolation,
      incarnation,
      // its owner, which what it creates inside the worker shares; a detached actor has none
      ...(reg.jobId === undefined || reg.options.lifetime === 'detached' ? {} : { jobId: reg.jobId }),
    };
    const sent = { nodeId, incarnation };
    // sent again (a lost answer, this GCS's own fence) only while the actor still waits for this create
    void this.deps.raylets.create(nodeId, request, () => awaits(entry, sent)).then((outcome) => this.#created(entry, sent, outcome));
  }

  /** A create_actor answer: applies to the incarnation still SCHEDULED there, else it is an orphan. */
  #created(entry: ActorEntry, sent: Sent, outcome: CreateOutcome): void {
    if (!awaits(entry, sent)) {
      if (outcome.kind === 'created') void this.deps.raylets.kill(sent.nodeId, entry.registration.actorId, sent.incarnation);
      return;
    }
    const { incarnation } = sent;
    if (outcome.kind === 'created') entry.ref!.send({ type: 'CREATED', incarnation });
    else if (outcome.kind === 'failed') entry.ref!.send({ type: 'CREATE_FAILED', incarnation, cause: outcome.cause });
    else if (outcome.kind === 'host_gone') entry.ref!.send({ type: 'FAILED', incarnation, cause: outcome.cause });
    else {
      // no raylet heard it: the constructor never ran, so the actor waits again (keeping off that
      // node until it heartbeats) rather than spending a restart; a timeout may have created it
      if (outcome.noResponders) {
        this.deps.nodeUnreachable(sent.nodeId);
        entry.ref!.send({ type: 'UNDELIVERED', incarnation, cause: outcome.cause });
      } else {
        // a stopping raylet: the restart must not be placed there again while it unregisters
        if (outcome.stopping) this.deps.nodeUnreachable(sent.nodeId);
        entry.ref!.send({ type: 'FAILED', incarnation, cause: outcome.cause });
      }
    }
  }
}

/** Whether the actor still waits for the create it was `sent`: SCHEDULED, that incarnation, on that node. */
function awaits(entry: ActorEntry, sent: Sent): boolean {
  const snapshot = entry.ref?.getSnapshot();
  return snapshot !== undefined && actorStateOf(snapshot) === 'SCHEDULED' && snapshot.context.incarnation === sent.incarnation && snapshot.context.nodeId === sent.nodeId;
}
