// Placement groups on real processes: one nats-server, a GCS process and raylet processes
// (startLocalCluster, transport 'nats'), actors in worker host processes; for the raylet killed in
// the middle of the two-phase commit, a GCS in this process (startGcs with `inspect`) and raylet
// processes started here, in a cluster of their own on the same server. Everything is asserted
// through the public client API (ready, info, remove, placementGroups, nodes, events$,
// scheduleFailed$) and, for what a raylet holds, its own load reports. Clusters of the same kind
// freeze a raylet (SIGSTOP) between prepare and commit — the commit reaches it after the GCS gave
// the round up — and one holding a committed bundle past its node timeout; what a raylet holds is
// then shown by a group that needs every CPU of every node. The same behaviours against
// stub raylets on the memory bus: spec/runtime/gcs/placement-groups.spec.ts.
//
// One cluster is shared: every test removes what it created (after.each) and the next starts from a
// cluster with nothing reserved. Nodes added by a test stay (they are then ALIVE nodes like the
// others), so the tests that need the base shape (the 400 CPUs the concurrency test fills exactly)
// come first.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, Subscription, timeout } from 'rxjs';
import type { InspectionEvent } from 'xstate';
import { Exists, placementGroupStrategy } from '../../lib/index.ts';
import { UNITS_PER_WHOLE } from '../../lib/resources/quantity.ts';
import { decode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import type { RayletLoad } from '../../protocols/messages/task.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startGcs, type GcsHandle } from '../../runtime/gcs/index.ts';
import type { PlacementGroupContext } from '../../runtime/gcs/placement-group.machine.ts';
import { rayletFlags, resolveNodeSpec } from '../../runtime/local/node-spec.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import {
  ActorDiedError,
  connect,
  PlacementGroupRemovedError,
  startLocalCluster,
  type ActorHandle,
  type ActorInfo,
  type ActorStateEvent,
  type ClientPlacementGroupOptions,
  type Cluster,
  type ClusterEvent,
  type LocalCluster,
  type NodeEvent,
  type NodeInfo,
  type NodeSpec,
  type PlacementGroup,
  type PlacementGroupInfo,
  type PlacementGroupStateEvent,
  type ScheduleFailedEvent,
} from '../../runtime/index.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { JournalActor, type Journal } from '../runtime/client/failover-actors.ts';

const HEARTBEAT_MS = 200;
const U = UNITS_PER_WHOLE;
// The GCS's default. Shorter detection (1.5 s) made a raylet starved of CPU by other work on the
// machine (load average 12 on two cores) miss its heartbeats during the 200-group burst once in
// about fifteen runs: declared DEAD, it registered again, and the test saw a 3-node cluster.
const NODE_TIMEOUT_MS = 3000;
const WAIT_MS = 20_000;
// the GCS process reads these (runtime/gcs/flags.ts); the raylets learn the heartbeat from it
process.env.ORRERY_HEARTBEAT_MS = String(HEARTBEAT_MS);
process.env.ORRERY_NODE_TIMEOUT_MS = String(NODE_TIMEOUT_MS);

// Four raylets with different resources and labels: 400 CPUs in all (the concurrency test fills
// them exactly), two GPUs (n2, n3), zones a–d, SSDs on n1 and n4.
const BASE: NodeSpec[] = [
  { name: 'n1', resources: { CPU: 160 }, labels: { zone: 'a', disk: 'ssd' } },
  { name: 'n2', resources: { CPU: 100, GPU: 1 }, labels: { zone: 'b', accel: 'v100' } },
  { name: 'n3', resources: { CPU: 80, GPU: 1 }, labels: { zone: 'c', accel: 'v100' } },
  { name: 'n4', resources: { CPU: 60 }, labels: { zone: 'd', disk: 'ssd' } },
];

let server: NatsServerHandle;
let local: LocalCluster;
let cluster: Cluster;
/** node name → node id, base nodes and those added by tests */
const ids: Record<string, string> = {};
/** Every event since the cluster started, in arrival order (a wait looks here before it subscribes). */
const seen: ClusterEvent[] = [];
let recording: Subscription | undefined;
/** Each raylet's own latest load report (raylet.<nodeId>.load): what it has free, in units, as it counts. */
const loads = new Map<string, RayletLoad>();
let loadBus: Bus;
/** Groups created by the current test; after.each removes those not REMOVED. */
let created: PlacementGroup[] = [];

test.before(async () => {
  server = await startNatsServer();
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: BASE });
  cluster = local.cluster;
  recording = cluster.events$.subscribe((e) => seen.push(e));
  loadBus = await connectNatsBus({ servers: server.url, name: 'pg-spec-loads' });
  // every raylet's reports, from before any node starts: a raylet added later may report only once
  // (when the GCS puts a waiting group's bundles on it at once), before a per-node subscription
  // made after addNode() returned would be in place
  const anyRayletLoad = subjects(cluster.name).raylet('NODE', 'load').replace('.NODE.', '.*.');
  loadBus.subscribe(anyRayletLoad, (m) => {
    const report = decode(m.data, { registry: { raylet_load: messages.raylet_load } }).body;
    if ((loads.get(report.nodeId)?.seq ?? -1) < report.seq) loads.set(report.nodeId, report);
  });
  await loadBus.flush();
  for (const n of await cluster.nodes()) track(n);
});

// uvu drops an error thrown by an after.each hook that runs after a failed test (and stops the
// suite), so a cleanup that fails is reported by the next test instead.
let leftover: string | undefined;
/** Nodes a test killed on purpose (and false deaths already reported): any other node_dead is a false death (a starved raylet), which fails the test it happened in. */
const killedOnPurpose = new Set<string>();
test.before.each(() => {
  const left = leftover;
  leftover = undefined;
  if (left !== undefined) throw new Error(`the previous test's cleanup failed: ${left}`);
});
test.after.each(async () => {
  const groups = created;
  created = [];
  try {
    const falseDeaths = seen.filter((e): e is NodeEvent => e.type === 'node_dead' && !killedOnPurpose.has(e.node.nodeId));
    for (const e of falseDeaths) killedOnPurpose.add(e.node.nodeId);
    if (falseDeaths.length > 0) throw new Error(`nodes declared DEAD without being killed (missed heartbeats for ${NODE_TIMEOUT_MS} ms): ${falseDeaths.map((e) => e.node.name).join(', ')}`);
    await Promise.all(groups.map((pg) => pg.remove()));
    // the removed groups' actors die on their raylets; their nodes are whole again once they have
    await untilWhole('every node whole after the test');
  } catch (err) {
    leftover = err instanceof Error ? err.message : String(err);
  }
});

test.after(async () => {
  recording?.unsubscribe();
  await loadBus?.close();
  await local?.stop();
  await server?.stop();
});

// ---- helpers ----

const nameOf = (nodeId: string | undefined): string | undefined => Object.entries(ids).find(([, id]) => id === nodeId)?.[0];
const namesOf = (info: PlacementGroupInfo): string[] => info.bundles.map((b) => nameOf(b.nodeId) ?? `?${b.nodeId}`);
const cpus = (n: number, each = 1): Record<string, number>[] => Array.from({ length: n }, () => ({ CPU: each }));
const alive = async (): Promise<NodeInfo[]> => (await cluster.nodes()).filter((n) => n.state === 'ALIVE');
const isBundleResource = (name: string): boolean => name.includes('_group_');
/** A placement group's schedule-failed message: "0/N nodes are available for bundle i: …" (or "for the whole group (STRICT_PACK): …"). */
const unavailable = (n: number): RegExp => new RegExp(`^0/${n} nodes are available for (bundle \\d+|the whole group \\(STRICT_PACK\\)): `);

/** Names a node (its raylet's load reports are followed from the start, in before()). */
function track(node: NodeInfo): NodeInfo {
  ids[node.name] = node.nodeId;
  return node;
}

async function addNode(spec: Parameters<LocalCluster['addNode']>[0]): Promise<NodeInfo> {
  return track(await local.addNode(spec));
}

async function create(opts: ClientPlacementGroupOptions): Promise<PlacementGroup> {
  const pg = await cluster.placementGroup(opts);
  created.push(pg);
  return pg;
}

/** The first event (already seen or still to come) that passes. */
function event<E extends ClusterEvent>(pass: (e: ClusterEvent) => e is E, what: string): Promise<E> {
  const hit = seen.find(pass);
  if (hit) return Promise.resolve(hit as E);
  return firstValueFrom(cluster.events$.pipe(filter(pass), timeout({ first: WAIT_MS, with: () => Promise.reject(new Error(`no ${what} within ${WAIT_MS} ms`)) })));
}

const scheduleFailed = (pgId: string): Promise<ScheduleFailedEvent> =>
  event((e): e is ScheduleFailedEvent => e.type === 'schedule_failed' && e.target.kind === 'placement_group' && e.target.id === pgId, `schedule_failed for ${pgId}`);

const pgState = (pgId: string, pass: (info: PlacementGroupInfo) => boolean, what: string, afterSeq = -1): Promise<PlacementGroupStateEvent> =>
  event((e): e is PlacementGroupStateEvent => e.type === 'placement_group_state' && e.placementGroup.id === pgId && (e.seq ?? 0) > afterSeq && pass(e.placementGroup), `${pgId} ${what}`);

const actorState = (actorId: string, pass: (info: ActorInfo) => boolean, what: string, afterSeq = -1): Promise<ActorStateEvent> =>
  event((e): e is ActorStateEvent => e.type === 'actor_state' && e.actor.actorId === actorId && (e.seq ?? 0) > afterSeq && pass(e.actor), `${actorId} ${what}`);

/** Polls a condition on the cluster (a question to the GCS each time), bounded. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The ALIVE nodes that hold anything, with what: as the GCS counts (available ≠ total, or bundle
 * resources in the total) and as the node's raylet counts (its last load report: free ≠ total, or
 * bundle resources). A raylet that never reported has had nothing taken since it started.
 */
async function reserved(nodes?: NodeInfo[]): Promise<string[]> {
  const out: string[] = [];
  for (const n of nodes ?? (await alive())) {
    const { total, available } = n.resources;
    const names = new Set([...Object.keys(total), ...Object.keys(available)]);
    const off = [...names].filter((r) => (total[r] ?? 0) !== (available[r] ?? 0) || isBundleResource(r)).map((r) => `${r} ${available[r] ?? 0}/${total[r] ?? 0}`);
    const report = loads.get(n.nodeId);
    if (report) {
      for (const r of new Set([...Object.keys(total), ...Object.keys(report.available)])) {
        if (isBundleResource(r)) {
          if (r in report.available) off.push(`raylet: ${r}`);
        } else if ((report.available[r] ?? 0) !== Math.round((total[r] ?? 0) * U)) off.push(`raylet: ${r} ${(report.available[r] ?? 0) / U} free of ${total[r] ?? 0}`);
      }
    }
    if (off.length > 0) out.push(`${n.name}: ${off.join(', ')}`);
  }
  return out;
}

/** Waits until no live node holds anything, as the GCS and as its raylet count. */
async function untilWhole(what: string): Promise<void> {
  let last: string[] = [];
  await until(async () => (last = await reserved()).length === 0, what).catch((err: Error) => {
    throw new Error(`${err.message}; still held: ${last.join('; ')}`);
  });
}

/**
 * Waits until every live raylet's own count of its free raw resources (CPU, GPU, …; its last load
 * report) is what the GCS says is available there: the raylets hold what the GCS reserved.
 */
async function untilRayletsAgree(what: string): Promise<void> {
  let last: string[] = [];
  const check = async (): Promise<boolean> => {
    last = [];
    for (const n of await alive()) {
      const report = loads.get(n.nodeId);
      for (const r of Object.keys(n.resources.total).filter((name) => !isBundleResource(name))) {
        const raylet = report ? (report.available[r] ?? 0) : Math.round(n.resources.total[r] * U);
        const gcs = Math.round((n.resources.available[r] ?? 0) * U);
        if (raylet !== gcs) last.push(`${n.name} ${r}: raylet ${raylet / U} free, GCS ${gcs / U}`);
      }
    }
    return last.length === 0;
  };
  await until(check, what).catch((err: Error) => {
    throw new Error(`${err.message}: ${last.join('; ')}`);
  });
}

async function assertNothingReserved(why: string): Promise<void> {
  assert.equal(await reserved(), [], `${why}: every node's available equals its total, no bundle resources`);
}

/** Each bundle of `info` is committed on its node: its bundle resources are in the node's total, its raw resources taken (on the raylet too). */
async function assertCommitted(info: PlacementGroupInfo): Promise<void> {
  const nodes = await alive();
  const taken = new Map<string, Record<string, number>>();
  for (const b of info.bundles) {
    const node = nodes.find((n) => n.nodeId === b.nodeId);
    assert.ok(node, `bundle ${b.index} is on a live node (${b.nodeId})`);
    for (const [r, amount] of Object.entries(b.resources)) {
      assert.is(node!.resources.total[`${r}_group_${b.index}_${info.id}`], amount, `${node!.name} has ${r}_group_${b.index}_${info.id}`);
      const sum = taken.get(node!.nodeId) ?? {};
      sum[r] = (sum[r] ?? 0) + amount;
      taken.set(node!.nodeId, sum);
    }
  }
  for (const [nodeId, sum] of taken) {
    const node = nodes.find((n) => n.nodeId === nodeId)!;
    for (const [r, amount] of Object.entries(sum)) {
      assert.is(node.resources.total[`${r}_group_${info.id}`], amount, `${node.name}: ${r}_group_${info.id} is the sum of its bundles`);
      assert.is((node.resources.total[r] ?? 0) - (node.resources.available[r] ?? 0), amount, `${node.name}: ${amount} ${r} taken by the bundles`);
    }
  }
  await untilRayletsAgree(`the raylets hold the bundles of ${info.id}`);
}

async function inBundle(pg: PlacementGroup, bundleIndex: number, extra: { maxRestarts?: number } = {}): Promise<ActorHandle<Journal>> {
  return cluster.actor(JournalActor).options({ numCpus: 1, schedulingStrategy: placementGroupStrategy(pg, bundleIndex), ...extra }).remote();
}

// ---- 1. each strategy: fits / does not fit ----

const fitting: { strategy: 'PACK' | 'SPREAD' | 'STRICT_PACK' | 'STRICT_SPREAD'; bundles: Record<string, number>[]; check: (names: string[]) => void }[] = [
  { strategy: 'PACK', bundles: cpus(3, 10), check: (n) => assert.is(new Set(n).size, 1, `PACK puts bundles that fit on one node together: ${n}`) },
  // 100 CPUs and a GPU on one node: only n2
  { strategy: 'STRICT_PACK', bundles: [{ CPU: 50 }, { CPU: 50 }, { GPU: 1 }], check: (n) => assert.equal(n, ['n2', 'n2', 'n2']) },
  { strategy: 'SPREAD', bundles: cpus(4), check: (n) => assert.equal([...n].sort(), ['n1', 'n2', 'n3', 'n4'], 'SPREAD uses every node') },
  // the two GPUs are on n2 and n3
  { strategy: 'STRICT_SPREAD', bundles: [{ GPU: 1 }, { GPU: 1 }], check: (n) => assert.equal([...n].sort(), ['n2', 'n3']) },
];

for (const c of fitting) {
  test(`${c.strategy} that fits: ready() resolves CREATED with its bundles committed on nodes that satisfy the strategy`, async () => {
    const pg = await create({ strategy: c.strategy, bundles: c.bundles });
    const info = await pg.ready({ timeoutMs: WAIT_MS });
    assert.is(info.state, 'CREATED');
    assert.is(info.strategy, c.strategy);
    assert.equal(info.bundles.map((b) => b.resources), c.bundles);
    c.check(namesOf(info));
    await assertCommitted(info);
    assert.equal((await pg.info()).bundles, info.bundles);
    const listed = (await cluster.placementGroups()).find((g) => g.id === pg.id);
    assert.is(listed?.state, 'CREATED');
  });
}

const unfitting: { strategy: 'PACK' | 'SPREAD' | 'STRICT_PACK' | 'STRICT_SPREAD'; bundles: Record<string, number>[]; why: RegExp }[] = [
  { strategy: 'PACK', bundles: [{ CPU: 200 }], why: /for bundle 0: 4 node\(s\) had less total CPU than requested\.$/ },
  { strategy: 'STRICT_PACK', bundles: cpus(2, 100), why: /for the whole group \(STRICT_PACK\): 4 node\(s\) had less total CPU than requested\.$/ },
  // two bundles take the two GPUs; the third finds none
  { strategy: 'SPREAD', bundles: [{ GPU: 1 }, { GPU: 1 }, { GPU: 1 }], why: /for bundle 2: 2 node\(s\) had insufficient GPU, 2 node\(s\) had less total GPU than requested\.$/ },
  { strategy: 'STRICT_SPREAD', bundles: cpus(5), why: /for bundle 4: 4 node\(s\) already held another bundle of the group\.$/ },
];

for (const c of unfitting) {
  test(`${c.strategy} that does not fit: PENDING, a schedule_failed event for the group ("0/4 nodes are available for …: …"), nothing reserved`, async () => {
    const pg = await create({ strategy: c.strategy, bundles: c.bundles });
    const failed = await scheduleFailed(pg.id);
    assert.equal(failed.target, { kind: 'placement_group', id: pg.id });
    assert.match(failed.message, unavailable(4), failed.message);
    assert.match(failed.message, c.why, failed.message);
    const info = await pg.info();
    assert.is(info.state, 'PENDING');
    assert.is(info.pendingReason, failed.message);
    assert.ok(info.bundles.every((b) => b.nodeId === undefined), 'no bundle placed');
    await assertNothingReserved('a group that does not fit');
    const timedOut = await pg.ready({ timeoutMs: 200 }).then(() => undefined, (e: unknown) => e);
    assert.is((timedOut as { code?: string })?.code, 'TIMEOUT', 'ready() waits');
  });
}

// ---- 8. bad input at the call ----

test('bad input at the call: zero or negative bundle resources, a selector list of the wrong length, an unknown strategy → INVALID_OPTION, nothing sent or reserved', async () => {
  const before = (await cluster.placementGroups()).length;
  const bad: [string, ClientPlacementGroupOptions, RegExp][] = [
    ['zero', { bundles: [{ CPU: 0 }] }, /bundles\[0\]\.CPU/],
    ['negative', { bundles: [{ CPU: 1 }, { CPU: -2 }] }, /bundles\[1\]\.CPU/],
    ['no bundles', { bundles: [] }, /bundles/],
    ['selectors ≠ bundles', { bundles: cpus(2), bundleLabelSelector: [{ zone: 'a' }] }, /bundleLabelSelector/],
    ['unknown strategy', { bundles: cpus(1), strategy: 'DENSE' as never }, /strategy/],
  ];
  for (const [what, opts, option] of bad) {
    const err = await cluster.placementGroup(opts).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof Error, `${what}: refused`);
    assert.is((err as { code?: string }).code, 'INVALID_OPTION', `${what}: ${(err as Error).message}`);
    assert.match(String((err as { option?: string }).option), option, `${what}: names the option`);
  }
  assert.is((await cluster.placementGroups()).length, before, 'no group reached the GCS');
  await assertNothingReserved('after refused calls');
});

// ---- 7. concurrency ----

// PACK and SPREAD groups of 1-CPU bundles fit in any order while two CPUs are free anywhere, so 200
// groups of two fill the 400 CPUs exactly, whatever order the GCS takes them in.
test('200 groups created at once that together exactly fill the cluster: all CREATED, every node out of CPU, one more stays PENDING', async () => {
  const pgs = await Promise.all(Array.from({ length: 200 }, (_, i) => create({ strategy: i % 2 === 0 ? 'PACK' : 'SPREAD', bundles: cpus(2) })));
  const infos = await Promise.all(pgs.map((pg) => pg.ready({ timeoutMs: WAIT_MS })));
  assert.ok(infos.every((i) => i.state === 'CREATED'));
  const nodes = await alive();
  const perNode = new Map<string, number>();
  for (const info of infos) for (const b of info.bundles) perNode.set(b.nodeId!, (perNode.get(b.nodeId!) ?? 0) + 1);
  for (const n of nodes) {
    assert.is(n.resources.available.CPU ?? 0, 0, `${n.name} has no CPU left`);
    assert.is(perNode.get(n.nodeId), n.resources.total.CPU, `${n.name}: as many 1-CPU bundles as CPUs`);
  }
  await untilRayletsAgree('every raylet holds all its CPUs in bundles');
  const extra = await create({ bundles: cpus(1) });
  const failed = await scheduleFailed(extra.id);
  assert.match(failed.message, unavailable(4), failed.message);
  assert.is((await extra.info()).state, 'PENDING');
  assert.equal((await alive()).map((n) => n.resources.available.CPU ?? 0), [0, 0, 0, 0], 'the extra group reserved nothing');
});

// ---- 2. selectors, tolerations, fallbacks ----

test('bundleLabelSelector, one per bundle: each bundle lands on a node its own selector matches; a selector nothing matches keeps the group PENDING', async () => {
  const pg = await create({ strategy: 'SPREAD', bundles: cpus(3), bundleLabelSelector: [{ zone: 'c' }, { zone: 'in(a,d)' }, { disk: 'ssd', zone: '!a' }] });
  const info = await pg.ready({ timeoutMs: WAIT_MS });
  const [b0, b1, b2] = namesOf(info);
  assert.is(b0, 'n3');
  assert.ok(['n1', 'n4'].includes(b1), `bundle 1 on n1 or n4, not ${b1}`);
  assert.is(b2, 'n4');
  await assertCommitted(info);

  const ssd = await create({ strategy: 'STRICT_SPREAD', bundles: cpus(2), bundleLabelSelector: [{ disk: 'ssd' }, { disk: 'ssd' }] });
  assert.equal(namesOf(await ssd.ready({ timeoutMs: WAIT_MS })).sort(), ['n1', 'n4']);

  const nowhere = await create({ bundles: cpus(2), bundleLabelSelector: [{ zone: 'a' }, { zone: 'z' }] });
  const failed = await scheduleFailed(nowhere.id);
  assert.match(failed.message, /^0\/4 nodes are available for bundle 1: 4 node\(s\) didn't match label selector zone in \(z\)\.$/, failed.message);
  assert.is((await nowhere.info()).state, 'PENDING');
});

test('tolerations: a tainted raylet is used only by a group that tolerates its taint', async () => {
  const tainted = await addNode({ name: 'tainted', resources: { CPU: 4 }, labels: { pool: 'dedicated' }, taints: { dedicated: 'ml' } });
  const refused = await create({ bundles: cpus(1), bundleLabelSelector: [{ pool: 'dedicated' }] });
  const failed = await scheduleFailed(refused.id);
  assert.match(failed.message, /^0\/5 nodes are available for bundle 0: 4 node\(s\) didn't match label selector pool in \(dedicated\), 1 node\(s\) had untolerated taint \{dedicated: ml\}\.$/, failed.message);

  const tolerant = await create({ bundles: cpus(1), bundleLabelSelector: [{ pool: 'dedicated' }], tolerations: { dedicated: Exists() } });
  assert.equal(namesOf(await tolerant.ready({ timeoutMs: WAIT_MS })), ['tainted']);

  // five bundles on five different nodes need the tainted one too
  const wide = await create({ strategy: 'STRICT_SPREAD', bundles: cpus(5) });
  assert.match((await scheduleFailed(wide.id)).message, unavailable(5));
  const wideTolerant = await create({ strategy: 'STRICT_SPREAD', bundles: cpus(5), tolerations: { dedicated: Exists() } });
  const info = await wideTolerant.ready({ timeoutMs: WAIT_MS });
  assert.equal(namesOf(info).sort(), ['n1', 'n2', 'n3', 'n4', 'tainted']);

  assert.is((await refused.info()).state, 'PENDING', 'still waiting: nothing it tolerates freed up');
  assert.is((await wide.info()).state, 'PENDING');
  const node = (await alive()).find((n) => n.nodeId === tainted.nodeId)!;
  assert.is(node.resources.available.CPU, 2, 'the tainted node holds exactly the two tolerating bundles');
});

test('fallbackStrategy: 2 H100s, else 4 A100s, else 2 V100s — each tier chosen in turn as raylets with those GPUs start', async () => {
  const gpus = (n: number, accel: string) => ({ bundles: Array.from({ length: n }, () => ({ GPU: 1 })), bundleLabelSelector: Array.from({ length: n }, () => ({ accel })) });
  const options: ClientPlacementGroupOptions = { ...gpus(2, 'h100'), fallbackStrategy: [gpus(4, 'a100'), gpus(2, 'v100')] };

  const a = await create(options);
  const onV100 = await a.ready({ timeoutMs: WAIT_MS });
  assert.is(onV100.tier, 2);
  assert.equal(namesOf(onV100).sort(), ['n2', 'n3']);

  // the V100s are taken: the next group waits until a raylet with A100s starts
  const b = await create(options);
  await scheduleFailed(b.id);
  assert.is((await b.info()).state, 'PENDING');
  const a100 = await addNode({ name: 'a100', resources: { CPU: 1, GPU: 4 }, labels: { accel: 'a100' } });
  const onA100 = await b.ready({ timeoutMs: WAIT_MS });
  assert.is(onA100.tier, 1);
  assert.equal(namesOf(onA100), ['a100', 'a100', 'a100', 'a100']);

  const c = await create(options);
  await scheduleFailed(c.id);
  const h100 = await addNode({ name: 'h100', resources: { CPU: 1, GPU: 2 }, labels: { accel: 'h100' } });
  const onH100 = await c.ready({ timeoutMs: WAIT_MS });
  assert.is(onH100.tier, 0);
  assert.equal(namesOf(onH100), ['h100', 'h100']);
  assert.equal(onH100.bundles.map((x) => x.resources), [{ GPU: 1 }, { GPU: 1 }]);
  for (const info of [onV100, onA100, onH100]) await assertCommitted(info);
});

// ---- 3. actors in bundles ----

test("actors in bundles: placementGroupStrategy(pg, i) runs the actor on bundle i's node; index -1 in any bundle", async () => {
  const pg = await create({ strategy: 'STRICT_SPREAD', bundles: cpus(3, 2) });
  const info = await pg.ready({ timeoutMs: WAIT_MS });
  const handles = await Promise.all([0, 1, 2].map((i) => inBundle(pg, i)));
  for (const [i, h] of handles.entries()) {
    const placed = await h.ready({ timeoutMs: WAIT_MS });
    assert.is(placed.nodeId, info.bundles[i].nodeId, `actor ${i} placed on bundle ${i}'s node`);
    assert.is((await h.call('where')).nodeId, info.bundles[i].nodeId, `actor ${i} runs on bundle ${i}'s node`);
  }
  const anywhere = await inBundle(pg, -1);
  await anywhere.ready({ timeoutMs: WAIT_MS });
  const at = (await anywhere.call('where')).nodeId;
  assert.ok(info.bundles.some((b) => b.nodeId === at), `index -1 runs in one of the bundles (${nameOf(at)})`);
  assert.is((await anywhere.info()).nodeId, at);
  // each bundle had 2 CPUs: the three pinned actors and the free one took 4 of the 6
  const held = (await alive()).filter((n) => info.bundles.some((b) => b.nodeId === n.nodeId));
  const left = held.reduce((sum, n) => sum + (n.resources.available[`CPU_group_${pg.id}`] ?? 0), 0);
  assert.is(left, 2, 'two CPUs of the group left');
});

// ---- 6. removal ----

test("pg.remove(): REMOVED, its actors DEAD, every node's available back to its total, no bundle resources left", async () => {
  const pg = await create({ strategy: 'SPREAD', bundles: cpus(2) });
  const info = await pg.ready({ timeoutMs: WAIT_MS });
  const actors = await Promise.all([inBundle(pg, 0), inBundle(pg, 1)]);
  for (const [i, h] of actors.entries()) assert.is((await h.ready({ timeoutMs: WAIT_MS })).nodeId, info.bundles[i].nodeId);
  assert.ok((await reserved()).length > 0, 'reserved while it exists');

  await pg.remove();
  const removed = await pg.info();
  assert.is(removed.state, 'REMOVED');
  assert.is(removed.removedCause, 'removed');
  await pgState(pg.id, (i) => i.state === 'REMOVED', 'REMOVED');
  const late = await pg.ready({ timeoutMs: WAIT_MS }).then(() => undefined, (e: unknown) => e);
  assert.instance(late, PlacementGroupRemovedError);
  for (const h of actors) {
    const dead = await actorState(h.actorId, (a) => a.state === 'DEAD', 'DEAD');
    assert.match(dead.actor.deathCause ?? '', new RegExp(`placement group ${pg.id} was removed`));
    // remove_pg answers before the raylets have dropped the group's actors (kill_actor waits for
    // that; remove_pg does not), so a call sent right after remove() may still reach a live actor —
    // or hang. Calls are only sure to fail once the handle itself has seen the actor DEAD.
    const observed = await firstValueFrom(h.state$.pipe(filter((a) => a.state === 'DEAD'), timeout(WAIT_MS)));
    assert.is(observed.deathCause, dead.actor.deathCause, 'the handle sees it DEAD');
    assert.instance(await h.call('journal').catch((e: unknown) => e), ActorDiedError);
  }
  await untilWhole('nodes whole after the removal');
  const nodes = await alive();
  assert.equal(await reserved(nodes), []);
  assert.ok(nodes.every((n) => !Object.keys(n.resources.total).some(isBundleResource)), 'no _group_ resources left');
  assert.is((await cluster.placementGroups()).find((g) => g.id === pg.id)?.state, 'REMOVED');
});

// ---- 5. node death ----

test('a SIGKILLed raylet holding a bundle with an actor: RESCHEDULING, then CREATED with that bundle on a new node, and the actor ALIVE there again', async () => {
  const victim = await addNode({ name: 'victim', resources: { CPU: 2, slot: 1 } });
  // bundle 1 needs the `slot` only the victim has; STRICT_SPREAD keeps bundle 0 elsewhere
  const pg = await create({ strategy: 'STRICT_SPREAD', bundles: [{ CPU: 1 }, { CPU: 1, slot: 1 }] });
  const info = await pg.ready({ timeoutMs: WAIT_MS });
  assert.is(info.bundles[1].nodeId, victim.nodeId);
  const stays = await inBundle(pg, 0, { maxRestarts: 1 });
  const moves = await inBundle(pg, 1, { maxRestarts: 1 });
  assert.is((await moves.ready({ timeoutMs: WAIT_MS })).nodeId, victim.nodeId);
  assert.is((await stays.ready({ timeoutMs: WAIT_MS })).nodeId, info.bundles[0].nodeId);
  const staysPid = (await stays.call('where')).pid;
  await moves.call('append', 'before');

  // a node the lost bundle can move to; then the victim goes
  const spare = await addNode({ name: 'spare', resources: { CPU: 2, slot: 1 } });
  const mark = (await cluster.recentEvents({ limit: 1 })).lastSeq;
  killedOnPurpose.add(victim.nodeId);
  await local.killNode(victim.nodeId);
  await event((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === victim.nodeId, 'node_dead of the victim');

  const rescheduling = await pgState(pg.id, (i) => i.state === 'RESCHEDULING', 'RESCHEDULING', mark);
  assert.is(rescheduling.placementGroup.bundles[0].nodeId, info.bundles[0].nodeId, 'the surviving bundle stays');
  assert.is(rescheduling.placementGroup.bundles[1].nodeId, undefined, 'the lost bundle is unplaced');
  const again = await pgState(pg.id, (i) => i.state === 'CREATED', 'CREATED again', rescheduling.seq);
  assert.equal(again.placementGroup.bundles.map((b) => b.nodeId), [info.bundles[0].nodeId, spare.nodeId]);
  await assertCommitted(again.placementGroup);

  const back = await actorState(moves.actorId, (a) => a.state === 'ALIVE' && a.numRestarts === 1, 'ALIVE after a restart', mark);
  assert.is(back.actor.nodeId, spare.nodeId, "the actor is ALIVE again on its bundle's new node");
  assert.is((await moves.call('where')).nodeId, spare.nodeId);
  assert.equal(await moves.call('journal'), [], 'a new incarnation');
  const kept = await stays.info();
  assert.equal([kept.state, kept.nodeId, kept.numRestarts], ['ALIVE', info.bundles[0].nodeId, 0], 'the actor in the surviving bundle is untouched');
  assert.is((await stays.call('where')).pid, staysPid);
});

// ---- 4. a raylet killed between prepare and commit (a GCS in this process) ----

const KILL_CLUSTER = 'pgkill';

/**
 * An inspect hook for an in-process GCS: `arm(run)` has `run` called (once) with the context of the
 * first PlacementGroup machine snapshot in PREPARED — synchronously, before the commit requests
 * leave (next turn of the loop); `disarm()` drops it.
 */
function onPrepared(): { inspect: (e: InspectionEvent) => void; arm(run: (c: PlacementGroupContext) => void): void; disarm(): void } {
  let armed: ((c: PlacementGroupContext) => void) | undefined;
  return {
    inspect: (e) => {
      if (e.type !== '@xstate.snapshot' || !armed) return;
      if ((e.actorRef as unknown as { logic?: { id?: string } }).logic?.id !== 'placement-group') return;
      const snapshot = e.snapshot as unknown as { value: unknown; context: PlacementGroupContext };
      if (snapshot.value !== 'PREPARED') return;
      const run = armed;
      armed = undefined;
      run(snapshot.context);
    },
    arm: (run) => void (armed = run),
    disarm: () => void (armed = undefined),
  };
}

test('a raylet SIGKILLed between prepare and commit: the group is CREATED on other nodes; with no spare it stays PENDING and the surviving raylet holds nothing', async () => {
  let bus: Bus | undefined;
  let reportBus: Bus | undefined;
  let gcs: GcsHandle | undefined;
  let client: Cluster | undefined;
  const raylets = new Map<string, RuntimeProcess>();
  const prepared = onPrepared();
  /** SIGKILLs a raylet of the round, synchronously, before the commit requests leave (next turn of the loop). */
  const killFirstOfRound = (): Promise<{ killed: string; round: string[] }> =>
    new Promise((resolve) => {
      prepared.arm((c) => {
        const round = c.bundles.map((b) => b.nodeId!);
        const raylet = raylets.get(round[0])!;
        void raylet.crash(); // the signals are sent before crash() first awaits
        resolve({ killed: round[0], round });
      });
    });
  try {
    bus = await connectNatsBus({ servers: server.url, name: 'pg-spec-gcs' });
    gcs = await startGcs({ bus, cluster: KILL_CLUSTER, heartbeatMs: 100, nodeTimeoutMs: 1500, bundleTimeoutMs: 300, inspect: prepared.inspect });
    const started = await Promise.all(
      ['k1', 'k2', 'k3'].map((name) =>
        spawnRuntimeProcess('raylet', ['--address', server.url, '--cluster', KILL_CLUSTER, ...rayletFlags(resolveNodeSpec({ name, resources: { CPU: 2 } }, name))]),
      ),
    );
    for (const r of started) raylets.set(String(r.ready.nodeId), r);
    client = await connect({ address: server.url, cluster: KILL_CLUSTER });
    const events: ClusterEvent[] = [];
    client.events$.subscribe((e) => events.push(e));
    const c = client;
    const eventOf = <E extends ClusterEvent>(pass: (e: ClusterEvent) => e is E, what: string): Promise<E> => {
      const hit = events.find(pass);
      return hit ? Promise.resolve(hit as E) : firstValueFrom(c.events$.pipe(filter(pass), timeout({ first: WAIT_MS, with: () => Promise.reject(new Error(`no ${what}`)) })));
    };
    const total = { CPU: 2 };

    // with a spare: the round is abandoned, and the next one keeps off the silent node
    const killedA = killFirstOfRound();
    const pgA = await client.placementGroup({ strategy: 'STRICT_SPREAD', bundles: cpus(2) });
    const { killed, round } = await killedA;
    const createdA = await pgA.ready({ timeoutMs: WAIT_MS });
    assert.ok(!createdA.bundles.some((b) => b.nodeId === killed), 'not on the killed node');
    const spareId = [...raylets.keys()].find((id) => !round.includes(id))!;
    assert.equal(createdA.bundles.map((b) => b.nodeId).sort(), [round[1], spareId].sort(), 'on the survivor and the spare');
    const failedCommit = await eventOf(
      (e): e is PlacementGroupStateEvent => e.type === 'placement_group_state' && e.placementGroup.id === pgA.id && e.placementGroup.state === 'PENDING' && e.placementGroup.pendingReason !== undefined,
      'PENDING after the failed commit',
    );
    assert.match(failedCommit.placementGroup.pendingReason!, new RegExp(`commit_bundle on node ${killed}`));
    const states = events.filter((e): e is PlacementGroupStateEvent => e.type === 'placement_group_state' && e.placementGroup.id === pgA.id).map((e) => e.placementGroup.state);
    assert.equal(states.slice(0, 3), ['PENDING', 'PREPARED', 'PENDING'], `${states}`);
    for (const n of (await client.nodes()).filter((n) => createdA.bundles.some((b) => b.nodeId === n.nodeId))) {
      assert.is(n.resources.available.CPU, 1, `${n.name}: one CPU in the bundle`);
    }
    await pgA.remove();
    await eventOf((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === killed, 'node_dead of the killed raylet');
    raylets.delete(killed);
    const gcsNodes = gcs.snapshot().nodes.filter((n) => n.state === 'ALIVE');
    assert.is(gcsNodes.length, 2);
    for (const n of gcsNodes) assert.equal(n.resources.available, n.resources.total, `${n.name} whole after the removal`);

    // no spare: the two live raylets prepare, one is killed, the survivor gives its bundle back
    const [x, y] = [...raylets.keys()];
    reportBus = await connectNatsBus({ servers: server.url, name: 'pg-spec-kill-loads' });
    const reports = new Map<string, RayletLoad[]>([[x, []], [y, []]]);
    const arrived = new Set<() => void>();
    for (const id of [x, y]) {
      reportBus.subscribe(subjects(KILL_CLUSTER).raylet(id, 'load'), (m) => {
        reports.get(id)!.push(decode(m.data, { registry: { raylet_load: messages.raylet_load } }).body);
        for (const f of arrived) f();
      });
    }
    await reportBus.flush();
    const killedB = killFirstOfRound();
    const pgB = await client.placementGroup({ strategy: 'STRICT_SPREAD', bundles: cpus(2) });
    const b = await killedB;
    const survivor = b.killed === x ? y : x;
    const failed = await eventOf((e): e is ScheduleFailedEvent => e.type === 'schedule_failed' && e.target.id === pgB.id, 'schedule_failed of the group left without a spare');
    assert.equal(failed.target, { kind: 'placement_group', id: pgB.id });
    assert.match(failed.message, unavailable(2), failed.message);
    // the survivor's own reports: its CPU taken by the prepared bundle, then all of it free again
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`survivor reports: ${JSON.stringify(reports.get(survivor))}`)), WAIT_MS);
      const check = (): void => {
        const mine = reports.get(survivor)!;
        const dip = mine.findIndex((r) => (r.available.CPU ?? 0) < total.CPU * U);
        if (dip >= 0 && mine.slice(dip + 1).some((r) => r.available.CPU === total.CPU * U)) {
          clearTimeout(timer);
          arrived.delete(check);
          resolve();
        }
      };
      arrived.add(check);
      check();
    });
    const last = reports.get(survivor)!.at(-1)!;
    assert.is(last.available.CPU, total.CPU * U, 'the survivor holds nothing locked');
    assert.ok(!Object.keys(last.available).some(isBundleResource), 'and no bundle resources');
    await eventOf((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === b.killed, 'node_dead of the second killed raylet');
    const waiting = await pgB.info();
    assert.is(waiting.state, 'PENDING');
    assert.ok(waiting.bundles.every((bd) => bd.nodeId === undefined));
    const node = (await client.nodes()).find((n) => n.nodeId === survivor)!;
    assert.equal([node.state, node.resources.available, node.resources.total], ['ALIVE', total, total]);
    assert.is(reports.get(survivor)!.at(-1)!.available.CPU, total.CPU * U, 'still nothing locked');
  } finally {
    prepared.disarm();
    await client?.close();
    await Promise.all([...raylets.values()].map((r) => r.stop()));
    await gcs?.stop();
    await reportBus?.close();
    await bus?.close();
  }
});

/** A GCS in this process and three raylet processes of 2 CPUs, in a cluster of their own. */
interface FreezeCluster {
  readonly gcs: GcsHandle;
  readonly client: Cluster;
  readonly raylets: Map<string, RuntimeProcess>;
  /** Every event the client saw, from its start. */
  readonly events: ClusterEvent[];
  /**
   * Every CPU of every node usable again: a STRICT_SPREAD group of one whole node per bundle is
   * CREATED — which needs each raylet to prepare and commit all it has (a raylet holding a bundle
   * it should have dropped refuses) — and is removed again.
   */
  wholeAgain(): Promise<void>;
  close(): Promise<void>;
}

const FREEZE_TOTAL = { CPU: 2 };

async function freezeCluster(cluster: string, opts: { nodeTimeoutMs: number; inspect?: (e: InspectionEvent) => void }): Promise<FreezeCluster> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async (): Promise<void> => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const bus = await connectNatsBus({ servers: server.url, name: `pg-spec-${cluster}-gcs` });
    closers.push(() => bus.close());
    const gcs = await startGcs({ bus, cluster, heartbeatMs: 100, nodeTimeoutMs: opts.nodeTimeoutMs, bundleTimeoutMs: 300, inspect: opts.inspect });
    closers.push(() => gcs.stop());
    const raylets = new Map<string, RuntimeProcess>();
    closers.push(() => Promise.all([...raylets.values()].map((r) => r.stop())));
    const started = await Promise.all(
      ['f1', 'f2', 'f3'].map((name) => spawnRuntimeProcess('raylet', ['--address', server.url, '--cluster', cluster, ...rayletFlags(resolveNodeSpec({ name, resources: FREEZE_TOTAL }, name))])),
    );
    for (const r of started) raylets.set(String(r.ready.nodeId), r);
    const client = await connect({ address: server.url, cluster });
    closers.push(() => client.close());
    const events: ClusterEvent[] = [];
    client.events$.subscribe((e) => events.push(e));
    const wholeAgain = async (): Promise<void> => {
      const fill = await client.placementGroup({ strategy: 'STRICT_SPREAD', bundles: cpus(3, FREEZE_TOTAL.CPU) });
      const info = await fill.ready({ timeoutMs: WAIT_MS });
      assert.equal(info.bundles.map((b) => b.nodeId).sort(), [...raylets.keys()].sort(), 'a whole node in each bundle, on every node');
      await fill.remove();
      for (const n of gcs.snapshot().nodes.filter((n) => n.state === 'ALIVE')) assert.equal(n.resources.available, n.resources.total, `${n.name} whole after the removal`);
    };
    return { gcs, client, raylets, events, wholeAgain, close };
  } catch (err) {
    await close();
    throw err;
  }
}

const nodeEvent = (client: Cluster, type: 'node_dead' | 'node_added', nodeId: () => string | undefined): Promise<NodeEvent> => {
  const seen = firstValueFrom(client.events$.pipe(filter((e): e is NodeEvent => e.type === type && e.node.nodeId === nodeId()), timeout(WAIT_MS)));
  seen.catch(() => undefined); // awaited only on some paths
  return seen;
};

/**
 * A raylet of the group's first round frozen (SIGSTOP) between prepare and commit, continued once the
 * group is CREATED elsewhere — and, `pastNodeTimeout`, once its node was declared DEAD too (it then
 * registers again). Either way it reads the stale commit and what the GCS sent after it, and must
 * end holding nothing of the group, while the group stays where it was created.
 */
async function frozenBetweenPhases(name: string, pastNodeTimeout: boolean): Promise<void> {
  const prepared = onPrepared();
  // the freeze outlasts the commit's timeout (300 ms), and stays well inside a 10-s node timeout; past it,
  // 3 s as the shared cluster above (a raylet starved of CPU on a loaded machine must not miss 1.5 s)
  const c = await freezeCluster(name, { nodeTimeoutMs: pastNodeTimeout ? 3000 : 10_000, inspect: prepared.inspect });
  let frozenPid: number | undefined;
  try {
    // frozen synchronously on the GCS's PREPARED step, before the commit requests leave
    let frozenId: string | undefined;
    let round: string[] = [];
    const frozen = new Promise<void>((resolve) => {
      prepared.arm((ctx) => {
        round = ctx.bundles.map((b) => b.nodeId!);
        frozenId = round[0];
        frozenPid = c.raylets.get(frozenId)!.pid;
        process.kill(frozenPid, 'SIGSTOP');
        resolve();
      });
    });
    const dead = nodeEvent(c.client, 'node_dead', () => frozenId);
    const back = nodeEvent(c.client, 'node_added', () => frozenId);
    const pg = await c.client.placementGroup({ strategy: 'STRICT_SPREAD', bundles: cpus(2) });
    await frozen;
    let created: PlacementGroupInfo;
    try {
      created = await pg.ready({ timeoutMs: WAIT_MS });
      if (pastNodeTimeout) await dead;
    } finally {
      process.kill(frozenPid!, 'SIGCONT');
      frozenPid = undefined;
    }
    const spareId = [...c.raylets.keys()].find((id) => !round.includes(id))!;
    assert.equal(created.bundles.map((b) => b.nodeId).sort(), [round[1], spareId].sort(), 'on the survivor and the spare, not the frozen node');
    const states = c.events.filter((e): e is PlacementGroupStateEvent => e.type === 'placement_group_state' && e.placementGroup.id === pg.id).map((e) => e.placementGroup.state);
    assert.equal(states.slice(0, 3), ['PENDING', 'PREPARED', 'PENDING'], `${states}`);
    if (pastNodeTimeout) await back;
    const again = await pg.info();
    assert.equal([again.state, again.bundles.map((b) => b.nodeId).sort()], ['CREATED', created.bundles.map((b) => b.nodeId).sort()], 'the group stays where it was created');
    assert.equal(
      c.events.filter((e) => e.type === 'node_dead').map((e) => (e as NodeEvent).node.nodeId),
      pastNodeTimeout ? [frozenId] : [],
      pastNodeTimeout ? 'the frozen node, and only it, declared dead' : 'no node was declared dead',
    );
    await pg.remove();
    await c.wholeAgain();
  } finally {
    prepared.disarm();
    if (frozenPid !== undefined) process.kill(frozenPid, 'SIGCONT');
    await c.close();
  }
}

test('a raylet frozen (SIGSTOP) between prepare and commit: the group is CREATED on the other nodes; once it runs again, the frozen raylet holds nothing of it and its node stays ALIVE', () =>
  frozenBetweenPhases('pgfreeze', false));

test('a raylet frozen between prepare and commit past its node timeout: DEAD, the group CREATED on the other nodes; once it runs again and registers, it holds nothing of the group', () =>
  frozenBetweenPhases('pgfreeze-dead', true));

test('a raylet holding a committed bundle frozen past its node timeout: the group is CREATED again without it; registering again, it drops the bundle the GCS moved on from', async () => {
  const c = await freezeCluster('pgfreeze-created', { nodeTimeoutMs: 3000 });
  let frozenPid: number | undefined;
  try {
    const pg = await c.client.placementGroup({ strategy: 'STRICT_SPREAD', bundles: cpus(2) });
    const first = await pg.ready({ timeoutMs: WAIT_MS });
    const frozenId = first.bundles[0].nodeId!;
    const keptId = first.bundles[1].nodeId!;
    const spareId = [...c.raylets.keys()].find((id) => id !== frozenId && id !== keptId)!;
    const dead = nodeEvent(c.client, 'node_dead', () => frozenId);
    const back = nodeEvent(c.client, 'node_added', () => frozenId);
    const movedOn = firstValueFrom(
      c.client.events$.pipe(
        filter((e): e is PlacementGroupStateEvent => e.type === 'placement_group_state' && e.placementGroup.id === pg.id && e.placementGroup.state === 'CREATED' && e.placementGroup.bundles[0].nodeId === spareId),
        timeout(WAIT_MS),
      ),
    );
    frozenPid = c.raylets.get(frozenId)!.pid;
    process.kill(frozenPid, 'SIGSTOP');
    try {
      await dead;
      await movedOn;
    } finally {
      process.kill(frozenPid, 'SIGCONT');
      frozenPid = undefined;
    }
    assert.equal((await pg.info()).bundles.map((b) => b.nodeId), [spareId, keptId], 'bundle 0 moved to the spare, bundle 1 kept');
    await back;
    assert.equal(
      c.events.filter((e) => e.type === 'node_dead').map((e) => (e as NodeEvent).node.nodeId),
      [frozenId],
      'the frozen node, and only it, declared dead',
    );
    await pg.remove();
    await c.wholeAgain();
  } finally {
    if (frozenPid !== undefined) process.kill(frozenPid, 'SIGCONT');
    await c.close();
  }
});

test.run();
