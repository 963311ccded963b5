// Presence: a publisher attaches its inspectors only while a watcher is heard from, and publishes
// records only then. Asserted through the publisher's counters and the systems' inspector counts,
// never by waiting for time to pass (the publisher's clock is the spec's).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, type InspectionEvent } from 'xstate';
import { encode } from '../../protocols/codec.ts';
import type { InspectAck, InspectRecord } from '../../protocols/messages/inspect.ts';
import { MemoryBroker, connectMemoryBus } from '../../runtime/bus/memory.ts';
import { nodeMachine } from '../../runtime/gcs/node.machine.ts';
import { InspectPublisher, inspectionEnabled, type InspectableSystem } from '../../runtime/inspect/publisher.ts';
import { watchSubject } from '../../protocols/inspect-subjects.ts';
import { watchInspection } from '../../runtime/inspect/watch.ts';

/** A Node machine whose actor system counts the inspectors attached to it. */
function countedNode(nodeId: string) {
  const actor = createActor(nodeMachine, { input: { nodeId, nodeTimeoutMs: 600_000 } });
  let inspectors = 0;
  let calls = 0;
  const system: InspectableSystem = {
    inspect(observer) {
      inspectors++;
      const sub = actor.system.inspect((e: InspectionEvent) => {
        calls++;
        observer(e);
      });
      return { unsubscribe: () => (inspectors--, sub.unsubscribe()) };
    },
  };
  return { actor, system, inspectors: () => inspectors, calls: () => calls };
}

function setup() {
  const broker = new MemoryBroker();
  const pubBus = connectMemoryBus(broker);
  const watchBus = connectMemoryBus(broker);
  let now = 1_000_000;
  const publisher = new InspectPublisher({ bus: pubBus, cluster: 'c1', name: 'gcs:c1', now: () => now, graceMs: 3000, sweepMs: 3_600_000 });
  return {
    broker, pubBus, watchBus, publisher,
    advance: (ms: number) => (now += ms),
    /** The publisher sends a turn's records at the end of the turn; the broker delivers them a turn later. */
    delivered: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await broker.settled();
    },
    close: async () => {
      publisher.stop();
      await Promise.all([pubBus.close(), watchBus.close()]);
    },
  };
}

test('nobody watching: no inspector attached, nothing published however much the machines do', async () => {
  const t = setup();
  const node = countedNode('n1');
  t.publisher.add(node.system);
  await t.publisher.start();
  node.actor.start();
  for (let seq = 1; seq <= 50; seq++) node.actor.send({ type: 'HEARD' });
  await t.pubBus.flush();
  assert.is(node.inspectors(), 0);
  assert.is(node.calls(), 0);
  assert.equal(t.publisher.stats(), { attached: false, watchers: 0, systems: 1, attachments: 0, detachments: 0, watchesHeard: 0, published: 0, dropped: 0, messages: 0 });
  node.actor.stop();
  await t.close();
});

test('a watcher attaches the inspectors (acknowledged), gets the records, and leaving detaches them', async () => {
  const t = setup();
  const node = countedNode('n1');
  node.actor.start();
  node.actor.send({ type: 'HEARD' }); // before anyone watches: not published
  t.publisher.add(node.system);
  await t.publisher.start();
  const records: InspectRecord[] = [];
  const acks: InspectAck[] = [];
  let acked!: () => void;
  const firstAck = new Promise<void>((resolve) => (acked = resolve));
  const sub = watchInspection(t.watchBus, 'c1', { watcher: 'w1', onAck: (a) => (acks.push(a), acked()) }).subscribe((r) => records.push(r));
  await firstAck;
  assert.equal(acks, [{ publisher: 'gcs:c1', attached: true }]);
  assert.is(node.inspectors(), 1);
  assert.is(t.publisher.stats().attached, true);
  node.actor.send({ type: 'HEARD' });
  node.actor.send({ type: 'DRAIN' });
  await t.delivered();
  assert.equal(records.map((r) => [r.machine, r.id, r.event.type, r.from, r.to]), [
    ['node', 'n1', 'HEARD', 'ALIVE', 'ALIVE'],
    ['node', 'n1', 'DRAIN', 'ALIVE', 'DRAINING'],
  ]);
  assert.ok(records[1].seq > records[0].seq);
  assert.equal(records[1].context, { nodeId: 'n1', nodeTimeoutMs: 600_000, unheard: false });
  sub.unsubscribe();
  await t.broker.settled();
  assert.is(node.inspectors(), 0);
  const stats = t.publisher.stats();
  assert.is(stats.attached, false);
  assert.is(stats.attachments, 1);
  assert.is(stats.detachments, 1);
  assert.is(stats.published, 2);
  assert.is(stats.messages, 1, 'the two transitions of one turn went out as one inspect_records');
  const calls = node.calls();
  node.actor.send({ type: 'UNDRAIN' });
  assert.is(node.calls(), calls, 'no inspection work once detached');
  node.actor.stop();
  await t.close();
});

test('a silent watcher is dropped after the grace period; another watcher keeps the inspectors attached', async () => {
  const t = setup();
  const node = countedNode('n1');
  t.publisher.add(node.system);
  await t.publisher.start();
  const announce = (watcher: string) => t.watchBus.publish(watchSubject('c1'), encode('inspect_watch', { watcher }));
  announce('w1');
  announce('w2');
  await t.broker.settled();
  assert.is(node.inspectors(), 1);
  assert.is(t.publisher.stats().watchers, 2);
  t.advance(2000);
  announce('w2');
  await t.broker.settled();
  t.advance(1500); // w1 silent 3.5 s, w2 1.5 s
  t.publisher.sweep();
  assert.is(t.publisher.stats().watchers, 1);
  assert.is(node.inspectors(), 1);
  t.advance(1499);
  t.publisher.sweep();
  assert.is(node.inspectors(), 1, 'w2 still inside its grace period');
  t.advance(1);
  t.publisher.sweep();
  assert.is(node.inspectors(), 0);
  assert.is(t.publisher.stats().attached, false);
  // a system added while attached is inspected at once; one added while detached is not
  announce('w3');
  await t.broker.settled();
  const late = countedNode('n2');
  const remove = t.publisher.add(late.system);
  assert.is(late.inspectors(), 1);
  remove();
  assert.is(late.inspectors(), 0);
  await t.close();
});

test('malformed watch messages change nothing', async () => {
  const t = setup();
  const node = countedNode('n1');
  t.publisher.add(node.system);
  await t.publisher.start();
  t.watchBus.publish(watchSubject('c1'), new Uint8Array([1, 2, 3]));
  t.watchBus.publish(watchSubject('c1'), encode('inspect_watch', { watcher: '' }));
  t.watchBus.publish(watchSubject('c1'), encode('inspect_ack', { publisher: 'x', attached: true }));
  await t.broker.settled();
  assert.is(node.inspectors(), 0);
  assert.is(t.publisher.stats().watchesHeard, 0);
  await t.close();
});

test('ORRERY_INSPECT=off turns inspection off', () => {
  assert.is(inspectionEnabled({}), true);
  assert.is(inspectionEnabled({ ORRERY_INSPECT: 'on' }), true);
  for (const off of ['off', 'OFF', '0', 'false', 'no']) assert.is(inspectionEnabled({ ORRERY_INSPECT: off }), false, off);
});

test.run();
