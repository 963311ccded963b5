/**
 * What inspection costs: actor creation rate on one cluster of real processes (a nats-server, a GCS
 * process, two raylet processes and their worker hosts, this process as the driver), in three
 * conditions measured in alternating rounds of one run:
 *
 *   off       the GCS and raylets run with ORRERY_INSPECT=off: no inspection code at all
 *             (the same GcsService with no publisher wired) — the baseline
 *   idle      inspection wired (the default) and nobody watching: no inspector attached
 *   recording a recorder attached (recordTrace in this process, writing a trace file), so every
 *             Actor, Node, Raylet and Gcs transition is mapped, encoded, published and written
 *
 *   npm run bench:trace [-- --json] [-- --quick]
 *
 * Two clusters run side by side on one nats-server: `bench-off` (started with ORRERY_INSPECT=off)
 * and `bench-on` (idle and recording take turns on it). A round creates N no-op actors, 256 in
 * flight (remote() then ready()), counts until every one is ALIVE, then kills them all. The order
 * of the three conditions rotates each round; the figure of a condition is its median round (9
 * rounds each, 3 with --quick). The CPU time of every process (by role: driver, GCS, raylets,
 * worker hosts, nats-server) is summed per condition and shown per 1,000 actors: where recording's
 * cost lands, and a ratio that other work on the machine disturbs less than the rates.
 *
 * Targets (never lowered): recording ≥ 0.85× idle (at most 15% slower with a recorder attached);
 * idle ≥ 0.95× off (no measurable change without one — within the rounds' noise).
 * Runs from source under tsx (like bench:tasks); everything started here is stopped on the way out.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { connectNatsBus } from '../runtime/bus/nats-connect.ts';
import { recordTrace } from '../runtime/inspect/recorder.ts';
import { startLocalCluster, type ActorHandle, type LocalCluster } from '../runtime/index.ts';
import { startNatsServer } from '../runtime/local/index.ts';
import { NoopActor, type Noop } from './fixtures/actors.ts';
import { loadAverage, runPool } from './support/e2e-stats.ts';
import { ROLES, cpuBetween, cpuSnapshot, type Role } from './support/proc-cpu.ts';
import { formatNumber, formatTable, parseBenchArgs, printJsonLast, verdict, type Row } from './support/report.ts';

const args = parseBenchArgs(process.argv.slice(2));
const ACTORS = args.quick ? 300 : 1500;
// Rounds of 1,500 actors take a fraction of a second: with other work on the machine a median of 9
// per condition is far steadier than one of 5.
const ROUNDS = args.quick ? 3 : 9;
const IN_FLIGHT = 256;
const READY_TIMEOUT_MS = 120_000;
const TARGETS = { recordingRatio: 0.85, idleRatio: 0.95 };
type Condition = 'off' | 'idle' | 'recording';
const ORDER: Condition[] = ['off', 'idle', 'recording'];

const out = (line = ''): void => console.log(line);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function createRound(local: LocalCluster): Promise<number> {
  const builder = local.cluster.actor(NoopActor);
  const handles: ActorHandle<Noop>[] = [];
  const started = performance.now();
  const results = await runPool(ACTORS, IN_FLIGHT, async (i) => {
    const h = await builder.remote();
    handles[i] = h;
    await h.ready({ timeoutMs: READY_TIMEOUT_MS });
  });
  const seconds = (performance.now() - started) / 1000;
  const failed = results.filter((r) => r !== undefined && typeof r === 'object' && 'error' in r);
  if (failed.length > 0) throw new Error(`${failed.length} actor(s) did not become ALIVE: ${String((failed[0] as { error: unknown }).error)}`);
  await runPool(handles.length, IN_FLIGHT, (i) => handles[i].kill({ noRestart: true }));
  return ACTORS / seconds;
}

const nats = await startNatsServer();
const traceDir = mkdtempSync(join(tmpdir(), 'orrery-bench-trace-'));
let off: LocalCluster | undefined;
let on: LocalCluster | undefined;
const watchBus = await connectNatsBus({ servers: nats.url, name: 'bench-trace-recorder' });
try {
  out(`bench:trace — actor creation with and without inspection; ${ACTORS} actors per round, ${ROUNDS} rounds per condition`);
  out(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load average ${loadAverage()}`);
  const nodes = [{ name: 'a', resources: { CPU: 4 } }, { name: 'b', resources: { CPU: 4 } }];
  process.env.ORRERY_INSPECT = 'off';
  try {
    off = await startLocalCluster({ transport: 'nats', address: nats.url, cluster: 'bench-off', nodes });
  } finally {
    delete process.env.ORRERY_INSPECT;
  }
  on = await startLocalCluster({ transport: 'nats', address: nats.url, cluster: 'bench-on', nodes });
  const clusters: Record<Condition, LocalCluster> = { off, idle: on, recording: on };

  // warm-up on both clusters: worker hosts started, code loaded, JIT warm
  for (const local of [off, on]) await createRound(local);

  const rates: Record<Condition, number[]> = { off: [], idle: [], recording: [] };
  // CPU seconds each role used during the rounds of each condition (what a round costs, and where)
  const cpu: Record<Condition, Record<Role, number>> = {
    off: Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>,
    idle: Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>,
    recording: Object.fromEntries(ROLES.map((r) => [r, 0])) as Record<Role, number>,
  };
  let recorded = 0;
  let traceBytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const order = ORDER.map((_, i) => ORDER[(i + round) % ORDER.length]);
    for (const condition of order) {
      let recording: Awaited<ReturnType<typeof recordTrace>> | undefined;
      const file = join(traceDir, `round-${round}.jsonl`);
      if (condition === 'recording') {
        recording = await recordTrace({ bus: watchBus, cluster: 'bench-on', out: file });
        if (!(await recording.ready(5000))) throw new Error('no publisher of bench-on acknowledged the recorder');
      }
      const cpu0 = cpuSnapshot();
      const rate = await createRound(clusters[condition]);
      if (recording) {
        recorded += (await recording.stop()).count;
        traceBytes += statSync(file).size;
        rmSync(file);
      }
      const used = cpuBetween(cpu0, cpuSnapshot());
      for (const role of ROLES) cpu[condition][role] += used[role];
      rates[condition].push(rate);
      out(`  … round ${round + 1}: ${condition.padEnd(9)} ${formatNumber(rate)} actors/s`);
    }
  }

  const fig = { off: median(rates.off), idle: median(rates.idle), recording: median(rates.recording) };
  const recordingRatio = fig.recording / fig.idle;
  const idleRatio = fig.idle / fig.off;
  const rows: Row[] = [
    { name: 'actor creation, inspection off (ORRERY_INSPECT=off)', value: fig.off, unit: 'actors/s' },
    // the targets are on `ratio` (value ÷ reference)
    { name: 'actor creation, inspection wired, nobody watching', value: fig.idle, unit: 'actors/s', reference: fig.off, ratio: idleRatio, target: TARGETS.idleRatio, met: idleRatio >= TARGETS.idleRatio },
    { name: 'actor creation, recorder attached', value: fig.recording, unit: 'actors/s', reference: fig.idle, ratio: recordingRatio, target: TARGETS.recordingRatio, met: recordingRatio >= TARGETS.recordingRatio },
    { name: 'transitions recorded per actor (create + kill)', value: recorded / (ACTORS * ROUNDS), unit: 'records' },
    { name: 'trace bytes per actor (create + kill)', value: traceBytes / (ACTORS * ROUNDS), unit: 'bytes' },
  ];
  out();
  out(formatTable(
    ['condition', 'actors/s (median)', 'rounds', 'vs reference', 'target'],
    [
      ['off (no inspection code)', formatNumber(fig.off), rates.off.map(formatNumber).join(' / '), '—', '—'],
      ['idle (wired, nobody watching)', formatNumber(fig.idle), rates.idle.map(formatNumber).join(' / '), `${idleRatio.toFixed(3)}× off`, `≥ ${TARGETS.idleRatio}× — ${verdict(idleRatio, TARGETS.idleRatio, 'atLeast')}`],
      ['recording (recorder attached)', formatNumber(fig.recording), rates.recording.map(formatNumber).join(' / '), `${recordingRatio.toFixed(3)}× idle`, `≥ ${TARGETS.recordingRatio}× — ${verdict(recordingRatio, TARGETS.recordingRatio, 'atLeast')}`],
    ],
  ));
  out();
  // CPU of each role per 1,000 actors created and killed. Both clusters' processes are counted in
  // every condition (the idle cluster's processes barely run while the other one works).
  const perK = (c: Condition, r: Role): string => ((cpu[c][r] * 1000) / (ACTORS * ROUNDS)).toFixed(2);
  const shown = ROLES.filter((r) => ORDER.some((c) => cpu[c][r] > 0.05));
  out(formatTable(['CPU s per 1,000 actors', ...shown, 'total'], ORDER.map((c) => [c, ...shown.map((r) => perK(c, r)), ((ROLES.reduce((t, r) => t + cpu[c][r], 0) * 1000) / (ACTORS * ROUNDS)).toFixed(2)])));
  const cpuTotal = (c: Condition): number => ROLES.reduce((t, r) => t + cpu[c][r], 0);
  out(`CPU per actor: idle ${(cpuTotal('idle') / cpuTotal('off')).toFixed(3)}× off, recording ${(cpuTotal('recording') / cpuTotal('idle')).toFixed(3)}× idle (all processes; steadier than the rates on a busy machine)`);
  out();
  out(`recorded ${recorded} transitions (${formatNumber(recorded / (ACTORS * ROUNDS))} per actor created and killed), ${formatNumber(traceBytes / 1024)} KiB of trace`);
  out(`load average at the end ${loadAverage()}`);
  printJsonLast(args, rows);
} finally {
  await off?.stop().catch(() => undefined);
  await on?.stop().catch(() => undefined);
  await watchBus.close().catch(() => undefined);
  await nats.stop();
  rmSync(traceDir, { recursive: true, force: true });
}
