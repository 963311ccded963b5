import type { InspectionEvent } from 'xstate';

/** What the mapper reads of an inspected actor. */
interface Ref {
  readonly id: string;
  readonly logic?: unknown;
  getSnapshot(): unknown;
}
import type { InspectRecord, MachineKind } from '../../protocols/messages/inspect.ts';
import { toPlainObject } from './plain.ts';

/**
 * Maps xstate's inspection events to inspection records (docs/inspection.md). A record is one
 * macrostep of one machine that took a transition: xstate announces each microstep
 * (`@xstate.microstep`, while the actor still holds the snapshot from before the step) and then the
 * resulting snapshot (`@xstate.snapshot`, with the event that caused it). So `from` is read at the
 * first microstep of a macrostep and `to` from the snapshot; an event that enabled no transition
 * (its microsteps carry no transitions) makes no record. The first snapshot of an instance (event `xstate.init`) has
 * `from: null`.
 *
 * Which machine a snapshot belongs to is the machine definition's id; anything else the actor
 * system runs (promise actors of invoked I/O) is ignored.
 */
export const MACHINE_IDS: Readonly<Record<string, { kind: MachineKind; idField: string }>> = {
  gcs: { kind: 'gcs', idField: 'cluster' },
  node: { kind: 'node', idField: 'nodeId' },
  actor: { kind: 'actor', idField: 'actorId' },
  raylet: { kind: 'raylet', idField: 'nodeId' },
  'placement-group': { kind: 'placement_group', idField: 'pgId' },
  autoscaler: { kind: 'autoscaler', idField: 'cluster' },
};

/**
 * The input of a machine started again from a snapshot it had before (a sleeping GCS actor woken,
 * runtime/gcs/actor-table.ts): xstate announces the start as an `xstate.init` step with this input, which
 * is not a transition, so no record is made of it.
 */
export const RESUMED_INPUT: Readonly<{ resumed: true }> = Object.freeze({ resumed: true });

export type UnsequencedRecord = Omit<InspectRecord, 'seq'>;

export interface MapperOptions {
  /** Called with each record, in transition order. */
  emit: (record: UnsequencedRecord) => void;
  /** Default Date.now. */
  now?: () => number;
  /** Largest context kept, roughly in bytes of JSON; default 16 KiB. */
  maxContextBytes?: number;
  /** Largest event kept; default 4 KiB. */
  maxEventBytes?: number;
}

/** The dotted path of a state value: 'PENDING', { onNode: 'ALIVE' } → 'onNode.ALIVE'; parallel regions joined by ','. */
export function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  const paths: string[] = [];
  addPaths(value as Record<string, unknown>, '', paths);
  return paths.join(',');
}

/** The paths below one level of a state value, each prefixed with `prefix` (built once per state, no splitting). */
function addPaths(value: Record<string, unknown>, prefix: string, paths: string[]): void {
  for (const key of Object.keys(value)) {
    const child = value[key];
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (child === undefined || child === '') paths.push(path);
    else if (typeof child === 'object' && child !== null) {
      if (Object.keys(child).length === 0) paths.push(path);
      else addPaths(child as Record<string, unknown>, path, paths);
    } else for (const leaf of String(child).split(',')) paths.push(`${path}.${leaf}`);
  }
}

function kindOf(ref: Ref): { kind: MachineKind; idField: string } | undefined {
  const logic = ref.logic as { id?: unknown; root?: unknown } | undefined;
  if (logic === undefined || logic.root === undefined || typeof logic.id !== 'string') return undefined;
  return Object.hasOwn(MACHINE_IDS, logic.id) ? MACHINE_IDS[logic.id] : undefined;
}

export class InspectionMapper {
  readonly #emit: (record: UnsequencedRecord) => void;
  readonly #now: () => number;
  readonly #contextBytes: number;
  readonly #eventBytes: number;
  /**
   * Per actor in a macrostep: the state path it had when the macrostep began (null: it had no
   * snapshot yet), and whether any microstep took a transition (xstate announces empty ones too).
   */
  readonly #before = new WeakMap<Ref, { from: string | null; moved: boolean }>();

  constructor(opts: MapperOptions) {
    this.#emit = opts.emit;
    this.#now = opts.now ?? Date.now;
    this.#contextBytes = opts.maxContextBytes ?? 16 * 1024;
    this.#eventBytes = opts.maxEventBytes ?? 4 * 1024;
  }

  /** The inspection observer: pass to `system.inspect(...)`. */
  readonly observe = (event: InspectionEvent): void => {
    if (event.type === '@xstate.microstep') {
      const ref = event.actorRef as unknown as Ref;
      const moved = ((event as { _transitions?: unknown[] })._transitions?.length ?? 0) > 0;
      const step = this.#before.get(ref);
      if (step !== undefined) {
        step.moved ||= moved;
        return;
      }
      if (kindOf(ref) === undefined) return;
      const snapshot = ref.getSnapshot() as { value?: unknown } | undefined;
      this.#before.set(ref, { from: snapshot && snapshot.value !== undefined ? statePath(snapshot.value) : null, moved });
      return;
    }
    if (event.type !== '@xstate.snapshot') return;
    const ref = event.actorRef as unknown as Ref;
    const known = kindOf(ref);
    if (known === undefined) return;
    const init = event.event.type === 'xstate.init';
    const step = this.#before.get(ref);
    this.#before.delete(ref);
    if (init && (event.event as { input?: unknown }).input === RESUMED_INPUT) return; // resumed, not a transition
    if (!init && step?.moved !== true) return; // no transition was taken
    const from = init ? null : step!.from;
    const snapshot = event.snapshot as { value?: unknown; context?: Record<string, unknown> };
    if (snapshot.value === undefined) return; // an errored actor: no state
    const context = snapshot.context ?? {};
    const id = context[known.idField];
    this.#emit({
      machine: known.kind,
      id: typeof id === 'string' && id.length > 0 ? id : ref.id,
      time: this.#now(),
      event: eventOf(event.event, this.#eventBytes),
      from,
      to: statePath(snapshot.value),
      context: toPlainObject(context, { maxBytes: this.#contextBytes }),
    });
  };
}

function eventOf(event: { type: string }, maxBytes: number): InspectRecord['event'] {
  const plain = toPlainObject(event, { maxBytes, maxDepth: 6 }) as InspectRecord['event'];
  plain.type = String(event.type); // where the event had it (first, as a rule), or last
  return plain;
}
