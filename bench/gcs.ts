/**
 * The GCS under a retry storm, on real processes: a nats-server, a GCS process and two raylet
 * processes (nodes labelled region=us, 2 CPUs each) started by startLocalCluster({ transport: 'nats' }),
 * this process as the driver — the same set-up and modes as bench/e2e.ts and bench/pg.ts (compiled
 * dist/ on plain node by default, --dev for the source under tsx; bench/support/bench-run.ts).
 *
 *   npm run bench:gcs [-- --json] [-- --quick] [-- --dev] [-- --section NAME] [-- --gcs-cpu-prof DIR]
 *
 * How long the GCS takes to answer `nodes()` (gcs.list_nodes), timed from a process of its own
 * (bench/support/latency-probe.ts: a request every 5 ms over its own NATS connection, and after each
 * one the same request to a control responder — a trivial process that answers at once — so stalls
 * of the machine itself show in the control's figures too):
 *
 * 1. Empty queue (the reference): nothing pending, for a fixed period (5 s; --quick 2 s).
 * 2. Storm: N (default 1,000; --quick 200) actors no node can take (labelSelector region=mars),
 *    created 25 at a time, then churn — 15 rounds of: an actor of 1 CPU created, ready(), killed, and
 *    a label set on a node — every placement, release and label change retrying the whole pending
 *    queue. The probe runs from the first create to the end of the churn. This is the storm of
 *    spec/integration/events.spec.ts, which asserts its behaviour; the timing is measured here.
 *
 * Printed: count, p50, p99 and worst of the GCS's answers with the queue empty and during the storm,
 * and of the control during each; storm ÷ empty for p50 and p99, side by side; the schedule_failed
 * events the storm actors produced (scheduleFailed$), per actor; the worst answer less the control's
 * worst stall (its worst − its p50) for context. Every storm actor is killed at the end.
 *
 * Target (docs/failover.md; never lowered): worst nodes() answer during the storm ≤ 100 ms.
 *
 * Then the control-plane fault sections (issue 13), each on processes of its own
 * (support/fault-cluster.ts), each with its reference and target (support/gcs-faults-report.ts):
 *
 * 3. persist (support/gcs-persist.ts): actor creation with --persist on ÷ --persist off, ≥ 0.75.
 * 4. recovery (support/gcs-recovery.ts): 10,000 actors, the GCS SIGKILLed and started again; grace
 *    window over → serving ≤ 3,000 ms (the GCS's own `serving: recovered in …` line), all kept.
 * 5. takeover (support/gcs-takeover.ts): leader SIGKILLed, standby serving ≤ 5,000 ms after the kill;
 *    then the leader frozen (SIGSTOP): when a driver's request sent to it is answered.
 *
 * `--section storm|persist|recovery|takeover` (repeatable) runs only those; `--gcs-cpu-prof DIR`
 * gives the fault sections' GCS processes --cpu-prof (a SIGKILLed one writes nothing).
 *
 * Progress goes to stderr. Every process started here — the cluster and the probe's two — is stopped
 * on the way out, failure or not.
 */
import { availableParallelism, cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { ActorHandle, ActorInfo, LocalCluster } from '../runtime/index.ts';
import type { Noop } from './fixtures/actors.ts';
import { BenchProcesses, DEV_MODE, PLAIN_MODE, distState, sourceVersion, type Mode } from './support/bench-run.ts';
import { loadAverage, runPool, sleep } from './support/e2e-stats.ts';
import { startLatencyProbe, type LatencyProbe, type Latencies, type ProbeResult } from './support/latency-probe.ts';
import { formatNumber, formatTable, parseBenchArgs, printJsonLast, targetRow, verdict, type Goal, type Row } from './support/report.ts';
import type { FaultCluster, FaultModules, SectionContext } from './support/fault-cluster.ts';
import { measurePersist, persistConfig } from './support/gcs-persist.ts';
import { measureRecovery, recoveryConfig, GRACE_MS } from './support/gcs-recovery.ts';
import { LEASE_MS, measureTakeover } from './support/gcs-takeover.ts';
import { reportPersist, reportRecovery, reportTakeover, type Sink } from './support/gcs-faults-report.ts';

const SECTIONS = ['storm', 'persist', 'recovery', 'takeover'] as const;
type Section = (typeof SECTIONS)[number];

/** bench:gcs's own flags (--dev, --section NAME, --gcs-cpu-prof DIR), the rest for parseBenchArgs. */
function ownFlags(argv: readonly string[]): { dev: boolean; sections: readonly Section[]; gcsCpuProf?: string; rest: string[] } {
  const rest: string[] = [];
  let dev = false;
  const sections: Section[] = [];
  let gcsCpuProf: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--dev') dev = true;
    else if (a === '--section') {
      const v = argv[++i] as Section;
      if (!SECTIONS.includes(v)) throw new Error(`--section: expected one of ${SECTIONS.join(', ')}, got ${JSON.stringify(v)}`);
      sections.push(v);
    } else if (a === '--gcs-cpu-prof') {
      gcsCpuProf = argv[++i];
      if (!gcsCpuProf) throw new Error('--gcs-cpu-prof: expected a directory');
    } else rest.push(a);
  }
  return { dev, sections: sections.length > 0 ? sections : SECTIONS, gcsCpuProf, rest };
}

const own = ownFlags(process.argv.slice(2));
const DEV = own.dev;
const args = parseBenchArgs(own.rest);
const MODE: Mode = DEV ? DEV_MODE : PLAIN_MODE;

const here = (path: string): string => new URL(path, import.meta.url).href;
// Loaded by URL so the mode decides which tree the driver's runtime code comes from; the types are
// the source's, which dist/ is compiled from.
const pkg = (await import(here(MODE.pkg))) as typeof import('../index.ts');
const { NoopActor } = (await import(here(MODE.fixtures))) as typeof import('./fixtures/actors.ts');
const { startLocalCluster } = pkg;
const modules: FaultModules = {
  startNatsServer: ((await import(here(MODE.natsServer))) as typeof import('../runtime/local/nats-server.ts')).startNatsServer,
  spawnRuntimeProcess: ((await import(here(MODE.runtimeProcess))) as typeof import('../runtime/local/runtime-process.ts')).spawnRuntimeProcess,
  connect: pkg.connect,
};

const STORM = args.quick ? 200 : 1_000;
const BATCH = 25;
const CHURN_ROUNDS = 15;
const EMPTY_MS = args.quick ? 2_000 : 5_000;
const PROBE_EVERY_MS = 5;
const NODES = [
  { name: 'gcs-a', labels: { region: 'us' }, resources: { CPU: 2 } },
  { name: 'gcs-b', labels: { region: 'us' }, resources: { CPU: 2 } },
];
const MARS = { region: 'mars' };
const READY_TIMEOUT_MS = 20_000;
/** How long to wait for the storm's last events after the churn. */
const EVENTS_WAIT_MS = 10_000;
const TARGET_WORST_MS = 100;

const rows: Row[] = [];
const verdicts: string[] = [];
const out = (line = ''): void => console.log(line);
/** Progress on stderr, so stdout stays the report (and its last line the JSON). */
const progress = (line: string): void => console.error(`  … ${line}`);
const secs = (t: number): number => t / 1000;
const count = (n: number): string => n.toLocaleString('en-US');

/** A target row and its line in the verdict list; returns the verdict. */
function target(row: Omit<Row, 'target' | 'met'>, value: number, goal: Goal, label: string, unit: string): string {
  rows.push(targetRow(row, value, goal));
  const mark = goal === 'atLeast' ? '≥' : '≤';
  const v = verdict(row.value, value, goal);
  verdicts.push(`  ${label}: ${formatNumber(row.value)}${unit} (target ${mark} ${formatNumber(value)}${unit}) — ${v}`);
  return v;
}

/** Probes started and not yet stopped: killed on any way out (an 'exit' handler runs on SIGINT's exit(130) too). */
const probes = new Set<LatencyProbe>();
process.on('exit', () => {
  for (const p of probes) p.kill();
});

async function probed<T>(local: LocalCluster, run: () => Promise<T>): Promise<{ value: T; probe: ProbeResult; ms: number }> {
  const probe = await startLatencyProbe({ address: local.address, everyMs: PROBE_EVERY_MS });
  probes.add(probe);
  try {
    const t0 = performance.now();
    const value = await run();
    const ms = performance.now() - t0;
    return { value, probe: await probe.stop(), ms };
  } finally {
    probe.kill();
    probes.delete(probe);
  }
}

// ---------------------------------------------------------------------------------------------

interface StormResult {
  readonly empty: ProbeResult;
  readonly emptyMs: number;
  readonly storm: ProbeResult;
  readonly stormMs: number;
  readonly createMs: number;
  readonly events: number;
  /** Storm actors PENDING with the mars reason once the events were in. */
  readonly pendingMars: number;
  readonly stormActors: number;
  readonly killFailures: number;
}

async function measure(local: LocalCluster): Promise<StormResult> {
  // the GCS's list_nodes path warmed, and the queue checked empty
  for (let i = 0; i < 50; i++) await local.cluster.nodes();
  const before = (await local.cluster.actors()).filter((a) => a.state === 'PENDING').length;
  if (before !== 0) throw new Error(`${before} actors PENDING before the empty-queue phase`);

  progress(`empty queue: probing nodes() for ${formatNumber(secs(EMPTY_MS))} s; load average ${loadAverage()}`);
  const empty = await probed(local, () => sleep(EMPTY_MS));

  let events = 0;
  const counting = local.cluster.scheduleFailed$.subscribe((e) => {
    if (e.target.name?.startsWith('storm-')) events++;
  });
  const handles: ActorHandle<Noop>[] = [];
  try {
    progress(`storm: ${count(STORM)} unplaceable actors, ${BATCH} at a time, then ${CHURN_ROUNDS} rounds of churn; load average ${loadAverage()}`);
    let createMs = 0;
    const storm = await probed(local, async () => {
      const t0 = performance.now();
      let shown = t0;
      for (let i = 0; i < STORM; i += BATCH) {
        const batch = Array.from({ length: Math.min(BATCH, STORM - i) }, (_, k) => local.cluster.actor(NoopActor).options({ name: `storm-${i + k}`, labelSelector: MARS }).remote());
        handles.push(...(await Promise.all(batch)));
        if (performance.now() - shown > 1_000) {
          shown = performance.now();
          progress(`storm: ${count(handles.length)} of ${count(STORM)} created, ${count(events)} schedule_failed events`);
        }
      }
      createMs = performance.now() - t0;
      // churn: every placement and release retries the whole queue, and so does every label change
      for (let i = 0; i < CHURN_ROUNDS; i++) {
        const busy = await local.cluster.actor(NoopActor).options({ numCpus: 1 }).remote();
        await busy.ready({ timeoutMs: READY_TIMEOUT_MS });
        await busy.kill();
        await local.cluster.setNodeLabels((await local.cluster.nodes())[0].nodeId, { set: { churn: String(i) } });
      }
    });
    progress(`storm done in ${formatNumber(secs(storm.ms))} s; waiting for the last events (${count(events)} so far)`);
    const deadline = Date.now() + EVENTS_WAIT_MS;
    while (events < STORM && Date.now() < deadline) await sleep(20);
    await sleep(200); // a few more, if retries published duplicates
    const mine = (await local.cluster.actors()).filter((a: ActorInfo) => a.name?.startsWith('storm-'));
    const pendingMars = mine.filter((a) => a.state === 'PENDING' && (a.pendingReason?.includes('region in (mars)') ?? false)).length;
    const result = { empty: empty.probe, emptyMs: empty.ms, storm: storm.probe, stormMs: storm.ms, createMs, events, pendingMars, stormActors: mine.length };
    progress(`killing the ${count(handles.length)} storm actors`);
    const killed = await runPool(handles.length, 250, (i) => handles[i].kill());
    return { ...result, killFailures: killed.filter((r) => r && typeof r === 'object' && 'error' in r).length };
  } finally {
    counting.unsubscribe();
  }
}

// ---------------------------------------------------------------------------------------------
// report

function report(r: StormResult): void {
  const gE = r.empty.gcs;
  const gS = r.storm.gcs;
  const cE = r.empty.control;
  const cS = r.storm.control;
  const line = (what: string, l: Latencies): string[] => [what, count(l.count), formatNumber(l.median), formatNumber(l.p99), formatNumber(l.worst)];
  out(`\n1. nodes() (gcs.list_nodes) answer time, from a probe process, a request every ${PROBE_EVERY_MS} ms`);
  out(formatTable(['phase', 'answers', 'p50 ms', 'p99 ms', 'worst ms'], [
    line(`GCS, empty queue (${formatNumber(secs(r.emptyMs))} s)`, gE),
    line(`GCS, storm (${count(STORM)} pending; ${formatNumber(secs(r.stormMs))} s)`, gS),
    line('control responder, empty queue', cE),
    line('control responder, storm', cS),
  ]));
  const ratio = (a: number, b: number): string => (b > 0 ? `${formatNumber(a / b)}×` : '—');
  out(`storm ÷ empty queue: p50 ${formatNumber(gS.median)} ÷ ${formatNumber(gE.median)} ms = ${ratio(gS.median, gE.median)}; p99 ${formatNumber(gS.p99)} ÷ ${formatNumber(gE.p99)} ms = ${ratio(gS.p99, gE.p99)}` +
    ` (control: p50 ${ratio(cS.median, cE.median)}, p99 ${ratio(cS.p99, cE.p99)})`);

  const name = (s: string): string => `gcs: ${s}`;
  rows.push({ name: name('nodes() answers, empty queue'), value: gE.count, unit: 'requests' });
  rows.push({ name: name('nodes() p50, empty queue (ms)'), value: gE.median, unit: 'ms' });
  rows.push({ name: name('nodes() p99, empty queue (ms)'), value: gE.p99, unit: 'ms' });
  rows.push({ name: name('nodes() worst, empty queue (ms)'), value: gE.worst, unit: 'ms' });
  rows.push({ name: name(`nodes() answers during the storm (${STORM} pending)`), value: gS.count, unit: 'requests' });
  rows.push({ name: name(`nodes() p50 during the storm (${STORM} pending) (ms)`), value: gS.median, unit: 'ms', reference: gE.median, ratio: gS.median / gE.median });
  rows.push({ name: name(`nodes() p99 during the storm (${STORM} pending) (ms)`), value: gS.p99, unit: 'ms', reference: gE.p99, ratio: gS.p99 / gE.p99 });
  rows.push({ name: name('control responder p50, empty queue (ms)'), value: cE.median, unit: 'ms' });
  rows.push({ name: name('control responder p99, empty queue (ms)'), value: cE.p99, unit: 'ms' });
  rows.push({ name: name('control responder worst, empty queue (ms)'), value: cE.worst, unit: 'ms' });
  rows.push({ name: name('control responder p50 during the storm (ms)'), value: cS.median, unit: 'ms', reference: cE.median, ratio: cS.median / cE.median });
  rows.push({ name: name('control responder p99 during the storm (ms)'), value: cS.p99, unit: 'ms', reference: cE.p99, ratio: cS.p99 / cE.p99 });
  rows.push({ name: name('control responder worst during the storm (ms)'), value: cS.worst, unit: 'ms' });

  // a request with no answer (10 s timeout) counts as at least as slow as its wait
  const failedGcs = r.storm.failures.filter((f) => f.to === 'gcs');
  const worst = Math.max(gS.worst, ...failedGcs.map((f) => f.ms));
  const v = target({ name: name(`nodes() worst answer during the storm (${STORM} pending) (ms)`), value: worst, unit: 'ms', reference: gE.worst, ratio: worst / gE.worst },
    TARGET_WORST_MS, 'atMost', `worst nodes() answer during the storm (${count(STORM)} pending)`, ' ms');
  const stall = Math.max(0, cS.worst - cS.median);
  rows.push({ name: name('nodes() worst during the storm less the control\'s worst stall (control worst − control p50) (ms)'), value: worst - stall, unit: 'ms' });
  out(`worst during the storm: ${formatNumber(worst)} ms (target ≤ ${TARGET_WORST_MS} ms) — ${v}; less the control's worst stall in the same period (${formatNumber(cS.worst)} − ${formatNumber(cS.median)} = ${formatNumber(stall)} ms): ${formatNumber(worst - stall)} ms (context, no target)`);
  const failures = [...r.empty.failures, ...r.storm.failures];
  rows.push({ name: name('probe requests with no answer (GCS or control, both phases)'), value: failures.length, unit: 'requests' });
  if (failures.length > 0) out(`WARNING: ${failures.length} probe requests got no answer; the first: ${failures[0].to} after ${formatNumber(failures[0].ms)} ms: ${failures[0].error}`);

  out(`\n2. The storm: ${count(STORM)} actors with labelSelector region=mars, ${BATCH} at a time, then ${CHURN_ROUNDS} rounds of churn`);
  out(formatTable(['figure', 'value'], [
    ['schedule_failed events for the storm actors', count(r.events)],
    ['events per actor', formatNumber(r.events / STORM)],
    ['storm actors PENDING with the mars reason', `${count(r.pendingMars)} of ${count(r.stormActors)}`],
    ['creating them (s)', formatNumber(secs(r.createMs))],
    ['created/s (25 at a time)', formatNumber(STORM / secs(r.createMs))],
    ['creation + churn (s)', formatNumber(secs(r.stormMs))],
    ['kills that failed at the end', count(r.killFailures)],
  ]));
  rows.push({ name: name('schedule_failed events for the storm actors'), value: r.events, unit: 'events' });
  rows.push({ name: name('schedule_failed events per storm actor'), value: r.events / STORM, unit: 'events/actor' });
  rows.push({ name: name('storm actors PENDING with the mars reason'), value: r.pendingMars, unit: 'actors' });
  rows.push({ name: name('storm: creation + churn (s)'), value: secs(r.stormMs), unit: 's' });
  rows.push({ name: name('storm actors created/s (25 at a time)'), value: STORM / secs(r.createMs), unit: 'actors/s' });
  if (r.pendingMars !== STORM) out(`WARNING: ${count(STORM - r.pendingMars)} storm actors were not PENDING with the mars reason`);
  if (r.killFailures > 0) out(`WARNING: ${r.killFailures} storm actors could not be killed`);
}

// ---------------------------------------------------------------------------------------------

async function runStorm(procs: BenchProcesses, loads: string[]): Promise<void> {
  const recent: string[] = [];
  /** The GCS's lines about nodes it declared DEAD: a run where a raylet starved past its heartbeat timeout says so. */
  const deaths: string[] = [];
  let result: StormResult;
  try {
    const t0 = performance.now();
    const local = await startLocalCluster({
      transport: 'nats',
      nodes: NODES,
      nodeFlags: MODE.nodeFlags,
      onOutput: (line, source) => {
        recent.push(`${source}: ${line}`);
        if (recent.length > 30) recent.shift();
        if (/missed its heartbeats/.test(line)) deaths.push(`${source}: ${line}`);
      },
    });
    procs.local = local;
    const nodes = await local.cluster.nodes();
    progress(`cluster up in ${formatNumber(secs(performance.now() - t0))} s: nats-server ${local.address}, GCS, ${nodes.length} raylets`);
    loads.push(`storm start ${loadAverage()}`);
    result = await measure(local);
    loads.push(`end of the storm ${loadAverage()}`);
  } catch (err) {
    if (recent.length > 0) console.error(`last lines of the cluster's processes:\n${recent.join('\n')}`);
    throw err;
  } finally {
    for (const p of probes) p.kill();
    await procs.cleanup();
  }
  report(result);
  rows.push({ name: 'cluster: nodes declared DEAD during the run (missed heartbeats)', value: deaths.length, unit: 'nodes' });
  if (deaths.length > 0) out(`\nWARNING: ${deaths.length} node(s) declared DEAD during the run:\n${deaths.map((d) => `  ${d}`).join('\n')}`);
}

async function main(): Promise<void> {
  const started = new Date();
  const sections = own.sections;
  out(`GCS bench${args.quick ? ' (--quick: small counts, a smoke test, not for publishing)' : ''}: node ${process.version}, ${started.toISOString()}`);
  out(`machine: ${cpus()[0]?.model ?? '?'}, ${availableParallelism()} CPUs, ${formatNumber(totalmem() / 2 ** 30)} GiB; load average at start ${loadAverage()}`);
  out(`mode: ${MODE.describe}`);
  out(`code: ${sourceVersion()}`);
  if (!DEV) out(`dist/: ${distState('bench:gcs')}`);
  out(`sections: ${sections.join(', ')}${own.gcsCpuProf ? `; GCS processes of the fault sections write CPU profiles to ${own.gcsCpuProf} (a SIGKILLed GCS writes none)` : ''}`);
  if (sections.includes('storm')) out(`storm: ${NODES.length} raylets of 2 CPUs labelled region=us (${NODES.map((x) => x.name).join(', ')}); ${count(STORM)} storm actors; empty-queue phase ${formatNumber(secs(EMPTY_MS))} s`);
  if (sections.includes('persist')) {
    const c = persistConfig(args.quick);
    out(`persist: ${c.rounds} round(s) each of --persist off and on, alternating; a fresh nats-server (JetStream), GCS and 2 raylets of 100 CPUs per round; ${count(c.warmup)} warm-up then ${count(c.actors)} timed actors (numCpus 0.01, 256 in flight)`);
  }
  if (sections.includes('recovery')) {
    const c = recoveryConfig(args.quick, own.gcsCpuProf !== undefined);
    out(`recovery: ${count(c.actors)} actors (numCpus 0.01) on 2 raylets of 100 CPUs; ${c.rounds} round(s) of SIGKILL to the GCS and a new one (--persist on, grace window ${count(GRACE_MS)} ms)`);
  }
  if (sections.includes('takeover')) out(`takeover: a leader and a standby GCS (lease ${count(LEASE_MS)} ms), 2 raylets, 200 actors; ${args.quick ? 1 : 3} round(s) of SIGKILL to the leader, then one of SIGSTOP`);

  const procs = new BenchProcesses();
  const loads: string[] = [];
  const ctx: SectionContext = {
    mode: MODE, modules, NoopActor: NoopActor as SectionContext['NoopActor'], quick: args.quick, progress,
    gcsFlags: own.gcsCpuProf ? ['--cpu-prof', '--cpu-prof-dir', own.gcsCpuProf] : [],
    track: (set: FaultCluster | undefined) => (procs.local = set),
  };
  const sink: Sink = { rows, out, target };
  try {
    if (sections.includes('storm')) await runStorm(procs, loads);
    if (sections.includes('persist')) {
      loads.push(`persist start ${loadAverage()}`);
      reportPersist(await measurePersist(ctx, loadAverage), sink);
    }
    if (sections.includes('recovery')) {
      loads.push(`recovery start ${loadAverage()}`);
      reportRecovery(await measureRecovery(ctx, loadAverage), sink);
    }
    if (sections.includes('takeover')) {
      loads.push(`takeover start ${loadAverage()}`);
      reportTakeover(await measureTakeover(ctx, loadAverage), LEASE_MS, sink);
    }
  } catch (err) {
    if (procs.stopping) return;
    throw err;
  } finally {
    await procs.end();
  }

  out('\ntargets');
  out(verdicts.join('\n'));
  const judged = rows.filter((x) => x.met !== undefined);
  const missed = judged.filter((x) => x.met === false).length;
  out(`\n${judged.length - missed} targets met, ${missed} missed (mode: ${MODE.tag}); load average: ${loads.join('; ')}; at end ${loadAverage()}; ${formatNumber(secs(Date.now() - started.getTime()))} s in all`);
  printJsonLast(args, rows.map((x) => ({ ...x, name: `${MODE.tag}: ${x.name}` })));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
