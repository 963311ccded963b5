// A registration in parts (gcs.register_running, then register_node): a raylet that has run ~26,000
// actors through a GCS restart lists more than one message holds. Before, its register_node was
// refused TOO_LARGE, the raylet stopped, the node was declared dead and every actor on it lost.
// First the GCS's holding of parts (RunningParts), then the GCS itself on a memory bus.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import type { RegisterNode, RegisterRunning } from '../../../protocols/messages/node.ts';
import { RunningParts } from '../../../runtime/gcs/running-parts.ts';
import { until } from '../../helpers/until.ts';
import { Harness, StubRaylet } from './support.ts';

const SECRET = 's'.repeat(32);
const OTHER = 'o'.repeat(32);
const actors = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ actorId: `a${from + i}`, incarnation: 0 }));

const part = (index: number, over: Partial<RegisterRunning> = {}): RegisterRunning => ({
  nodeId: 'n1',
  batch: 'batch-one',
  index,
  actors: actors(index * 10, 10),
  bundles: [],
  secret: SECRET,
  ...over,
});

const last = (parts: number, over: Partial<RegisterNode> = {}): RegisterNode => ({
  nodeId: 'n1',
  name: 'n1',
  labels: {},
  taints: {},
  resources: { total: { CPU: 40_000 }, available: { CPU: 40_000 } },
  address: { ip: '127.0.0.1', hostname: 'spec', pid: 1 },
  running: { actors: actors(parts * 10, 3), bundles: [{ pgId: 'pg1', index: 0, committed: true }], earlier: { batch: 'batch-one', parts } },
  secret: SECRET,
  ...over,
});

function incomplete(run: () => unknown): OrreryError {
  try {
    run();
  } catch (err) {
    assert.instance(err, OrreryError);
    assert.is((err as OrreryError).code, 'REGISTRATION_INCOMPLETE');
    return err as OrreryError;
  }
  throw new Error('expected REGISTRATION_INCOMPLETE');
}

test('parts joined in index order with the last one, whatever order they came in; the batch is let go', () => {
  const held = new RunningParts();
  assert.equal(held.stage(part(1)), { staged: 10 });
  assert.equal(held.stage(part(0)), { staged: 20 });
  const running = held.join(last(2))!;
  assert.equal(running.actors.map((a) => a.actorId), actors(0, 23).map((a) => a.actorId));
  assert.equal(running.bundles, [{ pgId: 'pg1', index: 0, committed: true }]);
  assert.is(held.items, 0);
  // the same registration again finds nothing held: it is not joined twice
  incomplete(() => held.join(last(2)));
});

test('a part sent twice (a lost answer) counts once', () => {
  const held = new RunningParts();
  held.stage(part(0));
  assert.equal(held.stage(part(0)), { staged: 10 });
  assert.is(held.items, 10);
  assert.is(held.join(last(1))!.actors.length, 13);
});

test('a registration without parts is taken as it is; one whose parts are missing, of another batch or secret is REGISTRATION_INCOMPLETE and keeps nothing', () => {
  const held = new RunningParts();
  const whole = { actors: actors(0, 2), bundles: [] };
  assert.is(held.join({ ...last(1), running: whole }), whole);
  assert.is(held.join({ ...last(1), running: undefined }), undefined);

  held.stage(part(0));
  assert.match(incomplete(() => held.join(last(2))).message, /holds 1 of its 2 earlier parts/);
  assert.is(held.items, 0, 'the broken batch is dropped: the raylet sends it all again');

  held.stage(part(0));
  assert.match(incomplete(() => held.join(last(1, { running: { ...last(1).running!, earlier: { batch: 'batch-two', parts: 1 } } }))).message, /none of batch batch-two/);
  assert.is(held.items, 10, 'another batch leaves this one be');
  assert.match(incomplete(() => held.join(last(1, { secret: OTHER }))).message, /another secret/);
  assert.is(held.items, 0);
});

test("a new batch replaces the node's unfinished one with the same secret; another secret's is refused until the first expires", () => {
  let now = 0;
  const held = new RunningParts({ ttlMs: 1_000, now: () => now });
  held.stage(part(0));
  held.stage(part(0, { batch: 'batch-two' }));
  assert.is(held.items, 10, 'its own raylet trying again');
  incomplete(() => held.stage(part(0, { batch: 'batch-three', secret: OTHER })));
  assert.is(held.items, 10, 'a peer with another secret cannot push it out');
  now = 1_000;
  held.stage(part(0, { batch: 'batch-three', secret: OTHER }));
  assert.is(held.join(last(1, { secret: OTHER, running: { actors: [], earlier: { batch: 'batch-three', parts: 1 } } }))!.actors.length, 10);
});

test('an unfinished batch is dropped after its time; the items held across nodes are bounded, the oldest batch giving way', () => {
  let now = 0;
  const held = new RunningParts({ ttlMs: 1_000, maxItems: 25, now: () => now });
  held.stage(part(0, { nodeId: 'n1' }));
  held.stage(part(0, { nodeId: 'n2' }));
  assert.is(held.items, 20);
  held.stage(part(0, { nodeId: 'n3' }));
  assert.is(held.items, 20, "n1's batch, the oldest, gave way");
  incomplete(() => held.join(last(1, { nodeId: 'n1' })));
  assert.is(held.join(last(1, { nodeId: 'n3' }))!.actors.length, 13);
  now = 1_000;
  held.stage(part(0, { nodeId: 'n4' }));
  assert.is(held.items, 10, "n2's batch expired");
  incomplete(() => held.stage(part(0, { nodeId: 'n5', actors: actors(0, 26) })));
});

// --- the GCS

test('the GCS joins a registration in parts before it reconciles: incarnations named in every part are killed there', async () => {
  const h = await Harness.start();
  try {
    await h.addNode({ nodeId: 'n1' });
    await h.registerActor('known', { numCpus: 1 });
    assert.is((await h.reached('known', 'ALIVE')).nodeId, 'n1');
    const n2 = new StubRaylet(h, { nodeId: 'n2' });
    // n2 says it runs `known` (which runs on n1) in part 0 and strays in parts 1 and 2
    const strays = actors(100, 5);
    const body = { nodeId: 'n2', batch: 'batch-n2', bundles: [], secret: SECRET };
    assert.equal(await h.request('register_running', 'register_running', { ...body, index: 0, actors: [{ actorId: 'known', incarnation: 0 }, strays[0]!] }), { staged: 2 });
    assert.equal(await h.request('register_running', 'register_running', { ...body, index: 1, actors: strays.slice(1, 3) }), { staged: 4 });
    assert.equal((await h.nodes()).map((n) => n.nodeId), ['n1'], 'nothing registered on parts alone');
    await h.request('register_node', 'register_node', { ...last(2, { nodeId: 'n2', name: 'n2' }), running: { actors: strays.slice(3), bundles: [], earlier: { batch: 'batch-n2', parts: 2 } } });
    const killed = await until('six kills on n2', () => (n2.killed.length >= 6 ? n2.killed : undefined));
    assert.equal(killed.map((k) => k.actorId).sort(), ['known', ...strays.map((a) => a.actorId)].sort());
    assert.is((await h.actor('known')).nodeId, 'n1', 'the actor stays where the GCS placed it');
    assert.equal((await h.nodes()).map((n) => n.state), ['ALIVE', 'ALIVE']);
  } finally {
    await h.close();
  }
});

test('a register_node whose parts the GCS does not hold (it restarted between them) is REGISTRATION_INCOMPLETE and registers nothing', async () => {
  const h = await Harness.start();
  try {
    const err = await h.refusal('register_node', 'register_node', last(3));
    assert.is(err.code, 'REGISTRATION_INCOMPLETE');
    assert.match(err.message, /node n1 came in parts and the GCS holds none of batch batch-one; the raylet registers again from its first part/);
    assert.equal(await h.nodes(), []);
    assert.equal(h.events.got.filter((e) => e.type === 'node_added'), []);
  } finally {
    await h.close();
  }
});

test("register_running for a live node needs its secret (NODE_NOT_OWNED); its own raylet retrying a lost answer is answered as registered and its parts let go", async () => {
  const h = await Harness.start();
  try {
    await h.addNode({ nodeId: 'n1', secret: SECRET });
    const refused = await h.refusal('register_running', 'register_running', part(0, { batch: 'batch-peer', secret: OTHER }));
    assert.is(refused.code, 'NODE_NOT_OWNED');
    // had the peer's part been held, a batch of another secret would now be refused
    assert.equal(await h.request('register_running', 'register_running', part(0)), { staged: 10 });
    const again = await h.request('register_node', 'register_node', last(1));
    assert.is(again.nodeId, 'n1');
    assert.equal(await h.request('register_running', 'register_running', part(1)), { staged: 10 }, 'the batch was let go with the answer');
  } finally {
    await h.close();
  }
});

test.run();
