import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Packr } from 'msgpackr';
import { createActor, initialTransition, transition } from 'xstate';
import { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import { ACTOR_ID_LABEL } from '../../../lib/labels/builtin.ts';
import { actorScope } from '../../../lib/label-index/label-index.ts';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import type { ScheduleFailure } from '../../../lib/scheduling/explain.ts';
import { provideActorEffects } from '../../../runtime/gcs/actor-effects.ts';
import { actorMachine, actorStateOf, KILLED, type ActorEvent, type ActorMachineInput, type ActorSnapshot } from '../../../runtime/gcs/actor.machine.ts';

// The Actor machine stepped as a pure reducer (xstate's transition(): no action runs, the actions
// it would run are returned), then run with its effects on a real ClusterState.

const input = (over: Partial<ActorMachineInput> = {}): ActorMachineInput => ({
  actorId: 'a1',
  namespace: 'default',
  className: 'Counter',
  labels: { team: 'ml', [ACTOR_ID_LABEL]: 'a1' },
  resources: parseResources({ CPU: 2 }),
  maxRestarts: 0,
  ...over,
});

const failure = (message: string): ScheduleFailure => ({ code: 'unschedulable', reason: 'resources', message, nodes: [{ nodeId: 'n1', reasons: ['had insufficient CPU'] }] });

/** The named actions a step would run (xstate's own assign actions left out). */
const named = (actions: { type: string }[]): string[] => actions.map((a) => a.type).filter((t) => !t.startsWith('xstate.'));

interface Step {
  event: ActorEvent;
  state: ReturnType<typeof actorStateOf>;
  actions: string[];
}

/** Steps the machine through `steps`, checking the state and the named actions of each. */
function walk(over: Partial<ActorMachineInput>, steps: Step[]): ActorSnapshot {
  let [snapshot, actions] = initialTransition(actorMachine, input(over));
  assert.is(actorStateOf(snapshot), 'PENDING');
  assert.equal(named(actions), []);
  for (const [i, step] of steps.entries()) {
    [snapshot, actions] = transition(actorMachine, snapshot, step.event);
    assert.is(actorStateOf(snapshot), step.state, `step ${i} (${step.event.type}): state`);
    assert.equal(named(actions), step.actions, `step ${i} (${step.event.type}): actions`);
  }
  return snapshot;
}

const PLACE = ['placeOnNode', 'requestCreate'];
const REMOVE = ['removeFromNode'];

test('placed, created: labels are added on entering SCHEDULED and nowhere else', () => {
  const s = walk({}, [
    { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
    { event: { type: 'CREATED', incarnation: 0 }, state: 'ALIVE', actions: [] },
  ]);
  assert.is(s.context.nodeId, 'n1');
  assert.is(s.context.incarnation, 0);
});

test('adopted (a restarted GCS, the raylet still runs this incarnation): ALIVE at once, placed on its node, no create_actor', () => {
  const s = walk({ incarnation: 3, numRestarts: 1, maxRestarts: 2 }, [
    { event: { type: 'ADOPTED', nodeId: 'n2' }, state: 'ALIVE', actions: ['placeOnNode'] },
    // from there it is any running actor: a failure of that incarnation restarts it
    { event: { type: 'FAILED', incarnation: 3, cause: 'worker died' }, state: 'RESTARTING', actions: REMOVE },
  ]);
  assert.is(s.context.incarnation, 4);
  assert.is(s.context.numRestarts, 2);
});

test('ADOPTED applies only to an actor not yet placed', () => {
  const placed = walk({}, [{ event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE }]);
  const [next, actions] = transition(actorMachine, placed, { type: 'ADOPTED', nodeId: 'n2' });
  assert.is(actorStateOf(next), 'SCHEDULED');
  assert.is(next.context.nodeId, 'n1');
  assert.equal(named(actions), []);
});

const lifecycles: { name: string; over?: Partial<ActorMachineInput>; steps: Step[]; want: { numRestarts: number; deathCause?: string; incarnation?: number } }[] = [
  {
    name: 'a worker failure without restarts kills it and removes its labels',
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 0 }, state: 'ALIVE', actions: [] },
      { event: { type: 'FAILED', incarnation: 0, cause: 'worker exited with code 1' }, state: 'DEAD', actions: REMOVE },
    ],
    want: { numRestarts: 0, deathCause: 'worker exited with code 1' },
  },
  {
    name: 'with restarts left a failure restarts it: labels removed, then added on the new node',
    over: { maxRestarts: 1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 0 }, state: 'ALIVE', actions: [] },
      { event: { type: 'FAILED', incarnation: 0, cause: 'node n1 died' }, state: 'RESTARTING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n2' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 1 }, state: 'ALIVE', actions: [] },
      { event: { type: 'FAILED', incarnation: 1, cause: 'node n2 died' }, state: 'DEAD', actions: REMOVE },
    ],
    want: { numRestarts: 1, deathCause: 'node n2 died', incarnation: 1 },
  },
  {
    name: 'a constructor that throws is fatal even with restarts left',
    over: { maxRestarts: 3 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATE_FAILED', incarnation: 0, cause: 'REMOTE_ERROR: boom' }, state: 'DEAD', actions: REMOVE },
    ],
    want: { numRestarts: 0, deathCause: 'REMOTE_ERROR: boom' },
  },
  {
    name: 'a raylet that cannot be reached while creating counts as a failure (restartable)',
    over: { maxRestarts: 1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 0, cause: 'create_actor on node n1: TIMEOUT' }, state: 'RESTARTING', actions: REMOVE },
    ],
    want: { numRestarts: 1, incarnation: 1 },
  },
  {
    name: 'a create that reached no raylet (NO_RESPONDERS) waits again without spending a restart, even with none to spend',
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'UNDELIVERED', incarnation: 0, cause: 'create_actor on node n1: NO_RESPONDERS' }, state: 'PENDING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n2' }, state: 'SCHEDULED', actions: PLACE },
      // an answer about the undelivered attempt cannot be taken for this one
      { event: { type: 'CREATED', incarnation: 0 }, state: 'SCHEDULED', actions: [] },
      { event: { type: 'CREATED', incarnation: 1 }, state: 'ALIVE', actions: [] },
    ],
    want: { numRestarts: 0, incarnation: 1 },
  },
  {
    name: 'an undelivered create after a restart keeps the restart count it had',
    over: { maxRestarts: 1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 0 }, state: 'ALIVE', actions: [] },
      { event: { type: 'FAILED', incarnation: 0, cause: 'node n1 died' }, state: 'RESTARTING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n2' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'UNDELIVERED', incarnation: 1, cause: 'create_actor on node n2: NO_RESPONDERS' }, state: 'PENDING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n3' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 2, cause: 'node n3 died' }, state: 'DEAD', actions: REMOVE },
    ],
    want: { numRestarts: 1, incarnation: 2, deathCause: 'node n3 died' },
  },
  {
    name: 'a second creation in a row that fails with its host gone is fatal, restarts left or not',
    over: { maxRestarts: -1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 0, cause: 'node n1 died' }, state: 'RESTARTING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n2' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 1, cause: 'node n2 died' }, state: 'DEAD', actions: REMOVE },
    ],
    want: { numRestarts: 1, incarnation: 1, deathCause: '2 creations in a row failed with their host gone; the last: node n2 died' },
  },
  {
    name: 'a creation that succeeds clears the count: failures of a running actor are restarts as before',
    over: { maxRestarts: -1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 0, cause: 'node n1 died' }, state: 'RESTARTING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n2' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 1 }, state: 'ALIVE', actions: [] },
      { event: { type: 'FAILED', incarnation: 1, cause: 'node n2 died' }, state: 'RESTARTING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n3' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 2, cause: 'node n3 died' }, state: 'RESTARTING', actions: REMOVE },
    ],
    want: { numRestarts: 3, incarnation: 3 },
  },
  {
    name: 'a create that reached no raylet is not a creation failure',
    over: { maxRestarts: -1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'UNDELIVERED', incarnation: 0, cause: 'create_actor on node n1: NO_RESPONDERS' }, state: 'PENDING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n2' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 1, cause: 'node n2 died' }, state: 'RESTARTING', actions: REMOVE },
    ],
    want: { numRestarts: 1, incarnation: 2 },
  },
  {
    name: 'kill with noRestart asks the raylet and dies, killed',
    over: { maxRestarts: 5 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 0 }, state: 'ALIVE', actions: [] },
      { event: { type: 'KILL', noRestart: true }, state: 'DEAD', actions: [...REMOVE, 'requestKill'] },
    ],
    want: { numRestarts: 0, deathCause: KILLED },
  },
  {
    name: 'kill without noRestart restarts when restarts remain',
    over: { maxRestarts: 1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'KILL', noRestart: false }, state: 'RESTARTING', actions: [...REMOVE, 'requestKill'] },
    ],
    want: { numRestarts: 1, incarnation: 1 },
  },
  {
    name: 'kill without noRestart and no restarts left dies',
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 0 }, state: 'ALIVE', actions: [] },
      { event: { type: 'KILL', noRestart: false }, state: 'DEAD', actions: [...REMOVE, 'requestKill'] },
    ],
    want: { numRestarts: 0, deathCause: KILLED },
  },
  {
    name: 'a pending actor killed never touched a node',
    steps: [
      { event: { type: 'UNSCHEDULABLE', failure: failure('0/1 nodes are available: 1 node(s) had insufficient CPU.') }, state: 'PENDING', actions: ['reportScheduleFailed'] },
      { event: { type: 'KILL', noRestart: true }, state: 'DEAD', actions: [] },
    ],
    want: { numRestarts: 0, deathCause: KILLED },
  },
  {
    name: 'a decision that can never succeed (REJECTED) kills a waiting actor',
    over: { maxRestarts: 1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 0, cause: 'node n1 died' }, state: 'RESTARTING', actions: REMOVE },
      { event: { type: 'REJECTED', cause: 'NODE_NOT_FOUND: node "n1" is not in the cluster' }, state: 'DEAD', actions: [] },
    ],
    want: { numRestarts: 1, deathCause: 'NODE_NOT_FOUND: node "n1" is not in the cluster' },
  },
  {
    name: 'replies and reports about an older incarnation are ignored',
    over: { maxRestarts: 1 },
    steps: [
      { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'FAILED', incarnation: 0, cause: 'node n1 died' }, state: 'RESTARTING', actions: REMOVE },
      { event: { type: 'PLACED', nodeId: 'n2' }, state: 'SCHEDULED', actions: PLACE },
      { event: { type: 'CREATED', incarnation: 0 }, state: 'SCHEDULED', actions: [] },
      { event: { type: 'CREATE_FAILED', incarnation: 0, cause: 'late' }, state: 'SCHEDULED', actions: [] },
      { event: { type: 'FAILED', incarnation: 0, cause: 'late' }, state: 'SCHEDULED', actions: [] },
      { event: { type: 'CREATED', incarnation: 1 }, state: 'ALIVE', actions: [] },
    ],
    want: { numRestarts: 1, incarnation: 1 },
  },
];

for (const c of lifecycles) {
  test(`lifecycle: ${c.name}`, () => {
    const s = walk(c.over ?? {}, c.steps);
    assert.is(s.context.numRestarts, c.want.numRestarts);
    assert.is(s.context.deathCause, c.want.deathCause);
    if (c.want.incarnation !== undefined) assert.is(s.context.incarnation, c.want.incarnation);
    if (actorStateOf(s) === 'DEAD') assert.is(s.status, 'done');
    if (actorStateOf(s) === 'DEAD' || actorStateOf(s) === 'RESTARTING' || actorStateOf(s) === 'PENDING') assert.is(s.context.nodeId, undefined);
  });
}

test('restart counting: maxRestarts 2 allows exactly two restarts', () => {
  const cycle = (inc: number, last: boolean): Step[] => [
    { event: { type: 'PLACED', nodeId: `n${inc}` }, state: 'SCHEDULED', actions: PLACE },
    { event: { type: 'CREATED', incarnation: inc }, state: 'ALIVE', actions: [] },
    { event: { type: 'FAILED', incarnation: inc, cause: `crash ${inc}` }, state: last ? 'DEAD' : 'RESTARTING', actions: REMOVE },
  ];
  const s = walk({ maxRestarts: 2 }, [...cycle(0, false), ...cycle(1, false), ...cycle(2, true)]);
  assert.is(s.context.numRestarts, 2);
  assert.is(s.context.deathCause, 'crash 2');
});

test('restart counting: maxRestarts -1 restarts without limit', () => {
  const steps: Step[] = [];
  for (let inc = 0; inc < 50; inc++) {
    steps.push({ event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE });
    steps.push({ event: { type: 'CREATED', incarnation: inc }, state: 'ALIVE', actions: [] });
    steps.push({ event: { type: 'FAILED', incarnation: inc, cause: 'crash' }, state: 'RESTARTING', actions: REMOVE });
  }
  const s = walk({ maxRestarts: -1 }, steps);
  assert.is(s.context.numRestarts, 50);
  assert.is(s.context.incarnation, 50);
});

test('schedule_failed is reported only when the explanation changes; PLACED clears it', () => {
  const a = failure('0/1 nodes are available: 1 node(s) had insufficient CPU.');
  const b = failure('0/2 nodes are available: 2 node(s) had insufficient CPU.');
  const s = walk({}, [
    { event: { type: 'UNSCHEDULABLE', failure: a }, state: 'PENDING', actions: ['reportScheduleFailed'] },
    { event: { type: 'UNSCHEDULABLE', failure: a }, state: 'PENDING', actions: [] },
    { event: { type: 'UNSCHEDULABLE', failure: b }, state: 'PENDING', actions: ['reportScheduleFailed'] },
    { event: { type: 'UNSCHEDULABLE', failure: b }, state: 'PENDING', actions: [] },
    { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
  ]);
  assert.is(s.context.pendingReason, undefined);
});

test('a restarted actor that cannot be placed goes PENDING with its explanation, reported again', () => {
  const a = failure('0/1 nodes are available: 1 node(s) had insufficient CPU.');
  const s = walk({ maxRestarts: 1 }, [
    { event: { type: 'UNSCHEDULABLE', failure: a }, state: 'PENDING', actions: ['reportScheduleFailed'] },
    { event: { type: 'PLACED', nodeId: 'n1' }, state: 'SCHEDULED', actions: PLACE },
    { event: { type: 'FAILED', incarnation: 0, cause: 'node n1 died' }, state: 'RESTARTING', actions: REMOVE },
    { event: { type: 'UNSCHEDULABLE', failure: a }, state: 'PENDING', actions: ['reportScheduleFailed'] },
  ]);
  assert.is(s.context.pendingReason, a.message);
});

test('events that do not apply in a state change nothing', () => {
  const [pending] = initialTransition(actorMachine, input());
  for (const event of [{ type: 'CREATED', incarnation: 0 }, { type: 'FAILED', incarnation: 0, cause: 'x' }, { type: 'CREATE_FAILED', incarnation: 0, cause: 'x' }] as ActorEvent[]) {
    const [next, actions] = transition(actorMachine, pending, event);
    assert.is(actorStateOf(next), 'PENDING');
    assert.equal(named(actions), []);
  }
});

test('the context survives msgpackr at every step', () => {
  const packr = new Packr({ useRecords: false, moreTypes: false });
  let [s] = initialTransition(actorMachine, input({ maxRestarts: 1, name: 'counter' }));
  const events: ActorEvent[] = [
    { type: 'UNSCHEDULABLE', failure: failure('no') },
    { type: 'PLACED', nodeId: 'n1' },
    { type: 'CREATED', incarnation: 0 },
    { type: 'FAILED', incarnation: 0, cause: 'x' },
    { type: 'PLACED', nodeId: 'n2' },
    { type: 'KILL', noRestart: true },
  ];
  for (const event of events) {
    [s] = transition(actorMachine, s, event);
    const defined = Object.fromEntries(Object.entries(s.context).filter(([, v]) => v !== undefined));
    assert.equal(packr.unpack(packr.pack(defined)), defined);
  }
});

// ---- with its effects, on a real ClusterState ----

function placedCluster(): ClusterState {
  const state = new ClusterState();
  state.addNode({ nodeId: 'n1', total: parseResources({ CPU: 4 }) });
  state.addNode({ nodeId: 'n2', total: parseResources({ CPU: 4 }) });
  return state;
}

const actorNodes = (state: ClusterState, actorId = 'a1'): string[] => [...state.index.nodesByKeyValue(actorScope('default'), ACTOR_ID_LABEL, [actorId])].sort();
const teamNodes = (state: ClusterState): string[] => [...state.index.nodesByKeyValue(actorScope('default'), 'team', ['ml'])].sort();

/** The Actor machine with its effects on `state`, every dependency call recorded in `calls`. */
function recordingEffects(state: ClusterState) {
  const calls: string[] = [];
  const logic = provideActorEffects({
    state,
    log: (line) => calls.push(`log ${line}`),
    nodeChanged: (id) => calls.push(`changed ${id}`),
    resourcesFreed: () => calls.push('freed'),
    requestCreate: (c) => calls.push(`create ${c.nodeId}#${c.incarnation}`),
    requestKill: (c) => calls.push(`kill ${c.nodeId}#${c.incarnation}`),
    scheduleFailed: () => calls.push('schedule_failed'),
    actorPlaced: (c) => calls.push(`placed ${c.nodeId}`),
    actorLeft: (c) => calls.push(`left ${c.nodeId}`),
  });
  return { calls, logic };
}

test('effects: labels and resources are on the node exactly while SCHEDULED or ALIVE', () => {
  const state = placedCluster();
  const { calls, logic } = recordingEffects(state);
  const actor = createActor(logic, { input: input({ maxRestarts: 1 }) }).start();
  const cpu = (id: string) => state.node(id)!.available.CPU;
  assert.equal(actorNodes(state), []);

  actor.send({ type: 'PLACED', nodeId: 'n1' });
  assert.equal(actorNodes(state), ['n1']);
  assert.equal(teamNodes(state), ['n1']);
  assert.is(cpu('n1'), parseResources({ CPU: 2 }).CPU);
  actor.send({ type: 'CREATED', incarnation: 0 });
  assert.equal(actorNodes(state), ['n1']);

  actor.send({ type: 'FAILED', incarnation: 0, cause: 'worker died' });
  assert.equal(actorNodes(state), []);
  assert.equal(teamNodes(state), []);
  assert.is(cpu('n1'), parseResources({ CPU: 4 }).CPU);

  actor.send({ type: 'PLACED', nodeId: 'n2' });
  assert.equal(actorNodes(state), ['n2']);
  actor.send({ type: 'KILL', noRestart: true });
  assert.equal(actorNodes(state), []);
  assert.is(cpu('n2'), parseResources({ CPU: 4 }).CPU);
  assert.is(actor.getSnapshot().status, 'done');
  assert.equal(calls, [
    'placed n1', 'changed n1', 'create n1#0', 'left n1', 'changed n1', 'freed',
    'placed n2', 'changed n2', 'create n2#1', 'left n2', 'changed n2', 'freed', 'kill n2#1',
  ]);
});

test('effects: an adopted actor holds its resources and labels on its node, and gives them back when it leaves', () => {
  const state = placedCluster();
  const { calls, logic } = recordingEffects(state);
  const actor = createActor(logic, { input: input({ incarnation: 2 }) }).start();
  actor.send({ type: 'ADOPTED', nodeId: 'n2' });
  assert.is(actorStateOf(actor.getSnapshot()), 'ALIVE');
  assert.equal(actorNodes(state), ['n2']);
  assert.equal(teamNodes(state), ['n2']);
  assert.is(state.node('n2')!.available.CPU, parseResources({ CPU: 2 }).CPU);
  actor.send({ type: 'KILL', noRestart: true });
  assert.equal(actorNodes(state), []);
  assert.is(state.node('n2')!.available.CPU, parseResources({ CPU: 4 }).CPU);
  assert.equal(calls, ['placed n2', 'changed n2', 'left n2', 'changed n2', 'freed', 'kill n2#2']);
});

test('effects: a node that left the cluster state has nothing to give back, and nothing throws', () => {
  const state = placedCluster();
  const logs: string[] = [];
  const logic = provideActorEffects({
    state, log: (l) => logs.push(l), nodeChanged: () => {}, resourcesFreed: () => {}, requestCreate: () => {}, requestKill: () => {}, scheduleFailed: () => {},
    actorPlaced: () => {}, actorLeft: () => {},
  });
  const actor = createActor(logic, { input: input() }).start();
  actor.send({ type: 'PLACED', nodeId: 'n1' });
  state.removeNode('n1');
  actor.send({ type: 'FAILED', incarnation: 0, cause: 'node n1 died' });
  assert.is(actorStateOf(actor.getSnapshot()), 'DEAD');
  assert.equal(logs, []);

  const other = createActor(logic, { input: input({ actorId: 'a2', resources: parseResources({ CPU: 64 }) }) }).start();
  other.send({ type: 'PLACED', nodeId: 'n2' });
  assert.is(actorStateOf(other.getSnapshot()), 'SCHEDULED', 'an allocation that fails is logged, the actor stays usable');
  assert.is(logs.length, 1);
  assert.match(logs[0], /placeOnNode for actor a2 failed/);
  other.send({ type: 'KILL', noRestart: true });
  assert.is(state.node('n2')!.available.CPU, parseResources({ CPU: 4 }).CPU, 'nothing was taken, nothing is given back');
});

test.run();
