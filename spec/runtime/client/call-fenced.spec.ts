// A call that reaches a worker host just as it fences itself (its raylet's lease ran out): the host
// answers ACTOR_FENCED without running it, and the caller's handle treats that answer as it treats
// NO_RESPONDERS — parked, sent again while the GCS says ALIVE, answered once the host is unfenced —
// rather than failing it or leaving it to its timeout. A real ActorHost and ClusterClient on the
// memory bus; a stand-in GCS answers register_actor and get_actor.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import { encodeOk } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/index.ts';
import { ClusterClient } from '../../../runtime/client/cluster.ts';
import { ActorHost } from '../../../runtime/worker/host.ts';
import { CounterActor } from '../../fixtures/client/actors.ts';
import { until } from '../../helpers/until.ts';
import { createSpec } from '../worker/support.ts';

const s = subjects('default');
const NODE = { nodeId: 'node000000000001', nodeName: 'n1', labels: { 'orrery.io/node-id': 'node000000000001' } };

/** A GCS that answers register_actor and get_actor with the actor ALIVE on NODE, and counts get_actor. */
function aliveGcs(broker: MemoryBroker) {
  const bus = connectMemoryBus(broker);
  const gcs = { actorId: '', asked: 0 };
  const info = () => ({ actorId: gcs.actorId, namespace: 'default', className: 'Counter', state: 'ALIVE', numRestarts: 0, labels: {}, nodeId: NODE.nodeId });
  bus.subscribe(s.gcs('register_actor'), (m) => {
    gcs.actorId = decode(m.data, { registry: { register_actor: messages.register_actor } }).body.actorId;
    m.respond(encodeOk(info()));
  });
  bus.subscribe(s.gcs('get_actor'), (m) => {
    gcs.asked++;
    m.respond(encodeOk(info()));
  });
  return gcs;
}

test('a call answered ACTOR_FENCED is sent again and runs once the host answers again; calls made meanwhile follow it in order', async () => {
  const broker = new MemoryBroker();
  const gcs = aliveGcs(broker);
  const host = new ActorHost({ bus: connectMemoryBus(broker), node: NODE });
  const client = await ClusterClient.open(connectMemoryBus(broker), { address: 'memory', cluster: 'default', namespace: 'default', requestTimeoutMs: 5000, callTimeoutMs: 5000, ownsBus: true });
  try {
    const handle = await client.actor(CounterActor).remote();
    await host.create(createSpec('Counter', { actorId: gcs.actorId, args: [5], moduleUrl: new URL('../../fixtures/client/actors.ts', import.meta.url).href }));
    assert.is(await handle.call('add', 1), 6);

    const settled: string[] = [];
    const track = (name: string, p: Promise<unknown>) => p.then((v) => (settled.push(name), v));
    // routed to the host's subscription now, delivered after the fence: answered ACTOR_FENCED
    const racing = track('racing', handle.call('add', 1));
    host.fence();
    await until('the handle asked the GCS where the actor stands', () => (gcs.asked > 0 ? true : undefined), 5000);
    const later = track('later', handle.call('add', 10));
    assert.equal(settled, [], 'nothing is answered, and nothing fails, while the host is fenced');
    host.unfence();
    assert.equal(await Promise.all([racing, later]), [7, 17], 'each ran once, in call order');
    assert.equal(settled, ['racing', 'later']);
    assert.is(await handle.call('get'), 17);
  } finally {
    host.stop();
    await client.close();
  }
});

test.run();
