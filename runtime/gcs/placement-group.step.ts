import type { ScheduleFailure } from '../../lib/scheduling/explain.ts';
import {
  contextChanges,
  groupGuards,
  initialContext,
  type PlacementGroupContext,
  type PlacementGroupEvent,
  type PlacementGroupMachineInput,
  type PlacementGroupValue,
} from './placement-group.machine.ts';

/**
 * The PlacementGroup machine (placement-group.machine.ts) as a plain step function, which the GCS
 * runs for every group (placement-group.runner.ts). The xstate machine stays the definition — its
 * statechart is what `orrery inspect` draws, and spec/runtime/gcs/placement-group.step.spec.ts holds
 * this stepper equal to it, state, context and actions, over every state and event — but an xstate
 * actor per group cost the GCS 65–125 µs of a group's ~1 ms in bench:pg (creating the actor and three
 * macrosteps through xstate's generic algorithm), for a machine of ten states and no parallel regions.
 *
 * A step resolves the event in the current state, then in its parent, then at the root (as xstate
 * does: a transition whose guard fails lets the parent's handler try), applies the transition's
 * actions in order — assigns change the context, effects are returned with the context they saw —
 * and the target's entry actions after them. Backoff states leave their timer to the runner
 * (`delayMs`); when it fires the runner sends `afterBackoff(path)`, the event xstate's `after` would.
 */
export type StatePath =
  | 'PENDING.waiting'
  | 'PENDING.preparing'
  | 'PENDING.backoff'
  | 'PREPARED'
  | 'CREATED'
  | 'RESCHEDULING.waiting'
  | 'RESCHEDULING.preparing'
  | 'RESCHEDULING.prepared'
  | 'RESCHEDULING.backoff'
  | 'REMOVED';

/** The machine's effects (named actions without assign), with what they are given. */
export type GroupEffect =
  | { readonly type: 'reserve' | 'requestPrepare' | 'requestCommit' | 'commitBundles' | 'abandon' | 'release'; readonly context: PlacementGroupContext }
  | { readonly type: 'loseNode'; readonly context: PlacementGroupContext; readonly params: { nodeId: string } }
  | { readonly type: 'reportScheduleFailed'; readonly context: PlacementGroupContext; readonly params: { failure: ScheduleFailure } };

export interface GroupSnapshot {
  readonly path: StatePath;
  /** The state as xstate writes it: 'CREATED', { PENDING: 'waiting' }. */
  readonly value: PlacementGroupValue;
  readonly context: PlacementGroupContext;
  /** 'done' once REMOVED (a final state): no event changes it any more. */
  readonly status: 'active' | 'done';
}

/** The delayed event that ends a backoff state, named as xstate names it. */
export const afterBackoff = (path: 'PENDING.backoff' | 'RESCHEDULING.backoff'): { type: string } => ({ type: `xstate.after.backoff.placement-group.${path}` });

export type GroupEvent = PlacementGroupEvent | { type: `xstate.after.backoff.placement-group.${'PENDING' | 'RESCHEDULING'}.backoff` };

type AnyEvent = { type: string } & Record<string, unknown>;
/** One action of a transition: an assign (a change of the context) or an effect. */
type Action = { assign: (c: PlacementGroupContext, e: AnyEvent) => Partial<PlacementGroupContext> } | { effect: (c: PlacementGroupContext, e: AnyEvent) => GroupEffect };
interface Transition {
  readonly guard?: (c: PlacementGroupContext, e: AnyEvent) => boolean;
  readonly actions: readonly Action[];
  readonly target?: StatePath;
}

const effect = (type: 'reserve' | 'requestPrepare' | 'requestCommit' | 'commitBundles' | 'abandon' | 'release'): Action => ({ effect: (context) => ({ type, context }) });
const loseNode: Action = { effect: (context, e) => ({ type: 'loseNode', context, params: { nodeId: e.nodeId as string } }) };
const reportScheduleFailed: Action = { effect: (context, e) => ({ type: 'reportScheduleFailed', context, params: { failure: e.failure as ScheduleFailure } }) };
const useTier: Action = { assign: (c, e) => contextChanges.useTier(c, { tier: e.tier as number }) };
const assignNodes: Action = { assign: (c, e) => contextChanges.assignNodes(c, { nodeIds: e.nodeIds as string[] }) };
const markCommitted: Action = { assign: (c) => contextChanges.markCommitted(c) };
const unplace: Action = { assign: (c) => contextChanges.unplace(c) };
const countFailure: Action = { assign: (c, e) => contextChanges.countFailure(c, { cause: e.cause as string }) };
const dropNode: Action = { assign: (c, e) => contextChanges.dropNode(c, { nodeId: e.nodeId as string }) };
const placeUnplaced: Action = { assign: (c) => contextChanges.placeUnplaced(c) };
const pendingReason = (message: (e: AnyEvent) => string): Action => ({ assign: (c, e) => contextChanges.setPendingReason(c, { message: message(e) }) });
const removedCause: Action = { assign: (c, e) => contextChanges.setRemovedCause(c, { cause: e.cause as string }) };

const currentRound = (c: PlacementGroupContext, e: AnyEvent): boolean => groupGuards.currentRound(c, { round: e.round as number });
const holds = (c: PlacementGroupContext, e: AnyEvent): boolean => groupGuards.holds(c, { nodeId: e.nodeId as string });
const holdsPlacing = (c: PlacementGroupContext, e: AnyEvent): boolean => groupGuards.holdsPlacing(c, { nodeId: e.nodeId as string });
const explanationChanged = (c: PlacementGroupContext, e: AnyEvent): boolean => groupGuards.explanationChanged(c, { message: (e.failure as ScheduleFailure).message });

const failedRound = (target: StatePath): Transition => ({ guard: currentRound, target, actions: [effect('abandon'), unplace, countFailure] });
const unschedulable = (actions: readonly Action[]): Transition => ({ guard: explanationChanged, actions: [...actions, pendingReason((e) => (e.failure as ScheduleFailure).message), reportScheduleFailed] });
const diedWhile = (what: string): Transition => ({
  guard: holdsPlacing,
  target: 'PENDING.waiting',
  actions: [loseNode, effect('abandon'), unplace, pendingReason((e) => `node ${e.nodeId as string} died while its bundles were ${what}`)],
});

/** The machine's transitions by state ('' is the root), as placement-group.machine.ts declares them. */
const ON: Readonly<Record<string, Readonly<Record<string, Transition>>>> = {
  '': { REMOVE: { target: 'REMOVED', actions: [effect('release'), removedCause] } },
  'PENDING.waiting': {
    PLACED: { target: 'PENDING.preparing', actions: [useTier, assignNodes, effect('reserve')] },
    UNSCHEDULABLE: unschedulable([useTier]),
  },
  'PENDING.preparing': {
    PREPARED: { guard: currentRound, target: 'PREPARED', actions: [] },
    PREPARE_FAILED: failedRound('PENDING.backoff'),
    NODE_DIED: diedWhile('prepared'),
  },
  'PENDING.backoff': { [afterBackoff('PENDING.backoff').type]: { target: 'PENDING.waiting', actions: [] } },
  PREPARED: {
    COMMITTED: { guard: currentRound, target: 'CREATED', actions: [effect('commitBundles'), markCommitted] },
    COMMIT_FAILED: failedRound('PENDING.backoff'),
    NODE_DIED: diedWhile('committed'),
  },
  CREATED: { NODE_DIED: { guard: holds, target: 'RESCHEDULING.waiting', actions: [loseNode, dropNode] } },
  RESCHEDULING: {
    // a node holding a surviving (committed) bundle dies too: lose it as well, start the round over
    NODE_DIED: { guard: holds, target: 'RESCHEDULING.waiting', actions: [loseNode, effect('abandon'), unplace, dropNode, placeUnplaced] },
  },
  'RESCHEDULING.waiting': {
    PLACED: { target: 'RESCHEDULING.preparing', actions: [assignNodes, effect('reserve')] },
    UNSCHEDULABLE: unschedulable([]),
  },
  'RESCHEDULING.preparing': {
    PREPARED: { guard: currentRound, target: 'RESCHEDULING.prepared', actions: [] },
    PREPARE_FAILED: failedRound('RESCHEDULING.backoff'),
  },
  'RESCHEDULING.prepared': {
    COMMITTED: { guard: currentRound, target: 'CREATED', actions: [effect('commitBundles'), markCommitted] },
    COMMIT_FAILED: failedRound('RESCHEDULING.backoff'),
  },
  'RESCHEDULING.backoff': { [afterBackoff('RESCHEDULING.backoff').type]: { target: 'RESCHEDULING.waiting', actions: [] } },
};

/** Entry actions by state. */
const ENTRY: Partial<Record<StatePath, GroupEffect['type']>> = {
  'PENDING.preparing': 'requestPrepare',
  PREPARED: 'requestCommit',
  'RESCHEDULING.preparing': 'requestPrepare',
  'RESCHEDULING.prepared': 'requestCommit',
};

function valueOf(path: StatePath): PlacementGroupValue {
  const dot = path.indexOf('.');
  return dot < 0 ? (path as PlacementGroupValue) : { [path.slice(0, dot)]: path.slice(dot + 1) };
}

function snapshotOf(path: StatePath, context: PlacementGroupContext): GroupSnapshot {
  return { path, value: valueOf(path), context, status: path === 'REMOVED' ? 'done' : 'active' };
}

/** A new group: PENDING.waiting (no entry actions). */
export function initialGroup(input: PlacementGroupMachineInput): GroupSnapshot {
  return snapshotOf('PENDING.waiting', initialContext(input));
}

/** A group in `path` with `context` (a CREATED group brought back after a GCS restart). */
export function groupAt(path: StatePath, context: PlacementGroupContext): GroupSnapshot {
  return snapshotOf(path, context);
}

/** The next snapshot and the effects to run, in order; undefined when the event changes nothing. */
export function stepGroup(snapshot: GroupSnapshot, event: GroupEvent): { snapshot: GroupSnapshot; effects: GroupEffect[] } | undefined {
  if (snapshot.status !== 'active') return undefined;
  const e = event as AnyEvent;
  const path = snapshot.path;
  const dot = path.indexOf('.');
  const levels = dot < 0 ? [path, ''] : [path, path.slice(0, dot), ''];
  let transition: Transition | undefined;
  for (const level of levels) {
    const t = ON[level]?.[e.type];
    if (t !== undefined && (t.guard === undefined || t.guard(snapshot.context, e))) {
      transition = t;
      break;
    }
  }
  if (transition === undefined) return undefined;
  let context = snapshot.context;
  const effects: GroupEffect[] = [];
  for (const action of transition.actions) {
    // Object.assign, not a literal opening with a spread: see docs/benchmarks.md, "Object spreads on Node.js 20"
    if ('assign' in action) context = Object.assign({}, context, action.assign(context, e));
    else effects.push(action.effect(context, e));
  }
  const target = transition.target ?? path;
  const entry = transition.target === undefined ? undefined : ENTRY[target];
  if (entry !== undefined) effects.push({ type: entry, context } as GroupEffect);
  return { snapshot: snapshotOf(target, context), effects };
}
