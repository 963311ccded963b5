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
  assert.match(refused({ type: 'node_exploded', time: 1 })!, /^type: expected "node_added" or .* or "lease_revoked"$/);
  assert.ok(CLUSTER_EVENT_TYPES.includes('lease_revoked'), 'the raylets\' event is in the list too');
});

test('each type carries its payload: a node event its node, an eviction its actor, reason and message', () => {
  assert.match(refused({ type: 'node_added', time: 1 })!, /^node: a node_added event carries its node/);
  assert.match(refused({ type: 'actor_state', time: 1 })!, /^actor: /);
  assert.match(refused({ type: 'lease_revoked', time: 1, target: { kind: 'lease', id: 'l1' }, reason: 'worker_died' })!, /^message: a lease_revoked event carries its message/);
  assert.is(refused({ type: 'lease_revoked', time: 1, target: { kind: 'lease', id: 'l1' }, reason: 'worker_died', message: 'host died' }), undefined);
});

test.run();
