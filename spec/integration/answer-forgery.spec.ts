// A peer with node credentials forges the GCS's answers to a raylet, on real processes (a nats-server
// with roles, a GCS process, a raylet and its worker host). Every raylet and worker host shares the
// node role's inbox, `_INBOX.<cluster>.node`, so such a peer reads every answer the GCS sends a
// raylet and may publish into that inbox. The GCS is frozen (SIGSTOP), so the raylet's heartbeats go
// unanswered and its fence must engage; meanwhile the peer answers `known: true` on every reply
// subject it has seen and on the next hundred a counter would give. When reply subjects could be
// told in advance (a counter, tokens handed out again), one of those answers acknowledged a
// heartbeat and the fence never came: the frozen GCS could have declared the node dead and started
// its actors elsewhere while the old incarnations still answered. A raylet's requests to the GCS
// now have reply subjects that are random and used once (runtime/bus/reply-tokens.ts).
//
// A peer that does learn a reply subject in time — in a NATS cluster, one that reads an answer on its
// own server and races it to the raylet's — still cannot answer in the GCS's place: the GCS proves
// each answer under the node's secret and the request's nonce (protocols/answer-proof.ts), and a
// raylet that has seen a proof takes no answer without one. The spec plays that peer with the gcs
// role's credentials, reading the heartbeats themselves while the GCS is frozen.
//
// The other way round, a peer answers the GCS's kill_actor in a raylet's name while that raylet is
// cut off from the bus for a moment (through a TCP proxy the spec cuts), so the kill reaches only
// the peer. The answer lacks the node's secret: the GCS keeps sending the kill, and the raylet,
// back on the bus, gets it and stops the actor. When such an answer ended the sending, the killed
// actor went on answering calls once its raylet was back — DEAD in the GCS's table.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeCall } from '../../protocols/fast-path.ts';
import { decodeReply, encodeOk } from '../../protocols/reply.ts';
import { unknown } from '../../protocols/validate.ts';
import { subjects } from '../../protocols/subjects.ts';
import { credsFile } from '../../runtime/auth/init.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { frozen } from '../helpers/frozen.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { gcsPid as findGcsPid } from '../helpers/gcs-pid.ts';
import { outcome } from '../helpers/outcome.ts';
import { until } from '../helpers/until.ts';

// the GCS process reads these (runtime/gcs/flags.ts); the raylet learns both from its registration
// answer: a heartbeat every 200 ms, a fence lease of 0.6 × 2,000 ms
process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '2000';

const s = suite('a node-role peer forging the GCS answers to a raylet (nats-server with roles, real processes)');
const sub = subjects('default');
const INBOX = '_INBOX.default.node.';

let local: LocalCluster;
let gcsPid: number | undefined;
const lines: string[] = [];
const buses: Bus[] = [];
let proxy: TcpProxy | undefined;
let cutOff: RuntimeProcess | undefined;

s.before(async () => {
  local = await startLocalCluster({ transport: 'nats', auth: true, nodes: [{ name: 'a', resources: { CPU: 2 } }], onOutput: (line) => lines.push(line) });
  gcsPid = findGcsPid();
});
s.after(async () => {
  if (gcsPid !== undefined) process.kill(gcsPid, 'SIGCONT'); // never leave it frozen, whatever failed
  for (const b of buses) await b.close().catch(() => undefined);
  proxy?.mend();
  await cutOff?.stop();
  await proxy?.close();
  await local?.stop();
});

const nodeBus = async (role: 'node' | 'gcs' = 'node'): Promise<Bus> => {
  const b = await connectNatsBus({ servers: local.address, creds: credsFile(local.authDir!, role), connectTimeoutMs: 5000 });
  buses.push(b);
  return b;
};

s('while the GCS is frozen, known: true answers forged into the node inbox acknowledge no heartbeat: the raylet fences, and lifts it only once the GCS answers again', async () => {
  assert.ok(gcsPid !== undefined, 'found the GCS process');
  const counter = await local.cluster.actor(CounterActor).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  const peer = await nodeBus();
  const probe = await nodeBus();

  // the peer watches the node inbox: every answer the GCS sends the raylet, and its subject
  const seen = new Set<string>();
  const beats: string[] = []; // the subjects of the heartbeat answers among them
  const watch = peer.subscribe(`${INBOX}>`, (m) => {
    seen.add(m.subject);
    const value = (() => {
      try {
        return decodeReply(m.data, { value: unknown() }) as { known?: unknown; heartbeatMs?: unknown };
      } catch {
        return undefined;
      }
    })();
    if (typeof value?.known === 'boolean' && value.heartbeatMs === undefined) beats.push(m.subject);
  });
  await until('the peer to see the GCS answer heartbeats', () => (beats.length >= 3 ? true : undefined), 30_000);
  const call = () => probe.request(sub.actorCall(counter.actorId), encodeCall('add', [0]), { timeoutMs: 2000 });
  assert.is(await outcome(call), 'ok', 'the actor answers before the freeze');

  process.kill(gcsPid!, 'SIGSTOP');
  // every subject seen, and the first hundred tokens a counter would give under each inbox seen
  watch.unsubscribe(); // from here on the inbox would hold the peer's own forgeries
  const targets = new Set(seen);
  for (const subject of seen) {
    const prefix = subject.slice(0, subject.lastIndexOf('.') + 1);
    for (let i = 0; i < 100; i++) targets.add(prefix + i.toString(36));
  }
  let forged = 0;
  const forge = setInterval(() => {
    for (const target of targets) {
      peer.publish(target, encodeOk({ known: true }));
      forged++;
    }
  }, 10);
  try {
    await until('the GCS frozen', () => (frozen(gcsPid!) ? true : undefined), 10_000);
    const fencedAt = lines.length;
    // fenced: the worker host unsubscribed the actor's subject, so a call meets no responders
    await until('the raylet to fence while the GCS is frozen', async () => ((await outcome(call)) === 'NO_RESPONDERS' ? true : undefined), 30_000);
    assert.ok(forged > 0, 'the peer forged answers throughout');
    assert.ok(lines.slice(fencedAt).some((l) => /fenced — no heartbeat acknowledged/.test(l)), 'the raylet says it fenced');
    assert.not.ok(
      lines.slice(fencedAt).some((l) => /fence lifted/.test(l)),
      'no forged answer lifted the fence',
    );
  } finally {
    clearInterval(forge);
    process.kill(gcsPid!, 'SIGCONT');
  }
  // the GCS answers again: a real acknowledgement lifts the fence, and the actor answers
  assert.is(await until('the actor to answer after SIGCONT', () => counter.call('add', 1).catch(() => undefined), 60_000), 2);
  // the heartbeat answers the peer saw came to random subjects, each used once
  const tokens = beats.map((subject) => subject.slice(subject.lastIndexOf('.') + 1));
  assert.equal(
    tokens.filter((t) => !/^R[A-Za-z0-9_-]{22}$/.test(t)),
    [],
    'every heartbeat answered on a random token',
  );
  assert.is(new Set(tokens).size, tokens.length, 'none used twice');
  await counter.kill();
});

s('while the GCS is frozen, a peer that reads each heartbeat and answers it at once, known: true but without the proof, acknowledges none: the raylet fences', async () => {
  const counter = await local.cluster.actor(CounterActor).options({ labelSelector: { 'orrery.io/node-name': 'a' } }).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  const probe = await nodeBus();
  const call = () => probe.request(sub.actorCall(counter.actorId), encodeCall('add', [0]), { timeoutMs: 2000 });
  await until('the actor answering (the fence of the first test lifted)', async () => ((await outcome(call)) === 'ok' ? true : undefined), 60_000);
  const peer = await nodeBus('gcs');
  let answered = 0;
  process.kill(gcsPid!, 'SIGSTOP');
  const forger = peer.subscribe(sub.gcs('heartbeat'), (m) => {
    answered++;
    m.respond(encodeOk({ known: true }));
  });
  const fencedAt = lines.length;
  try {
    await until('the GCS frozen', () => (frozen(gcsPid!) ? true : undefined), 10_000);
    await until('the raylet to fence while the GCS is frozen', async () => ((await outcome(call)) === 'NO_RESPONDERS' ? true : undefined), 30_000);
    assert.ok(answered > 0, 'the peer answered heartbeats');
    assert.ok(
      lines.slice(fencedAt).some((l) => /the answer to heartbeat carries no proof, though the GCS proves its answers: dropped/.test(l)),
      'the raylet says why it dropped them',
    );
    assert.not.ok(
      lines.slice(fencedAt).some((l) => /fence lifted/.test(l)),
      'no answer without the proof lifted the fence',
    );
  } finally {
    forger.unsubscribe();
    process.kill(gcsPid!, 'SIGCONT');
  }
  assert.is(await until('the actor to answer after SIGCONT', () => counter.call('add', 1).catch(() => undefined), 60_000), 2);
  await counter.kill();
});

s("a raylet cut off from the bus as its actor is killed, a peer answering the kill in its name: the GCS sends it again, and once back the raylet stops the actor", async () => {
  proxy = await startTcpProxy(local.address);
  cutOff = await spawnRuntimeProcess('raylet', ['--address', proxy.url, '--node-name', 'b', '--num-cpus', '2', '--creds', credsFile(local.authDir!, 'node')]);
  const b = await until('node b ALIVE', async () => (await local.cluster.nodes()).find((n) => n.name === 'b' && n.state === 'ALIVE'), 30_000);
  const counter = await local.cluster.actor(CounterActor).options({ labelSelector: { 'orrery.io/node-name': 'b' } }).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  const probe = await nodeBus();
  const call = () => probe.request(sub.actorCall(counter.actorId), encodeCall('add', [0]), { timeoutMs: 2000 });
  assert.is(await outcome(call), 'ok', 'the actor answers before the cut');

  const peer = await nodeBus();
  let forged = 0;
  const forger = peer.subscribe(sub.raylet(b.nodeId, 'kill_actor'), (m) => {
    forged++;
    m.respond(encodeOk({}));
  });
  const acceptedBefore = proxy.accepted;
  const dropped = proxy.cut();
  assert.ok(dropped >= 1, 'the raylet was connected through the proxy');
  try {
    await counter.kill();
    // the GCS sends the kill again (after 250 ms, then doubling) although the peer answered it
    await until('the kill sent again after the forged answer', () => (forged >= 2 ? true : undefined), 30_000);
  } finally {
    proxy.mend();
  }
  try {
    // back on the bus (its clients reconnect every 250 ms and subscribe again as they do), the raylet
    // gets a kill and stops the actor
    await until('every connection cut back through the proxy', () => (proxy!.accepted >= acceptedBefore + dropped ? true : undefined), 30_000);
    await until('the killed actor to stop answering', async () => ((await outcome(call)) === 'NO_RESPONDERS' ? true : undefined), 30_000);
    const info = (await local.cluster.actors()).find((a) => a.actorId === counter.actorId)!;
    assert.is(info.state, 'DEAD');
  } finally {
    forger.unsubscribe();
  }
});

s.run();
