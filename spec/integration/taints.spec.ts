// Labels and taints that change at run time, on real processes (seed 003 §2.2): `orrery taint` and
// `orrery label` against a GCS and three raylet processes. A taint stops new placements on its node
// and reaches the cluster view within one sync period; removing it restores them; NoSchedule leaves
// running actors in place, NoExecute moves those that do not tolerate it; a label change moves where
// the next selector-constrained actor lands.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { Exists } from '../../lib/index.ts';
import { decode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import type { ViewDelta } from '../../protocols/messages/view.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import type { ActorEvictedEvent } from '../../runtime/client/index.ts';
import { startLocalCluster, type ActorHandle, type ActorInfo, type ActorOptions, type LocalCluster, type NodeEvent } from '../../runtime/index.ts';
import { JournalActor, type Journal } from '../runtime/client/failover-actors.ts';
import { orrery } from '../runtime/cli/process.ts';

const WAIT_MS = 20_000;
/** The GCS publishes view deltas at most this often (runtime/gcs/view.ts): one sync period. */
const SYNC_PERIOD_MS = 100;

let local: LocalCluster;
let ids: Record<string, string>;
let bus: Bus;
const views: { at: number; delta: ViewDelta }[] = [];

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: ['a', 'b', 'c'].map((name) => ({ name, resources: { CPU: 4 } })) });
  ids = Object.fromEntries((await local.cluster.nodes()).map((n) => [n.name, n.nodeId]));
  bus = await connectNatsBus({ servers: local.address });
  bus.subscribe(subjects('default').view(), (m) => views.push({ at: Date.now(), delta: decode(m.data, { registry: { view_delta: messages.view_delta } }).body }));
  await bus.flush();
});
test.after(async () => {
  await bus?.close();
  await local?.stop();
});

const env = () => ({ ORRERY_ADDRESS: local.address });
const nameOf = (nodeId: string | undefined) => Object.entries(ids).find(([, id]) => id === nodeId)?.[0];
const stateOf = (h: ActorHandle<unknown>, pass: (i: ActorInfo) => boolean) => firstValueFrom(h.state$.pipe(filter(pass), timeout(WAIT_MS)));

async function cli(...args: string[]): Promise<string> {
  const r = await orrery(args, env());
  assert.is(r.code, 0, `orrery ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

async function placed(opts: ActorOptions): Promise<{ handle: ActorHandle<Journal>; node: string }> {
  const handle = await local.cluster.actor(JournalActor).options(opts).remote();
  const info = await handle.ready({ timeoutMs: WAIT_MS });
  return { handle, node: nameOf(info.nodeId)! };
}

/** The first view delta at or after `since` whose upsert of the node passes. */
async function viewOf(nodeId: string, since: number, pass: (taints: Record<string, string>, labels: Record<string, string>) => boolean): Promise<number> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const hit = views.find((v) => v.at >= since && v.delta.upserts.some((u) => u.nodeId === nodeId && pass(u.taints, u.labels)));
    if (hit) return hit.at;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no view delta for ${nodeId}`);
}

test('orrery taint --add keeps new work off the node at once and reaches the cluster view within one sync period; --remove lets it back', async () => {
  const changed = firstValueFrom(local.cluster.events$.pipe(filter((e): e is NodeEvent => e.type === 'node_taints_changed' && e.node.nodeId === ids.b), timeout(WAIT_MS)));
  const sent = Date.now();
  assert.is(await cli('taint', '--node-name', 'b', '--add', 'dedicated=ml'), `node b (${ids.b}): taints dedicated=ml`);
  const event = await changed;
  assert.equal(event.node.taints, { dedicated: 'ml' });
  const inView = await viewOf(ids.b, sent, (t) => t.dedicated === 'ml');
  assert.ok(inView - event.time <= SYNC_PERIOD_MS + 50, `in the view ${inView - event.time} ms after the change`);

  const onB = await local.cluster.actor(JournalActor).options({ labelSelector: { 'orrery.io/node-name': 'b' } }).remote();
  const waiting = await stateOf(onB, (i) => i.pendingReason !== undefined);
  assert.is(waiting.pendingReason, "0/3 nodes are available: 2 node(s) didn't match label selector orrery.io/node-name in (b), 1 node(s) had untolerated taint {dedicated: ml}.");
  const spread = await Promise.all([1, 2, 3, 4].map(() => placed({ schedulingStrategy: 'SPREAD' })));
  assert.ok(spread.every((p) => p.node !== 'b'), `SPREAD keeps off the tainted node: ${spread.map((p) => p.node).join(',')}`);
  const tolerant = await placed({ labelSelector: { 'orrery.io/node-name': 'b' }, tolerations: { dedicated: Exists() } });
  assert.is(tolerant.node, 'b', 'a toleration lets work on');

  const removedAt = Date.now();
  assert.is(await cli('taint', '--node-id', ids.b, '--remove', 'dedicated'), `node b (${ids.b}): taints -`);
  assert.is(nameOf((await stateOf(onB, (i) => i.state === 'ALIVE')).nodeId), 'b', 'the waiting actor lands once the taint is gone');
  await viewOf(ids.b, removedAt, (t) => !('dedicated' in t));
  for (const h of [onB, tolerant.handle, ...spread.map((s) => s.handle)]) await h.kill();
});

test('NoSchedule leaves running actors in place; NoExecute moves those that do not tolerate it, counting a restart', async () => {
  const pin = { labelSelector: { 'orrery.io/node-name': 'in(a,c)' } };
  const plain = await placed({ ...pin, schedulingStrategy: 'SPREAD', maxRestarts: 1 });
  const host = plain.node;
  const tolerant = await placed({ labelSelector: { 'orrery.io/node-name': host }, tolerations: { maintenance: Exists() } });
  const plainPid = (await plain.handle.call('where')).pid;

  await cli('taint', '--node-name', host, '--add', 'maintenance=soon');
  await new Promise((r) => setTimeout(r, SYNC_PERIOD_MS * 2));
  const untouched = await plain.handle.info();
  assert.equal([untouched.state, nameOf(untouched.nodeId), untouched.numRestarts], ['ALIVE', host, 0], 'NoSchedule: still running where it was');

  const evicted = firstValueFrom(local.cluster.events$.pipe(filter((e): e is ActorEvictedEvent => e.type === 'actor_evicted' && e.actor.actorId === plain.handle.actorId), timeout(WAIT_MS)));
  assert.is(await cli('taint', '--node-name', host, '--add', 'maintenance=now:NoExecute'), `node ${host} (${ids[host]}): taints maintenance=now:NoExecute`);
  const e = await evicted;
  assert.is(e.reason, 'no_execute_taint');
  assert.is(e.message, `evicted by taint {maintenance: now} (NoExecute) on node ${ids[host]}`);
  const moved = await stateOf(plain.handle, (i) => i.state === 'ALIVE' && i.numRestarts === 1);
  assert.is(nameOf(moved.nodeId), host === 'a' ? 'c' : 'a', 'restarted on the other node its selector allows');
  assert.is.not((await plain.handle.call('where')).pid, plainPid);
  const stayed = await tolerant.handle.info();
  assert.equal([stayed.state, nameOf(stayed.nodeId), stayed.numRestarts], ['ALIVE', host, 0], 'the tolerating actor stays');
  await cli('taint', '--node-name', host, '--remove', 'maintenance');
  await plain.handle.kill();
  await tolerant.handle.kill();
});

test('orrery label changes where the next selector-constrained actor lands; running actors stay', async () => {
  assert.is(await cli('label', '--node-name', 'c', '--set', 'disk=ssd,tier=1'), `node c (${ids.c}): labels disk=ssd,tier=1`);
  const first = await placed({ labelSelector: { disk: 'ssd' } });
  assert.is(first.node, 'c');
  await cli('label', '--node-name', 'c', '--remove', 'disk');
  await cli('label', '--node-id', ids.a, '--set', 'disk=ssd');
  const second = await placed({ labelSelector: { disk: 'ssd' } });
  assert.is(second.node, 'a');
  const stayed = await first.handle.info();
  assert.equal([nameOf(stayed.nodeId), stayed.numRestarts], ['c', 0], 'a label change does not move running actors by default');
  const json = JSON.parse(await cli('label', '--node-id', ids.a, '--remove', 'disk', '--json')) as { labels: Record<string, string> };
  assert.not.ok('disk' in json.labels);
  await cli('label', '--node-name', 'c', '--remove', 'tier');
  await first.handle.kill();
  await second.handle.kill();
});

test.run();
