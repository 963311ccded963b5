// A wait for an actor state must not hang on a lost event: actor_state events travel on core NATS
// and one can be lost (the GCS's lease lapsed after a NATS outage, the driver was reconnecting).
// Here a stand-in GCS on the memory bus never publishes an event at all: ready() and kill() still
// settle, from the GCS's own answer to get_actor.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import { encodeError, encodeOk } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/index.ts';
import { RESYNC_MS } from '../../../runtime/client/actor-wait.ts';
import { ClusterClient } from '../../../runtime/client/cluster.ts';
import { ActorDiedError } from '../../../runtime/errors.ts';
import { CounterActor } from '../../fixtures/client/actors.ts';

const s = subjects('default');

/** A GCS that answers register_actor (PENDING), get_actor (`state` of the moment) and kill_actor, and publishes nothing. */
function silentGcs(broker: MemoryBroker) {
  const bus = connectMemoryBus(broker);
  const gcs = { state: 'PENDING' as string, asked: 0, actorId: '' };
  const info = () => ({
    actorId: gcs.actorId,
    namespace: 'default',
    className: 'Counter',
    state: gcs.state,
    numRestarts: 0,
    labels: {},
    ...(gcs.state === 'ALIVE' ? { nodeId: 'node000000000001' } : {}),
    ...(gcs.state === 'DEAD' ? { deathCause: 'killed' } : {}),
  });
  bus.subscribe(s.gcs('register_actor'), (m) => {
    gcs.actorId = decode(m.data, { registry: { register_actor: messages.register_actor } }).body.actorId;
    m.respond(encodeOk(info()));
  });
  bus.subscribe(s.gcs('get_actor'), (m) => {
    gcs.asked++;
    m.respond(gcs.actorId ? encodeOk(info()) : encodeError(new Error('no actor')));
  });
  bus.subscribe(s.gcs('kill_actor'), (m) => {
    gcs.state = 'DEAD';
    m.respond(encodeOk(info()));
  });
  return gcs;
}

test('ready() settles from get_actor when the ALIVE event never comes; kill() likewise for DEAD', async () => {
  const broker = new MemoryBroker();
  const gcs = silentGcs(broker);
  const client = await ClusterClient.open(connectMemoryBus(broker), { address: 'memory', cluster: 'default', namespace: 'default', requestTimeoutMs: 5000, callTimeoutMs: 5000, ownsBus: true });
  try {
    const handle = await client.actor(CounterActor).remote(1);
    gcs.state = 'ALIVE'; // placed and created, but its events are lost
    const started = Date.now();
    const info = await handle.ready({ timeoutMs: 4 * RESYNC_MS.first });
    assert.is(info.state, 'ALIVE');
    assert.is(info.nodeId, 'node000000000001');
    assert.ok(Date.now() - started >= RESYNC_MS.first - 50, 'events first: the GCS is asked only after a while');
    assert.is(gcs.asked, 1);
    const stream = (client as unknown as { stream: { actorWatchers(actorId: string): number } }).stream;
    assert.is(stream.actorWatchers(handle.actorId), 0, "remote()'s watch ended with the ALIVE answer, though no event came");
    await handle.kill();
    assert.is(gcs.state, 'DEAD');
  } finally {
    await client.close();
  }
});

test('a DEAD answer fails the wait with ActorDiedError', async () => {
  const broker = new MemoryBroker();
  const gcs = silentGcs(broker);
  const client = await ClusterClient.open(connectMemoryBus(broker), { address: 'memory', cluster: 'default', namespace: 'default', requestTimeoutMs: 5000, callTimeoutMs: 5000, ownsBus: true });
  try {
    const handle = await client.actor(CounterActor).remote(1);
    gcs.state = 'DEAD';
    const err = await handle.ready({ timeoutMs: 4 * RESYNC_MS.first }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.instance(err, ActorDiedError);
  } finally {
    await client.close();
  }
});

test.run();
