// The bundle client's batching (runtime/gcs/bundle-client.ts): the requests of one turn for one
// raylet travel together, in order, and never more than MAX_BUNDLES_PER_REQUEST bundles to a
// message. Removing 100,000 groups at once used to make one 3 MB cancel_bundle that could not be
// sent: the raylet kept every one of those bundles. On the memory bus, against a stub raylet.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../../protocols/codec.ts';
import { messages } from '../../../protocols/messages/registry.ts';
import { encodeOk } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { BundleClient, MAX_BUNDLES_PER_REQUEST } from '../../../runtime/gcs/bundle-client.ts';

const NODE = 'n0000000000000001';
const SUBJECTS = subjects('bundles');

test(`5,000 cancels and then 3,000 prepares made in one turn: requests of at most ${MAX_BUNDLES_PER_REQUEST} bundles, in the order made, each under the message limit`, async () => {
  const broker = new MemoryBroker();
  const raylet = connectMemoryBus(broker);
  const seen: { verb: string; bundles: { pgId: string; index: number }[] }[] = [];
  raylet.subscribe(`${SUBJECTS.raylet(NODE, 'cancel_bundle').replace(/cancel_bundle$/, '*')}`, (msg) => {
    const verb = msg.subject.split('.').at(-1)!;
    const type = verb as 'cancel_bundle' | 'prepare_bundle';
    const { body } = decode(msg.data, { registry: { [type]: messages[type] } });
    seen.push({ verb, bundles: (body as { bundles: { pgId: string; index: number }[] }).bundles });
    msg.respond(encodeOk(verb === 'cancel_bundle' ? { returned: 0 } : { refused: [] }));
  });
  const client = new BundleClient({ bus: connectMemoryBus(broker), subjects: SUBJECTS, timeoutMs: 5_000, log: () => {}, epoch: 0, staleEpoch: () => {} });
  const outcomes = await Promise.all([
    ...Array.from({ length: 5_000 }, (_, i) => client.cancel(NODE, { pgId: `pg${i}`, index: 0 })),
    ...Array.from({ length: 3_000 }, (_, i) => client.prepare(NODE, { pgId: `new${i}`, index: 0, resources: { CPU: 10_000 } })),
  ]);
  assert.ok(outcomes.every((o) => o.ok), 'every bundle answered ok');
  assert.equal(seen.map((r) => [r.verb, r.bundles.length]), [
    ['cancel_bundle', 2_000],
    ['cancel_bundle', 2_000],
    ['cancel_bundle', 1_000],
    ['prepare_bundle', 2_000],
    ['prepare_bundle', 1_000],
  ]);
  const cancelled = seen.filter((r) => r.verb === 'cancel_bundle').flatMap((r) => r.bundles.map((b) => b.pgId));
  assert.equal(cancelled, Array.from({ length: 5_000 }, (_, i) => `pg${i}`), 'in the order made');
  assert.equal(client.sent, { prepare_bundle: 2, commit_bundle: 0, cancel_bundle: 3 });
  // the largest of them, re-encoded, is far inside 1 MiB
  assert.ok(encode('prepare_bundle', { bundles: Array.from({ length: MAX_BUNDLES_PER_REQUEST }, (_, i) => ({ pgId: `0123456789abcdef${i}`, index: 9_999, resources: { CPU: 10_000, memory: 2 ** 40 } })) }).byteLength < 256 * 1024);
});

test.run();
