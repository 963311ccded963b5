/**
 * End to end on real processes: a nats-server, a GCS process and four raylet processes (each with
 * its forked worker host) on this machine, started by startLocalCluster({ transport: 'nats' }), and
 * this process as the driver.
 *
 *   npm run bench:e2e [-- --json] [-- --quick] [-- --dev] [-- --creation] [-- --calls] [-- --memory] [-- --auth] [-- --code] [-- --cpu-prof=<dir>]
 *
 * --creation, --calls and --memory run only the sections named (1, 2, 3); --cpu-prof=<dir> starts the GCS, the
 * raylets and their worker hosts with `--cpu-prof --cpu-prof-dir=<dir> --cpu-prof-interval=100` (a sample
 * every 100 µs, as the call section lasts seconds; profiles written when
 * they exit). Section 1 always prints the CPU time (/proc utime + stime) each kind of process
 * spent per actor created.
 *
 * Two modes; every section runs in the chosen one:
 * - default ("plain node"): the cluster as users run it — startLocalCluster from the compiled
 *   package (dist/index.js, so the GCS, raylet and worker-host entries are dist/*.js) with
 *   nodeFlags: [], so those processes run on plain node (worker hosts add the runtime's worker
 *   flags); actors from bench/fixtures/actors.mjs, which imports 'orrery' by name (→ dist/). The
 *   script builds dist/ first. The driver (this file) stays under tsx, loading only dist/ code for
 *   the runtime.
 * - --dev: everything from source under tsx (--conditions=source --import tsx), as in development;
 *   actors from bench/fixtures/actors.ts.
 * The idle-process baseline and the raw NATS responder use the mode's flags too.
 *
 * 1. Actor creation: 10,000 no-op actors with a mix of constraints (bench/support/e2e-mix.ts),
 *    submitted 256 at a time (remote() then ready()), counted until every one is ALIVE; then all
 *    killed, 256 at a time, counted until every one is DEAD. Reference: Ray's published
 *    many_actors figure, a printed constant (not measured here).
 * 2. Actor call latency: sequential calls and 64 in flight of a method echoing 100 bytes, beside
 *    raw NATS request/reply of the same bytes to a plain responder in a process of its own
 *    (bench/support/e2e-responder.ts) — the same hops as a call: driver → nats-server → host
 *    process → nats-server → driver. Both are measured in alternating rounds of the same run.
 * 3. Memory: VmRSS, RssAnon, RssFile and PSS of one raylet process and its worker host: the raylet
 *    idle before any actor, the host idle with one actor, and both with 2,500 idle actors pinned to
 *    the raylet, each 3 s after the work before it and again after 20 s more idle; beside them
 *    three floors: an empty Node.js process, one that has run its optimizing compiler once, and that
 *    one with a nats.js connection (bench/support/e2e-proc.ts says what each figure counts).
 * 4. Authentication: two one-node clusters side by side, one open and one with roles
 *    (startLocalCluster({ auth: true }): nkey users with subject permissions the server checks on
 *    every publish), the same echo calls on each in alternating rounds.
 * 5. Code shipping (bench/e2e-code.ts): remote() to first call of an actor whose code is not yet on
 *    the node (bundled, uploaded, fetched, verified) beside one whose code is cached there.
 * 6. Creation by node count (--nodes 4,16,32, alone; bench/support/e2e-nodes.ts): per count a
 *    cluster of its own, 2,000 no-op actors SPREAD after a warm batch of as many — actors/s, summed raylet CPU
 *    and wake-ups (main-thread voluntary context switches, /proc),
 *    NATS messages and KB out per created actor; targets (issue 18, part 4): raylet CPU per actor
 *    with 16 raylets ≤ 1.5× with 4, NATS messages per actor with 32 raylets ≤ 2× with 4.
 *    `--in-flight N` (default 256) sets the creates in flight: fewer means fewer creates per raylet
 *    wake-up, which is what a larger cluster does to each raylet (docs/benchmarks.md). Beside each
 *    count, on the same server, the reference: as many requests, at orrery's rate, through a
 *    dispatcher to as many relays that each hand a request to a forked child over IPC
 *    (bench/support/e2e-relay.ts), and its 16 ÷ 4 ratio: what the work's shape and this machine give
 *    without any of orrery's code.
 *
 * Targets (never lowered): ≥ 2,000 actors/s to ALIVE; sequential call p50 ≤ 1.5× raw NATS p50;
 * pipelined calls/s ≥ 0.6× raw NATS; an idle raylet ≤ 40 MB and an idle worker host ≤ 40 MB VmRSS,
 * raylet + worker hosts ≤ 110 MB with 2,500 idle actors (issue 18, part 5); with authentication,
 * pipelined calls/s ≥ 0.9× the same cluster without (issue 14).
 *
 * The memory section runs first, on a raylet nothing else has touched; the creation section second;
 * the calls last. Every process started here is stopped on the way out, failure or not.
 */
import { availableParallelism, cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Bus } from '../runtime/bus/bus.ts';
import type { ActorHandle, LocalCluster, NodeInfo } from '../runtime/index.ts';
import type { Echo, Noop } from './fixtures/actors.ts';
import { BenchProcesses, DEV_MODE, PLAIN_MODE, distState, sourceVersion, startResponder, stopChild, type Mode } from './support/bench-run.ts';
import { CPUS_PER_ACTOR, KINDS, Mix, NODES, peerable, violations, type Kind, type Request } from './support/e2e-mix.ts';
import { findRayletPid, hasProc, idleNodeMemory, nodeFlagsOf, sumMemory, treeMemory, type ProcessMemory, type TreeMemory } from './support/e2e-proc.ts';
import { loadAverage, mean, percentile, runPool, sleep } from './support/e2e-stats.ts';
import { ROLES, cpuBetween, cpuSnapshot, type Role } from './support/proc-cpu.ts';
import { formatNumber, formatTable, parseBenchArgs, printJsonLast, targetRow, verdict, type Goal, type Row } from './support/report.ts';
import { measureCodeShipping } from './e2e-code.ts';
import { DEFAULT_IN_FLIGHT, SCALING_TARGETS, inFlightArg, measureScaling, nodeCountsArg, perActor, type ScalingRun } from './support/e2e-nodes.ts';
import { measureRelays } from './support/e2e-relay.ts';

const DEV = process.argv.includes('--dev');
/** --creation, --calls, --memory: run only the sections named (default: all three). */
const SECTION_FLAGS = { '--creation': 'creation', '--calls': 'calls', '--memory': 'memory', '--auth': 'auth', '--code': 'code' } as const;
type Section = (typeof SECTION_FLAGS)[keyof typeof SECTION_FLAGS];
const chosen = Object.entries(SECTION_FLAGS).filter(([flag]) => process.argv.includes(flag)).map(([, section]) => section);
const SECTIONS = new Set<Section>(chosen.length > 0 ? chosen : Object.values(SECTION_FLAGS));
const CPU_PROF_DIR = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
/** --nodes 4,16,32: only section 6, creation cost by node count. */
const NODE_COUNTS = nodeCountsArg(process.argv.slice(2));
const IN_FLIGHT_ARG = inFlightArg(process.argv.slice(2));
const args = parseBenchArgs(process.argv.slice(2).filter((a) => a !== '--dev' && !Object.hasOwn(SECTION_FLAGS, a) && !a.startsWith('--cpu-prof=') && !NODE_COUNTS?.consumed.includes(a) && !IN_FLIGHT_ARG?.consumed.includes(a)));

const MODE: Mode = DEV ? DEV_MODE : PLAIN_MODE;

const here = (path: string): string => new URL(path, import.meta.url).href;
// Loaded by URL so the mode decides which tree the driver's runtime code comes from; the types are
// the source's, which dist/ is compiled from.
const pkg = (await import(here(MODE.pkg))) as typeof import('../index.ts');
const { connectNatsBus } = (await import(here(MODE.bus))) as typeof import('../runtime/bus/nats-connect.ts');
const { encode } = (await import(here(MODE.codec))) as typeof import('../protocols/codec.ts');
const { NoopActor, EchoActor, CallerActor } = (await import(here(MODE.fixtures))) as typeof import('./fixtures/actors.ts');
const { nodeIdAffinity, startLocalCluster } = pkg;

const SIZE = args.quick
  ? { actors: 700, memoryActors: 250, sequential: 500, pipelined: 4_000, warmup: 200 }
  : { actors: 10_000, memoryActors: 2_500, sequential: 5_000, pipelined: 20_000, warmup: 500 };
const IN_FLIGHT = 256;
const PIPELINE = 64;
const PAYLOAD_BYTES = 100;
const ROUNDS = 10;
const READY_TIMEOUT_MS = 120_000;
const MEMORY_NODE = 'us-a';
/** Seconds each memory point is left idle after its 3-s figure (settle()). */
const SETTLE_S = args.quick ? 4 : 20;
const ECHO_NODE = 'us-b';
/** Ray's published many_actors release figure: printed for context, not measured here. */
const RAY_MANY_ACTORS_PER_S = 650;
const TARGETS = { createRate: 2_000, sequentialRatio: 1.5, pipelinedRatio: 0.6, idleRayletMB: 40, idleHostMB: 40, rssMB: 110, authRatio: 0.9 };

const rows: Row[] = [];
const verdicts: string[] = [];
const out = (line = ''): void => console.log(line);
const progress = (line: string): void => console.log(`  … ${line}`);
const ms = (t: number): string => formatNumber(t);
const secs = (t: number): number => t / 1000;
const count = (n: number): string => n.toLocaleString('en-US');

/** A target row, its line in the verdict list, and the cells of its table row. */
function target(row: Omit<Row, 'target' | 'met'>, value: number, goal: Goal, label: string, unit: string): string[] {
  rows.push(targetRow(row, value, goal));
  const mark = goal === 'atLeast' ? '≥' : '≤';
  verdicts.push(`  ${label}: ${formatNumber(row.value)}${unit} (target ${mark} ${formatNumber(value)}${unit}) — ${verdict(row.value, value, goal)}`);
  return [`${mark} ${formatNumber(value)}${unit}`, verdict(row.value, value, goal)];
}

// ---------------------------------------------------------------------------------------------
// 3. memory (run first)

interface MemoryResult {
  /** An idle Node.js process with the mode's node flags (the raylet's). */
  readonly idleNode: ProcessMemory;
  /** The same after one hot loop: the optimizing compiler has run, as in any process that works. */
  readonly warmNode: ProcessMemory;
  /** The same with a nats.js connection to the cluster's server and nothing else. */
  readonly natsNode: ProcessMemory;
  /** Each point 3 s after the work before it, as this section has always measured. */
  readonly before: TreeMemory;
  readonly one: TreeMemory;
  readonly after: TreeMemory;
  /** The same points left idle for SETTLE_S: the sample of median total VmRSS over its second half. */
  readonly settled: { readonly before: TreeMemory; readonly one: TreeMemory; readonly after: TreeMemory };
  readonly actors: number;
  /** The node flags each process of the tree ran with (read from /proc/<pid>/cmdline). */
  readonly flags: readonly { what: string; flags: string[] }[];
}

/**
 * An idle process's memory still moves after 3 s: V8 shrinks its young generation and runs its
 * memory reducer some seconds after the last burst, while a raylet's heartbeats and load reports
 * keep allocating. So each point is sampled once a second for SETTLE_S more, and the sample with the
 * median total VmRSS over the second half stands for it.
 */
async function settle(raylet: number): Promise<TreeMemory> {
  const samples: TreeMemory[] = [];
  for (let i = 0; i < SETTLE_S; i++) {
    await sleep(1_000);
    if (i >= SETTLE_S / 2) samples.push(treeMemory(raylet));
  }
  return samples.sort((a, b) => a.totalKiB - b.totalKiB)[Math.floor(samples.length / 2)];
}

async function measureMemory(local: LocalCluster, node: NodeInfo, floors: Pick<MemoryResult, 'idleNode' | 'warmNode'>): Promise<MemoryResult> {
  const natsNode = await idleNodeMemory(MODE.nodeFlags, { natsAddress: local.address });
  const raylet = findRayletPid(process.pid, node.name);
  const pinned = { numCpus: CPUS_PER_ACTOR, schedulingStrategy: nodeIdAffinity(node.nodeId) };
  const builder = local.cluster.actor(NoopActor).options(pinned);
  await sleep(3_000);
  const before = treeMemory(raylet);
  const beforeSettled = await settle(raylet);
  const first = await builder.remote();
  await first.ready({ timeoutMs: READY_TIMEOUT_MS });
  await first.call('ping');
  await sleep(3_000);
  const one = treeMemory(raylet);
  const oneSettled = await settle(raylet);
  const handles: ActorHandle<Noop>[] = [first];
  const started = await runPool(SIZE.memoryActors - 1, IN_FLIGHT, async () => {
    const h = await builder.remote();
    const info = await h.ready({ timeoutMs: READY_TIMEOUT_MS });
    if (info.nodeId !== node.nodeId) throw new Error(`actor ${h.actorId} landed on ${info.nodeId}, not ${node.nodeId}`);
    handles.push(h);
    return h;
  });
  const failed = started.filter((r) => 'error' in r);
  if (failed.length > 0) throw new Error(`${failed.length} pinned actors did not start: ${String((failed[0] as { error: unknown }).error)}`);
  // one call each, so every actor has served a call, then let the processes go idle
  await runPool(handles.length, IN_FLIGHT, (i) => handles[i].call('ping'));
  await sleep(3_000);
  const after = treeMemory(raylet);
  const afterSettled = await settle(raylet);
  const flags = [{ what: 'raylet', flags: nodeFlagsOf(raylet) }, ...after.children.map((c) => ({ what: c.command, flags: nodeFlagsOf(c.pid) }))];
  progress(`memory: ${count(handles.length)} idle actors on ${node.name}; killing them`);
  await runPool(handles.length, IN_FLIGHT, (i) => handles[i].kill());
  return { ...floors, natsNode, before, one, after, settled: { before: beforeSettled, one: oneSettled, after: afterSettled }, actors: handles.length, flags };
}

// ---------------------------------------------------------------------------------------------
// 1. actor creation and kill

interface CreationResult {
  readonly n: number;
  readonly alive: number;
  readonly failures: string[];
  readonly registerMs: number[];
  readonly readyMs: number[];
  /** From the first submission to the last remote() / ready() / kill() that resolved. */
  readonly allRegisteredMs: number;
  readonly allAliveMs: number;
  readonly killMs: number;
  readonly killed: number;
  readonly byKind: Map<Kind, { register: number[]; ready: number[]; nodes: Map<string, number> }>;
  readonly violations: number;
  /** CPU seconds each kind of process spent from the first submission until every actor was ALIVE. */
  readonly cpu: Record<Role, number>;
  readonly loadBefore: string;
  readonly loadAfter: string;
}

async function measureCreation(local: LocalCluster, nodes: NodeInfo[]): Promise<CreationResult> {
  const n = SIZE.actors;
  const mix = new Mix();
  const peers: string[] = [];
  const requests: (Request | undefined)[] = new Array(n);
  const ids: (string | undefined)[] = new Array(n);
  const registerMs: number[] = [];
  const readyMs: number[] = [];
  const nodeOf = new Map<string, string>();
  const nameOf = new Map(nodes.map((x) => [x.nodeId, x.name]));
  const byKind = new Map(KINDS.map((k) => [k, { register: [] as number[], ready: [] as number[], nodes: new Map<string, number>() }]));
  const handles: ActorHandle<Noop>[] = [];
  let lastRegistered = 0;
  let lastAlive = 0;
  let done = 0;
  const ticker = setInterval(() => progress(`creation: ${done.toLocaleString('en-US')} of ${n.toLocaleString('en-US')} ALIVE`), 5_000);
  const loadBefore = loadAverage();
  const cpu0 = cpuSnapshot();
  const t0 = performance.now();
  const results = await runPool(n, IN_FLIGHT, async (i) => {
    const req = mix.next(i, peers);
    requests[i] = req;
    const a = performance.now();
    const h = await local.cluster.actor(NoopActor).options(req.options).remote();
    const b = performance.now();
    lastRegistered = b;
    ids[i] = h.actorId;
    handles.push(h);
    if (peerable(req)) peers.push(h.actorId);
    const info = await h.ready({ timeoutMs: READY_TIMEOUT_MS });
    const c = performance.now();
    lastAlive = c;
    done++;
    nodeOf.set(h.actorId, info.nodeId!);
    registerMs.push(b - a);
    readyMs.push(c - b);
    const k = byKind.get(req.kind)!;
    k.register.push(b - a);
    k.ready.push(c - b);
    const name = nameOf.get(info.nodeId!) ?? '?';
    k.nodes.set(name, (k.nodes.get(name) ?? 0) + 1);
  });
  const cpu = cpuBetween(cpu0, cpuSnapshot());
  const loadAfter = loadAverage();
  clearInterval(ticker);
  const failures = results.flatMap((r) => (r && typeof r === 'object' && 'error' in r ? [String(r.error)] : []));
  const bad = violations(requests, ids, nodeOf, nodes);

  progress(`creation: ${done.toLocaleString('en-US')} ALIVE in ${formatNumber(secs(lastAlive - t0))} s; killing them`);
  let killed = 0;
  const k0 = performance.now();
  let lastKilled = k0;
  await runPool(handles.length, IN_FLIGHT, async (i) => {
    await handles[i].kill();
    killed++;
    lastKilled = performance.now();
  });
  return {
    n, alive: done, failures, registerMs, readyMs,
    allRegisteredMs: lastRegistered - t0, allAliveMs: lastAlive - t0,
    killMs: lastKilled - k0, killed, byKind, violations: bad, cpu, loadBefore, loadAfter,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. call latency against raw NATS

interface LatencyResult {
  readonly requestBytes: number;
  readonly actorSeq: number[];
  readonly rawSeq: number[];
  readonly actorPipe: PipeTotals;
  readonly rawPipe: PipeTotals;
  /** Actor→actor calls (a Caller actor on another node holding the echo's handle), and driver→actor calls in the same alternating rounds. */
  readonly fromActor: PipeTotals;
  readonly fromDriver: PipeTotals;
}

async function sequential(calls: number, call: () => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const a = performance.now();
    await call();
    into.push((performance.now() - a) * 1000);
  }
}

/** Calls made, wall time, and the CPU seconds each kind of process spent in those rounds. */
interface PipeTotals {
  calls: number;
  ms: number;
  cpu?: Record<Role, number>;
}

async function pipelined(calls: number, call: () => Promise<unknown>, total: PipeTotals): Promise<void> {
  const cpu0 = total.cpu === undefined ? undefined : cpuSnapshot();
  const a = performance.now();
  const results = await runPool(calls, PIPELINE, () => call());
  const failed = results.filter((r) => r && typeof r === 'object' && 'error' in r);
  if (failed.length > 0) throw new Error(`${failed.length} pipelined calls failed: ${String((failed[0] as { error: unknown }).error)}`);
  total.ms += performance.now() - a;
  total.calls += calls;
  if (cpu0 !== undefined && total.cpu !== undefined) {
    const used = cpuBetween(cpu0, cpuSnapshot());
    for (const r of ROLES) total.cpu[r] += used[r];
  }
}

async function measureLatency(local: LocalCluster, node: NodeInfo, raw: Bus, subject: string, callerNode: NodeInfo): Promise<LatencyResult> {
  const payload = 'x'.repeat(PAYLOAD_BYTES);
  const echo: ActorHandle<Echo> = await local.cluster
    .actor(EchoActor)
    .options({ numCpus: CPUS_PER_ACTOR, schedulingStrategy: nodeIdAffinity(node.nodeId) })
    .remote();
  await echo.ready({ timeoutMs: READY_TIMEOUT_MS });
  if ((await echo.call('echo', payload)) !== payload) throw new Error('the echo actor did not return its payload');
  // The raw request carries exactly the bytes an actor call puts on the wire.
  const request = encode('actor_call', { method: 'echo', args: [payload] });
  const rawCall = async (): Promise<void> => {
    const reply = await raw.request(subject, request, { timeoutMs: 30_000 });
    if (reply.data.length !== request.length) throw new Error('the raw responder answered other bytes');
  };
  const actorCall = (): Promise<string> => echo.call('echo', payload);

  for (let i = 0; i < SIZE.warmup; i++) {
    await rawCall();
    await actorCall();
  }
  await Promise.all([pipelined(SIZE.warmup * 4, rawCall, { calls: 0, ms: 0 }), pipelined(SIZE.warmup * 4, actorCall, { calls: 0, ms: 0 })]);

  const actorSeq: number[] = [];
  const rawSeq: number[] = [];
  const perRound = Math.ceil(SIZE.sequential / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    // alternate which goes first, so a burst of load from elsewhere on the machine hits both alike
    if (r % 2 === 0) {
      await sequential(perRound, rawCall, rawSeq);
      await sequential(perRound, actorCall, actorSeq);
    } else {
      await sequential(perRound, actorCall, actorSeq);
      await sequential(perRound, rawCall, rawSeq);
    }
  }
  progress(`calls: ${actorSeq.length.toLocaleString('en-US')} sequential each; now ${PIPELINE} in flight`);
  const noCpu = (): Record<Role, number> => Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>;
  const actorPipe: PipeTotals = { calls: 0, ms: 0, cpu: noCpu() };
  const rawPipe: PipeTotals = { calls: 0, ms: 0, cpu: noCpu() };
  const pipeRound = Math.ceil(SIZE.pipelined / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      await pipelined(pipeRound, rawCall, rawPipe);
      await pipelined(pipeRound, actorCall, actorPipe);
    } else {
      await pipelined(pipeRound, actorCall, actorPipe);
      await pipelined(pipeRound, rawCall, rawPipe);
    }
  }
  // actor→actor: a Caller on another node holds the echo's handle (passed to its constructor) and
  // calls it PIPELINE at a time from inside its worker, timing itself; driver→actor rounds alternate
  const caller = await local.cluster.actor(CallerActor).options({ numCpus: CPUS_PER_ACTOR, schedulingStrategy: nodeIdAffinity(callerNode.nodeId) }).remote(echo);
  await caller.ready({ timeoutMs: READY_TIMEOUT_MS });
  await caller.call('burst', SIZE.warmup * 4, PIPELINE, payload);
  const fromActor: PipeTotals = { calls: 0, ms: 0 };
  const fromDriver: PipeTotals = { calls: 0, ms: 0 };
  const fromActorRound = async (): Promise<void> => {
    fromActor.ms += await caller.call('burst', pipeRound, PIPELINE, payload);
    fromActor.calls += pipeRound;
  };
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      await fromActorRound();
      await pipelined(pipeRound, actorCall, fromDriver);
    } else {
      await pipelined(pipeRound, actorCall, fromDriver);
      await fromActorRound();
    }
  }
  await caller.kill();
  await echo.kill();
  return { requestBytes: request.length, actorSeq, rawSeq, actorPipe, rawPipe, fromActor, fromDriver };
}

// ---------------------------------------------------------------------------------------------
// 4. authentication on and off

interface AuthResult {
  readonly openSeq: number[];
  readonly authSeq: number[];
  readonly openPipe: PipeTotals;
  readonly authPipe: PipeTotals;
}

async function measureAuth(procs: BenchProcesses): Promise<AuthResult> {
  const one = [{ name: 'echo', resources: { CPU: 4 } }];
  const quiet = { transport: 'nats' as const, nodes: one, nodeFlags: MODE.nodeFlags };
  const open = await startLocalCluster(quiet);
  procs.others.push(open);
  const authed = await startLocalCluster({ ...quiet, auth: true });
  procs.others.push(authed);
  const payload = 'x'.repeat(PAYLOAD_BYTES);
  const echoOn = async (l: LocalCluster): Promise<() => Promise<string>> => {
    const echo: ActorHandle<Echo> = await l.cluster.actor(EchoActor).options({ numCpus: CPUS_PER_ACTOR }).remote();
    await echo.ready({ timeoutMs: READY_TIMEOUT_MS });
    return () => echo.call('echo', payload);
  };
  const openCall = await echoOn(open);
  const authCall = await echoOn(authed);
  await Promise.all([pipelined(SIZE.warmup * 4, openCall, { calls: 0, ms: 0 }), pipelined(SIZE.warmup * 4, authCall, { calls: 0, ms: 0 })]);
  const openSeq: number[] = [];
  const authSeq: number[] = [];
  const openPipe: PipeTotals = { calls: 0, ms: 0 };
  const authPipe: PipeTotals = { calls: 0, ms: 0 };
  const perRound = Math.ceil(SIZE.sequential / ROUNDS);
  const pipeRound = Math.ceil(SIZE.pipelined / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? [false, true] : [true, false];
    for (const auth of order) await sequential(perRound, auth ? authCall : openCall, auth ? authSeq : openSeq);
    for (const auth of order) await pipelined(pipeRound, auth ? authCall : openCall, auth ? authPipe : openPipe);
  }
  return { openSeq, authSeq, openPipe, authPipe };
}

function reportAuth(a: AuthResult): void {
  const table: string[][] = [];
  const p50 = (xs: number[]): number => percentile(xs, 50);
  table.push(['sequential p50 (µs)', formatNumber(p50(a.authSeq)), formatNumber(p50(a.openSeq)), `${formatNumber(p50(a.authSeq) / p50(a.openSeq))}×`, '', '']);
  const authRate = a.authPipe.calls / secs(a.authPipe.ms);
  const openRate = a.openPipe.calls / secs(a.openPipe.ms);
  table.push([`calls/s, ${PIPELINE} in flight`, formatNumber(authRate), formatNumber(openRate), `${formatNumber(authRate / openRate)}×`,
    ...target({ name: `actor call with authentication: calls/s with ${PIPELINE} in flight ÷ without`, value: authRate / openRate, unit: '×', reference: openRate }, TARGETS.authRatio, 'atLeast', `calls/s with auth ÷ without (${PIPELINE} in flight)`, '×')]);
  out(`\n4. Authentication on and off — two one-node clusters, the same ${PAYLOAD_BYTES}-byte echo, ${count(a.authSeq.length)} sequential and ${count(a.authPipe.calls)} pipelined calls each, ${ROUNDS} alternating rounds`);
  out(formatTable(['figure', 'with auth', 'without', 'ratio', 'target', 'verdict'], table));
}

// ---------------------------------------------------------------------------------------------
// report

function reportCreation(c: CreationResult): void {
  const rate = c.alive / secs(c.allAliveMs);
  const killRate = c.killed / secs(c.killMs);
  const title = `${c.n.toLocaleString('en-US')} actors, ${IN_FLIGHT} in flight`;
  const table: string[][] = [];
  table.push([`actors ALIVE/s (${title})`, formatNumber(rate), `${formatNumber(RAY_MANY_ACTORS_PER_S)} (Ray many_actors, published)`, `${formatNumber(rate / RAY_MANY_ACTORS_PER_S)}×`,
    ...target({ name: `actor creation: actors ALIVE/s (${title}, constraint mix)`, value: rate, unit: 'actors/s', reference: RAY_MANY_ACTORS_PER_S, ratio: rate / RAY_MANY_ACTORS_PER_S }, TARGETS.createRate, 'atLeast', 'actors ALIVE/s', '/s')]);
  const plain = (name: string, value: number, unit: string, shown = formatNumber(value)): void => {
    rows.push({ name, value, unit });
    table.push([name.replace(/^actor (creation|kill): /, ''), shown, '—', '—', '—', '—']);
  };
  plain('actor creation: actors that did not become ALIVE', c.n - c.alive, 'actors', count(c.n - c.alive));
  plain('actor creation: time until every actor was registered (s)', secs(c.allRegisteredMs), 's');
  plain('actor creation: time until every actor was ALIVE (s)', secs(c.allAliveMs), 's');
  plain('actor creation: register, remote() p50 (ms)', percentile(c.registerMs, 50), 'ms');
  plain('actor creation: register, remote() p99 (ms)', percentile(c.registerMs, 99), 'ms');
  plain('actor creation: registered → ALIVE, ready() p50 (ms)', percentile(c.readyMs, 50), 'ms');
  plain('actor creation: registered → ALIVE, ready() p99 (ms)', percentile(c.readyMs, 99), 'ms');
  plain('actor creation: share of an actor\'s time spent registering (%)', (100 * mean(c.registerMs)) / (mean(c.registerMs) + mean(c.readyMs)), '%');
  plain('actor creation: placements that broke their constraints', c.violations, 'actors', count(c.violations));
  plain('actor kill: actors DEAD/s', killRate, 'actors/s');
  out(`\n1. Actor creation — ${title}, ${CPUS_PER_ACTOR} CPU each, until every one is ALIVE; then kill()`);
  out(formatTable(['figure', 'orrery', 'reference', 'ratio', 'target', 'verdict'], table));
  const names = NODES.map((x) => x.name!);
  const kinds: string[][] = KINDS.map((k) => {
    const s = c.byKind.get(k)!;
    return [k, count(s.register.length), ms(percentile(s.register, 50)), ms(percentile(s.register, 99)), ms(percentile(s.ready, 50)), ms(percentile(s.ready, 99)),
      ...names.map((x) => count(s.nodes.get(x) ?? 0))];
  });
  out('\nby constraint (ms; register = remote(), ALIVE = registered → ready(); where they landed)');
  out(formatTable(['constraint', 'actors', 'register p50', 'register p99', 'ALIVE p50', 'ALIVE p99', ...names], kinds));
  const total = ROLES.reduce((a, r) => a + c.cpu[r], 0);
  const perActor = (s: number): number => (1000 * s) / Math.max(1, c.alive);
  out(`\nCPU time (/proc utime+stime) until every actor was ALIVE: ${formatNumber(total)} s over ${formatNumber(secs(c.allAliveMs))} s of wall time on ${availableParallelism()} cores; load average ${c.loadBefore} before, ${c.loadAfter} after`);
  out(formatTable(['process', 'CPU s', 'ms per actor'], [...ROLES.filter((r) => c.cpu[r] > 0).map((r) => [r, formatNumber(c.cpu[r]), formatNumber(perActor(c.cpu[r]))]), ['all', formatNumber(total), formatNumber(perActor(total))]]));
  for (const r of ROLES) rows.push({ name: `actor creation: CPU ms per actor, ${r}`, value: perActor(c.cpu[r]), unit: 'ms' });
  if (c.failures.length > 0) out(`\n${c.failures.length} actors failed; the first: ${c.failures[0]}`);
  if (c.violations > 0) out(`\nWARNING: ${c.violations} actors were placed against their constraints`);
}

function reportLatency(l: LatencyResult): void {
  const a50 = percentile(l.actorSeq, 50);
  const r50 = percentile(l.rawSeq, 50);
  const a99 = percentile(l.actorSeq, 99);
  const r99 = percentile(l.rawSeq, 99);
  const aRate = l.actorPipe.calls / secs(l.actorPipe.ms);
  const rRate = l.rawPipe.calls / secs(l.rawPipe.ms);
  const table: string[][] = [];
  rows.push({ name: 'actor call: sequential p50 (µs)', value: a50, unit: 'µs', reference: r50, ratio: a50 / r50 });
  table.push(['sequential p50 (µs)', formatNumber(a50), formatNumber(r50), `${formatNumber(a50 / r50)}×`,
    ...target({ name: 'actor call: sequential p50 ÷ raw NATS p50', value: a50 / r50, unit: '×' }, TARGETS.sequentialRatio, 'atMost', 'sequential call p50 ÷ raw NATS p50', '×')]);
  rows.push({ name: 'actor call: sequential p99 (µs)', value: a99, unit: 'µs', reference: r99, ratio: a99 / r99 });
  table.push(['sequential p99 (µs)', formatNumber(a99), formatNumber(r99), `${formatNumber(a99 / r99)}×`, '—', '—']);
  rows.push({ name: 'actor call: sequential mean (µs)', value: mean(l.actorSeq), unit: 'µs', reference: mean(l.rawSeq), ratio: mean(l.actorSeq) / mean(l.rawSeq) });
  table.push(['sequential mean (µs)', formatNumber(mean(l.actorSeq)), formatNumber(mean(l.rawSeq)), `${formatNumber(mean(l.actorSeq) / mean(l.rawSeq))}×`, '—', '—']);
  rows.push({ name: `actor call: calls/s with ${PIPELINE} in flight`, value: aRate, unit: 'calls/s', reference: rRate, ratio: aRate / rRate });
  table.push([`calls/s, ${PIPELINE} in flight`, formatNumber(aRate), formatNumber(rRate), `${formatNumber(aRate / rRate)}×`,
    ...target({ name: `actor call: calls/s with ${PIPELINE} in flight ÷ raw NATS`, value: aRate / rRate, unit: '×' }, TARGETS.pipelinedRatio, 'atLeast', `calls/s with ${PIPELINE} in flight ÷ raw NATS`, '×')]);
  out(`\n2. Actor call vs raw NATS request/reply — ${PAYLOAD_BYTES}-byte payload (${l.requestBytes} bytes on the wire each way for raw), ${count(l.actorSeq.length)} sequential and ${count(l.actorPipe.calls)} pipelined each, ${ROUNDS} alternating rounds`);
  out(formatTable(['figure', 'actor call', 'raw NATS', 'ratio', 'target', 'verdict'], table));
  const usPerCall = (t: PipeTotals, r: Role): number => ((t.cpu?.[r] ?? 0) * 1e6) / t.calls;
  const used = ROLES.filter((r) => usPerCall(l.actorPipe, r) + usPerCall(l.rawPipe, r) > 0);
  const sum = (t: PipeTotals): number => used.reduce((a, r) => a + usPerCall(t, r), 0);
  out(`CPU µs per call with ${PIPELINE} in flight (/proc utime+stime; 'other' is the raw responder; ${availableParallelism()} cores)`);
  out(formatTable(['', ...used, 'all'], [
    ['actor call', ...used.map((r) => formatNumber(usPerCall(l.actorPipe, r))), formatNumber(sum(l.actorPipe))],
    ['raw NATS', ...used.map((r) => formatNumber(usPerCall(l.rawPipe, r))), formatNumber(sum(l.rawPipe))],
  ]));
  for (const r of used) rows.push({ name: `actor call: CPU µs per pipelined call, ${r}`, value: usPerCall(l.actorPipe, r), unit: 'µs', reference: usPerCall(l.rawPipe, r) });
  const fromActor = l.fromActor.calls / secs(l.fromActor.ms);
  const fromDriver = l.fromDriver.calls / secs(l.fromDriver.ms);
  rows.push({ name: `actor→actor call: calls/s with ${PIPELINE} in flight`, value: fromActor, unit: 'calls/s', reference: fromDriver, ratio: fromActor / fromDriver });
  out(`actor→actor (a Caller actor on ${MEMORY_NODE} holding the echo's handle, ${PIPELINE} in flight, timed inside its worker) beside driver→actor, ${ROUNDS} alternating rounds:`);
  out(formatTable(['figure', 'actor→actor', 'driver→actor', 'ratio'], [[`calls/s, ${PIPELINE} in flight`, formatNumber(fromActor), formatNumber(fromDriver), `${formatNumber(fromActor / fromDriver)}×`]]));
}

function reportMemory(m: MemoryResult): void {
  const mb = (kib: number): number => kib / 1024;
  const hostsOf = (t: TreeMemory): ProcessMemory => sumMemory(t.children.map((c) => c.memory));
  const hostOf = (t: TreeMemory): ProcessMemory => t.children.find((c) => c.node)?.memory ?? hostsOf(t);
  const perActorKiB = (m.after.totalKiB - m.one.totalKiB) / (m.actors - 1);
  const title = `${count(m.actors)} idle actors`;
  const procs = 1 + m.after.children.filter((c) => c.node).length;
  const table: string[][] = [];
  const kinds = [['VmRSS', 'rss'], ['RssAnon', 'anon'], ['RssFile', 'file'], ['PSS', 'pss']] as const;
  /** A table row with the four figures; with a target, VmRSS is judged (the figure the targets were set in). */
  const row = (label: string, what: string, mem: ProcessMemory, goal?: number): void => {
    let judged = ['—', '—'];
    for (const [kind, key] of kinds) {
      const figure = { name: `memory: ${what}, ${kind} (MB)`, value: mb(mem[key]), unit: 'MB' };
      if (key === 'rss' && goal !== undefined) judged = target(figure, goal, 'atMost', `${what}, VmRSS`, ' MB');
      else rows.push(figure);
    }
    table.push([label, ...kinds.map(([, key]) => formatNumber(mb(mem[key]))), ...judged]);
  };
  row(`empty node [${MODE.nodeFlags.join(' ')}]`, 'empty Node.js process', m.idleNode);
  row('empty node, after one hot loop', 'Node.js process after one hot loop', m.warmNode);
  row('the same with a nats.js connection', 'Node.js process after one hot loop with a nats.js connection', m.natsNode);
  row('raylet, idle, no actors', 'idle raylet', m.before.root, TARGETS.idleRayletMB);
  row('worker host, 1 idle actor', 'idle worker host (1 actor)', hostOf(m.one), TARGETS.idleHostMB);
  row('raylet, 1 actor', 'raylet with 1 actor', m.one.root);
  row(`raylet, ${title}`, `raylet with ${title}`, m.after.root);
  row(`worker hosts, ${title}`, `worker hosts with ${title}`, hostsOf(m.after));
  row(`raylet + worker hosts, ${title}`, `raylet + worker hosts with ${title}`, m.after.total, TARGETS.rssMB);
  const settled = `idle ${SETTLE_S} s more`;
  row(`raylet, no actors, ${settled}`, `idle raylet, ${settled}`, m.settled.before.root);
  row(`worker host, 1 actor, ${settled}`, `idle worker host (1 actor), ${settled}`, hostOf(m.settled.one));
  row(`raylet + worker hosts, ${title}, ${settled}`, `raylet + worker hosts with ${title}, ${settled}`, m.settled.after.total);
  rows.push({ name: 'memory: VmRSS per idle actor beyond the first (KiB)', value: perActorKiB, unit: 'KiB' });
  out(`\n3. Memory (MB = MiB) of the raylet of node ${MEMORY_NODE} and the processes below it, 3 s after the work before each point; targets judge VmRSS there`);
  out(`(the last three rows: the same points left idle ${SETTLE_S} s more, the sample of median VmRSS over the second half)`);
  out(formatTable(['process', 'VmRSS', 'RssAnon', 'RssFile', 'PSS', 'target', 'verdict'], table));
  out(`processes with ${title}: ${[`raylet ${formatNumber(mb(m.after.rootKiB))} MB`, ...m.after.children.map((c) => `${c.command} ${formatNumber(mb(c.kib))} MB`)].join('; ')} (${procs} Node.js)`);
  out(`per idle actor beyond the first: ${formatNumber(perActorKiB)} KiB of VmRSS`);
  out('VmRSS = RssAnon (own: heap, stacks, malloc) + RssFile (mapped files, mostly the node binary, shared by every Node.js process); PSS shares each page among the processes that map it');
  out(`node flags: ${m.flags.map((p) => `${p.what} [${p.flags.join(' ')}]`).join('; ')}`);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!hasProc()) throw new Error('this bench reads /proc (Linux) for process memory');
  const started = new Date();
  out(`e2e bench${args.quick ? ' (--quick: small counts, a smoke test, not for publishing)' : ''}${chosen.length > 0 ? ` (only: ${chosen.join(', ')})` : ''}${CPU_PROF_DIR === undefined ? '' : ` (--cpu-prof: profiles in ${CPU_PROF_DIR}, slower)`}: node ${process.version}, ${started.toISOString()}`);
  out(`mode: ${MODE.describe}`);
  out(`code: ${sourceVersion()}`);
  if (!DEV) out(`dist/: ${distState('bench:e2e')}`);
  out(`machine: ${cpus()[0]?.model ?? '?'}, ${availableParallelism()} CPUs, ${formatNumber(totalmem() / 2 ** 30)} GiB; load average at start ${loadAverage()}`);
  if (NODE_COUNTS) {
    // section 6 alone: a cluster per node count, started and stopped by measureScaling
    await runScaling(NODE_COUNTS.counts);
    out('\ntargets');
    out(verdicts.join('\n'));
    out(`\n(mode: ${MODE.tag}); load average at end ${loadAverage()}; ${formatNumber(secs(Date.now() - started.getTime()))} s in all`);
    printJsonLast(args, rows.map((r) => ({ ...r, name: `${MODE.tag}: ${r.name}` })));
    return;
  }

  const procs = new BenchProcesses();
  const recent: string[] = [];

  let memory: MemoryResult | undefined;
  let creation: CreationResult | undefined;
  let latency: LatencyResult | undefined;
  let auth: AuthResult | undefined;
  try {
    const floors = SECTIONS.has('memory') ? { idleNode: await idleNodeMemory(MODE.nodeFlags), warmNode: await idleNodeMemory(MODE.nodeFlags, { warm: true }) } : undefined;
    const t0 = performance.now();
    const local = await startLocalCluster({
      transport: 'nats',
      nodes: NODES,
      nodeFlags: CPU_PROF_DIR === undefined ? MODE.nodeFlags : [...MODE.nodeFlags, '--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, '--cpu-prof-interval=100'],
      onOutput: (line, source) => {
        recent.push(`${source}: ${line}`);
        if (recent.length > 30) recent.shift();
      },
    });
    procs.local = local;
    const nodes = await local.cluster.nodes();
    const byName = (name: string): NodeInfo => nodes.find((x) => x.name === name) ?? assertNever(name);
    progress(`cluster up in ${formatNumber(secs(performance.now() - t0))} s: nats-server ${local.address}, GCS, ${nodes.length} raylets (${nodes.map((x) => x.name).join(', ')})`);

    if (SECTIONS.has('memory')) {
      memory = await measureMemory(local, byName(MEMORY_NODE), floors!);
      progress(`memory done; load average ${loadAverage()}`);
    }
    if (SECTIONS.has('creation')) {
      creation = await measureCreation(local, nodes);
      progress(`creation done; load average ${loadAverage()}`);
    }
    if (SECTIONS.has('calls')) {
      const subject = 'bench.raw.echo';
      procs.responder = await startResponder(MODE, local.address, subject);
      const raw = await connectNatsBus({ servers: local.address, name: 'orrery-bench-raw-client' });
      procs.raw = raw;
      latency = await measureLatency(local, byName(ECHO_NODE), raw, subject, byName(MEMORY_NODE));
      progress(`calls done; load average ${loadAverage()}`);
    }
    if (SECTIONS.has('auth')) {
      // the raw client and responder first: they use the cluster's nats-server, stopped next
      await procs.raw?.close();
      procs.raw = undefined;
      await stopChild(procs.responder);
      procs.responder = undefined;
      await procs.local?.stop();
      procs.local = undefined;
      auth = await measureAuth(procs);
    }
  } catch (err) {
    if (procs.stopping) return;
    if (recent.length > 0) console.error(`last lines of the cluster's processes:\n${recent.join('\n')}`);
    throw err;
  } finally {
    await procs.end();
  }

  if (creation) reportCreation(creation);
  if (latency) reportLatency(latency);
  if (memory) reportMemory(memory);
  if (auth) reportAuth(auth);
  // 5. code shipping: a cluster of its own, after the others have stopped (bench/e2e-code.ts)
  if (SECTIONS.has('code')) rows.push(...(await measureCodeShipping({ pkg, nodeFlags: MODE.nodeFlags, quick: args.quick, out, progress })));
  out('\ntargets');
  out(verdicts.join('\n'));
  const judged = rows.filter((r) => r.met !== undefined);
  const missed = judged.filter((r) => r.met === false).length;
  out(`\n${judged.length - missed} targets met, ${missed} missed (mode: ${MODE.tag}); load average at end ${loadAverage()}; ${formatNumber(secs(Date.now() - started.getTime()))} s in all`);
  printJsonLast(args, rows.map((r) => ({ ...r, name: `${MODE.tag}: ${r.name}` })));
}

// ---------------------------------------------------------------------------------------------
// 6. creation cost by node count (--nodes)

async function runScaling(counts: readonly number[]): Promise<void> {
  // the warm batch is as large as the measured one: with a few hundred, the raylets' view code is still
  // being compiled during the measured batch (summed raylet CPU per actor ~2x at 4 and 16 raylets)
  const actors = args.quick ? 500 : 2_000;
  const inFlight = IN_FLIGHT_ARG?.inFlight ?? DEFAULT_IN_FLIGHT;
  const runs = await measureScaling(counts, { actors, warm: () => actors, inFlight }, {
    start: ({ address, nodes }) => startLocalCluster({ transport: 'nats', address, nodes, nodeFlags: CPU_PROF_DIR === undefined ? MODE.nodeFlags : [...MODE.nodeFlags, '--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, '--cpu-prof-interval=1000'] }),
    createSpread: async (local, labelSelector) => {
      const h = await local.cluster.actor(NoopActor).options({ schedulingStrategy: 'SPREAD', ...(labelSelector ? { labelSelector } : {}) }).remote();
      await h.ready({ timeoutMs: READY_TIMEOUT_MS });
    },
    progress,
    reference: (address, nodes, size) => measureRelays(address, nodes, size, MODE.nodeFlags),
  });
  const table = runs.map((r) => [
    String(r.nodes), `${count(r.alive)}/${count(r.actors)}`, formatNumber(r.alive / secs(r.aliveMs)), formatNumber(1000 * perActor(r, r.cpu.raylets)),
    formatNumber(perActor(r, r.rayletWakeups)), formatNumber((1e6 * r.cpu.raylets) / Math.max(1, r.rayletWakeups)),
    formatNumber(1000 * perActor(r, r.cpu.GCS)), formatNumber(1000 * perActor(r, r.cpu['worker hosts'])), formatNumber(perActor(r, r.msgsOut)), formatNumber(perActor(r, r.bytesOut) / 1024), `${r.loadBefore} → ${r.loadAfter}`,
  ]);
  for (const r of runs) {
    const of = `${r.nodes} raylets, ${count(r.actors)} actors SPREAD`;
    rows.push({ name: `creation by node count: actors ALIVE/s (${of})`, value: r.alive / secs(r.aliveMs), unit: 'actors/s' });
    rows.push({ name: `creation by node count: raylet CPU ms per created actor, all raylets (${of})`, value: 1000 * perActor(r, r.cpu.raylets), unit: 'ms' });
    rows.push({ name: `creation by node count: raylet wake-ups per created actor, all raylets (${of})`, value: perActor(r, r.rayletWakeups), unit: 'wake-ups' });
    rows.push({ name: `creation by node count: raylet CPU µs per wake-up (${of})`, value: (1e6 * r.cpu.raylets) / Math.max(1, r.rayletWakeups), unit: 'µs' });
    rows.push({ name: `creation by node count: GCS CPU ms per created actor (${of})`, value: 1000 * perActor(r, r.cpu.GCS), unit: 'ms' });
    rows.push({ name: `creation by node count: NATS messages out per created actor (${of})`, value: perActor(r, r.msgsOut), unit: 'messages' });
    rows.push({ name: `creation by node count: KB out per created actor (${of})`, value: perActor(r, r.bytesOut) / 1024, unit: 'KB' });
  }
  out(`
6. Creation by node count — ${count(runs[0]?.actors ?? 0)} no-op actors SPREAD, ${count(inFlight)} in flight, after a warm batch; a cluster per count`);
  out(formatTable(['raylets', 'ALIVE', 'actors/s', 'raylet CPU ms/actor (all)', 'raylet wake-ups/actor (all)', 'raylet CPU µs/wake-up', 'GCS CPU ms/actor', 'worker hosts CPU ms/actor', 'NATS msgs out/actor', 'KB out/actor', 'load average'], table));
  const at = (n: number): ScalingRun | undefined => runs.find((r) => r.nodes === n && r.alive > 0);
  const ratio = (a: ScalingRun, b: ScalingRun, f: (r: ScalingRun) => number): number => f(a) / f(b);
  const [r4, r16, r32] = [at(4), at(16), at(32)];
  const judged: string[][] = [];
  if (r4 && r16) {
    const v = ratio(r16, r4, (r) => perActor(r, r.cpu.raylets));
    judged.push(['raylet CPU per created actor, 16 ÷ 4 raylets', `${formatNumber(v)}×`, ...target({ name: 'creation by node count: raylet CPU per created actor, 16 raylets ÷ 4 raylets', value: v, unit: '×' }, SCALING_TARGETS.cpuRatio16to4, 'atMost', 'raylet CPU per created actor, 16 ÷ 4 raylets', '×')]);
  }
  if (r4 && r32) {
    const v = ratio(r32, r4, (r) => perActor(r, r.msgsOut));
    judged.push(['NATS messages per created actor, 32 ÷ 4 raylets', `${formatNumber(v)}×`, ...target({ name: 'creation by node count: NATS messages out per created actor, 32 raylets ÷ 4 raylets', value: v, unit: '×' }, SCALING_TARGETS.messagesRatio32to4, 'atMost', 'NATS messages per created actor, 32 ÷ 4 raylets', '×')]);
  }
  const refs = runs.filter((r) => r.reference);
  if (refs.length > 0) {
    out(`\nthe reference, on the same server after each cluster: as many requests, at the rate orrery created the actors, through a GCS-shaped dispatcher to as many raylet-shaped relays, each handing its request to a forked child over IPC (bench/support/e2e-relay.ts; no orrery code)`);
    out(formatTable(['relays', 'requests/s', 'relay CPU ms/request (all)', 'relay wake-ups/request (all)', 'relay CPU µs/wake-up', 'dispatcher CPU ms/request'], refs.map((r) => {
      const ref = r.reference!;
      return [String(r.nodes), formatNumber(ref.perSecond), formatNumber(ref.relaysMsPerRequest), formatNumber(ref.wakeupsPerRequest), formatNumber((1000 * ref.relaysMsPerRequest) / Math.max(1e-9, ref.wakeupsPerRequest)), formatNumber(ref.dispatcherMsPerRequest)];
    })));
    for (const r of refs) {
      const of = `${r.nodes} relays, ${count(r.reference!.requests)} requests`;
      rows.push({ name: `creation by node count, reference: relay CPU ms per request, all relays (${of})`, value: r.reference!.relaysMsPerRequest, unit: 'ms' });
      rows.push({ name: `creation by node count, reference: relay wake-ups per request, all relays (${of})`, value: r.reference!.wakeupsPerRequest, unit: 'wake-ups' });
      rows.push({ name: `creation by node count, reference: requests/s (${of})`, value: r.reference!.perSecond, unit: 'requests/s' });
    }
    if (r4?.reference && r16?.reference) {
      const v = r16.reference.relaysMsPerRequest / r4.reference.relaysMsPerRequest;
      rows.push({ name: 'creation by node count, reference: relay CPU per request, 16 relays ÷ 4 relays', value: v, unit: '×' });
      judged.push(['the reference: relay CPU per request, 16 ÷ 4 relays (no target)', `${formatNumber(v)}×`, '—', '—']);
    }
  }
  if (judged.length > 0) out(formatTable(['figure', 'ratio', 'target', 'verdict'], judged));
  const split = runs.filter((r) => r.split);
  if (split.length > 0) {
    out(`\nwhere a larger cluster's cost goes: ${count(split[0].split!.actors)} more actors, all on 4 of the raylets (the same cluster, after the batch above)`);
    out(formatTable(['raylets', 'actors/s', 'the 4 hosting raylets, CPU ms/actor (sum)', 'each other raylet (view only), CPU µs/actor'], split.map((r) => [String(r.nodes), formatNumber(r.split!.perSecond), formatNumber(r.split!.hostingMsPerActor), formatNumber(r.split!.followingUsPerActorEach)])));
    for (const r of split) {
      rows.push({ name: `creation by node count: CPU ms per actor of the 4 raylets hosting them (${r.nodes} raylets)`, value: r.split!.hostingMsPerActor, unit: 'ms' });
      rows.push({ name: `creation by node count: CPU µs per actor created elsewhere, each raylet that only follows the view (${r.nodes} raylets)`, value: r.split!.followingUsPerActorEach, unit: 'µs' });
    }
  }
  for (const r of runs) if (r.failures.length > 0) out(`
${r.nodes} raylets: ${r.failures.length} actors failed; the first: ${r.failures[0]}`);
}

function assertNever(name: string): never {
  throw new Error(`no node named ${name} in the cluster`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
