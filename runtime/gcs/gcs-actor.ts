import { createActor, fromPromise, type Actor, type InspectionEvent } from 'xstate';
import type { ActorMachine } from './actor.machine.ts';
import type { EventPublisher } from './events.ts';
import { gcsMachine, type GcsMachine } from './gcs.machine.ts';
import type { GraceWindow } from './gcs-status.ts';
import type { KickReason } from './pending-queue.ts';
import type { Recovery } from './recovery.ts';

/**
 * The Gcs actor: the Gcs machine (gcs.machine.ts) given what its invoked actors and actions do, and
 * created with its input. Opening and closing the request subjects are the service's; reconciling is
 * the recovery's (recovery.ts), and kicks the pending queue once done; a child's error, a start that
 * failed and a reconciliation that failed part-way are logged. As the machine moves, the GCS says
 * once that it opened its subjects, marks when the grace window began, and serves.
 */
export interface GcsActorDeps {
  /** The Actor machine with its effects (actor-effects.ts): the machines started with the Gcs actor as parent. */
  readonly actorLogic: ActorMachine;
  readonly openSubjects: () => Promise<void>;
  readonly closeSubjects: () => Promise<void>;
  readonly recovery: Pick<Recovery, 'needed' | 'reconcile'>;
  readonly grace: GraceWindow;
  /** The longest stretch of reconciling before it yields (GcsOptions.queueSliceMs), read as it starts. */
  readonly sliceMs: () => number;
  readonly kick: (reason: KickReason) => void;
  readonly log: (line: string) => void;
  // the machine's input, and who watches it
  readonly cluster: string;
  /** Longest wait for raylets to register again when recovering (GcsOptions.graceMs). */
  readonly graceMs: number;
  /** xstate inspection of the Gcs machine and every machine started with it as parent. */
  readonly inspect?: (event: InspectionEvent) => void;
  // what the GCS does as the machine moves
  /** The leader epoch this GCS holds (leader.ts); 0 without a lease: said when the subjects open. */
  readonly epoch: number;
  readonly events: Pick<EventPublisher, 'leader'>;
  /** Called on every change of the machine while it serves. */
  readonly serving: () => void;
}

export function createGcsActor(deps: GcsActorDeps): Actor<GcsMachine> {
  const { log, recovery, epoch } = deps;
  const machine = gcsMachine.provide({
    actors: {
      actor: deps.actorLogic,
      openSubjects: fromPromise(async () => deps.openSubjects()),
      closeSubjects: fromPromise(async () => deps.closeSubjects()),
      reconcile: fromPromise(async () => {
        deps.grace.end('the full window ran out');
        await recovery.reconcile({
          sliceMs: deps.sliceMs(),
          pause: () => new Promise((resolve) => setImmediate(() => resolve(actor.getSnapshot().matches({ recovering: 'reconciling' })))),
        });
        deps.kick('node_registered');
      }),
    },
    actions: {
      reportChildError: (_, { childId, error }) => log(`${childId} stopped after an error: ${error instanceof Error ? error.message : String(error)}`),
      reportStartFailure: (_, { error }) => log(`cannot serve: ${error instanceof Error ? error.message : String(error)}`),
      reportReconcileFailure: (_, { error }) => log(`reconciling after a restart failed part-way: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
    },
  });
  const actor = createActor(machine, { input: { cluster: deps.cluster, recover: recovery.needed, graceMs: deps.graceMs }, ...(deps.inspect ? { inspect: deps.inspect } : {}) });
  let announced = false;
  actor.subscribe((snapshot) => {
    // subjects open (recovering or serving): said once, so clients send again at once what they
    // sent to a GCS that may be frozen or cut off (protocols/messages/cluster.ts, gcs_leader)
    if (!announced && (snapshot.value === 'serving' || snapshot.matches('recovering'))) {
      announced = true;
      const who = epoch > 0 ? `leader epoch ${epoch}` : 'no leader lease';
      deps.events.leader(epoch, `the GCS opened its subjects (${who})${recovery.needed ? ', recovering what an earlier GCS left' : ''}`);
    }
    if (snapshot.matches({ recovering: 'grace' })) deps.grace.began();
    if (snapshot.value === 'serving') deps.serving();
  });
  return actor;
}
