import type { InspectionEvent } from 'xstate';
import { backoffMs, placementGroupMachine, type PlacementGroupEvent } from './placement-group.machine.ts';
import { afterBackoff, stepGroup, type GroupEffect, type GroupEvent, type GroupSnapshot } from './placement-group.step.ts';

/** What runs a group's effects (placement-groups.ts). */
export type GroupEffects = (effect: GroupEffect) => void;

export interface GroupRunnerOptions {
  /** The actor id inspection records fall back to (gcs.machine.ts, placementGroupChildId). */
  readonly id: string;
  readonly snapshot: GroupSnapshot;
  readonly effects: GroupEffects;
  /** Each snapshot after a step that changed something (the first one is the caller's to look at). */
  readonly observe: (snapshot: GroupSnapshot) => void;
  /** The GCS's inspection (its actor system's observers), if any. */
  readonly inspect?: (event: InspectionEvent) => void;
}

/**
 * One placement group's machine as the GCS runs it: the plain stepper (placement-group.step.ts) with
 * what an xstate actor adds around it — a mailbox (an event sent while a step runs its effects waits
 * for that step to end), the backoff timer of a backoff state, observers told after each step, and
 * inspection events shaped as xstate's (`@xstate.microstep`, then `@xstate.snapshot`), with an actor
 * reference whose logic is the xstate machine, so the inspection mapper, `orrery inspect` and
 * specs that watch the GCS's machines see a group as before.
 */
export class GroupRunner {
  #snapshot: GroupSnapshot;
  #mailbox: GroupEvent[] | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** What inspection records name: the xstate machine's id and definition, and the snapshot now. */
  readonly #ref: { readonly id: string; readonly logic: typeof placementGroupMachine; getSnapshot(): GroupSnapshot };

  constructor(private readonly opts: GroupRunnerOptions) {
    this.#snapshot = opts.snapshot;
    const self = this;
    this.#ref = { id: opts.id, logic: placementGroupMachine, getSnapshot: () => self.#snapshot };
    opts.inspect?.({ type: '@xstate.snapshot', actorRef: this.#ref, rootId: opts.id, snapshot: this.#snapshot, event: { type: 'xstate.init', input: {} } } as unknown as InspectionEvent);
  }

  getSnapshot(): GroupSnapshot {
    return this.#snapshot;
  }

  send(event: PlacementGroupEvent | GroupEvent): void {
    if (this.#stopped) return;
    if (this.#mailbox !== undefined) {
      this.#mailbox.push(event);
      return;
    }
    this.#mailbox = [event];
    try {
      for (let next = this.#mailbox.shift(); next !== undefined; next = this.#mailbox.shift()) this.#step(next);
    } finally {
      this.#mailbox = undefined;
    }
  }

  /** No more steps and no timer (the GCS stops). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #step(event: GroupEvent): void {
    const before = this.#snapshot;
    const result = stepGroup(before, event);
    if (result === undefined || this.#stopped) return;
    const { snapshot, effects } = result;
    this.opts.inspect?.({ type: '@xstate.microstep', actorRef: this.#ref, rootId: this.opts.id, event, snapshot, _transitions: [{ eventType: event.type }] } as unknown as InspectionEvent);
    if (snapshot.path !== before.path) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    for (const effect of effects) this.opts.effects(effect);
    this.#snapshot = snapshot;
    const path = snapshot.path;
    if ((path === 'PENDING.backoff' || path === 'RESCHEDULING.backoff') && path !== before.path) {
      this.#timer = setTimeout(() => this.send(afterBackoff(path) as GroupEvent), backoffMs(snapshot.context.failures));
    }
    try {
      this.opts.observe(snapshot);
    } catch (err) {
      // as an xstate actor reports an observer's error: thrown on its own, the step stands
      setTimeout(() => {
        throw err;
      });
    }
    this.opts.inspect?.({ type: '@xstate.snapshot', actorRef: this.#ref, rootId: this.opts.id, snapshot, event } as unknown as InspectionEvent);
    if (snapshot.status === 'done') this.stop();
  }
}
