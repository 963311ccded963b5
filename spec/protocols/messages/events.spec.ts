// Events on `events.<type>`: one list of types, and what each type must carry.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CLUSTER_EVENT_TYPES, clusterEvent } from '../../../protocols/messages/cluster.ts';
import { check } from '../../../protocols/validate.ts';

const refused = (value: unknown): string | undefined => {
  try {
    check(clusterEvent, value);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

test('an event type outside the list is refused, naming the list', () => {
  assert.match(refused({ type: 'node_exploded', time: 1 })!, /^type: expected "node_added" or .* or "lease_revoked" or .* or "demand_infeasible"$/);
  assert.ok(CLUSTER_EVENT_TYPES.includes('lease_revoked'), 'the raylets\' event is in the list too');
  assert.ok(CLUSTER_EVENT_TYPES.includes('node_launch_requested'), 'and the autoscaler\'s');
});

test('each type carries its payload: a node event its node, an eviction its actor, reason and message', () => {
  assert.match(refused({ type: 'node_added', time: 1 })!, /^node: a node_added event carries its node/);
  assert.match(refused({ type: 'actor_state', time: 1 })!, /^actor: /);
  assert.match(refused({ type: 'lease_revoked', time: 1, target: { kind: 'lease', id: 'l1' }, reason: 'worker_died' })!, /^message: a lease_revoked event carries its message/);
  assert.is(refused({ type: 'lease_revoked', time: 1, target: { kind: 'lease', id: 'l1' }, reason: 'worker_died', message: 'host died' }), undefined);
});

test("the autoscaler's events carry their node type and message; node name and id are optional", () => {
  const ok = { type: 'node_launch_requested', time: 1, nodeType: 'gpu', message: 'launching gpu-1a2b (1 of 2) for 1 pending actor' };
  assert.is(refused(ok), undefined);
  assert.is(refused({ ...ok, type: 'node_launched', nodeName: 'gpu-1a2b', nodeId: 'n1' }), undefined);
  assert.match(refused({ ...ok, nodeType: undefined })!, /^nodeType: a node_launch_requested event carries its nodeType/);
  assert.match(refused({ ...ok, type: 'node_terminated', message: undefined })!, /^message: a node_terminated event carries its message/);
  assert.match(refused({ ...ok, nodeId: 'no spaces allowed? yes' + 'x'.repeat(300) })!, /^nodeId: /);
});

test('gcs_leader carries its epoch and message; from the wire the client types it, and orrery events prints one line', async () => {
  const wire = { type: 'gcs_leader', time: Date.UTC(2026, 10, 27, 2, 0, 0), seq: 7, epoch: 3, message: 'the GCS opened its subjects (leader epoch 3), recovering what an earlier GCS left' };
  assert.is(refused(wire), undefined);
  assert.match(refused({ ...wire, epoch: undefined })!, /^epoch: a gcs_leader event carries its epoch/);
  assert.match(refused({ ...wire, epoch: -1 })!, /^epoch: /);
  assert.match(refused({ ...wire, message: undefined })!, /^message: a gcs_leader event carries its message/);
  const { eventFromWire } = await import('../../../runtime/client/from-wire.ts');
  const { describeEvent } = await import('../../../runtime/cli/event-format.ts');
  const event = eventFromWire(check(clusterEvent, wire))!;
  assert.equal(event, { type: 'gcs_leader', time: wire.time, seq: 7, epoch: 3, message: wire.message });
  assert.is(describeEvent(event), '2026-11-27T02:00:00.000Z  gcs_leader           gcs (epoch 3)  the GCS opened its subjects (leader epoch 3), recovering what an earlier GCS left');
});

test.run();
