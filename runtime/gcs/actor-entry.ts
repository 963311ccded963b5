import type { ActorInfoWire, RegisterActor } from '../../protocols/messages/actor.ts';
import { actorStateOf, type ActorContext, type ActorMachineInput } from './actor.machine.ts';
import type { CompiledActor } from './actor-options.ts';
import { stopMachine, type ActorRef } from './gcs.machine.ts';

/**
 * One actor. Its Actor machine runs while the actor is PENDING, SCHEDULED or RESTARTING; once ALIVE
 * it waits, often for the rest of its life, for an event that may never come — so an ALIVE actor's
 * machine is stopped and the actor *sleeps* (`asleep`): everything its context held is in
 * `registration`, `compiled` and `info` (nodeId, numRestarts, incarnation), and the first event for
 * it (a failure, kill, eviction) starts the machine again from that ALIVE snapshot (actor-table.ts,
 * awake). An xstate actor with its mailbox, observers and snapshot is about 3 KB; a GCS holding
 * 100,000 idle actors keeps 300 MB less (docs/benchmarks.md, "The simulator").
 *
 * This file holds the entry the actor directory (actors.ts) keeps for each actor and what is read
 * off it alone: the input its machine starts from, its context whether running or asleep, and the
 * putting to sleep. Waking is the table's (actor-table.ts), which follows the machine it starts.
 */
export interface ActorEntry {
  readonly registration: RegisterActor;
  readonly compiled: CompiledActor;
  /** The running machine; undefined while the actor sleeps (ALIVE) and once it is DEAD. */
  ref: ActorRef | undefined;
  /** ALIVE with its machine stopped, to be woken by its next event. */
  asleep: boolean;
  info: ActorInfoWire;
  /** The placement group whose bundles it runs in, if any. */
  readonly placementGroupId: string | undefined;
}

/** What an Actor machine starts from: the registration and compiled options, and where its counts stand. */
export function machineInput(reg: RegisterActor, compiled: CompiledActor, counts: { numRestarts: number; incarnation: number }): ActorMachineInput & { numRestarts: number; incarnation: number } {
  return {
    actorId: reg.actorId,
    namespace: reg.namespace,
    ...(reg.name === undefined ? {} : { name: reg.name }),
    className: reg.code.className,
    labels: compiled.labels,
    resources: { ...compiled.held },
    maxRestarts: compiled.maxRestarts,
    ...counts,
  };
}

/** The machine's context, read without waking a sleeping actor; undefined once DEAD. */
export function contextOf(entry: ActorEntry | undefined): ActorContext | undefined {
  if (entry === undefined) return undefined;
  if (entry.ref !== undefined) return entry.ref.getSnapshot().context;
  return entry.asleep ? sleepingContext(entry) : undefined;
}

export function sleepingContext(entry: ActorEntry): ActorContext {
  const { registration: reg, compiled, info } = entry;
  return {
    ...machineInput(reg, compiled, { numRestarts: info.numRestarts, incarnation: info.incarnation ?? 0 }),
    creationFailures: 0, // reset on reaching ALIVE
    nodeId: info.nodeId,
  };
}

/**
 * Puts an actor that reached ALIVE to sleep once the event that got it there is done (a microtask:
 * never inside its machine's own step), if nothing moved it on in between.
 */
export function sleepSoon(entry: ActorEntry, ref: ActorRef): void {
  queueMicrotask(() => {
    if (entry.ref !== ref || actorStateOf(ref.getSnapshot()) !== 'ALIVE') return;
    entry.ref = undefined;
    entry.asleep = true;
    stopMachine(ref);
  });
}
