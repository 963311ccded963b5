// 10,000 random and mutated messages, on real processes (a nats-server this spec starts, a GCS
// process, a raylet process with its worker host, an actor): every GCS verb, every raylet verb, an
// actor's call subject, and the subjects processes only listen on (the view, a raylet's load,
// events). Each message is invalid by construction — random bytes, a valid message truncated, a
// wrong or huge protocol version, an unknown type, a body or one of its fields of the wrong type,
// nesting far past the limit. Every request is answered with a typed wire error (never INTERNAL,
// never silence), every process is still up, and the cluster's state is what it was.
import { Packr } from 'msgpackr';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../lib/errors.ts';
import { seededRng } from '../../lib/random.ts';
import { PROTOCOL_VERSION } from '../../protocols/codec.ts';
import { decodeReply } from '../../protocols/reply.ts';
import { RayletVerb, subjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startLocalCluster, type ActorHandle, type LocalCluster } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

const s = suite('fuzz: 10,000 invalid messages on every subject (nats-server, GCS and raylet processes)');
const TOTAL = 10_000;
const IN_FLIGHT = 32;
const sub = subjects('default');
const packr = new Packr({ useRecords: false, moreTypes: false });
const envelope = (t: unknown, b: unknown, v: unknown = PROTOCOL_VERSION): Uint8Array => packr.pack({ v, t, b });
/** The codes a refused message may be answered with: what the intakes say about bad input. */
const TYPED = new Set(['MALFORMED', 'VERSION_MISMATCH', 'UNKNOWN_TYPE', 'INVALID_MESSAGE', 'TOO_LARGE', 'PROTOCOL']);

let server: NatsServerHandle;
let local: LocalCluster;
let bus: Bus;
let counter: ActorHandle<unknown>;
let nodeId: string;

const address = { ip: '127.0.0.1', hostname: 'fuzz', pid: 1 };
const code = { moduleUrl: 'file:///x.mjs', className: 'C', args: [] };
/** A well-formed body per message type: what the mutations start from. */
function templates(node: string): Record<string, { type: string; body: Record<string, unknown> }> {
  return {
    [sub.gcs('register_node')]: { type: 'register_node', body: { nodeId: 'fz01', name: 'fz', labels: {}, taints: {}, resources: { total: { CPU: 10000 }, available: { CPU: 10000 } }, address } },
    [sub.gcs('heartbeat')]: { type: 'heartbeat', body: { nodeId: node, seq: 1, available: {} } },
    [sub.gcs('register_actor')]: { type: 'register_actor', body: { actorId: 'fza1', code, namespace: 'default', options: {} } },
    [sub.gcs('kill_actor')]: { type: 'kill_actor', body: { actorId: 'fza1', noRestart: true } },
    [sub.gcs('get_actor')]: { type: 'get_actor', body: { actorId: 'fza1' } },
    [sub.gcs('list_nodes')]: { type: 'list_nodes', body: { limit: 10 } },
    [sub.gcs('list_actors')]: { type: 'list_actors', body: { limit: 10 } },
    [sub.gcs('list_placement_groups')]: { type: 'list_placement_groups', body: { limit: 10 } },
    [sub.gcs('create_pg')]: { type: 'create_pg', body: { pgId: 'fzp1', namespace: 'default', options: { bundles: [{ CPU: 1 }] } } },
    [sub.gcs('remove_pg')]: { type: 'remove_pg', body: { pgId: 'fzp1' } },
    [sub.gcs('get_pg')]: { type: 'get_pg', body: { pgId: 'fzp1' } },
    [sub.gcs('set_node_labels')]: { type: 'set_node_labels', body: { nodeId: node, set: { fuzz: 'yes' } } },
    [sub.gcs('set_node_taints')]: { type: 'set_node_taints', body: { nodeId: node, add: { fuzz: 'yes:NoExecute' } } },
    [sub.gcs('drain_node')]: { type: 'drain_node', body: { nodeId: node } },
    [sub.gcs('view_snapshot')]: { type: 'view_snapshot', body: { version: 1 } },
    [sub.gcs('actor_died')]: { type: 'actor_died', body: { nodeId: node, actors: [{ actorId: 'fza1', incarnation: 0 }], cause: 'fuzz' } },
    [sub.gcs('list_events')]: { type: 'list_events', body: { limit: 10 } },
    [sub.gcs('explain')]: { type: 'explain', body: { namespace: 'default', options: { numCpus: 1 } } },
    [sub.raylet(node, 'create_actor')]: { type: 'create_actor', body: { actorId: 'fza1', incarnation: 0, code, namespace: 'default', resources: { CPU: 10000 } } },
    [sub.raylet(node, 'kill_actor')]: { type: 'raylet_kill_actor', body: { actorId: 'fza1', incarnation: 0 } },
    [sub.raylet(node, 'prepare_bundle')]: { type: 'prepare_bundle', body: { bundles: [{ pgId: 'fzp1', index: 0, resources: { CPU: 10000 } }] } },
    [sub.raylet(node, 'commit_bundle')]: { type: 'commit_bundle', body: { bundles: [{ pgId: 'fzp1', index: 0 }] } },
    [sub.raylet(node, 'cancel_bundle')]: { type: 'cancel_bundle', body: { bundles: [{ pgId: 'fzp1', index: 0 }] } },
    [sub.raylet(node, 'submit_task')]: { type: 'submit_task', body: { taskId: 'fzt1', code: { moduleUrl: 'file:///x.mjs', functionName: 'f', args: [] }, namespace: 'default', options: {}, hops: 0, attempt: 0 } },
  };
}

/** A value of another msgpack type than `v`: never accepted where `v` was expected. */
function wrongTyped(v: unknown, r: () => number): unknown {
  const options: unknown[] = typeof v === 'string' ? [42, [], true, { x: 1 }] : typeof v === 'number' ? ['x', [], true, { x: 1 }] : typeof v === 'boolean' ? ['yes', 1, []] : Array.isArray(v) ? ['x', 7, { x: 1 }] : ['x', 7, [1], true];
  return options[Math.floor(r() * options.length)];
}

/** An envelope whose body is `levels` arrays deep, built byte by byte (msgpackr's packer would overflow the stack). */
function deepEnvelope(type: string, levels: number): Uint8Array {
  const marker = 'DEEP_BODY_HERE!';
  const packed = envelope(type, marker);
  const at = Buffer.from(packed).indexOf(Buffer.from([0xa0 | marker.length, ...Buffer.from(marker)]));
  const nested = new Uint8Array(levels + 1).fill(0x91); // fixarray of one element, `levels` times
  nested[levels] = 0x01;
  return Uint8Array.from([...packed.subarray(0, at), ...nested, ...packed.subarray(at + 1 + marker.length)]);
}

/** One invalid message for a template, chosen by `r`. */
function mutate(t: { type: string; body: Record<string, unknown> }, r: () => number): Uint8Array {
  const valid = envelope(t.type, t.body);
  switch (Math.floor(r() * 7)) {
    case 0: {
      const n = Math.floor(r() * 300);
      const bytes = new Uint8Array(n);
      for (let i = 0; i < n; i++) bytes[i] = Math.floor(r() * 256);
      // the one random buffer that happens to decode as this very message is astronomically rare;
      // a leading 0xc1 (never used by msgpack) makes it certain
      if (n > 0) bytes[0] = 0xc1;
      return bytes;
    }
    case 1:
      return valid.subarray(0, Math.floor(r() * (valid.length - 1)));
    case 2:
      return envelope(t.type, t.body, [PROTOCOL_VERSION + 1 + Math.floor(r() * 1000), -1, 2 ** 64, 'one', null][Math.floor(r() * 5)]);
    case 3:
      return envelope(['', 'no_such_type', 'reply', 'event', 'heartbeat_x'][Math.floor(r() * 5)], t.body);
    case 4: {
      const keys = Object.keys(t.body);
      if (keys.length === 0) return envelope(t.type, 'not a map');
      const key = keys[Math.floor(r() * keys.length)];
      return envelope(t.type, { ...t.body, [key]: wrongTyped(t.body[key], r) });
    }
    case 5:
      return envelope(t.type, [null, 7, 'body', [t.body]][Math.floor(r() * 4)]);
    default:
      return deepEnvelope(t.type, 600 + Math.floor(r() * 3000));
  }
}

async function snapshot(): Promise<unknown> {
  const c = local.cluster;
  const nodes = (await c.nodes()).map((n) => ({ id: n.nodeId, state: n.state, labels: n.labels, taints: n.taints, total: n.resources.total }));
  const actors = (await c.actors()).map((a) => ({ id: a.actorId, state: a.state, node: a.nodeId }));
  return { nodes, actors, groups: (await c.placementGroups()).length };
}

s.before(async () => {
  server = await startNatsServer({ jetstream: true });
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'only', resources: { CPU: 2 } }] });
  nodeId = (await local.cluster.nodes())[0].nodeId;
  counter = await local.cluster.actor(CounterActor).remote(1);
  await counter.ready({ timeoutMs: 30_000 });
  bus = await connectNatsBus({ servers: server.url });
});

s.after(async () => {
  await bus?.close();
  await local?.stop();
  await server?.stop();
});

s('every request is answered with a typed error; listeners take garbage; processes stay up; state is unchanged', async () => {
  const seed = Number(process.env.ORRERY_FUZZ_SEED ?? 20261124);
  // seeded: a failure names its seed and can be replayed (ORRERY_FUZZ_SEED)
  const r = seededRng(seed);
  const before = await snapshot();
  const requestSubjects = { ...templates(nodeId), [sub.actorCall(counter.actorId)]: { type: 'actor_call', body: { method: 'add', args: [1] } } };
  const requests = Object.entries(requestSubjects);
  // published, not requested: the view (raylets), a raylet's load (other raylets), events (drivers)
  const listened = [sub.view(), sub.raylet(nodeId, RayletVerb.load), sub.event('actor_state'), sub.event('schedule_failed')];
  const codes = new Map<string, number>();
  const bad: string[] = [];
  let sent = 0;
  const one = async (): Promise<void> => {
    while (sent < TOTAL) {
      const i = sent++;
      if (i % 20 === 19) {
        bus.publish(listened[i % listened.length], mutate({ type: 'view_delta', body: { version: 1 } }, r));
        continue;
      }
      const [subject, t] = requests[i % requests.length];
      const data = mutate(t, r);
      try {
        const msg = await bus.request(subject, data, { timeoutMs: 20_000 });
        decodeReply(msg.data, { value: unknown() });
        bad.push(`${subject}: accepted message #${i} (seed ${seed})`);
      } catch (err) {
        const c = err instanceof OrreryError ? err.code : String(err);
        codes.set(c, (codes.get(c) ?? 0) + 1);
        if (!TYPED.has(c)) bad.push(`${subject}: message #${i} answered ${c}: ${(err as Error).message} (seed ${seed})`);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, one));
  assert.equal(bad.slice(0, 5), [], `${bad.length} bad answers`);
  const answered = [...codes.values()].reduce((a, b) => a + b, 0);
  assert.is(answered, TOTAL - Math.floor(TOTAL / 20), 'every request answered');
  for (const code of ['MALFORMED', 'VERSION_MISMATCH', 'UNKNOWN_TYPE', 'INVALID_MESSAGE']) assert.ok((codes.get(code) ?? 0) > 0, `some ${code}: ${JSON.stringify(Object.fromEntries(codes))}`);

  // every process is up and serving, and nothing changed
  assert.equal(await snapshot(), before);
  assert.is(await counter.call('add', 1), 2, 'the actor answers, its state intact');
  const more = await local.cluster.actor(CounterActor).remote(10);
  await more.ready({ timeoutMs: 30_000 });
  assert.is(await more.call('add', 5), 15, 'the GCS places and the raylet creates');
  await more.kill();
});

s.run();
