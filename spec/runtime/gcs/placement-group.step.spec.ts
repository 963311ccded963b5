import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate';
import type { ScheduleFailure } from '../../../lib/scheduling/explain.ts';
import { randomInt, seededRng, type Rng } from '../../../lib/random.ts';
import { placementGroupMachine, type PlacementGroupContext, type PlacementGroupMachineInput } from '../../../runtime/gcs/placement-group.machine.ts';
import { afterBackoff, groupAt, initialGroup, stepGroup, type GroupEvent, type GroupSnapshot } from '../../../runtime/gcs/placement-group.step.ts';

// The GCS steps each placement group with the plain stepper (placement-group.step.ts); the xstate
// machine (placement-group.machine.ts) is the definition. Both are driven here with the same events —
// random walks over every state, with events of the current round and of a stale one, nodes that
// hold bundles and nodes that do not — and must agree at every step on the state, the context and
// the effects (named actions) with the context each effect was given.

const EFFECTS = new Set(['reserve', 'requestPrepare', 'requestCommit', 'commitBundles', 'abandon', 'loseNode', 'release', 'reportScheduleFailed']);
const NODES = ['a', 'b', 'c'];
const input: PlacementGroupMachineInput = { pgId: 'pg1', namespace: 'default', strategy: 'SPREAD', tiers: [[{ CPU: 1 }, { CPU: 2 }, { GPU: 1 }], [{ CPU: 4 }]] };

const failure = (message: string): ScheduleFailure => ({ code: 'unschedulable', reason: 'resources', message, nodes: [] });

/** An event the group may get now: of its current round or a stale one, about any node. */
function randomEvent(rng: Rng, context: PlacementGroupContext): GroupEvent {
  const round = context.round - randomInt(rng, 2);
  const node = NODES[randomInt(rng, NODES.length)];
  const tier = randomInt(rng, 2);
  const nodeIds = Array.from({ length: 3 }, () => NODES[randomInt(rng, NODES.length)]);
  const events: GroupEvent[] = [
    { type: 'PLACED', tier, nodeIds },
    { type: 'PLACED', tier: context.tier, nodeIds },
    { type: 'UNSCHEDULABLE', tier, failure: failure(['no CPU', 'no GPU'][randomInt(rng, 2)]) },
    { type: 'PREPARED', round },
    { type: 'PREPARE_FAILED', round, cause: `node ${node} refused` },
    { type: 'COMMITTED', round },
    { type: 'COMMIT_FAILED', round, cause: `node ${node} timed out` },
    { type: 'NODE_DIED', nodeId: node },
    afterBackoff('PENDING.backoff') as GroupEvent,
    afterBackoff('RESCHEDULING.backoff') as GroupEvent,
  ];
  // REMOVE ends a walk: rarely
  return randomInt(rng, 40) === 0 ? { type: 'REMOVE', cause: 'removed' } : events[randomInt(rng, events.length)];
}

/** What both sides are compared on: state, status, context, and each effect with the context it saw. */
function picture(snapshot: { value: unknown; status: string; context: PlacementGroupContext }) {
  return { value: snapshot.value, status: snapshot.status, context: snapshot.context };
}

function xstateEffects(actions: readonly { type: string; params?: unknown; info: { context: unknown } }[]) {
  return actions.filter((a) => EFFECTS.has(a.type)).map((a) => ({ type: a.type, context: a.info.context, ...(a.params === undefined ? {} : { params: a.params }) }));
}

/** Every state a walk passed through. */
const visited = new Set<string>();

function walk(seed: number, steps: number, start: { machine: AnyMachineSnapshot; stepper: GroupSnapshot }): number {
  const rng = seededRng(seed);
  let machine = start.machine;
  let stepper = start.stepper;
  let moved = 0;
  for (let i = 0; i < steps && stepper.status === 'active'; i++) {
    const event = randomEvent(rng, stepper.context);
    const [next, actions] = transition(placementGroupMachine, machine as never, event as never);
    const stepped = stepGroup(stepper, event);
    const where = `seed ${seed}, step ${i}: ${JSON.stringify(event)} in ${JSON.stringify(machine.value)}`;
    if (stepped === undefined) {
      assert.equal(xstateEffects(actions as never), [], `${where}: no step, no effects`);
      assert.equal(picture(next as never), picture(stepper), `${where}: no step, nothing changes`);
      machine = next as AnyMachineSnapshot;
      continue;
    }
    moved++;
    assert.equal(picture(stepped.snapshot), picture(next as never), where);
    assert.equal(stepped.effects.map((e) => ({ ...e })), xstateEffects(actions as never), `${where}: effects`);
    machine = next as AnyMachineSnapshot;
    stepper = stepped.snapshot;
    visited.add(stepper.path);
  }
  return moved;
}

test('from a new group: the stepper and the xstate machine agree on state, context and effects at every step (200 random walks)', () => {
  let moved = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const [first] = initialTransition(placementGroupMachine, input);
    const stepper = initialGroup(input);
    assert.equal(picture(stepper), picture(first as never), 'the initial snapshot');
    moved += walk(seed, 60, { machine: first, stepper });
  }
  assert.ok(moved > 1000, `the walks took transitions (${moved})`);
  const all = ['PENDING.waiting', 'PENDING.preparing', 'PENDING.backoff', 'PREPARED', 'CREATED', 'RESCHEDULING.waiting', 'RESCHEDULING.preparing', 'RESCHEDULING.prepared', 'RESCHEDULING.backoff', 'REMOVED'];
  assert.equal(all.filter((p) => !visited.has(p)), [], 'every state was reached');
});

test('from a CREATED group brought back after a restart: the same agreement (100 random walks)', () => {
  const context: PlacementGroupContext = {
    ...input,
    tier: 0,
    bundles: [
      { index: 0, resources: { CPU: 1 }, nodeId: 'a', committed: true },
      { index: 1, resources: { CPU: 2 }, nodeId: 'b', committed: true },
      { index: 2, resources: { GPU: 1 }, nodeId: 'a', committed: true },
    ],
    placing: [],
    round: 0,
    failures: 0,
  };
  for (let seed = 1000; seed < 1100; seed++) {
    walk(seed, 60, { machine: placementGroupMachine.resolveState({ value: 'CREATED', context }), stepper: groupAt('CREATED', context) });
  }
});

const path = (events: GroupEvent[]): string[] => {
  let s = initialGroup(input);
  const out: string[] = [];
  for (const e of events) {
    const r = stepGroup(s, e);
    if (r) s = r.snapshot;
    out.push(`${s.path}${r ? ` [${r.effects.map((x) => x.type).join(',')}]` : ' (no step)'}`);
  }
  return out;
};

test('the two-phase commit, a refusal with its backoff, and removal, step by step', () => {
  assert.equal(
    path([
      { type: 'PLACED', tier: 0, nodeIds: ['a', 'b', 'c'] },
      { type: 'PREPARE_FAILED', round: 1, cause: 'refused' },
      { type: 'PLACED', tier: 0, nodeIds: ['a', 'b', 'c'] },
      afterBackoff('PENDING.backoff') as GroupEvent,
      { type: 'PLACED', tier: 0, nodeIds: ['a', 'b', 'c'] },
      { type: 'PREPARED', round: 1 },
      { type: 'PREPARED', round: 2 },
      { type: 'COMMITTED', round: 2 },
      { type: 'NODE_DIED', nodeId: 'b' },
      { type: 'PLACED', tier: 0, nodeIds: ['a', 'c', 'c'] },
      { type: 'PREPARED', round: 3 },
      { type: 'COMMITTED', round: 3 },
      { type: 'REMOVE', cause: 'removed' },
      { type: 'PLACED', tier: 0, nodeIds: ['a', 'b', 'c'] },
    ]),
    [
      'PENDING.preparing [reserve,requestPrepare]',
      'PENDING.backoff [abandon]',
      'PENDING.backoff (no step)',
      'PENDING.waiting []',
      'PENDING.preparing [reserve,requestPrepare]',
      'PENDING.preparing (no step)',
      'PREPARED [requestCommit]',
      'CREATED [commitBundles]',
      'RESCHEDULING.waiting [loseNode]',
      'RESCHEDULING.preparing [reserve,requestPrepare]',
      'RESCHEDULING.prepared [requestCommit]',
      'CREATED [commitBundles]',
      'REMOVED [release]',
      'REMOVED (no step)',
    ],
  );
});

test.run();
