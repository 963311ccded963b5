// A raylet's decision for one task on its view: lib's schedule plus Ray's local preference.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  actorAffinity, affinity, compileRequest, Exists, labelIn, nodeAffinity, nodeIdAffinity, parseResources, seededRng, type PlacementOptions,
} from '../../../lib/index.ts';
import { decideTask, feasibleHere, passesHere, type TaskDecision } from '../../../runtime/raylet/task-decision.ts';
import { cluster, placeActor } from '../../support/cluster.ts';

/** Three nodes: `me` (this raylet), `a` and `b`; `a` has a GPU and a taint. */
function world(used: Record<string, number> = {}) {
  const state = cluster([
    { id: 'a', cpu: 4, gpu: 1, labels: { region: 'us' }, taints: { gpu: 'true' } },
    { id: 'b', cpu: 4, labels: { region: 'eu' } },
    { id: 'me', cpu: 4, labels: { region: 'us' } },
  ]);
  for (const [id, cpus] of Object.entries(used)) state.allocate(id, parseResources({ CPU: cpus }));
  return state;
}

const decide = (state: ReturnType<typeof world>, options: PlacementOptions, seed = 1): TaskDecision =>
  decideTask(state, compileRequest(options, { namespace: 'default' }), 'me', { rng: seededRng(seed) });

const summary = (d: TaskDecision): string => (d.kind === 'spill' ? `spill:${d.nodeId}` : d.kind === 'fail' ? `fail:${d.error.code}` : d.kind);

const cases: { name: string; used?: Record<string, number>; options: PlacementOptions; want: string }[] = [
  { name: 'a plain task stays here while this node is below the spread threshold', options: {}, want: 'local' },
  { name: 'even when lib prefers another node of equal score (a, b sort before me)', used: { me: 1 }, options: {}, want: 'local' },
  { name: 'past the threshold here, it goes to the least loaded node', used: { me: 2 }, options: {}, want: 'spill:b' },
  { name: 'no room here: spilled', used: { me: 4 }, options: {}, want: 'spill:b' },
  { name: 'a label selector this node does not match', options: { labelSelector: { region: 'eu' } }, want: 'spill:b' },
  { name: 'a GPU task goes to the GPU node when it tolerates its taint', options: { numGpus: 1, tolerations: { gpu: Exists() } }, want: 'spill:a' },
  { name: 'without the toleration it waits', options: { numGpus: 1 }, want: 'wait' },
  { name: 'a soft term another node meets beats the local preference', options: { schedulingStrategy: nodeAffinity(labelIn('region', ['eu'], true)) }, want: 'spill:b' },
  { name: 'a soft term this node meets keeps it here', options: { schedulingStrategy: nodeAffinity(labelIn('region', ['us'], true)) }, want: 'local' },
  { name: 'a hard node-id pin is never overridden', options: { schedulingStrategy: nodeIdAffinity('b') }, want: 'spill:b' },
  { name: 'a hard pin to an unknown node fails', options: { schedulingStrategy: nodeIdAffinity('nowhere') }, want: 'fail:NODE_NOT_FOUND' },
  { name: 'a soft pin to an unknown node falls back to the default policy', options: { schedulingStrategy: nodeIdAffinity('nowhere', { soft: true }) }, want: 'local' },
  { name: 'more CPU than any node has: waits (explained)', options: { numCpus: 16 }, want: 'wait' },
  { name: 'a fallback selector, when the first names no node', options: { labelSelector: { region: 'ap' }, fallbackStrategy: [{ labelSelector: { region: 'eu' } }] }, want: 'spill:b' },
];

for (const c of cases) {
  test(c.name, () => {
    assert.is(summary(decide(world(c.used), c.options)), c.want);
  });
}

test('SPREAD is round robin over the view, with no local preference', () => {
  const state = world();
  const got = [1, 2, 3, 4].map(() => summary(decideTask(state, compileRequest({ schedulingStrategy: 'SPREAD', tolerations: { gpu: Exists() } }, { namespace: 'default' }), 'me', { rng: seededRng(1) })));
  assert.equal(new Set(got).size, 3, `every node once in three: ${got.join(' ')}`);
});

test('actor affinity follows the actor labels of the view', () => {
  const state = world();
  placeActor(state, 'b', 'actor-1');
  assert.is(summary(decide(state, { schedulingStrategy: actorAffinity(affinity('actor-1')) })), 'spill:b');
  assert.is(summary(decide(state, { schedulingStrategy: actorAffinity(affinity('actor-2')) })), 'wait', 'an actor not in the view yet: wait');
  assert.is(summary(decide(state, { schedulingStrategy: actorAffinity(affinity('actor-2', true)) })), 'local', 'soft: anywhere meanwhile');
});

test('a wait explains itself', () => {
  const d = decide(world(), { labelSelector: { region: 'ap' } });
  assert.is(d.kind, 'wait');
  if (d.kind === 'wait') assert.is(d.failure.message, "0/3 nodes are available: 3 node(s) didn't match label selector region in (ap), 1 node(s) had untolerated taint {gpu: true} (a node is counted under each reason it fails).");
});

test('feasibleHere and passesHere: could ever run here, and could run here now', () => {
  const req = (o: PlacementOptions) => compileRequest(o, { namespace: 'default' });
  const busy = world({ me: 4 });
  assert.is(feasibleHere(busy, req({}), 'me'), true);
  assert.is(passesHere(busy, req({}), 'me'), false);
  assert.is(passesHere(world(), req({}), 'me'), true);
  assert.is(feasibleHere(world(), req({ labelSelector: { region: 'eu' } }), 'me'), false);
  assert.is(feasibleHere(world(), req({ numCpus: 8 }), 'me'), false);
  assert.is(feasibleHere(world(), req({ labelSelector: { region: 'ap' }, fallbackStrategy: [{ labelSelector: { region: 'us' } }] }), 'me'), true);
  assert.is(feasibleHere(world(), req({}), 'gone'), false);
});

test.run();
