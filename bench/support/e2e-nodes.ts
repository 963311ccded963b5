/**
 * bench:e2e --nodes N[,N…] (issue 18, part 4): what creating actors costs as the cluster grows. For
 * each node count, one cluster of its own — a nats-server with JetStream and HTTP monitoring, a GCS
 * and N raylet processes (startLocalCluster) — then a warm batch of SPREAD actors as large as the
 * measured one (so every raylet has its worker host up and its code, the view's included, compiled),
 * then the measured batch: ACTORS no-op actors,
 * SPREAD, 256 in flight, until every one is ALIVE. Measured over that batch alone:
 *
 *   actors ALIVE/s                        wall time from the first remote() to the last ready()
 *   raylet CPU per created actor (ms)      /proc utime+stime of every raylet process, summed
 *   NATS messages out per created actor    the server's out_msgs (/varz): every delivery to every
 *                                         client — a broadcast heard by 32 raylets counts 32
 *   KB out per created actor               the server's out_bytes likewise
 *   raylet wake-ups per created actor      voluntary context switches of the raylets' main threads
 *                                         (/proc/<pid>/status), summed: about one per event-loop
 *                                         wake-up, so CPU per wake-up is CPU ÷ wake-ups
 *
 * Then, with more than 4 raylets, where the cost of a growing cluster goes: half as many actors
 * again, all placed on the first 4 nodes (label `bench-host=yes`), and the CPU of the 4 raylets that
 * host them apart from the CPU of the others, which only follow the view: what one raylet pays for
 * an actor created anywhere else.
 *
 * Then, on the same server once that cluster has stopped, the reference when the deps give one
 * (e2e-relay.ts): the same number of requests, at the rate orrery created the actors, through N
 * relays that do nothing but hand each to a forked child and answer.
 *
 * Targets (never lowered): raylet CPU per created actor with 16 raylets ≤ 1.5× that with 4; NATS
 * messages per created actor with 32 raylets ≤ 2× that with 4 — judged when those counts ran.
 */
import { performance } from 'node:perf_hooks';
import type { LocalCluster, NodeSpec } from '../../runtime/index.ts';
import { freePort, startNatsServer } from '../../runtime/local/nats-server.ts';
import { loadAverage, runPool } from './e2e-stats.ts';
import type { RelayRun } from './e2e-relay.ts';
import { cpuBetween, cpuSeconds, cpuSnapshot, switchesOf, type Role } from './proc-cpu.ts';

export const SCALING_TARGETS = { cpuRatio16to4: 1.5, messagesRatio32to4: 2 };
/** Creates in flight at once, unless `--in-flight` says otherwise. */
export const DEFAULT_IN_FLIGHT = 256;
const READY_TIMEOUT_MS = 180_000;

export interface ScalingRun {
  readonly nodes: number;
  readonly actors: number;
  readonly alive: number;
  readonly failures: string[];
  readonly aliveMs: number;
  readonly cpu: Record<Role, number>;
  /** Wake-ups of the raylets' main threads (voluntary context switches), summed. */
  readonly rayletWakeups: number;
  readonly msgsOut: number;
  readonly bytesOut: number;
  readonly loadBefore: string;
  readonly loadAfter: string;
  /** Actors confined to 4 hosting raylets: their CPU per actor, and each other raylet's (view only). */
  readonly split?: { readonly actors: number; readonly perSecond: number; readonly hostingMsPerActor: number; readonly followingUsPerActorEach: number };
  /** The reference on the same server after orrery's cluster stopped (e2e-relay.ts), when the deps give one. */
  readonly reference?: RelayRun;
}

/** The first nodes, which host the actors of the split phase. */
const HOSTS = 4;

interface Varz {
  out_msgs: number;
  out_bytes: number;
}

async function varz(port: number): Promise<Varz> {
  const res = await fetch(`http://127.0.0.1:${port}/varz`);
  const body = (await res.json()) as Varz;
  return { out_msgs: body.out_msgs, out_bytes: body.out_bytes };
}

/** The options each count's cluster is started with; `start` is the mode's startLocalCluster. */
export interface ScalingDeps {
  start(opts: { address: string; nodes: NodeSpec[] }): Promise<LocalCluster>;
  /** Creates one SPREAD actor (on nodes with these labels, when given) and waits until it is ALIVE. */
  createSpread(local: LocalCluster, labelSelector?: Record<string, string>): Promise<void>;
  progress(line: string): void;
  /** The reference with `nodes` relays on the server at `address`, as many requests as actors, as many in flight. */
  reference?(address: string, nodes: number, size: { warm: number; requests: number; inFlight: number; perSecond: number }): Promise<RelayRun>;
}

/**
 * The parsed value of `--in-flight 16` / `--in-flight=16` (creates in flight at once, 1 to 100,000);
 * undefined when absent. Fewer in flight means fewer creates per raylet wake-up: with 4 raylets and
 * 16 in flight a raylet wakes about once per create, as one of 16 raylets does with 256.
 */
export function inFlightArg(argv: readonly string[]): { inFlight: number; consumed: string[] } | undefined {
  const i = argv.findIndex((a) => a === '--in-flight' || a.startsWith('--in-flight='));
  if (i < 0) return undefined;
  const inline = argv[i].startsWith('--in-flight=');
  const value = inline ? argv[i].slice('--in-flight='.length) : argv[i + 1];
  const inFlight = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isSafeInteger(inFlight) || inFlight < 1 || inFlight > 100_000) {
    throw new Error(`--in-flight expects a whole number of creates from 1 to 100000 (got ${JSON.stringify(value)})`);
  }
  return { inFlight, consumed: inline ? [argv[i]] : [argv[i], argv[i + 1]] };
}

/** The parsed value of `--nodes 4,16,32` / `--nodes=4,16,32`; undefined when absent. */
export function nodeCountsArg(argv: readonly string[]): { counts: number[]; consumed: string[] } | undefined {
  const i = argv.findIndex((a) => a === '--nodes' || a.startsWith('--nodes='));
  if (i < 0) return undefined;
  const inline = argv[i].startsWith('--nodes=');
  const value = inline ? argv[i].slice('--nodes='.length) : argv[i + 1];
  const counts = (value ?? '').split(',').map((s) => Number(s.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isSafeInteger(n) || n < 1 || n > 256)) {
    throw new Error(`--nodes expects node counts such as 4 or 4,16,32 (got ${JSON.stringify(value)})`);
  }
  return { counts, consumed: inline ? [argv[i]] : [argv[i], argv[i + 1]] };
}

export async function measureScaling(counts: readonly number[], size: { actors: number; warm: (nodes: number) => number; inFlight?: number }, deps: ScalingDeps): Promise<ScalingRun[]> {
  const runs: ScalingRun[] = [];
  const inFlight = size.inFlight ?? DEFAULT_IN_FLIGHT;
  for (const n of counts) {
    const monitorPort = await freePort();
    const nats = await startNatsServer({ jetstream: true, monitorPort });
    let local: LocalCluster | undefined;
    try {
      const t0 = performance.now();
      const nodes: NodeSpec[] = Array.from({ length: n }, (_, i) => ({ name: `n${String(i + 1).padStart(2, '0')}`, resources: { CPU: 8 }, labels: { 'bench-host': i < HOSTS ? 'yes' : 'no' } }));
      local = await deps.start({ address: nats.url, nodes });
      deps.progress(`${n} raylets up in ${((performance.now() - t0) / 1000).toFixed(1)} s; warm batch of ${size.warm(n)} SPREAD actors`);
      await runPool(size.warm(n), inFlight, () => deps.createSpread(local!));
      const loadBefore = loadAverage();
      const v0 = await varz(monitorPort);
      const cpu0 = cpuSnapshot();
      const wake0 = switchesOf('raylets');
      const start = performance.now();
      let last = start;
      let alive = 0;
      const results = await runPool(size.actors, inFlight, async () => {
        await deps.createSpread(local!);
        alive++;
        last = performance.now();
      });
      const cpu = cpuBetween(cpu0, cpuSnapshot());
      const rayletWakeups = switchesOf('raylets') - wake0;
      const v1 = await varz(monitorPort);
      const failures = results.flatMap((r) => (r && typeof r === 'object' && 'error' in r ? [String(r.error)] : []));
      const loadAfter = loadAverage();
      const split = n > HOSTS ? await measureSplit(local, Math.floor(size.actors / 2), inFlight, deps) : undefined;
      deps.progress(`${n} raylets: ${alive} ALIVE in ${((last - start) / 1000).toFixed(2)} s, raylet CPU ${((1000 * cpu.raylets) / Math.max(1, alive)).toFixed(2)} ms per actor; load average ${loadAfter}`);
      // the reference on the same server, with orrery's processes gone so they take no CPU from it
      await local.stop();
      local = undefined;
      const reference = deps.reference ? await deps.reference(nats.url, n, { warm: size.warm(n), requests: size.actors, inFlight, perSecond: Math.max(1, alive) / Math.max(0.001, (last - start) / 1000) }) : undefined;
      if (reference) deps.progress(`${n} relays (the reference): ${(reference.relaysMsPerRequest * 1000).toFixed(0)} µs of relay CPU per request`);
      runs.push({
        nodes: n, actors: size.actors, alive, failures, aliveMs: last - start, cpu, rayletWakeups,
        msgsOut: v1.out_msgs - v0.out_msgs, bytesOut: v1.out_bytes - v0.out_bytes, loadBefore, loadAfter, ...(split ? { split } : {}), ...(reference ? { reference } : {}),
      });
    } finally {
      await local?.stop().catch(() => undefined);
      await nats.stop().catch(() => undefined);
    }
  }
  return runs;
}

/** `actors` actors on the first HOSTS nodes only: the hosting raylets' CPU apart from the others'. */
async function measureSplit(local: LocalCluster, actors: number, inFlight: number, deps: ScalingDeps): Promise<ScalingRun['split']> {
  const nodes = await local.cluster.nodes();
  const pids = nodes.map((x) => ({ host: x.name <= `n${String(HOSTS).padStart(2, '0')}`, pid: local.rayletPid?.(x.nodeId) }));
  if (pids.some((p) => p.pid === undefined)) return undefined;
  const before = pids.map((p) => cpuSeconds(p.pid!));
  const start = performance.now();
  await runPool(actors, inFlight, () => deps.createSpread(local, { 'bench-host': 'yes' }));
  const seconds = (performance.now() - start) / 1000;
  let hosting = 0;
  let following = 0;
  pids.forEach((p, i) => {
    const used = cpuSeconds(p.pid!) - before[i];
    if (p.host) hosting += used;
    else following += used;
  });
  const followers = pids.filter((p) => !p.host).length;
  return { actors, perSecond: actors / seconds, hostingMsPerActor: (1000 * hosting) / actors, followingUsPerActorEach: (1e6 * following) / actors / followers };
}

/** Seconds (or any total) per created actor. */
export function perActor(run: ScalingRun, total: number): number {
  return total / Math.max(1, run.alive);
}

export { READY_TIMEOUT_MS as SCALING_READY_TIMEOUT_MS };
