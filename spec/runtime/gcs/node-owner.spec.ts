// A node speaks only for itself (runtime/gcs/node-owner.ts): after a raylet registers with its
// secret, heartbeats, actor_died and registrations under its id are taken only with that secret.
// Everything else is refused NODE_NOT_OWNED, counted, and changes nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { answerNonce, checkProof } from '../../../protocols/answer-proof.ts';
import { encode } from '../../../protocols/codec.ts';
import { decodeReplyBody, encodeError, encodeOk } from '../../../protocols/reply.ts';
import { until } from '../../helpers/until.ts';
import { Harness } from './support.ts';

const address = { ip: '127.0.0.1', hostname: 'spec', pid: 1 };
const SECRET = 's'.repeat(32);
const FORGED = 'f'.repeat(32);
const registration = (nodeId: string, secret: string | undefined, cpu = 4) => ({
  nodeId,
  name: nodeId,
  labels: {},
  taints: {},
  resources: { total: { CPU: cpu * 10_000 }, available: { CPU: cpu * 10_000 } },
  address,
  ...(secret === undefined ? {} : { secret }),
});

test('heartbeats with another secret, or none, are refused and counted; the owner\'s are taken', async () => {
  const h = await Harness.start();
  try {
    await h.request('register_node', 'register_node', registration('n1', SECRET));
    for (const secret of [FORGED, undefined]) {
      const err = await h.refusal('heartbeat', 'heartbeat', { nodeId: 'n1', seq: 1, available: {}, ...(secret === undefined ? {} : { secret }) });
      assert.is(err.code, 'NODE_NOT_OWNED');
    }
    assert.is(h.gcs.wireErrors().byCode.NODE_NOT_OWNED, 2);
    assert.is(h.gcs.wireErrors().byVerb.heartbeat, 2);
    assert.equal(await h.request('heartbeat', 'heartbeat', { nodeId: 'n1', seq: 2, available: {}, secret: SECRET }), { known: true });
    assert.is(h.logs.filter((l) => l.includes('NODE_NOT_OWNED')).length, 1, 'logged once, then counted');
  } finally {
    await h.close();
  }
});

test("the answers to a raylet's own requests carry the GCS's proof under the secret and nonce they came with, errors too; a request without a nonce gets none", async () => {
  const h = await Harness.start();
  const ask = async (verb: 'register_node' | 'heartbeat' | 'unregister_node' | 'actor_died', body: object) =>
    decodeReplyBody((await h.bus.request(h.s.gcs(verb), encode(verb, body as never), { timeoutMs: 5000 })).data);
  try {
    const nonces = Array.from({ length: 5 }, answerNonce);
    const registered = await ask('register_node', { ...registration('n1', SECRET), nonce: nonces[0] });
    assert.ok(registered.ok);
    assert.is(checkProof(registered, SECRET, 'register_node', nonces[0]!), 'proven');
    const beat = await ask('heartbeat', { nodeId: 'n1', seq: 1, available: {}, secret: SECRET, nonce: nonces[1] });
    assert.is(checkProof(beat, SECRET, 'heartbeat', nonces[1]!), 'proven');
    assert.is(checkProof(beat, SECRET, 'heartbeat', nonces[0]!), 'forged', "not under another request's nonce");
    // refused (another secret): the error is proven under the secret the request carried
    const refused = await ask('heartbeat', { nodeId: 'n1', seq: 2, available: {}, secret: FORGED, nonce: nonces[2] });
    assert.ok(!refused.ok && refused.error.code === 'NODE_NOT_OWNED');
    assert.is(checkProof(refused, FORGED, 'heartbeat', nonces[2]!), 'proven');
    const died = await ask('actor_died', { nodeId: 'n1', actors: [], cause: 'spec', secret: SECRET, nonce: nonces[3] });
    assert.is(checkProof(died, SECRET, 'actor_died', nonces[3]!), 'proven');
    // a raylet from before proofs sends no nonce: answered as before
    assert.is(checkProof(await ask('heartbeat', { nodeId: 'n1', seq: 3, available: {}, secret: SECRET }), SECRET, 'heartbeat', nonces[4]!), 'unproven');
    const left = await ask('unregister_node', { nodeId: 'n1', secret: SECRET, nonce: nonces[4] });
    assert.is(checkProof(left, SECRET, 'unregister_node', nonces[4]!), 'proven');
  } finally {
    await h.close();
  }
});

test('a registration under a live node\'s id with another secret is refused; the node keeps its resources; its own raylet\'s retry is answered', async () => {
  const h = await Harness.start();
  try {
    await h.request('register_node', 'register_node', registration('n1', SECRET, 4));
    const err = await h.refusal('register_node', 'register_node', registration('n1', FORGED, 256));
    assert.is(err.code, 'NODE_NOT_OWNED');
    assert.is((await h.refusal('register_node', 'register_node', registration('n1', undefined, 256))).code, 'NODE_NOT_OWNED');
    const [node] = await h.nodes();
    assert.is(node.resources.total.CPU, 4 * 10_000);
    const retry = await h.request('register_node', 'register_node', registration('n1', SECRET, 4));
    assert.is(retry.nodeId, 'n1');
    assert.is(h.events.got.filter((e) => e.type === 'node_added').length, 1, 'no second node_added');
  } finally {
    await h.close();
  }
});

test('actor_died from anyone but the node is refused: the actor stays ALIVE', async () => {
  const h = await Harness.start();
  try {
    const raylet = await h.addNode({ nodeId: 'n1', cpu: 2, secret: SECRET });
    await h.registerActor('a1', {});
    await h.reached('a1', 'ALIVE');
    const err = await h.refusal('actor_died', 'actor_died', { nodeId: 'n1', actors: [{ actorId: 'a1', incarnation: 0 }], cause: 'forged', secret: FORGED });
    assert.is(err.code, 'NODE_NOT_OWNED');
    assert.is((await h.actor('a1')).state, 'ALIVE');
    raylet.close();
  } finally {
    await h.close();
  }
});

test('an answer to create_actor or prepare_bundle without the node\'s secret, or that cannot be read, is not taken: nothing is created or prepared in its name', async () => {
  const h = await Harness.start();
  try {
    const raylet = await h.addNode({ nodeId: 'n1', cpu: 2, secret: SECRET });
    raylet.hold = () => true; // the node's own answers wait; a peer on its subjects answers first
    // first bytes that are no message at all (0xc1 is never used in msgpack), then a well-formed answer under another secret
    let forgeries = 0;
    const forger = [
      h.bus.subscribe(h.s.raylet('n1', 'create_actor'), (m) => m.respond(forgeries++ % 2 === 0 ? new Uint8Array([0xc1]) : encodeOk({ secret: FORGED }))),
      h.bus.subscribe(h.s.raylet('n1', 'prepare_bundle'), (m) => m.respond(encodeOk({ refused: [] }))),
    ];
    await h.registerActor('a1', {});
    // each forged answer is refused and the raylet asked again, the same incarnation
    await until('two forged create answers refused', () => (h.gcs.snapshot().forgedAnswers >= 2 ? true : undefined), 10_000);
    const waiting = await h.actor('a1');
    assert.is(waiting.state, 'SCHEDULED', 'a forged answer neither creates the actor nor fails its creation');
    assert.is(waiting.numRestarts, 0, 'no restart spent, none placed elsewhere');
    assert.ok(raylet.created.length >= 2 && raylet.created.every((c) => c.incarnation === 0), JSON.stringify(raylet.created.map((c) => c.incarnation)));
    assert.ok(h.logs.some((l) => /refused an answer to create_actor for node n1: it does not carry that node's secret/.test(l)));
    // the peer stops; the raylet's own answer to the next attempt is taken
    forger[0].unsubscribe();
    raylet.hold = () => false;
    const alive = await h.reached('a1', 'ALIVE');
    assert.is(alive.nodeId, 'n1');
    assert.is(alive.numRestarts, 0);
    raylet.close(); // now only the peer answers on n1's subjects
    const pg = await h.request('create_pg', 'create_pg', { pgId: 'pg1', namespace: 'default', options: { bundles: [{ CPU: 1 }] } });
    assert.is.not(pg.state, 'CREATED');
    const forgedBefore = h.gcs.snapshot().forgedAnswers;
    await until('the forged prepare answer refused', () => (h.gcs.snapshot().forgedAnswers > forgedBefore ? true : undefined), 5000);
    assert.is.not((await h.request('get_pg', 'get_pg', { pgId: 'pg1' })).state, 'CREATED', 'a forged prepare creates no group');
    forger[1].unsubscribe();
  } finally {
    await h.close();
  }
});

test('a kill_actor answered by a peer without the node\'s secret is sent again until the raylet answers it, within a node timeout; a forged STALE_EPOCH does not make the GCS step down', async () => {
  const h = await Harness.start({ nodeTimeoutMs: 5000 });
  try {
    const raylet = await h.addNode({ nodeId: 'n1', cpu: 2, secret: SECRET });
    raylet.startHeartbeats();
    await h.registerActor('a1', {});
    await h.reached('a1', 'ALIVE');
    // the raylet is cut off for a moment (it hears no kill); a peer on its subjects answers in its name
    raylet.silentKill = true;
    let answered = 0;
    const forger = h.bus.subscribe(h.s.raylet('n1', 'kill_actor'), (m) => {
      answered++;
      m.respond(answered === 1 ? encodeOk({ killed: true }) : encodeError(new OrreryError('STALE_EPOCH', 'a newer leader exists')));
    });
    await h.request('kill_actor', 'kill_actor', { actorId: 'a1', noRestart: true });
    await until('the kill sent again after two forged answers', () => (raylet.silentKills >= 3 ? true : undefined), 10_000);
    raylet.silentKill = false; // back: the next attempt reaches it, and its own answer ends the sending
    await until('the raylet killed the incarnation', () => (raylet.killed.some((k) => k.actorId === 'a1' && k.incarnation === 0) ? true : undefined), 10_000);
    forger.unsubscribe();
    assert.ok(h.gcs.snapshot().forgedAnswers >= 2, `forged answers counted: ${h.gcs.snapshot().forgedAnswers}`);
    assert.not.ok(h.logs.some((l) => l.includes('refused epoch') && l.includes('a newer GCS leads')), 'a forged STALE_EPOCH is not taken for a newer leader');
    assert.is((await h.actor('a1')).state, 'DEAD');
    raylet.close();
  } finally {
    await h.close();
  }
});

test('forged heartbeats do not keep a silent node alive: it is DEAD at its timeout, and its secret is forgotten with it', async () => {
  const h = await Harness.start({ heartbeatMs: 50, nodeTimeoutMs: 400 });
  try {
    await h.request('register_node', 'register_node', registration('n1', SECRET));
    let forging = true;
    const forge = (async () => {
      let seq = 1;
      while (forging) {
        await h.request('heartbeat', 'heartbeat', { nodeId: 'n1', seq: seq++, available: {}, secret: FORGED }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await h.events.wait((e) => e.type === 'node_dead' && e.node?.nodeId === 'n1', 'n1 dead', 10_000);
    forging = false;
    await forge;
    // the real raylet comes back after its death: a new node under the same id, with its secret
    const again = await h.request('register_node', 'register_node', registration('n1', SECRET));
    assert.is(again.nodeId, 'n1');
    assert.equal(await h.request('heartbeat', 'heartbeat', { nodeId: 'n1', seq: 1, available: {}, secret: SECRET }), { known: true });
  } finally {
    await h.close();
  }
});

test('a node registered without a secret (an older raylet) is taken as before', async () => {
  const h = await Harness.start();
  try {
    await h.request('register_node', 'register_node', registration('n1', undefined));
    assert.equal(await h.request('heartbeat', 'heartbeat', { nodeId: 'n1', seq: 1, available: {} }), { known: true });
  } finally {
    await h.close();
  }
});

test.run();
