// The GcsClient against a stand-in GCS on the in-process bus: a request that went to a GCS that
// never answers (frozen, cut off) is sent again at once when a GCS announces itself (gcs_leader),
// not only after its attempt times out. The stand-in is the far end of the bus, not the unit.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../../protocols/codec.ts';
import { encodeOk } from '../../../protocols/reply.ts';
import { subjects as clusterSubjects } from '../../../protocols/subjects.ts';
import { nodeInfo } from '../../../protocols/messages/cluster.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import type { BusMsg } from '../../../runtime/bus/bus.ts';
import { GcsClient } from '../../../runtime/client/gcs-client.ts';
import { page } from '../../../protocols/messages/page.ts';
import { until } from '../../helpers/until.ts';

const CLUSTER = 'leader-spec';
const subjects = clusterSubjects(CLUSTER);
const HOUR = 3_600_000;

function setUp() {
  const broker = new MemoryBroker();
  const gcsBus = connectMemoryBus(broker);
  const clientBus = connectMemoryBus(broker);
  const received: BusMsg[] = [];
  // a GCS that reads every list_nodes and answers only when told to
  gcsBus.subscribe(subjects.gcs('list_nodes'), (msg) => {
    decode(msg.data);
    received.push(msg);
  });
  const answer = (msg: BusMsg): void => {
    msg.respond(encodeOk({ items: [] }));
  };
  const client = new GcsClient(clientBus, subjects, { address: 'memory://spec', timeoutMs: HOUR });
  return { client, received, answer, close: () => Promise.all([gcsBus.close(), clientBus.close()]) };
}

test('a request unanswered when a GCS announces itself is sent again at once, and the new answer is taken', async () => {
  const { client, received, answer, close } = setUp();
  let settled = false;
  const asked = client.request('list_nodes', {}, page(nodeInfo)).finally(() => (settled = true));
  await until('the first copy received', () => (received.length === 1 ? true : undefined));
  assert.is(client.waiting, 1);
  // the GCS that got it is frozen: nothing happens until another announces itself
  client.leaderChanged();
  await until('sent again', () => (received.length === 2 ? true : undefined));
  assert.not.ok(settled);
  answer(received[1]);
  assert.equal((await asked).items, []);
  assert.is(client.waiting, 0);
  // the first GCS wakes and answers late: nobody waits for that answer any more
  answer(received[0]);
  assert.is(received.length, 2, 'sent twice in all');
  await close();
});

test('an announcement with nothing waiting sends nothing; an answered request is not sent again', async () => {
  const { client, received, answer, close } = setUp();
  const asked = client.request('list_nodes', {}, page(nodeInfo));
  await until('received', () => (received.length === 1 ? true : undefined));
  answer(received[0]);
  await asked;
  client.leaderChanged();
  client.leaderChanged();
  // a round trip through the bus after the announcements: anything they sent would have arrived
  const probe = client.request('list_nodes', {}, page(nodeInfo));
  await until('the probe received', () => (received.length === 2 ? true : undefined));
  answer(received[1]);
  await probe;
  assert.is(received.length, 2);
  await close();
});

test.run();
