// The raylet's view follows actor placements as changes (actorsPlaced / actorsRemoved), not resent
// lists, and still agrees with a snapshot that carries the full lists.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ACTOR_ID_LABEL, actorScope } from '../../../lib/index.ts';
import type { NodeView, ViewDelta } from '../../../protocols/messages/view.ts';
import { RayletView } from '../../../runtime/raylet/cluster-view.ts';

const node = (nodeId: string, actors?: NodeView['actors']): NodeView => ({
  nodeId,
  name: nodeId,
  state: 'ALIVE',
  labels: {},
  taints: {},
  resources: { total: { CPU: 40_000 }, available: { CPU: 40_000 } },
  ...(actors ? { actors } : {}),
});
const actor = (actorId: string, labels: Record<string, string> = {}) => ({ actorId, namespace: 'default', labels: { ...labels, [ACTOR_ID_LABEL]: actorId } });

function view(): RayletView {
  return new RayletView({
    local: { nodeId: 'me', name: 'me', labels: {}, taints: {}, total: { CPU: 40_000 } },
    requestSnapshot: () => Promise.reject(new Error('no snapshot expected')),
    onChange: () => {},
    log: () => {},
  });
}
const actorsOn = (v: RayletView, id: string) => [...(v.state.node(id)?.actors.keys() ?? [])].sort();

test('placements and removals in deltas move actor labels without resending nodes', () => {
  const v = view();
  v.receive({ version: 1, previous: 0, upserts: [node('n1', [actor('a1', { app: 'web' })])], removals: [] });
  assert.equal(actorsOn(v, 'n1'), ['a1']);
  const d2: ViewDelta = { version: 2, previous: 1, upserts: [node('n1')], removals: [], actorsPlaced: [{ nodeId: 'n1', ...actor('a2') }] };
  v.receive(d2);
  assert.equal(actorsOn(v, 'n1'), ['a1', 'a2'], 'an upsert without a list keeps the actors it had');
  v.receive({ version: 3, previous: 2, upserts: [node('n1')], removals: [], actorsRemoved: [{ nodeId: 'n1', actorId: 'a1' }] });
  assert.equal(actorsOn(v, 'n1'), ['a2']);
  assert.is(v.state.index.nodeHas(actorScope('default'), 'n1', 'app', ['web']), false, 'the removed actor\'s labels left the index');
});

test('a relabelled actor arrives as a removal then a placement in one delta', () => {
  const v = view();
  v.receive({ version: 1, previous: 0, upserts: [node('n1', [actor('a1', { tier: 'a' })])], removals: [] });
  v.receive({
    version: 2, previous: 1, upserts: [node('n1')], removals: [],
    actorsRemoved: [{ nodeId: 'n1', actorId: 'a1' }], actorsPlaced: [{ nodeId: 'n1', ...actor('a1', { tier: 'b' }) }],
  });
  assert.is(v.state.index.nodeHas(actorScope('default'), 'n1', 'tier', ['b']), true);
  assert.is(v.state.index.nodeHas(actorScope('default'), 'n1', 'tier', ['a']), false);
});

test.run();
